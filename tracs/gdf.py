"""Perturb a GeoDataFrame of points: the perturber's region in the frame's CRS, metres inside.

:func:`perturb_gdf` is the GeoPandas entry point of every perturber.  A user draws
the public region off a map in the frame's own CRS (degrees for EPSG:4326); the
function projects the region and the points to a metric CRS chosen from the
*region* (public — never from the data), perturbs there with per-user keyed
randomness (a :class:`tracs.Batch` keyed by the users' ids through
:func:`tracs.engine.perturb_many`, the path of :func:`tracs.release.release_points`),
and projects the releases back.  Rows keep their index, columns and
order; only the geometry is replaced.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, InputTypeError
from .region import ConvexRegion, Rectangle
from .methods import MethodContext, keyed, method_of
from .trajectory_batch import Batch

__all__ = ["perturb_gdf", "metric_perturber", "rebuilt"]

USER_ALIASES = ("uid", "user_id", "user", "userid")
TIME_ALIASES = ("datetime", "timestamp", "time", "utctimestamp")
#: points per region edge when its boundary is projected (curved edges stay inside the bounds)
EDGE_SAMPLES = 64

_GDF_HINT = ("pass a geopandas.GeoDataFrame of points with a CRS (e.g. "
             "gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df.lon, df.lat), crs='EPSG:4326')); "
             "for coordinate arrays use perturber.perturb_many(coords, offsets)")


def _column(gdf, given, aliases, what):
    if given is not None:
        if given not in gdf.columns:
            raise InputError(f"{what} column {given!r} not found; columns: {', '.join(map(str, gdf.columns))}")
        return given
    lowered = {str(c).lower(): c for c in gdf.columns if c != gdf.geometry.name}
    return next((lowered[a] for a in aliases if a in lowered), None)


def _boundary(region) -> np.ndarray:
    vertices = np.asarray(region.vertices, dtype=np.float64)
    closed = np.vstack([vertices, vertices[:1]])
    t = np.linspace(0.0, 1.0, EDGE_SAMPLES, endpoint=False)[:, None, None]
    return (closed[:-1] + t * (closed[1:] - closed[:-1])).reshape(-1, 2)


def metric_perturber(perturber, crs):
    """``(perturber in metres, transformer to metres, transformer back, metric CRS)``.

    The metric CRS is the frame's own when it is projected, else the UTM/UPS zone of
    the region's centre.  A rectangle becomes the bounding box of its projected
    boundary (the projected shape's edges curve slightly), a convex polygon the
    convex hull of its projected boundary: both contain the projected region and
    depend on the public region only.  A point anchor and a POI set are projected
    too; every other public parameter is kept, and the perturber is rebuilt by its
    registry entry (:func:`rebuilt`).
    """
    import pyproj

    from .poi_space import POISpace
    from .geo import local_metric_crs

    crs = pyproj.CRS.from_user_input(crs)
    region = perturber.region
    if crs.is_projected:
        metric = crs
    else:
        to_lonlat = pyproj.Transformer.from_crs(crs, 4326, always_xy=True)
        lon, lat = to_lonlat.transform(*region.center)
        metric = local_metric_crs(lon, lat)
    forward = pyproj.Transformer.from_crs(crs, metric, always_xy=True)
    backward = pyproj.Transformer.from_crs(metric, crs, always_xy=True)
    if metric == crs:
        return perturber, forward, backward, metric
    boundary = np.column_stack(forward.transform(*_boundary(region).T))
    if not np.all(np.isfinite(boundary)):
        raise InputError("the region does not project to the metric CRS (is it in the frame's CRS?)")
    if isinstance(region, Rectangle):
        new_region = Rectangle(*boundary.min(axis=0), *boundary.max(axis=0))
    elif isinstance(region, ConvexRegion):
        from shapely.geometry import MultiPoint

        new_region = ConvexRegion(MultiPoint(boundary).convex_hull)
    else:
        raise InputTypeError(f"unsupported region type {type(region).__name__}")

    anchor = getattr(perturber, "anchor", None)
    if anchor is not None and not isinstance(anchor, str):
        anchor = tuple(forward.transform(*np.asarray(anchor, dtype=np.float64)))
    round_to = getattr(perturber, "round_to", None)
    if isinstance(round_to, POISpace):
        pois = round_to.points
        round_to = POISpace(np.column_stack(forward.transform(pois[:, 0], pois[:, 1])), region=new_region)
    return rebuilt(perturber, new_region, anchor=anchor, round_to=round_to), forward, backward, metric


#: public options of every perturber that its registry entry's sidecar fields do not name
COMMON_OPTIONS = ("resolution", "round_to")


def rebuilt(perturber, region, **replaced):
    """The perturber with the same public parameters on another ``region``, built by its registry entry.

    The entry (:func:`tracs.methods.method_of`) names the options a release records
    (``sidecar``); those, :data:`COMMON_OPTIONS` and the budget are read from the
    perturber, ``replaced`` (e.g. a projected ``anchor``) given instead, and the entry's
    factory builds the new perturber (:meth:`tracs.methods.Method.build`).  A class no
    entry builds (a subclass of a shipped one too) is refused: register it first.
    """
    entry = method_of(perturber)
    model = None if entry is None else entry.model
    cls = type(perturber)
    if model is not cls and model != f"{cls.__module__}.{cls.__qualname__}":
        raise InputTypeError(f"{cls.__name__} is not a registered perturber: register it with "
                             "tracs.methods.register(Method(..., model=its class)) to perturb a GeoDataFrame")
    options = {name: getattr(perturber, name) for name in (*entry.sidecar, *COMMON_OPTIONS)
               if hasattr(perturber, name)}
    options.update({name: value for name, value in replaced.items() if name in options})
    per_trajectory = perturber.basis == "per_trajectory"
    epsilon = perturber.epsilon_per_trajectory if per_trajectory else perturber.epsilon
    return entry.build(MethodContext(region=region), epsilon, per_trajectory=per_trajectory, **options)


def perturb_gdf(gdf, perturber, *, rng=None, user=None, time=None):
    """Perturb every point of a GeoDataFrame; return a copy with the released geometry.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        Point rows with a CRS.  Rows of one user form that user's trajectories,
        ordered by ``time`` when there is a time column (else in frame order).
    perturber : tracs perturber
        ``TraCSD``, ``TraCSC``, ``Strawman`` or ``PlanarLaplace`` whose region (and
        point anchor, POIs) is given in ``gdf``'s CRS — as read off a map.
    rng : None, int, SeedSequence, Generator, "secure" or tracs.random.Secure
        The seed; each user's release is drawn from the stream keyed by the user id.
    user, time : str, optional
        Column names; by default the first of ``uid, user_id, user, userid`` and of
        ``datetime, timestamp, time, utctimestamp`` present (case-insensitive).
        Without a user column every row belongs to one user.

    Returns
    -------
    geopandas.GeoDataFrame
        Same CRS, index, columns and row order; the geometry holds the released
        points.  Each user's release depends only on that user's rows, the public
        perturber and the seed.

    Raises
    ------
    TypeError
        ``gdf`` is not a GeoDataFrame (the message says what to pass).
    ValueError
        No CRS, non-point or empty geometry, missing user ids, a named column
        that does not exist, or points outside the region.
    """
    import geopandas as gpd
    import pandas as pd

    from .engine import perturb_many

    if not isinstance(gdf, gpd.GeoDataFrame):
        raise InputTypeError(f"perturb_gdf: expected a GeoDataFrame, got {type(gdf).__name__}; {_GDF_HINT}")
    if not hasattr(perturber, "perturb_many") or not hasattr(perturber, "region"):
        raise InputTypeError(f"perturb_gdf: expected a tracs perturber (TraCSD, TraCSC, Strawman, PlanarLaplace), "
                             f"got {type(perturber).__name__}")
    if gdf.crs is None:
        raise InputError("perturb_gdf: the frame has no CRS; set it first, e.g. gdf.set_crs('EPSG:4326')")
    if len(gdf) == 0:
        return gdf.copy()
    geometry = gdf.geometry
    if geometry.isna().any() or geometry.is_empty.any():
        bad = np.flatnonzero((geometry.isna() | geometry.is_empty).to_numpy())[:5]
        raise InputError(f"perturb_gdf: rows at positions {bad.tolist()} have no geometry")
    if not (geometry.geom_type == "Point").all():
        raise InputError("perturb_gdf: every geometry must be a Point "
                         f"(found {sorted(set(geometry.geom_type) - {'Point'})})")

    user_col = _column(gdf, user, USER_ALIASES, "user")
    time_col = _column(gdf, time, TIME_ALIASES, "time")
    users = gdf[user_col].to_numpy() if user_col is not None else np.zeros(len(gdf), dtype=np.int64)
    if pd.isna(users).any():
        raise InputError(f"perturb_gdf: {int(pd.isna(users).sum())} rows have no user id in {user_col!r}")
    sort_keys = [pd.Series(users).astype(str).to_numpy()]
    if time_col is not None:
        times = pd.to_datetime(gdf[time_col], utc=True, errors="coerce")
        if times.isna().any():
            raise InputError(f"perturb_gdf: {int(times.isna().sum())} rows have no readable time in "
                             f"{time_col!r}; fix them or pass time= naming another column")
        sort_keys.insert(0, times.to_numpy())
    # users first, then time; np.lexsort sorts by its last key first (and is stable)
    order = np.lexsort(sort_keys[::-1])
    metric_p, forward, backward, _ = metric_perturber(perturber, gdf.crs)
    x, y = forward.transform(geometry.x.to_numpy()[order], geometry.y.to_numpy()[order])
    coords = np.column_stack([x, y])
    inside = perturber.region.contains(np.column_stack([geometry.x.to_numpy(), geometry.y.to_numpy()])[order])
    if not inside.all():
        bad = np.sort(order[~inside])[:5]
        raise InputError(f"perturb_gdf: {int((~inside).sum())} points lie outside the perturber's region "
                         f"(first row positions {bad.tolist()}); the region must cover the data and be "
                         "given in the frame's CRS")
    ordered_users = users[order]
    starts = np.flatnonzero(np.r_[True, ordered_users[1:] != ordered_users[:-1]])
    batch = Batch(coords, np.r_[starts, len(order)], keys=ordered_users)  # one trajectory per user
    released = perturb_many(metric_p, batch, rng=rng, keyed=keyed(metric_p)).coords
    rx, ry = backward.transform(released[:, 0], released[:, 1])
    out_x, out_y = np.empty(len(gdf)), np.empty(len(gdf))
    out_x[order], out_y[order] = rx, ry
    result = gdf.copy()
    result[gdf.geometry.name] = gpd.points_from_xy(out_x, out_y, crs=gdf.crs)
    return result
