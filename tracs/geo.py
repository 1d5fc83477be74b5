"""Projection between WGS84 longitude/latitude and a local metric CRS, via pyproj.

Perturbation and errors are computed in metres, so check-ins are projected to a
local Universal Transverse Mercator (UTM) zone first and back to WGS84 for maps
and files.  pyproj's transverse Mercator is exact to well below a millimetre over
a zone, so a round trip WGS84 → metres → WGS84 moves no point by more than 1 mm.

Choice of the zone (:func:`local_metric_crs`): the zone (or pole) containing the
centre of the data's longitude/latitude bounding box.

* Longitude wraps: data on both sides of the antimeridian (e.g. Fiji) is centred
  on ±180°, not on 0°.
* Hemisphere: ``EPSG:326zz`` (north) when the centre's latitude is ≥ 0, else
  ``EPSG:327zz`` (south).  Points on the other side of the equator are still
  projected correctly (negative or > 10,000 km northings); only the false
  northing differs.
* Near the poles (centre latitude above 84° N or below 80° S, outside UTM) the
  Universal Polar Stereographic CRS is used (``EPSG:32661`` / ``EPSG:32761``).
* A box's public region (:func:`inscribed_rectangle`): the rectangle in metres inside
  its projected edges.
* Several zones: points outside the chosen zone are projected with the same zone.
  UTM's scale error is about ``(Δλ·cos φ)² / 2`` at ``Δλ`` from the central
  meridian: < 0.1 % inside the zone (±3°), about 0.5 % at ±6° on the equator.
  Beyond ±9° (> 1 %) a :class:`UserWarning` suggests passing a CRS suited to the
  whole area.  The special zones of Norway and Svalbard are not used (the
  regular 6° grid is).
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyproj

from ._validation import as_float_array
from .region import Rectangle
from .errors import InputError, InputTypeError

__all__ = ["WGS84", "local_metric_crs", "to_metric", "to_wgs84", "transform_xy", "inscribed_rectangle"]

WGS84 = pyproj.CRS.from_epsg(4326)
_WARN_DEGREES = 9.0
#: points per thread below which :func:`transform_xy` stays on one thread
_MIN_PIECE = 1 << 16


def transform_xy(x, y, source, target, *, workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``pyproj.Transformer.from_crs(source, target, always_xy=True).transform(x, y, errcheck=True)``
    on up to ``workers`` threads.

    pyproj releases the interpreter lock while PROJ transforms, but one
    transformer serialises its callers, so each thread takes a contiguous piece
    with a transformer of its own.  Every point is transformed by the same PROJ
    operation as on one thread, so the result is the same, bit for bit.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    pieces = max(1, min(int(workers), len(x) // _MIN_PIECE))
    if pieces == 1:
        return pyproj.Transformer.from_crs(source, target, always_xy=True).transform(x, y, errcheck=True)
    out_x, out_y = np.empty_like(x), np.empty_like(y)
    bounds = np.linspace(0, len(x), pieces + 1).astype(np.int64)

    def piece(k):
        a, b = bounds[k], bounds[k + 1]
        transformer = pyproj.Transformer.from_crs(source, target, always_xy=True)
        out_x[a:b], out_y[a:b] = transformer.transform(x[a:b], y[a:b], errcheck=True)

    with ThreadPoolExecutor(pieces, thread_name_prefix="tracs-proj") as pool:
        list(pool.map(piece, range(pieces)))  # re-raises a piece's error
    return out_x, out_y


def _centre_lon(lon: np.ndarray) -> tuple[float, float]:
    """Centre of the longitude extent, and the largest distance from it (degrees).

    Uses the narrower of the plain extent and the extent with longitudes shifted to
    [0, 360), so data around the antimeridian is centred there.
    """
    plain = (lon.min(), lon.max())
    shifted_lon = np.mod(lon, 360.0)
    shifted = (shifted_lon.min(), shifted_lon.max())
    lo, hi = plain if plain[1] - plain[0] <= shifted[1] - shifted[0] else shifted
    centre = (lo + hi) / 2.0
    centre = ((centre + 180.0) % 360.0) - 180.0
    return float(centre), float((hi - lo) / 2.0)


def local_metric_crs(lon, lat) -> pyproj.CRS:
    """The UTM (or polar UPS) CRS for data at longitudes ``lon`` and latitudes ``lat``.

    Parameters
    ----------
    lon, lat : float or array-like
        Degrees (WGS84); longitudes in [-180, 180], latitudes in [-90, 90].

    Returns
    -------
    pyproj.CRS
        ``EPSG:326zz`` / ``EPSG:327zz`` (UTM zone ``zz``, north / south) for the
        zone containing the centre of the data's extent, or ``EPSG:32661`` /
        ``EPSG:32761`` (UPS north / south) near the poles.  See the module
        docstring for the behaviour across zones and hemispheres.

    Raises
    ------
    ValueError
        Empty input, NaN, or coordinates out of range.
    """
    lon = np.ravel(as_float_array(lon, "lon"))
    lat = np.ravel(as_float_array(lat, "lat"))
    if lon.size == 0 or lat.size == 0:
        raise InputError("need at least one point to choose a metric CRS")
    if np.any(np.abs(lon) > 180.0) or np.any(np.abs(lat) > 90.0):
        raise InputError("longitudes must lie in [-180, 180] and latitudes in [-90, 90] "
                         "(is the data already projected?)")
    centre_lat = (lat.min() + lat.max()) / 2.0
    if centre_lat > 84.0:
        return pyproj.CRS.from_epsg(32661)
    if centre_lat < -80.0:
        return pyproj.CRS.from_epsg(32761)
    centre_lon, half_width = _centre_lon(lon)
    zone = int(np.floor((centre_lon + 180.0) / 6.0)) % 60 + 1
    meridian = -183.0 + 6.0 * zone
    reach = half_width + abs(((centre_lon - meridian + 180.0) % 360.0) - 180.0)
    if reach > _WARN_DEGREES:
        warnings.warn(
            f"the data spans {2 * half_width:.1f} degrees of longitude: UTM zone {zone} "
            f"distorts distances by more than 1 % at its edges; pass a CRS suited to the "
            "whole area", UserWarning, stacklevel=2)
    return pyproj.CRS.from_epsg((32600 if centre_lat >= 0.0 else 32700) + zone)


def _check_frame(gdf):
    import geopandas as gpd

    if not isinstance(gdf, (gpd.GeoDataFrame, gpd.GeoSeries)):
        raise InputTypeError(f"expected a GeoDataFrame or GeoSeries, got {type(gdf).__name__}")
    if gdf.crs is None:
        raise InputError("the data has no CRS: set it first (e.g. .set_crs('EPSG:4326'))")
    if len(gdf) == 0:
        raise InputError("the data is empty")


def _points_xy(gdf):
    """``(N, 2)`` coordinates if every geometry is a non-empty point, else None."""
    import shapely

    geoms = np.asarray(gdf.geometry.array)
    if np.any(shapely.get_type_id(geoms) != 0) or np.any(shapely.is_empty(geoms)):
        return None
    return shapely.get_coordinates(geoms)


def _reproject(gdf, crs, xy=None):
    """``gdf.to_crs(crs)``; for point data, one pyproj call on the coordinate arrays."""
    import geopandas as gpd
    import shapely

    xy = _points_xy(gdf) if xy is None else xy
    if xy is None:
        return gdf.to_crs(crs)
    x, y = transform_xy(xy[:, 0], xy[:, 1], gdf.crs, crs)
    points = gpd.array.GeometryArray(shapely.points(np.column_stack([x, y])), crs=crs)
    if isinstance(gdf, gpd.GeoSeries):
        return gpd.GeoSeries(points, index=gdf.index, name=gdf.name, crs=crs)
    out = gdf.copy(deep=False)
    out[gdf.geometry.name] = points
    return out.set_crs(crs, allow_override=True)


def to_metric(gdf, crs=None):
    """Project a GeoDataFrame (or GeoSeries) to metres.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame or geopandas.GeoSeries
        Any CRS (it must be set).
    crs : pyproj.CRS-like, optional
        The target CRS (anything pyproj accepts); default
        :func:`local_metric_crs` of the data's WGS84 coordinates.

    Returns
    -------
    Same type as ``gdf``, in the metric CRS (rows and other columns unchanged).
    """
    _check_frame(gdf)
    if crs is not None:
        crs = pyproj.CRS.from_user_input(crs)
        if crs.is_geographic:
            raise InputError(f"{crs.to_string()} is geographic (degrees), not a metric CRS")
        return _reproject(gdf, crs)
    wgs = gdf if gdf.crs.equals(WGS84) else _reproject(gdf, WGS84)
    xy = _points_xy(wgs)
    if xy is None:
        import shapely

        xy = shapely.get_coordinates(np.asarray(wgs.geometry.array))
        return gdf.to_crs(local_metric_crs(xy[:, 0], xy[:, 1]))
    return _reproject(wgs, local_metric_crs(xy[:, 0], xy[:, 1]), xy)


def to_wgs84(gdf):
    """Project a GeoDataFrame (or GeoSeries) back to WGS84 longitude/latitude (EPSG:4326)."""
    _check_frame(gdf)
    return gdf if gdf.crs.equals(WGS84) else _reproject(gdf, WGS84)


def inscribed_rectangle(x: np.ndarray, y: np.ndarray, pole=None):
    """The rectangle inscribed in the polygon of a box's projected edges, or None when none is found.

    Parameters
    ----------
    x, y : numpy.ndarray
        The projected edges of a longitude/latitude box: south, east, north and west, the same
        number of points each (:meth:`tracs.public.LonLatBox.to_region`).
    pole : tuple of float, optional
        The projected pole when the box is a cap around it: the square inscribed in its circle.

    Returns
    -------
    tracs.Rectangle or None
        The sides are the innermost points of the leftmost, rightmost, lowest and highest
        edges; when those do not enclose a rectangle (a box turned or narrowing near a pole),
        the largest square that lies 1 m inside the polygon (:func:`_square_inside`).
    """
    n = len(x) // 4
    if pole is not None:
        # the edge away from the pole is the cap's circle; its chords come as close as cos(π/n) of it
        px, py = float(pole[0]), float(pole[1])
        far = np.hypot(x - px, y - py)
        circle = far[:n] if far[:n].min() > far[2 * n:3 * n].min() else far[2 * n:3 * n]
        radius = float(np.min(circle)) * math.cos(math.pi / n) / math.sqrt(2.0)
        return Rectangle(px - radius, py - radius, px + radius, py + radius) if radius > 0 else None
    edges = [slice(k * n, (k + 1) * n) for k in range(4)]
    mx = [float(np.mean(x[e])) for e in edges]
    my = [float(np.mean(y[e])) for e in edges]
    left, right = edges[int(np.argmin(mx))], edges[int(np.argmax(mx))]
    bottom, top = edges[int(np.argmin(my))], edges[int(np.argmax(my))]
    if len({left.start, right.start, bottom.start, top.start}) < 4:
        return _square_inside(x, y)
    xmin, ymin, xmax, ymax = (float(np.max(x[left])), float(np.max(y[bottom])), float(np.min(x[right])),
                              float(np.min(y[top])))
    # inside when each edge spans the rectangle along its own direction (a leaning meridian, a bowed
    # parallel); a cap or a wedge around a pole does not
    spans = (all(np.min(y[e]) <= ymin and np.max(y[e]) >= ymax for e in (left, right))
             and all(np.min(x[e]) <= xmin and np.max(x[e]) >= xmax for e in (bottom, top)))
    if xmin < xmax and ymin < ymax and spans:
        return Rectangle(xmin, ymin, xmax, ymax)
    return _square_inside(x, y)


def _square_inside(x: np.ndarray, y: np.ndarray):
    """The largest square (to 1e-6 of its side) centred on the pole of inaccessibility of the polygon
    ``x``, ``y`` that lies 1 m inside it (a turned or narrowing box near a pole), or None."""
    import shapely
    from shapely.ops import polylabel

    polygon = shapely.Polygon(np.column_stack([x, y]))
    if not polygon.is_valid:
        return None
    inner = polygon.buffer(-1.0)
    if inner.is_empty:
        return None
    centre = polylabel(polygon, tolerance=max(polygon.length * 1e-6, 1e-3))
    cx, cy = centre.x, centre.y
    low, high = 0.0, float(max(np.ptp(x), np.ptp(y)))
    while high - low > 1e-6 * high:
        half = 0.5 * (low + high)
        if inner.contains(shapely.box(cx - half, cy - half, cx + half, cy + half)):
            low = half
        else:
            high = half
    return Rectangle(cx - low, cy - low, cx + low, cy + low) if low > 0 else None
