"""Check-ins -> trajectories: per user, optionally split at time gaps, projected to metres.

All steps are vectorised over the whole table (no Python loop over users or rows).
Their order is fixed and documented in :class:`~data_loaders.GroupingReport`:
(stable) sort by (user, time) if needed → split → de-duplicate consecutive repeats
→ drop short trajectories → project.
"""

from __future__ import annotations

import numbers

import geopandas as gpd
import numpy as np
import pandas as pd

from tracs.errors import InputError, InputTypeError
from tracs.geo import to_metric
from tracs.io.checkins import SOURCE_COLUMN, user_order_keys
from tracs.io.report import LoadReport
from tracs.trajectories import Trajectories

from .generic import load_checkins
from .grouping_report import GroupingReport

__all__ = ["to_trajectories"]


def _check_gap(split_gap):
    if split_gap is None:
        return None
    if isinstance(split_gap, bool) or (isinstance(split_gap, numbers.Number)
                                       and not isinstance(split_gap, np.timedelta64)):
        raise InputTypeError("split_gap must be a time span such as pd.Timedelta('3h') or '3h', "
                             f"not a bare number ({split_gap!r}): the unit would be ambiguous")
    try:
        gap = pd.Timedelta(split_gap)
    except (TypeError, ValueError) as exc:
        raise InputError(f"split_gap {split_gap!r} is not a time span") from exc
    if pd.isna(gap) or gap <= pd.Timedelta(0):
        raise InputError(f"split_gap must be a positive time span, got {split_gap!r}")
    return gap


def _same_place(frame: gpd.GeoDataFrame, xy: np.ndarray) -> np.ndarray:
    """``out[i]``: row ``i`` is at the same place as row ``i - 1`` (``out[0]`` False).

    Same place: the same ``poi_id`` when both rows have one, else identical coordinates.
    """
    same_xy = np.zeros(len(frame), dtype=bool)
    same_xy[1:] = np.all(xy[1:] == xy[:-1], axis=1)
    if "poi_id" not in frame.columns:
        return same_xy
    codes = pd.factorize(frame["poi_id"])[0]  # -1 for missing
    known = np.zeros(len(frame), dtype=bool)
    known[1:] = (codes[1:] >= 0) & (codes[:-1] >= 0)
    same_id = np.zeros(len(frame), dtype=bool)
    same_id[1:] = codes[1:] == codes[:-1]
    return np.where(known, same_id, same_xy)


def _check_missing_times(checkins, times: pd.Series) -> None:
    """Only points the loader reported as having no time of their own (GPX points
    without ``<time>``, ``LoadReport.untimed``) may lack a time."""
    missing = times.isna().to_numpy()
    if not missing.any():
        return
    report = checkins.attrs.get("report")
    column = SOURCE_COLUMN.get(report.get("position", "line")) if isinstance(report, LoadReport) else None
    if column is None or column not in checkins.columns or \
            not np.isin(checkins[column].to_numpy()[missing], report.untimed).all():
        raise InputError(f"{int(missing.sum())} check-ins have no time (only points that the loader "
                         "reports as untimed, such as GPX points without <time>, may lack one)")


def _time_keys(times: pd.Series, ukey: np.ndarray) -> np.ndarray:
    """Integer ordering keys of the times; a missing time (a GPX point without ``<time>``)
    takes the key of the previous row of its group in the input order (of the next one
    at the start of a group), so a stable sort leaves it where it is."""
    times = times.astype("datetime64[ns, UTC]" if isinstance(times.dtype, pd.DatetimeTZDtype)
                        else "datetime64[ns]")
    missing = times.isna().to_numpy()
    tkey = times.array.asi8.copy()
    if missing.any():
        keys = pd.Series(pd.arrays.IntegerArray(tkey, missing))
        by = keys.groupby(ukey, sort=False)
        filled = by.ffill().fillna(by.bfill()).fillna(0).to_numpy(dtype=np.int64)
        tkey[missing] = filled[missing]
    return tkey


def to_trajectories(checkins, *, split_gap=None, min_points: int = 1,
                    dedupe_consecutive: bool = False, crs="utm", by=None) -> Trajectories:
    """Group check-ins into trajectories, in time order, projected to metres.

    Parameters
    ----------
    checkins : geopandas.GeoDataFrame or pandas.DataFrame
        A loader's output (``uid``, ``datetime``, point geometry, optional
        ``poi_id``).  A plain DataFrame is first read by
        :func:`~data_loaders.load_checkins` with its default column names.
    split_gap : pandas.Timedelta-like, optional
        ``None``: one trajectory per user.  Otherwise a user's check-ins are split
        where the time between two consecutive ones *exceeds* ``split_gap``
        (e.g. ``"3h"``; a gap of exactly ``split_gap`` does not split).
    min_points : int, default 1
        Drop trajectories with fewer points (counted after de-duplication).
    dedupe_consecutive : bool, default False
        Drop a check-in at the same place as the previous one of its trajectory
        (same ``poi_id`` when both have one, else identical coordinates); the
        first of a run is kept.
    crs : "utm", None or pyproj.CRS-like, default "utm"
        ``"utm"``: the local UTM zone (:func:`tracs.geo.local_metric_crs`);
        ``None``: keep the input CRS; otherwise that (metric) CRS.
    by : str, optional
        A column of trajectory ids (e.g. GPX segments, trip ids): rows are ordered
        by (user, that column, time) and a trajectory also starts where it changes.

    Returns
    -------
    tracs.Trajectories
        Rows in (user, time) order, ties in input order, with a ``trajectory`` id
        (0 .. T-1, replacing any ``trajectory`` column of the input); a point
        with no time (a GPX point without ``<time>``) keeps its place after the
        previous point of its user in the input and never starts a trajectory
        by a gap; ``report``
        is a :class:`~data_loaders.GroupingReport` that counts every point and
        trajectory dropped and why.  The frame keeps the loader's
        ``attrs["report"]``.

    Raises
    ------
    TypeError, ValueError
        Bad options, missing columns, or nothing left.
    """
    gap = _check_gap(split_gap)
    if isinstance(min_points, bool) or not isinstance(min_points, numbers.Integral):
        raise InputTypeError(f"min_points must be an int, got {type(min_points).__name__}")
    if min_points < 1:
        raise InputError(f"min_points must be >= 1, got {min_points}")
    if not isinstance(dedupe_consecutive, (bool, np.bool_)):
        raise InputTypeError("dedupe_consecutive must be a bool")
    if not isinstance(checkins, gpd.GeoDataFrame):
        if not isinstance(checkins, pd.DataFrame):
            raise InputTypeError(f"checkins must be a (Geo)DataFrame, got {type(checkins).__name__}")
        checkins = load_checkins(checkins)
    missing = [c for c in ("uid", "datetime") if c not in checkins.columns]
    if missing:
        raise InputError(f"checkins lack column(s) {missing}: load them with a data_loaders "
                         "function (or rename the columns)")
    if len(checkins) == 0:
        raise InputError("no check-ins")
    times = checkins["datetime"]
    if not (isinstance(times.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(times.dtype)):
        raise InputTypeError(f"the datetime column must hold datetimes, got dtype {times.dtype}")
    _check_missing_times(checkins, times)
    if checkins["uid"].isna().any():
        raise InputError(f"{int(checkins['uid'].isna().sum())} check-ins have no user id")

    # order by (user, time), stably; only touch the frame when it is not already
    ukey = user_order_keys(checkins["uid"].reset_index(drop=True))
    n_users = len(np.unique(ukey))
    if by is not None:
        if by not in checkins.columns:
            raise InputError(f"no trajectory column {by!r} among {list(checkins.columns)}")
        group = pd.factorize(checkins[by].reset_index(drop=True), sort=True)[0].astype(np.int64)
        dense = np.unique(ukey, return_inverse=True)[1].astype(np.int64)
        ukey = dense * (int(group.max()) + 2) + group  # order and split by (user, trajectory column)
    tkey = _time_keys(times, ukey)
    du, dt = np.diff(ukey), np.diff(tkey)
    reordered = bool(np.any((du < 0) | ((du == 0) & (dt < 0))))
    if reordered:
        order = np.lexsort((tkey, ukey))
        ukey, tkey = ukey[order], tkey[order]
        du, dt = np.diff(ukey), np.diff(tkey)
    else:
        order = None

    new = np.ones(len(ukey), dtype=bool)
    new[1:] = du != 0
    if gap is not None:
        new[1:] |= dt > gap.value
    traj = np.cumsum(new) - 1
    n_split = int(traj[-1]) + 1

    frame = checkins if order is None else checkins.iloc[order]
    keep = np.ones(len(ukey), dtype=bool)
    deduped = 0
    if dedupe_consecutive:
        import shapely

        xy = shapely.get_coordinates(np.asarray(frame.geometry.array))
        repeat = _same_place(frame, xy) & ~new
        keep &= ~repeat
        deduped = int(repeat.sum())
    counts = np.bincount(traj[keep], minlength=n_split)
    short = (counts > 0) & (counts < min_points)
    keep &= ~short[traj]
    if not keep.any():
        raise InputError(f"no trajectory has at least min_points={min_points} points")

    rows = np.flatnonzero(keep)
    kept_traj = traj[rows]
    starts = np.r_[True, kept_traj[1:] != kept_traj[:-1]]
    ids = np.cumsum(starts) - 1
    out = frame.iloc[rows].reset_index(drop=True) if not keep.all() or order is not None \
        else frame.reset_index(drop=True)
    if "trajectory" in out.columns:  # from an earlier grouping: replaced
        out["trajectory"] = ids.astype(np.int64)
    else:
        out.insert(1, "trajectory", ids.astype(np.int64))
    offsets = np.r_[np.flatnonzero(starts), len(rows)].astype(np.int64)
    if crs == "utm":
        out = to_metric(out)
    elif crs is not None:
        out = to_metric(out, crs)
    load = checkins.attrs.get("report")
    report = GroupingReport(
        points_in=len(checkins), users=n_users,
        reordered=reordered, split_gap=None if gap is None else str(gap),
        trajectories_split=n_split, dedupe_consecutive=bool(dedupe_consecutive),
        points_deduplicated=deduped, min_points=int(min_points),
        trajectories_too_short=int(short.sum()), points_too_short=int(counts[short].sum()),
        trajectories=len(offsets) - 1, points=len(rows),
        crs=out.crs.to_string() if out.crs is not None else "None",
        load=load if isinstance(load, LoadReport) else None)
    return Trajectories(out, offsets, report=report)
