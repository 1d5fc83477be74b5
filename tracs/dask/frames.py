"""Per-user perturbation of a pandas (Geo)DataFrame in process: the definition every partition follows.

:func:`perturb_frame` groups the rows per user (and per trajectory id, if given),
orders them in time and perturbs them as a :class:`tracs.Batch` keyed by the users' ids
(``tracs.engine.perturb_many(perturber, batch, rng=seed)``, the path of
:func:`tracs.release.release_points`); :func:`check_user_ids` refuses a user column whose ids are of more
than one type (``7`` and ``"7"`` name one keyed stream in :mod:`tracs.random`, so
they would draw the same noise).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import engine
from ..errors import InputError
from ..methods import keyed
from ..trajectory_batch import Batch

__all__ = ["perturb_frame", "check_user_ids", "id_kind"]


def _order(frame: pd.DataFrame, user: str, trajectory, time, position) -> np.ndarray:
    """Row order: by user, trajectory id, time, then input position (a stable total order)."""
    columns = [position]
    if time is not None:
        columns.append(frame[time].to_numpy())
    if trajectory is not None:
        columns.append(frame[trajectory].to_numpy())
    columns.append(frame[user].to_numpy())
    return np.lexsort(columns)


def _coordinates(frame, x, y):
    """``(N, 2)`` float coordinates from columns ``x``, ``y`` or the point geometry."""
    if x is None:
        geometry = frame.geometry
        if len(geometry) and not (geometry.geom_type == "Point").all():
            raise InputError("perturb_frame: every geometry must be a point")
        return np.column_stack([geometry.x.to_numpy(np.float64), geometry.y.to_numpy(np.float64)])
    return np.column_stack([frame[x].to_numpy(np.float64), frame[y].to_numpy(np.float64)])


def _check_columns(frame, user, trajectory, time, x, y):
    needed = [c for c in (user, trajectory, time, x, y) if c is not None]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputError(f"perturb_frame: missing column(s) {', '.join(map(repr, missing))}")
    if x is None and not hasattr(frame, "geometry"):
        raise InputError("perturb_frame: give x= and y= columns, or a GeoDataFrame with point geometry")
    if (x is None) != (y is None):
        raise InputError("perturb_frame: give both x= and y=, or neither (point geometry)")
    if frame[user].isna().any():
        raise InputError(f"perturb_frame: column {user!r} has missing user ids")
    check_user_ids([id_kind(frame[user])], column=user, caller="perturb_frame")


#: the names of :func:`pandas.api.types.infer_dtype` for user ids, as the messages say them
_KINDS = {"string": "text", "integer": "integer", "floating": "floating", "bytes": "bytes"}


def id_kind(ids) -> str | None:
    """The type of a column of user ids: ``"integer"``, ``"floating"``, ``"text"``, ``"bytes"``, …

    Returns None when there are no ids, and ``"mixed (int, str)"`` (the value types
    found) when the ids are of more than one type.
    """
    kind = pd.api.types.infer_dtype(ids, skipna=True)
    if kind == "empty":
        return None
    if kind.startswith("mixed"):
        types = pd.Series(np.asarray(ids, dtype=object)).map(type).unique()  # for the message only
        return f"mixed ({', '.join(sorted(t.__name__ for t in types))})"
    return _KINDS.get(kind, kind)


def check_user_ids(kinds, *, column: str = "uid", caller: str = "perturb") -> None:
    """Refuse user ids of more than one type (the :func:`id_kind` of each part of a column).

    Ids of different types are different users as written, but a keyed stream is
    named by the id's value (:func:`tracs.random.stream_ids`: ``7`` and ``"7"`` are
    one stream), so two such users would draw the same noise: refused, never merged.

    Raises
    ------
    ValueError
        One line naming the column and the types found.
    """
    found = sorted({kind for kind in kinds if kind is not None})
    if len(found) > 1 or (found and found[0].startswith("mixed")):
        raise InputError(f"{caller}: column {column!r} holds user ids of more than one type "
                         f"({' and '.join(found)}); 7 and '7' would draw the same noise: give every id one type")


def _released(frame, perturber, seed, user, trajectory, time, x, y, position, **kwargs):
    """Released ``(N, 2)`` coordinates of ``frame``'s rows, in the frame's own row order."""
    order = _order(frame, user, trajectory, time, position)
    coords = _coordinates(frame, x, y)[order]
    users = frame[user].to_numpy()[order]
    new = users[1:] != users[:-1]
    if trajectory is not None:
        ids = frame[trajectory].to_numpy()[order]
        new = new | (ids[1:] != ids[:-1])
    starts = np.flatnonzero(np.r_[True, np.asarray(new, dtype=bool)])
    batch = Batch(coords, np.r_[starts, len(order)], keys=users)
    out = engine.perturb_many(perturber, batch, rng=seed, keyed=keyed(perturber), **kwargs).coords
    released = np.empty_like(out)
    released[order] = out
    return released


def _with_coordinates(frame, released, x, y):
    result = frame.copy()
    if x is None:
        from geopandas import points_from_xy

        result = result.set_geometry(points_from_xy(released[:, 0], released[:, 1], crs=frame.crs))
    else:
        result[x] = released[:, 0]
        result[y] = released[:, 1]
    return result


def perturb_frame(frame, perturber, *, seed, user="uid", trajectory=None, time=None, x=None, y=None,
                  **kwargs):
    """Perturb every user's points in a pandas frame (in process).

    Parameters
    ----------
    frame : pandas.DataFrame or geopandas.GeoDataFrame
        One row per point, coordinates in the perturber's metric CRS (metres).
    perturber : a tracs perturber or baseline
    seed : int, SeedSequence, "secure"-free seed accepted by :mod:`tracs.random`
        Required (``None`` would draw a fresh seed per call, so partitions could
        not agree); use ``tracs.random.Secure(seed)`` for a secure generator.
    user : str
        Column of user ids: each user's stream is keyed by its id.
    trajectory : str, optional
        Column of trajectory ids within a user (a user's successive trajectories,
        ordered by id, get successive streams).  Default: one trajectory per user.
    time : str, optional
        Column giving the order of points within a trajectory; ties and ``None``
        keep the input's row order.
    x, y : str, optional
        Coordinate columns; omit both to use the point geometry of a GeoDataFrame.
    **kwargs
        Passed to :func:`tracs.engine.perturb_many` (e.g. ``workers=`` threads per partition).

    Returns
    -------
    Same type as ``frame``: same rows, order, index and columns, the coordinates
    replaced by the released ones.
    """
    if seed is None:
        raise InputError("perturb_frame: give a seed (int, SeedSequence or tracs.random.Secure(seed)); "
                         "without one, separate partitions could not agree on the key")
    _check_columns(frame, user, trajectory, time, x, y)
    if len(frame) == 0:
        return frame.copy()
    released = _released(frame, perturber, seed, user, trajectory, time, x, y,
                         np.arange(len(frame)), **kwargs)
    return _with_coordinates(frame, released, x, y)

