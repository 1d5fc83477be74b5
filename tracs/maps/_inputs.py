"""Turn the inputs of the map functions into WGS84 arrays, validated once.

Every map input is a table of rows in trajectory order: a ``tracs.Batch`` (its
GeoDataFrame view), a ``tracs.Trajectories`` (its ``.frame``), a GeoDataFrame or
GeoSeries of points in any CRS, or an ``(N, 2)`` array of ``(x, y)`` coordinates
*in the CRS of the original rows* (which is what a perturber returns for
``Trajectories.coords``).  :func:`as_rows` gives them as a ``tracs.Batch`` in
WGS84.  Rows are never reordered or dropped here.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd

from .._validation import as_float_array, as_points
from ..errors import InputError, InputTypeError
from ..trajectory_batch import Batch

__all__ = ["rows_batch", "as_rows", "as_coordinates", "same_length", "unwrap_longitudes"]

WGS84 = "EPSG:4326"


def rows_batch(lat, lon, uid=None, track=None, times=None, crs=WGS84) -> Batch:
    """Map rows as a :class:`tracs.Batch` in WGS84: longitude/latitude, the ``uid`` of each row as
    keys, the columns ``track`` (trajectory id, ``uid`` when the input has none; a trajectory is
    a run of rows of one user and track) and ``times`` (``"YYYY-MM-DD HH:MM"`` text) when given,
    and ``attrs["input_crs"]``, the CRS of the input, to read coordinate arrays that go with it."""
    columns = {name: values for name, values in (("track", track), ("times", times)) if values is not None}
    offsets = None
    if track is not None and len(track):
        new = np.r_[True, track[1:] != track[:-1]]
        if uid is not None:
            new[1:] |= uid[1:] != uid[:-1]
        offsets = np.r_[np.flatnonzero(new), len(track)]
    return Batch(np.column_stack([lon, lat]), offsets, keys=uid, columns=columns, crs=WGS84,
                 attrs={"input_crs": crs})


def _frame_of(obj, name: str):
    """The GeoDataFrame/GeoSeries behind ``obj``, or ``None`` for an array-like."""
    if isinstance(obj, Batch):
        return obj.to_geodataframe()
    frame = getattr(obj, "frame", None)
    if isinstance(frame, (gpd.GeoDataFrame, gpd.GeoSeries)):
        return frame
    if isinstance(obj, (gpd.GeoDataFrame, gpd.GeoSeries)):
        return obj
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        raise InputTypeError(
            f"{name} is a plain pandas object without point geometry; pass a GeoDataFrame "
            "(geopandas.GeoDataFrame(df, geometry=geopandas.points_from_xy(lng, lat), crs=4326))"
        )
    return None


def _wgs84_points(geoms: gpd.GeoSeries, name: str) -> tuple[np.ndarray, np.ndarray]:
    if geoms.crs is None:
        raise InputError(f"{name} has no CRS; set one first, e.g. .set_crs(4326) for longitude/latitude")
    if len(geoms) == 0:
        raise InputError(f"{name} is empty")
    missing = geoms.isna().to_numpy() | geoms.is_empty.to_numpy()
    if missing.any():
        raise InputError(f"{name} has {int(missing.sum())} row(s) without a geometry")
    kinds = geoms.geom_type.to_numpy()
    if (kinds != "Point").any():
        bad = sorted(set(kinds[kinds != "Point"]))
        raise InputError(f"{name} must hold point geometries, found {', '.join(bad)}")
    if not geoms.crs.equals(WGS84):
        geoms = geoms.to_crs(WGS84)
    lon = as_float_array(geoms.x.to_numpy(), f"{name} longitudes")
    lat = as_float_array(geoms.y.to_numpy(), f"{name} latitudes")
    return lat, lon


def _times(frame: gpd.GeoDataFrame) -> np.ndarray | None:
    if "datetime" not in frame.columns:
        return None
    values = pd.to_datetime(frame["datetime"], errors="coerce", utc=True)
    text = values.dt.strftime("%Y-%m-%d %H:%M").to_numpy(dtype=object)
    text[values.isna().to_numpy()] = ""
    return text


def as_rows(obj, name: str, *, require_uid: bool = False, crs=None) -> Batch:
    """Validate ``obj`` and return its rows in WGS84 (:func:`rows_batch`).

    Parameters
    ----------
    obj : Batch, Trajectories, GeoDataFrame, GeoSeries or array of shape (N, 2)
        The rows.  An array is read as ``(x, y)`` in ``crs``.
    name : str
        Argument name used in error messages.
    require_uid : bool
        Raise ``ValueError`` when there is no ``uid`` column.
    crs : pyproj CRS-like, optional
        CRS of array input (the CRS of the original rows).

    Raises
    ------
    TypeError
        ``obj`` is not one of the accepted types.
    ValueError
        No CRS, empty, non-point or missing geometries, non-finite coordinates,
        a missing ``uid`` column when required.
    """
    frame = _frame_of(obj, name)
    if frame is None:
        if require_uid:
            raise InputTypeError(
                f"{name} must be a tracs.Trajectories or a GeoDataFrame with a 'uid' column, "
                f"got {type(obj).__name__}"
            )
        xy = as_coordinates(obj, name)
        if crs is None:
            raise InputError(f"{name} is a coordinate array but there is no CRS to read it in")
        geoms = gpd.GeoSeries(gpd.points_from_xy(xy[:, 0], xy[:, 1]), crs=crs)
        lat, lon = _wgs84_points(geoms, name)
        return rows_batch(lat, lon, crs=crs)

    geoms = frame.geometry if isinstance(frame, gpd.GeoDataFrame) else frame
    lat, lon = _wgs84_points(geoms, name)
    uid = track = times = None
    if isinstance(frame, gpd.GeoDataFrame):
        if "uid" in frame.columns:
            uid = frame["uid"].to_numpy(dtype=object)
            if pd.isna(frame["uid"]).any():
                raise InputError(f"{name} has rows without a uid")
        if "trajectory" in frame.columns:
            track = frame["trajectory"].to_numpy(dtype=object)
        times = _times(frame)
    if require_uid and uid is None:
        raise InputError(f"{name} needs a 'uid' column (one trajectory owner per row)")
    if uid is not None and track is None:
        track = uid
    return rows_batch(lat, lon, uid, track, times, geoms.crs)


def as_coordinates(obj, name: str) -> np.ndarray:
    """Validate an ``(N, 2)`` array of finite coordinates."""
    if isinstance(obj, (str, bytes)) or not hasattr(obj, "__len__"):
        raise InputTypeError(
            f"{name} must be a tracs.Trajectories, a GeoDataFrame, a GeoSeries or an (N, 2) "
            f"array, got {type(obj).__name__}"
        )
    xy = as_points(obj, name)
    if len(xy) == 0:
        raise InputError(f"{name} is empty")
    return xy


def same_length(original: Batch, other: Batch, name: str) -> None:
    """Check that ``other`` has one row per original row, for the same users."""
    if other.n_points != original.n_points:
        raise InputError(
            f"{name} must have one row per original row ({original.n_points}), got {other.n_points}"
        )
    if other.keys is not None and original.keys is not None:
        differ = np.flatnonzero(
            np.asarray([str(a) for a in other.keys]) != np.asarray([str(b) for b in original.keys])
        )
        if len(differ):
            raise InputError(
                f"{name} rows must correspond in order to the original rows; first mismatch at "
                f"row {int(differ[0])} (uid {other.keys[differ[0]]!r} vs {original.keys[differ[0]]!r})"
            )


def unwrap_longitudes(original: Batch, reports: dict[str, Batch]) -> tuple[Batch, dict[str, Batch]]:
    """Rows whose longitudes go the short way round across the antimeridian.

    Along each trajectory (consecutive rows of one ``track``), a step of more than
    180° in longitude is taken the other way round (±360°), so a trip from 179.9°E
    to 179.9°W is drawn across the date line, not across the whole map.  A report
    takes the copy of its longitude (±360°) nearest to its true point's.  Leaflet
    draws longitudes beyond ±180° on the next copy of the world.  Latitudes and
    everything else are unchanged; inputs that never cross come back as they were.
    """
    lon = original.coords[:, 0]
    if len(lon) < 2:
        return original, reports
    track = original.column("track")
    track = track if track is not None else np.zeros(len(lon))
    same = track[1:] == track[:-1]
    turns = np.where(same, -360.0 * np.round(np.diff(lon) / 360.0), 0.0)
    if not np.any(turns):
        shifted = original
    else:
        # cumulative turns restart at every new trajectory
        cumulative = np.concatenate([[0.0], np.cumsum(turns)])
        starts = np.flatnonzero(np.concatenate([[True], ~same]))
        cumulative -= np.repeat(cumulative[starts], np.diff(np.append(starts, len(lon))))
        shifted = _replace_lon(original, lon + cumulative)
    adjusted = {}
    for name, rows in reports.items():
        turn = 360.0 * np.round((shifted.coords[:, 0] - rows.coords[:, 0]) / 360.0)
        adjusted[name] = _replace_lon(rows, rows.coords[:, 0] + turn) if np.any(turn) else rows
    return shifted, adjusted


def _replace_lon(rows: Batch, lon: np.ndarray) -> Batch:
    return rows.with_coords(np.column_stack([lon, rows.coords[:, 1]]))
