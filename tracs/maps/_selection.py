"""Which users and rows a map draws: user selection and the point cap, each user drawn as a
:class:`tracs.Batch` of its rows."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

from .._validation import check_integer
from ..errors import InputError
from ..trajectory_batch import Batch

__all__ = ["select_users", "ROW"]

#: the column of a drawn user's batch holding the positions of its rows in the input
ROW = "row"


def _wanted_codes(users, uniques: np.ndarray) -> np.ndarray:
    """Codes (positions in ``uniques``) of the requested users, in the requested order."""
    n_users = len(uniques)
    if users is None:
        return np.arange(n_users)
    if isinstance(users, numbers.Integral) and not isinstance(users, bool):
        if users < 1:
            raise InputError(f"users must be >= 1 when given as a count, got {users}")
        return np.arange(min(int(users), n_users))
    if isinstance(users, (str, bytes)) or not hasattr(users, "__iter__"):
        users = [users]
    wanted = list(users)
    if not wanted:
        raise InputError("users is empty")
    exact = {value: code for code, value in enumerate(uniques)}
    by_text = {str(value): code for code, value in enumerate(uniques)}
    codes, missing = [], []
    for user in wanted:
        code = exact.get(user) if _hashable(user) else None
        if code is None:
            code = by_text.get(str(user))
        if code is None:
            missing.append(user)
        elif code not in codes:
            codes.append(code)
    if missing:
        shown = ", ".join(repr(u) for u in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(f"{len(missing)} requested user(s) not in the data: {shown}")
    return np.asarray(codes, dtype=np.int64)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def select_users(batch: Batch, users=None, max_points: int = 50_000, max_users: int = 200, *,
                 stacklevel: int = 3) -> list[Batch]:
    """Group the rows of ``batch`` per user (first-appearance order) and apply the point cap.

    Parameters
    ----------
    batch : tracs.Batch
        The rows, keyed by their owner, with a ``"track"`` column of trajectory ids: a new
        trajectory starts wherever the trajectory id changes between consecutive rows of a user.
    users : None, int or iterable
        ``None`` for every user, an int ``k`` for the first ``k`` users, or the
        user ids to draw (matched exactly, then by their text).
    max_points : int
        Most rows drawn.  Whole users are kept in order while they fit; if even the
        first does not, its first ``max_points`` rows are drawn.
    max_users : int
        Most users drawn (each adds layers to the page and the layer control).
        Whenever rows or users are left out a ``UserWarning`` says how many —
        never a silent cut.

    Returns
    -------
    list of tracs.Batch
        One per user drawn: its rows in input order, offsets where its track changes, the
        user's id as every row's key and the rows' positions in ``batch`` as column :data:`ROW`.
    """
    max_points = check_integer(max_points, "max_points")
    max_users = check_integer(max_users, "max_users")
    codes, uniques = pd.factorize(pd.Series(batch.keys, dtype=object), sort=False)
    uniques = np.asarray(uniques, dtype=object)
    track_codes = pd.factorize(pd.Series(batch.column("track"), dtype=object), sort=False)[0]
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(uniques)))])

    wanted = _wanted_codes(users, uniques)
    sizes = starts[wanted + 1] - starts[wanted]
    requested = int(sizes.sum())
    fits = (np.cumsum(sizes) <= max_points) & (np.arange(len(sizes)) < max_users)
    n_keep = int(np.argmin(fits)) if not fits.all() else len(wanted)
    keep_rows = None
    if n_keep == 0:
        n_keep, keep_rows = 1, int(max_points)

    groups = []
    for code in wanted[:n_keep]:
        rows = order[starts[code]:starts[code + 1]]
        if keep_rows is not None:
            rows = rows[:keep_rows]
        t = track_codes[rows]
        breaks = np.flatnonzero(t[1:] != t[:-1]) + 1
        offsets = np.concatenate([[0], breaks, [len(rows)]]).astype(np.int64)
        groups.append(Batch(batch.coords[rows], offsets, keys=uniques[np.full(len(rows), code)],
                            columns={ROW: rows}, crs=batch.crs))

    drawn = sum(g.n_points for g in groups)
    if drawn < requested:
        warnings.warn(
            f"the map draws {drawn:,} of {requested:,} points ({len(groups):,} of {len(wanted):,} "
            f"users) to stay within max_points={max_points:,} and max_users={max_users:,}; "
            "choose the users to draw or raise the caps",
            UserWarning,
            stacklevel=stacklevel,
        )
    return groups
