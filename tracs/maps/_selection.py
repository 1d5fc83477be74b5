"""Which users and rows a map draws: user selection and the point cap."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_integer
from ..errors import InputError

__all__ = ["UserRows", "select_users"]


@dataclass(frozen=True)
class UserRows:
    """The rows of one user: indices into the input (row order) and trajectory offsets."""

    uid: object
    rows: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)


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


def select_users(uid: np.ndarray, track: np.ndarray, users=None, max_points: int = 50_000,
                 max_users: int = 200, *, stacklevel: int = 3) -> list[UserRows]:
    """Group rows per user (first-appearance order) and apply the point cap.

    Parameters
    ----------
    uid, track : object arrays of length N
        Owner and trajectory id of each row; a new trajectory starts wherever the
        trajectory id changes between consecutive rows of a user.
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
    list of UserRows
    """
    max_points = check_integer(max_points, "max_points")
    max_users = check_integer(max_users, "max_users")
    codes, uniques = pd.factorize(pd.Series(uid, dtype=object), sort=False)
    uniques = np.asarray(uniques, dtype=object)
    track_codes = pd.factorize(pd.Series(track, dtype=object), sort=False)[0]
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
        groups.append(UserRows(uniques[code], rows, offsets))

    drawn = sum(len(g) for g in groups)
    if drawn < requested:
        warnings.warn(
            f"the map draws {drawn:,} of {requested:,} points ({len(groups):,} of {len(wanted):,} "
            f"users) to stay within max_points={max_points:,} and max_users={max_users:,}; "
            "choose the users to draw or raise the caps",
            UserWarning,
            stacklevel=stacklevel,
        )
    return groups
