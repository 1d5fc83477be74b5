"""Trajectories as lines: LineString / MultiLineString features in, LineStrings out.

Reading (GeoJSON, GeoPackage, Shapefile, FlatGeobuf, GeoParquet): a file of points
is one check-in per feature, as before.  A file with lines is a file of
trajectories: every line part (a LineString, or each LineString of a
MultiLineString) is one trajectory, its vertices the points, in order, each
carrying its feature's attributes (a Point among lines is a one-point part).  The
points' times come from

1. the M coordinate of the vertices, read as Unix epoch seconds, when the
   geometry has one;
2. else a property holding one time per vertex (a list, or a JSON array in text,
   under a name of :data:`TIME_LISTS`, e.g. ``coordTimes`` as written by GPX and
   KML converters);
3. else none: the points keep the line's order and are released without a time
   (like GPX points without ``<time>``), and a note says so.

The user is the feature's user column; a file without one is one user, named by
the file (a note says so).  The columns these add to the feature's own are
named in :data:`ADDED` (``line_part``, ``point_time``, ``line_user``), except the
vertices' times, which keep the name of their source (the time list's property,
or ``M``); notes never show the added names.  Any other
geometry (polygons, multipoints, collections) is refused with the file, the row
and the type found, and a hint.

Writing (``tracs perturb --geometry lines``): one feature per released
trajectory, its points in the order they were perturbed, with the properties
``uid``, ``trajectory``, ``epsilon_point``, ``epsilon_trajectory`` and the time
of every vertex in ``times`` (ISO 8601 text, null where a point has no time), so
the file reads back with its times; a trajectory of one point is a Point.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .columns import ALIASES, normalise
from ..errors import InputError

__all__ = ["ADDED", "TIME_LISTS", "geometry_kind", "line_features", "line_table"]

#: property names (normalised: lower case, letters and digits) holding one time per vertex
TIME_LISTS = ("times", "coordtimes", "coordinatetimes", "timestamps", "pointtimes", "vertextimes")
#: the columns added to a line feature's own: role -> column name
ADDED = {"traj": "line_part", "time": "point_time", "user": "line_user"}
_TYPES = {0: "Point", 1: "LineString", 2: "LinearRing", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString",
          6: "MultiPolygon", 7: "GeometryCollection"}


def geometry_kind(geoms, source: str, first_row: int = 0) -> str:
    """``"points"`` (every geometry a point or missing) or ``"lines"`` (some lines, the rest
    points or missing); any other type raises ``ValueError`` naming the file, the row and the type."""
    import shapely

    kinds = shapely.get_type_id(np.asarray(geoms, dtype=object))
    bad = ~np.isin(kinds, (-1, 0, 1, 5))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        found = sorted({_TYPES.get(int(k), str(k)) for k in kinds[bad]})
        raise InputError(f"{source}: row {first_row + row} holds a {found[0]}"
                         + (f" (also {', '.join(found[1:])})" if len(found) > 1 else "")
                         + ": tracs reads points (one check-in per feature) or LineStrings / MultiLineStrings "
                         "(one trajectory per line part); convert the other geometries first, e.g. polygons "
                         "to their centroids")
    return "lines" if np.isin(kinds, (1, 5)).any() else "points"


@dataclass
class _Vertices:
    """The vertices of line features: ``rows`` (the feature of each), ``parts`` (its line part,
    numbered from ``part_offset``), ``xy`` (the file's CRS) and ``m`` (M values, or None)."""

    rows: np.ndarray
    parts: np.ndarray
    xy: np.ndarray
    m: np.ndarray | None


def _explode(geoms, part_offset: int = 0) -> _Vertices:
    """The vertices of every feature, part by part; a missing or empty geometry gives one
    point with NaN coordinates (dropped later as ``bad_coords``, with its row)."""
    import shapely

    geoms = np.asarray(geoms, dtype=object)
    missing = shapely.is_missing(geoms) | shapely.is_empty(geoms)
    parts, part_row = shapely.get_parts(np.where(missing, None, geoms), return_index=True)
    has_m = bool(np.any(shapely.has_m(parts))) if len(parts) else False
    coords, vertex_part = shapely.get_coordinates(parts, return_index=True, include_m=has_m)
    rows = part_row[vertex_part]
    vertex_part = vertex_part.astype(np.int64)
    if missing.any():  # one NaN point per feature without geometry, in the feature order
        lost = np.flatnonzero(missing)
        rows = np.r_[rows, lost]
        vertex_part = np.r_[vertex_part, len(parts) + np.arange(len(lost))]
        coords = np.vstack([coords, np.full((len(lost), coords.shape[1]), np.nan)])
        order = np.argsort(rows, kind="stable")
        rows, vertex_part, coords = rows[order], vertex_part[order], coords[order]
        _, first, inverse = np.unique(vertex_part, return_index=True, return_inverse=True)
        rank = np.empty(len(first), np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        vertex_part = rank[inverse]  # parts numbered in file order
    return _Vertices(rows=rows.astype(np.int64), parts=vertex_part + part_offset, xy=coords[:, :2],
                      m=coords[:, 2] if has_m else None)


def _time_list_column(names) -> str | None:
    return next((n for n in names if normalise(n) in TIME_LISTS), None)


def _as_list(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        value = value.strip()
        return json.loads(value) if value.startswith("[") else [value]
    return list(value)


def _point_times(lines: _Vertices, lists, source: str, first_row: int = 0):
    """``(values, note)``: the time of every vertex, from the M values or from ``lists`` (one list
    per feature), or ``None`` values (no time) with the note of file order."""
    import pandas as pd

    if lines.m is not None:
        return lines.m, "times of the line vertices read from their M coordinate as Unix epoch seconds"
    if lists is not None:
        per_row = [_as_list(v) for v in lists]
        counts = np.bincount(lines.rows, minlength=len(per_row))
        lengths = np.array([len(v) for v in per_row])
        wrong = np.flatnonzero((lengths != counts) & (lengths > 0))
        if len(wrong):
            r = int(wrong[0])
            raise InputError(f"{source}: row {first_row + r} has {lengths[r]} times for {counts[r]} vertices: "
                             "the time list must give one time per vertex")
        flat = [t for v in per_row for t in v]
        if len(flat) == len(lines.rows):
            return pd.Series(flat, dtype=object).astype("string"), None
    return None, None


def line_table(frame, geoms, source: str, *, stem: str, notes: list, to_lonlat, first_row: int = 0):
    """The per-vertex table of line features ``geoms`` with their attributes ``frame`` (a pandas
    frame): attributes repeated, plus :data:`ADDED` columns.

    Returns ``(table, untimed mask or None, roles, lonlat)``: ``lonlat`` is ``to_lonlat(xy)`` of
    the vertices' coordinates in the file's CRS (a missing or empty geometry: one NaN point).
    """
    import pandas as pd

    lines = _explode(geoms)
    lonlat = to_lonlat(lines.xy)
    names = [str(c) for c in frame.columns]
    lists_name = _time_list_column(names)
    table = frame.iloc[lines.rows].reset_index(drop=True)
    if lists_name is not None:
        table = table.drop(columns=lists_name)
    table[ADDED["traj"]] = lines.parts
    roles = {"traj": ADDED["traj"]}
    times, note = _point_times(lines, None if lists_name is None else frame[lists_name].to_numpy(dtype=object),
                              source, first_row)
    untimed = None
    time_name = ADDED["time"]
    if times is not None:  # under the name the user knows: the time list's, or M
        time_name = lists_name if lists_name is not None else "M" if "M" not in table.columns else time_name
        table[time_name] = times
        notes.append(note or f"times of the line vertices read from the property {lists_name!r}")
    else:
        table[time_name] = pd.Series(np.zeros(len(table), "datetime64[ns]")).dt.tz_localize("UTC")
        untimed = np.ones(len(table), bool)
        notes.append(f"{len(np.unique(lines.parts)):,} line part(s) without times (no M coordinate, no time "
                     "list): their points keep the line's order and are written without a time")
    roles["time"] = time_name
    if not any(normalise(n) in ALIASES["user"] for n in names):
        table[ADDED["user"]] = stem
        roles["user"] = ADDED["user"]
        notes.append(f"no user column: the lines are one user, named after the file ({stem!r})")
    notes.append(f"{len(np.unique(lines.parts)):,} line part(s) read as trajectories")
    return table, untimed, roles, lonlat


def line_features(table):
    """Released rows in perturbation order (an Arrow table: ``uid``, ``trajectory``, ``datetime``,
    ``lat``, ``lng``, ε columns) -> a GeoDataFrame of one feature per trajectory (see the
    module docstring)."""
    import geopandas as gpd
    import pandas as pd
    import shapely

    frame = table.to_pandas()
    traj = frame["trajectory"].to_numpy()
    new = traj[1:] != traj[:-1]
    if "uid" in frame.columns:  # trajectory ids are numbered within each user
        users = frame["uid"].to_numpy()
        new = new | (users[1:] != users[:-1])
    starts = np.flatnonzero(np.r_[True, new])
    lengths = np.diff(np.r_[starts, len(frame)])
    codes = np.repeat(np.arange(len(starts)), lengths)
    xy = frame[["lng", "lat"]].to_numpy(dtype=float)
    geoms = np.empty(len(starts), dtype=object)
    long = lengths >= 2
    if long.any():
        keep = long[codes]
        geoms[long] = shapely.linestrings(xy[keep], indices=np.searchsorted(np.flatnonzero(long), codes[keep]))
    geoms[~long] = shapely.points(xy[starts[~long]])
    times = pd.Series(frame["datetime"]).dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ").str.replace(".000000Z", "Z")
    lists = [json.dumps(v.tolist()) for v in np.split(times.astype(object).where(times.notna(), None).to_numpy(),
                                            starts[1:])]
    properties = {c: frame[c].to_numpy()[starts] for c in ("uid", "trajectory", "epsilon_point",
                                                         "epsilon_trajectory") if c in frame.columns}
    return gpd.GeoDataFrame({**properties, "times": lists}, geometry=geoms, crs=4326)
