"""Public parameters fixed in advance: the region as a longitude/latitude box, its projection, POI files.

A release may depend only on the user's own records, the seed and *public*
parameters.  The region every point is perturbed over, the metric projection and
the set of points of interest shape every release, so they must be given by the
user or fixed before any data is seen — never computed from the data (a region
taken from the data's bounding box is a function of every user's private points;
with one user, releases are confined to that user's own box).

* :class:`LonLatBox` — a box in WGS84 degrees; :meth:`LonLatBox.metric_crs` is the UTM
  zone of its centre (:func:`tracs.geo.local_metric_crs`) and
  :meth:`LonLatBox.to_region` the rectangle in metres that contains the projected box.
* :data:`CITY_BOXES` — round boxes for the shipped cities, written down here (see
  the comments for their source), not computed from the files.
* :func:`read_pois` — a POI file (CSV with latitude/longitude columns) as a
  :class:`tracs.POISpace` in the region's projection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["LonLatBox", "CITY_BOXES", "city_box", "parse_box", "read_pois"]


@dataclass(frozen=True)
class LonLatBox:
    """A public region as a WGS84 box ``[min_lon, max_lon] × [min_lat, max_lat]`` (degrees).

    Raises ``ValueError`` for non-finite values, longitudes outside ``[-180, 180]``,
    latitudes outside ``[-90, 90]`` or an empty box (boxes across the antimeridian
    are not supported: split the data instead).
    """

    min_lon: float
    min_lat: float
    max_lon: float
    max_lat: float
    source: str = "given by the user"

    def __post_init__(self):
        values = (self.min_lon, self.min_lat, self.max_lon, self.max_lat)
        if not all(isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
                   for v in values):
            raise TypeError(f"a box needs four numbers, got {values!r}")
        if not all(math.isfinite(float(v)) for v in values):
            raise ValueError(f"a box needs four finite numbers, got {values!r}")
        if not (-180.0 <= self.min_lon <= 180.0 and -180.0 <= self.max_lon <= 180.0):
            raise ValueError(f"longitudes must lie in [-180, 180], got {self.min_lon:g} and {self.max_lon:g}")
        if not (-90.0 <= self.min_lat <= 90.0 and -90.0 <= self.max_lat <= 90.0):
            raise ValueError(f"latitudes must lie in [-90, 90], got {self.min_lat:g} and {self.max_lat:g} "
                             "(order: MINLON,MINLAT,MAXLON,MAXLAT)")
        if not (self.min_lon < self.max_lon and self.min_lat < self.max_lat):
            raise ValueError("the box is empty: need MINLON < MAXLON and MINLAT < MAXLAT "
                             f"(order: MINLON,MINLAT,MAXLON,MAXLAT), got {values!r}")

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(min_lon, min_lat, max_lon, max_lat)``."""
        return (float(self.min_lon), float(self.min_lat), float(self.max_lon), float(self.max_lat))

    @property
    def center(self) -> tuple[float, float]:
        """``(lon, lat)`` of the box's centre."""
        return ((self.min_lon + self.max_lon) / 2.0, (self.min_lat + self.max_lat) / 2.0)

    def contains(self, lon, lat) -> np.ndarray:
        """Whether each ``(lon, lat)`` lies in the closed box."""
        lon, lat = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
        return ((lon >= self.min_lon) & (lon <= self.max_lon)
                & (lat >= self.min_lat) & (lat <= self.max_lat))

    def clip(self, lon, lat) -> tuple[np.ndarray, np.ndarray]:
        """Each ``(lon, lat)`` moved to the nearest point of the box (per axis)."""
        return (np.clip(np.asarray(lon, dtype=np.float64), self.min_lon, self.max_lon),
                np.clip(np.asarray(lat, dtype=np.float64), self.min_lat, self.max_lat))

    def metric_crs(self):
        """The UTM (or polar) CRS of the box's centre: a function of the box only."""
        from .geo import local_metric_crs

        lon, lat = self.center
        return local_metric_crs(lon, lat)

    def to_region(self, crs=None):
        """The :class:`tracs.Rectangle` in metres (``crs``, default :meth:`metric_crs`)
        that contains the projected box: the bounds of its densified edges."""
        import pyproj

        from .region import Rectangle

        crs = self.metric_crs() if crs is None else crs
        t = np.linspace(0.0, 1.0, 129)
        lon = np.concatenate([self.min_lon + t * (self.max_lon - self.min_lon),
                              np.full(t.size, self.max_lon),
                              self.max_lon - t * (self.max_lon - self.min_lon),
                              np.full(t.size, self.min_lon)])
        lat = np.concatenate([np.full(t.size, self.min_lat),
                              self.min_lat + t * (self.max_lat - self.min_lat),
                              np.full(t.size, self.max_lat),
                              self.max_lat - t * (self.max_lat - self.min_lat)])
        x, y = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
        return Rectangle(float(np.min(x)), float(np.min(y)), float(np.max(x)), float(np.max(y)))

    def __str__(self) -> str:
        return f"{self.min_lon:g},{self.min_lat:g},{self.max_lon:g},{self.max_lat:g}"


#: Round boxes for the cities of the shipped samples, fixed in advance (not computed
#: from the files).  Each contains the city it names with a margin:
#: ``tky`` — Tokyo's 23 wards and the eastern Tama area with Kawasaki and southern
#: Saitama (the area of the Foursquare TSMC2014 Tokyo data, Yang et al., IEEE TSMC 2015);
#: ``nyc`` — New York City's five boroughs (official extent about 74.26–73.70 °W,
#: 40.48–40.92 °N) with a margin into New Jersey and Westchester;
#: ``chi`` — Chicago and its inner suburbs, 88.0–87.5 °W, 41.6–42.05 °N.
CITY_BOXES = {
    "tky": LonLatBox(139.40, 35.45, 140.00, 35.90, "fixed round box around Tokyo"),
    "nyc": LonLatBox(-74.30, 40.45, -73.65, 41.00, "fixed round box around New York City"),
    "chi": LonLatBox(-88.00, 41.60, -87.50, 42.05, "fixed round box around Chicago"),
}


def city_box(name: str) -> LonLatBox:
    """The fixed box of a shipped city (``tky``, ``nyc``, ``chi``; case-insensitive)."""
    key = str(name).strip().lower()
    if key not in CITY_BOXES:
        raise ValueError(f"unknown region preset {name!r}; choose from {', '.join(CITY_BOXES)} "
                         "or give MINLON,MINLAT,MAXLON,MAXLAT")
    return CITY_BOXES[key]


def parse_box(text: str) -> LonLatBox:
    """A preset name or ``"MINLON,MINLAT,MAXLON,MAXLAT"`` (degrees) as a :class:`LonLatBox`."""
    if not isinstance(text, str):
        raise TypeError(f"a region is a preset name or 'MINLON,MINLAT,MAXLON,MAXLAT', got {type(text).__name__}")
    if "," not in text:
        return city_box(text)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise ValueError(f"a region box needs 4 numbers MINLON,MINLAT,MAXLON,MAXLAT, got {len(parts)} in {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"a region box needs 4 numbers MINLON,MINLAT,MAXLON,MAXLAT, got {text!r}") from None
    return LonLatBox(*values)


_LAT = ("lat", "latitude", "y")
_LON = ("lng", "lon", "long", "longitude", "x")


def read_pois(path, box: LonLatBox, crs=None):
    """Read a public POI file into a :class:`tracs.POISpace` over ``box``.

    Parameters
    ----------
    path : str or Path
        CSV (comma- or tab-separated) with a header holding a latitude column
        (``lat``/``latitude``) and a longitude column (``lng``/``lon``/``longitude``);
        other columns are ignored.
    box : LonLatBox
        The public region; every POI must lie in it.
    crs : pyproj.CRS-like, optional
        The metric CRS (default ``box.metric_crs()``).

    Raises
    ------
    ValueError
        Unreadable file, missing columns, non-numeric or out-of-box rows (the first
        few line numbers are named), fewer than two distinct POIs.
    """
    import csv

    import pandas as pd
    import pyproj

    from .poi_space import POISpace

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such POI file: {path}")
    head = path.read_bytes()[:4096]
    if b"\x00" in head:
        raise ValueError(f"{path.name}: not a text file (binary data on line 1); a POI file is a CSV "
                         "with lat and lng columns")
    try:
        frame = pd.read_csv(path, sep=None, engine="python", encoding="latin-1", dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path.name}: cannot read it as CSV ({' '.join(str(exc).split())})") from None
    columns = {c.strip().lower(): c for c in frame.columns}
    lat_col = next((columns[c] for c in _LAT if c in columns), None)
    lon_col = next((columns[c] for c in _LON if c in columns), None)
    if lat_col is None or lon_col is None:
        raise ValueError(f"{path.name}: a POI file needs a latitude column (lat) and a longitude "
                         f"column (lng); found {list(frame.columns)}")
    lat = pd.to_numeric(frame[lat_col], errors="coerce").to_numpy(dtype=np.float64)
    lon = pd.to_numeric(frame[lon_col], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(lat) & np.isfinite(lon))
    if bad.any():
        lines = ", ".join(str(int(i) + 2) for i in np.flatnonzero(bad)[:5])
        raise ValueError(f"{path.name}: {int(bad.sum())} POI row(s) without a numeric latitude and "
                         f"longitude (lines {lines})")
    outside = ~box.contains(lon, lat)
    if outside.any():
        lines = ", ".join(str(int(i) + 2) for i in np.flatnonzero(outside)[:5])
        raise ValueError(f"{path.name}: {int(outside.sum())} POI(s) outside the region {box} "
                         f"(lines {lines})")
    crs = box.metric_crs() if crs is None else crs
    x, y = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
    return POISpace(np.column_stack([x, y]), region=box.to_region(crs))
