"""Public parameters fixed in advance: the region as a longitude/latitude box, its projection, POI files.

A release may depend only on the user's own records, the seed and *public*
parameters.  The region every point is perturbed over, the metric projection and
the set of points of interest shape every release, so they must be given by the
user or fixed before any data is seen — never computed from the data (a region
taken from the data's bounding box is a function of every user's private points;
with one user, releases are confined to that user's own box).

* :class:`LonLatBox` — a box in WGS84 degrees; :meth:`LonLatBox.metric_crs` is the UTM
  zone of its centre (:func:`tracs.geo.local_metric_crs`) and
  :meth:`LonLatBox.to_region` the rectangle in metres inscribed in the projected box
  (checked, else refused): the public region, so every released point lies in the box (:func:`into_region`
  moves the points of the box near its edges onto it).
* :data:`CITY_BOXES` — round boxes for the cities of the public data sets (tky, nyc,
  chi, beijing, porto, san-francisco, rome), written down here (see the comments for
  their source), not computed from any file.
* :func:`parse_box` — a preset, ``MINLON,MINLAT,MAXLON,MAXLAT`` or a polygon file
  (:func:`read_region_file`: the bounds of its polygons, in WGS84).
* :func:`read_pois` — a POI file (CSV with latitude/longitude columns) as a
  :class:`tracs.POISpace` in the region's projection.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .region import Rectangle
from ._validation import column_key
from .errors import InputError, InputTypeError

__all__ = ["LonLatBox", "CITY_BOXES", "PRESET_SOURCES", "into_region", "city_box", "parse_box", "read_region_file", "read_pois"]


#: degrees by which a point may miss a box and still lie in it (about 0.1 mm)
DEGREE_SLACK = 1e-9


@dataclass(frozen=True)
class LonLatBox:
    """A public region as a WGS84 box ``[min_lon, max_lon] × [min_lat, max_lat]`` (degrees).

    Raises ``ValueError`` for non-finite values, longitudes outside ``[-180, 180]``,
    latitudes outside ``[-90, 90]`` or an empty box.  Boxes across the antimeridian
    (``min_lon > max_lon``) are refused with a message saying so: one region has one
    projection, so split the data at 180°.  Boxes near or at a pole are handled: the
    projection of a box whose centre lies north of 84° N or south of 80° S is the
    polar stereographic UPS (:func:`tracs.geo.local_metric_crs`); a box no rectangle
    in metres inside it fits (the whole world, a ring around a pole, 180° of longitude
    or more) is refused by :meth:`to_region`.
    """

    min_lon: float
    min_lat: float
    max_lon: float
    max_lat: float
    source: str = "given by the user"
    #: the polygon file the box was read from (:func:`read_region_file`), else None
    path: str | None = field(default=None, compare=False)

    def __post_init__(self):
        values = (self.min_lon, self.min_lat, self.max_lon, self.max_lat)
        if not all(isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
                   for v in values):
            raise InputTypeError(f"a box needs four numbers, got {values!r}")
        if not all(math.isfinite(float(v)) for v in values):
            raise InputError(f"a box needs four finite numbers, got {values!r}")
        if not (-180.0 <= self.min_lon <= 180.0 and -180.0 <= self.max_lon <= 180.0):
            raise InputError(f"longitudes must lie in [-180, 180], got {self.min_lon:g} and {self.max_lon:g}")
        if not (-90.0 <= self.min_lat <= 90.0 and -90.0 <= self.max_lat <= 90.0):
            raise InputError(f"latitudes must lie in [-90, 90], got {self.min_lat:g} and {self.max_lat:g} "
                             "(order: MINLON,MINLAT,MAXLON,MAXLAT)")
        if self.min_lon > self.max_lon and self.min_lat < self.max_lat:
            raise InputError(
                f"MINLON {self.min_lon:g} > MAXLON {self.max_lon:g}: a box across the antimeridian "
                "(180°) is not supported, since one region has one projection; split the data at "
                "180° and release each side with its own region (or, if the order was swapped, "
                "give MINLON,MINLAT,MAXLON,MAXLAT)")
        if not (self.min_lon < self.max_lon and self.min_lat < self.max_lat):
            raise InputError("the box is empty: need MINLON < MAXLON and MINLAT < MAXLAT "
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
        """Whether each ``(lon, lat)`` lies in the closed box (to within :data:`DEGREE_SLACK`: a
        released point on a corner of the region, written in degrees, may miss it by 1e-14°)."""
        lon, lat = np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64)
        d = DEGREE_SLACK
        return ((lon >= self.min_lon - d) & (lon <= self.max_lon + d)
                & (lat >= self.min_lat - d) & (lat <= self.max_lat + d))

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
        """The :class:`tracs.Rectangle` in metres (``crs``, default :meth:`metric_crs`) inscribed
        in the projected box, so that every point of the region lies in the box.

        The box's edges are densified (128 segments each) and projected: the
        rectangle's left side is the innermost point of the leftmost projected edge,
        its right side the innermost of the rightmost, and so for the bottom and the top
        (a projected parallel bows and a projected meridian leans, so the box is no
        rectangle in metres; in UPS a box may lie turned, its west edge on the right).
        A cap around a pole (every longitude, up to the pole) is the square inscribed
        in its projected circle.  The rectangle is then checked: its sides and a grid
        inside, taken back to degrees, lie in the box to :data:`FIT_METRES`.  A function
        of the box only: public.

        Raises
        ------
        ValueError
            A box whose projection holds no such rectangle (one line saying why and what
            to give instead): too wide for one projection, a wedge reaching a pole, a
            ring around a pole.
        """
        from .geo import inscribed_rectangle

        crs = self.metric_crs() if crs is None else crs
        x, y = self._edges(crs)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise InputError(f"the region {self} cannot be projected to {crs}: it spans "
                             f"{self.max_lon - self.min_lon:g}° of longitude, too wide for one "
                             "projection; split the data by area and give each part its own region")
        rectangle = inscribed_rectangle(x, y, self._pole_cap(crs))
        reason = "" if rectangle is None else self._misfit(rectangle, crs)
        if rectangle is None or reason:
            raise InputError(self._refusal(reason or "no rectangle in metres lies inside its projection"))
        return rectangle

    def _pole_cap(self, crs):
        """The projected pole ``(x, y)`` when the box is a cap around it (every longitude, up to
        the pole), else None."""
        if self.max_lon - self.min_lon < 360.0 or (self.max_lat < 90.0 and self.min_lat > -90.0):
            return None
        import pyproj

        pole = 90.0 if self.max_lat >= 90.0 else -90.0
        return pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(0.0, pole)

    def _misfit(self, rectangle, crs) -> str:
        """Why ``rectangle`` (in ``crs``) does not lie in the box to :data:`FIT_METRES`, or ``""``:
        its sides (256 points each) and a 33 × 33 grid, taken to degrees, clipped to the box and
        projected back, must move by at most that."""
        import pyproj

        t = np.linspace(0.0, 1.0, 257)
        g = np.linspace(0.0, 1.0, 33)
        u = np.concatenate([t, np.ones_like(t), t, np.zeros_like(t), np.repeat(g, g.size)])
        v = np.concatenate([np.zeros_like(t), t, np.ones_like(t), t, np.tile(g, g.size)])
        x = rectangle.xmin + u * rectangle.width
        y = rectangle.ymin + v * rectangle.height
        back = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
        lon, lat = back.transform(x, y)
        ok = np.isfinite(lon) & np.isfinite(lat)
        if not ok.all():
            return "its rectangle in metres leaves the projection's domain"
        forth = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True)
        cx, cy = forth.transform(*self.clip(lon, lat))
        miss = float(np.max(np.hypot(cx - x, cy - y)))
        if not miss <= FIT_METRES:
            return f"its rectangle in metres would leave the box by up to {miss:.3g} m"
        return ""

    def _refusal(self, reason: str) -> str:
        """The one-line refusal of a box no rectangle in metres fits (see :meth:`to_region`)."""
        span = self.max_lon - self.min_lon
        poles = int(self.max_lat >= 90.0) + int(self.min_lat <= -90.0)
        if poles == 2:
            reason = "it reaches both poles"
        elif poles and span < 360.0:
            cap = "-180,LAT,180,90" if self.max_lat >= 90.0 else "-180,-90,180,LAT"
            reason = (f"it reaches the pole over {span:g}° of longitude, a wedge no rectangle in metres fits "
                      f"(give the cap {cap}, or stop short of the pole)")
        elif span >= 360.0:
            reason = "it is a ring around a pole (every longitude, short of the pole): give the cap up to the pole"
        elif span >= 180.0:
            reason = f"it spans {span:g}° of longitude ({reason})"
        return (f"the region {self} cannot be projected to one rectangle in metres inside it: {reason}; give a "
                "smaller box (well under 180° of longitude), or split the data by area and give each part "
                "its own region")

    def _edges(self, crs) -> tuple[np.ndarray, np.ndarray]:
        """The projected boundary: south, east, north, west edges of 129 points each, in turn."""
        import pyproj

        t = np.linspace(0.0, 1.0, 129)
        lon = np.concatenate([self.min_lon + t * (self.max_lon - self.min_lon),
                              np.full(t.size, self.max_lon),
                              self.max_lon - t * (self.max_lon - self.min_lon),
                              np.full(t.size, self.min_lon)])
        lat = np.concatenate([np.full(t.size, self.min_lat),
                              self.min_lat + t * (self.max_lat - self.min_lat),
                              np.full(t.size, self.max_lat),
                              self.max_lat - t * (self.max_lat - self.min_lat)])
        return pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)

    def __str__(self) -> str:
        return ",".join(f"{v:.10g}" for v in self.bounds)  # round boxes as given, file bounds to ~1 cm


#: metres by which the region's rectangle may leave the box (the densified edges' chords: a few cm)
FIT_METRES = 0.5

#: metres by which a point may miss the region's rectangle without being reported as moved (the
#: noise of a projection and its inverse is about 1e-9 m)
SLACK = 1e-3


def into_region(coords: np.ndarray, region) -> tuple[np.ndarray, int, float]:
    """The points of a box, projected (metres), moved onto the rectangle ``region`` inscribed in it.

    A point of the box near its edges may lie outside the inscribed rectangle (by up
    to the lean of a projected meridian or the bow of a parallel: see
    :meth:`LonLatBox.to_region`); it moves to the rectangle's nearest point, as
    ``--clip`` moves a row outside the box.  Returns the coordinates, how many points
    moved by more than :data:`SLACK` and the largest move in metres.
    """
    if not isinstance(region, Rectangle) or len(coords) == 0:
        return coords, 0, 0.0
    low, high = np.array([region.xmin, region.ymin]), np.array([region.xmax, region.ymax])
    outside = np.any((coords < low) | (coords > high), axis=1)
    if not outside.any():
        return coords, 0, 0.0
    out = coords.copy()
    out[outside] = np.clip(coords[outside], low, high)
    moves = np.hypot(*(out[outside] - coords[outside]).T)
    return out, int(np.count_nonzero(moves > SLACK)), float(moves.max())


#: Where the box of each preset comes from (``tracs regions`` prints it).
PRESET_SOURCES = {
    "tky": "Tokyo's 23 wards, eastern Tama, Kawasaki and southern Saitama (Foursquare TSMC2014 Tokyo)",
    "nyc": "NYC's five boroughs, 74.26-73.70 W, 40.48-40.92 N, with a margin (Foursquare NYC)",
    "chi": "Chicago and its inner suburbs (Gowalla)",
    "beijing": "Beijing's 6th Ring Road, about 116.0-116.75 E, 39.7-40.2 N, with the Capital Airport",
    "porto": "the 17 municipalities of the Porto Metropolitan Area (official map, CAOP), rounded outwards",
    "san-francisco": "the City and County of San Francisco with SFO airport (Cabspotting)",
    "rome": "the municipality of Rome with Ostia and Fiumicino airport (Roma taxis)",
}

#: Round boxes for the cities of the public data sets, fixed in advance (written down
#: here from public maps, never computed from any file).  Each holds the area studies of
#: that data set usually keep, with a margin:
#:
#: ``tky`` — Tokyo's 23 wards and the eastern Tama area with Kawasaki and southern
#: Saitama (the area of the Foursquare TSMC2014 Tokyo data, Yang et al., IEEE TSMC 2015);
#: ``nyc`` — New York City's five boroughs (official extent about 74.26–73.70 °W,
#: 40.48–40.92 °N) with a margin into New Jersey and Westchester (Foursquare NYC);
#: ``chi`` — Chicago and its inner suburbs, 88.0–87.5 °W, 41.6–42.05 °N (Gowalla);
#: ``beijing`` — Beijing inside and around the 6th Ring Road (about 116.0–116.75 °E,
#: 39.7–40.2 °N) with the Capital Airport, 115.9–116.8 °E, 39.6–40.3 °N: the urban area
#: where Microsoft Geolife and T-Drive hold most of their points (both also have points
#: far outside, left to --drop / --clip);
#: ``porto`` — the Porto Metropolitan Area (Área Metropolitana do Porto: its 17
#: municipalities, from Póvoa de Varzim and Vila do Conde in the north to Arouca, Vale de
#: Cambra and Oliveira de Azeméis in the south and east, about 8.78–8.07 °W,
#: 40.72–41.48 °N in the official administrative map, CAOP of the Direção-Geral do
#: Território), 8.80–8.00 °W, 40.70–41.50 °N: where the taxis of the ECML/PKDD 2015
#: challenge hold their trips (trips leaving the area, e.g. to Coimbra or Braga, have
#: points outside, left to --drop / --clip);
#: ``san-francisco`` — the City and County of San Francisco (about 122.51–122.36 °W,
#: 37.71–37.83 °N) with San Francisco International Airport, 122.55–122.35 °W,
#: 37.60–37.85 °N (the cab traces of the Cabspotting data);
#: ``rome`` — the municipality of Rome (about 12.23–12.86 °E, 41.65–42.05 °N, with Ostia)
#: and Fiumicino airport, 12.20–12.90 °E, 41.65–42.10 °N (the Roma taxi traces).
CITY_BOXES = {
    "tky": LonLatBox(139.40, 35.45, 140.00, 35.90, "fixed round box around Tokyo"),
    "nyc": LonLatBox(-74.30, 40.45, -73.65, 41.00, "fixed round box around New York City"),
    "chi": LonLatBox(-88.00, 41.60, -87.50, 42.05, "fixed round box around Chicago"),
    "beijing": LonLatBox(115.90, 39.60, 116.80, 40.30,
                         "fixed round box around Beijing's 6th Ring Road (Geolife, T-Drive)"),
    "porto": LonLatBox(-8.80, 40.70, -8.00, 41.50,
                       "fixed round box around the Porto Metropolitan Area (ECML/PKDD 2015 taxis)"),
    "san-francisco": LonLatBox(-122.55, 37.60, -122.35, 37.85,
                               "fixed round box around San Francisco with its airport (Cabspotting)"),
    "rome": LonLatBox(12.20, 41.65, 12.90, 42.10,
                      "fixed round box around the municipality of Rome with Fiumicino (Roma taxis)"),
}


def city_box(name: str) -> LonLatBox:
    """The fixed box of a preset (:data:`CITY_BOXES`; case, ``_`` and spaces ignored)."""
    key = "-".join(str(name).strip().lower().replace("_", " ").split())
    if key not in CITY_BOXES:
        raise InputError(f"unknown region preset {name!r}; choose from {', '.join(CITY_BOXES)} "
                         "(see 'tracs regions'), give MINLON,MINLAT,MAXLON,MAXLAT or a polygon file "
                         "(.geojson, .gpkg, .shp)")
    return CITY_BOXES[key]


#: extensions of the polygon files ``parse_box`` reads (anything else with a path separator
#: is also read as one when it is a file)
REGION_FILE_SUFFIXES = (".geojson", ".json", ".gpkg", ".shp", ".fgb")


def parse_box(text: str) -> LonLatBox:
    """A region given as text: a preset name, ``"MINLON,MINLAT,MAXLON,MAXLAT"`` (degrees) or
    the path of a polygon file (:func:`read_region_file`), as a :class:`LonLatBox`."""
    if not isinstance(text, str):
        raise InputTypeError(f"a region is a preset name or 'MINLON,MINLAT,MAXLON,MAXLAT', got {type(text).__name__}")
    if "," not in text:
        path = Path(text)
        if text and (path.suffix.lower() in REGION_FILE_SUFFIXES or path.is_file()):
            return read_region_file(path)
        return city_box(text)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise InputError(f"a region box needs 4 numbers MINLON,MINLAT,MAXLON,MAXLAT, got {len(parts)} in {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise InputError(f"a region box needs 4 numbers MINLON,MINLAT,MAXLON,MAXLAT, got {text!r}") from None
    return LonLatBox(*values)


def read_region_file(path) -> LonLatBox:
    """The public region of a polygon file: the WGS84 bounding box of all its polygons.

    Parameters
    ----------
    path : str or Path
        A vector file GDAL reads (GeoJSON, GeoPackage, Shapefile, FlatGeobuf) holding
        Polygon / MultiPolygon geometries (an area or a box, e.g. a city's boundary),
        in any CRS with a definition (a GeoJSON without one is WGS84).

    Returns
    -------
    LonLatBox
        The bounds of the union of the polygons, after reprojection to WGS84 of
        their edges densified (segments of at most 1/64 of the extent): the **bounds, not the convex
        hull** — every perturber works on a rectangle in metres, so a polygon's
        shape is not used (its ``source`` says so).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Unreadable file, no geometry, geometries that are not polygons (points or
        lines are records, and a region must not come from the data), a file
        without a CRS that is not GeoJSON, bounds outside WGS84's range, polygons
        across the antimeridian (parts at both -180° and 180°).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such region file: {path}")
    import geopandas as gpd

    try:
        frame = gpd.read_file(path)
    except Exception as exc:  # noqa: BLE001 - the driver's error, on one line, with the file named
        raise InputError(f"cannot read the region file {path.name} as a polygon file (GeoJSON, "
                         f"GeoPackage, Shapefile): {' '.join(str(exc).split())}") from None
    geoms = frame.geometry[frame.geometry.notna() & ~frame.geometry.is_empty]
    if len(geoms) == 0:
        raise InputError(f"the region file {path.name} holds no geometry")
    kinds = sorted(set(geoms.geom_type))
    if any(k not in ("Polygon", "MultiPolygon") for k in kinds):
        raise InputError(f"the region file {path.name} holds {', '.join(kinds)} geometries: a region "
                         "file holds polygons (an area or a box); points and lines are records, and the "
                         "region must not come from the data")
    if frame.crs is None:
        if path.suffix.lower() not in (".geojson", ".json"):
            raise InputError(f"the region file {path.name} has no CRS: save it with one (WGS84, EPSG:4326)")
        geoms = geoms.set_crs(4326)
    if geoms.crs.to_epsg() != 4326:
        minx, miny, maxx, maxy = geoms.total_bounds
        step = max(maxx - minx, maxy - miny) / 64.0
        geoms = geoms.segmentize(step).to_crs(4326)
    minx, miny, maxx, maxy = (float(v) for v in geoms.total_bounds)
    if minx <= -180.0 and maxx >= 180.0 and not (miny <= -90.0 or maxy >= 90.0):
        raise InputError(f"the polygons of the region file {path.name} reach both -180° and 180°: they "
                         "cross the antimeridian, which one region (one projection) cannot hold; split "
                         "the data at 180° and give each side its own region")
    n = len(geoms)
    what = f"{n} polygon{'s' if n != 1 else ''}"
    return LonLatBox(minx, miny, maxx, maxy,
                     f"the bounds of the {what} of {path.name} (a box: the polygons' shape is not used)",
                     str(path))


_LAT = ("lat", "latitude", "y")
_LON = ("lng", "lon", "long", "longitude", "x")


def read_poi_lonlat(path) -> tuple[np.ndarray, np.ndarray]:
    """``(longitude, latitude)`` of every row of a public POI file, in file order.

    A CSV (comma- or tab-separated) with a header holding a latitude column
    (``lat``/``latitude``/``y``) and a longitude column (``lng``/``lon``/``long``/
    ``longitude``/``x``); other columns are ignored.  ``FileNotFoundError`` for a missing
    file, ``InputError`` for a binary or unreadable file, missing columns, no rows or
    non-numeric rows (the first few line numbers are named).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such POI file: {path}")
    head = path.read_bytes()[:4096]
    if b"\x00" in head:
        raise InputError(f"{path.name}: not a text file (binary data on line 1); a POI file is a CSV "
                         "with lat and lng columns")
    try:
        frame = pd.read_csv(path, sep=None, engine="python", encoding="latin-1", dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path.name}: cannot read it as CSV ({' '.join(str(exc).split())})") from None
    columns = {column_key(c): c for c in frame.columns}
    lat_col = next((columns[c] for c in _LAT if c in columns), None)
    lon_col = next((columns[c] for c in _LON if c in columns), None)
    if lat_col is None or lon_col is None:
        raise InputError(f"{path.name}: a POI file needs a latitude column (lat) and a longitude "
                         f"column (lng); found {list(frame.columns)}")
    if len(frame) == 0:
        raise InputError(f"{path.name}: no POI rows")
    lat = pd.to_numeric(frame[lat_col], errors="coerce").to_numpy(dtype=np.float64)
    lon = pd.to_numeric(frame[lon_col], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(lat) & np.isfinite(lon))
    if bad.any():
        lines = ", ".join(str(int(i) + 2) for i in np.flatnonzero(bad)[:5])
        raise InputError(f"{path.name}: {int(bad.sum())} POI row(s) without a numeric latitude and "
                         f"longitude (lines {lines})")
    return lon, lat


def read_pois(path, box: LonLatBox, crs=None):
    """Read a public POI file into a :class:`tracs.POISpace` over ``box``.

    Parameters
    ----------
    path : str or Path
        CSV (comma- or tab-separated) with a header holding a latitude column
        (``lat``/``latitude``/``y``) and a longitude column (``lng``/``lon``/``long``/
        ``longitude``/``x``); other columns are ignored (:func:`read_poi_lonlat`).
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
    import pyproj

    from .poi_space import POISpace

    path = Path(path)
    lon, lat = read_poi_lonlat(path)
    outside = ~box.contains(lon, lat)
    if outside.any():
        lines = ", ".join(str(int(i) + 2) for i in np.flatnonzero(outside)[:5])
        raise InputError(f"{path.name}: {int(outside.sum())} POI(s) outside the region {box} "
                         f"(lines {lines})")
    crs = box.metric_crs() if crs is None else crs
    x, y = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
    region = box.to_region(crs)  # POIs of the box outside its inscribed rectangle move onto it, as points do
    return POISpace(into_region(np.column_stack([x, y]), region)[0], region=region)
