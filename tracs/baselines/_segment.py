"""TP's merge: the POIs on the segment between the two copies' releases, and a uniform pick among them.

:func:`on_segment` tests POIs against segments (NumPy, broadcast); :func:`pick_uniform`
picks among candidates found by a KD-tree ball; :func:`pick_on_segments` scans every
POI for each segment in a compiled pass, with the same arithmetic (so the same
candidates) as :func:`on_segment`, for segments whose ball holds many POIs.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from .._jit import helper

__all__ = ["on_segment", "pick_uniform", "pick_on_segments"]


def on_segment(px, py, a, b, tol):
    """Whether POIs ``(px, py)`` lie within ``tol`` of the segment ``[a, b]`` (broadcast).

    With ``s = b − a``, ``r = p − a`` and ``L = |s|``: ``|r × s| ≤ tol·L`` (near the
    line) and ``−tol·L ≤ r·s ≤ L² + tol·L`` (between the ends).
    """
    sx, sy = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1]
    rx, ry = px - a[..., 0], py - a[..., 1]
    length2 = sx * sx + sy * sy
    slack = tol * np.sqrt(length2)
    along = rx * sx + ry * sy
    across = rx * sy - ry * sx
    return (np.abs(across) <= slack) & (along >= -slack) & (along <= length2 + slack)


def pick_uniform(cand, owner, ok, rows, draws):
    """For each row, one of its candidates with ``ok`` set, uniformly at random.

    The ``c``-th of the row's candidates in increasing POI index, ``c`` an exact
    uniform integer from the row's own draw 0.
    """
    cand, owner = cand[ok], owner[ok]
    order = np.lexsort((cand, owner))
    cand, owner = cand[order], owner[order]
    first = np.searchsorted(owner, rows, side="left")
    count = np.searchsorted(owner, rows, side="right") - first
    return cand[first + draws.integers(np.arange(rows.size), 0, count)]


@helper
def _inside(px, py, ax, ay, sx, sy, length2, slack):  # pragma: no cover - compiled
    rx = px - ax
    ry = py - ay
    along = rx * sx + ry * sy
    across = rx * sy - ry * sx
    return abs(across) <= slack and along >= -slack and along <= length2 + slack


@numba.njit(cache=True, nogil=True)
def _segment_scan(px, py, a, b, tol, choice, out):  # pragma: no cover - compiled
    """``choice[r] < 0``: count the POIs on segment ``r`` into ``out[r]``; else the index of the
    ``choice[r]``-th of them (in increasing POI index) into ``out[r]``."""
    for r in range(a.shape[0]):
        ax, ay = a[r, 0], a[r, 1]
        sx = b[r, 0] - ax
        sy = b[r, 1] - ay
        length2 = sx * sx + sy * sy
        slack = tol * np.sqrt(length2)
        seen = 0
        for i in range(px.shape[0]):
            if _inside(px[i], py[i], ax, ay, sx, sy, length2, slack):
                if seen == choice[r]:
                    out[r] = i
                    break
                seen += 1
        if choice[r] < 0:
            out[r] = seen


def pick_on_segments(points, a, b, tol, draws) -> np.ndarray:
    """For each segment ``[a[r], b[r]]``, a POI on it, uniformly at random (every POI scanned).

    The ``c``-th POI on the segment in increasing index, ``c`` an exact uniform integer
    below their count from the row's own draw 0 (as :func:`pick_uniform`).
    """
    px, py = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
    a, b = np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64)
    count = np.empty(len(a), dtype=np.int64)
    _segment_scan(px, py, a, b, float(tol), np.full(len(a), -1, dtype=np.int64), count)
    choice = draws.integers(np.arange(len(a)), 0, count)  # every segment holds at least its two ends
    out = np.empty(len(a), dtype=np.int64)
    _segment_scan(px, py, a, b, float(tol), choice, out)
    return out


key_on_sources(globals())  # cached kernels follow every source they compile in
