"""Compiled rejection sampler of the exponential mechanism (one pass per row, no Python per proposal).

The rows' proposals are those of :meth:`tracs.baselines._draws.RowDraws.proposals`:
proposal ``j`` of a row is an exact uniform POI index from word ``2(p + j)`` of the
row's own stream (redrawn at ``2(p + j) + redraw·r`` while it falls in the last
incomplete block of ``|P|``) and a uniform from word ``2(p + j) + 1``, ``p`` the
step's first pair.  A proposal is accepted when the uniform is below
``exp(−s·d(x, y))`` and, for a row with a disc, ``y`` lies within the disc (the
public candidate set of NGram).  The kernel scans a row's proposals in order and
stops at the first accepted one, so it returns the same POI as the blocked NumPy
sampler of :mod:`tracs.baselines._exponential_sampler` (same words, same arithmetic; the exponential
is the C library's instead of NumPy's, which can differ in the last bit: the two
agree unless a uniform on the ``2^-53`` grid falls exactly on the differing bit).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._numba_cache import key_on_sources
from .._jit import helper
from ..random.kernels import draw_u64, draw_u64_pair
from ._draws import _REDRAW

__all__ = ["rejection_rows", "candidate_mask"]

_U11 = np.uint64(11)
_TWO_PI = 2.0 * math.pi
_TWO_M53 = 2.0 ** -53


@helper
def _in_sectors(qx, qy, reports, k):  # pragma: no cover - compiled
    """Whether ``(qx, qy)`` lies in every reported sector (rows: has, origin x, origin y, sector)."""
    factor = k / _TWO_PI
    for q in range(reports.shape[0]):
        if reports[q, 0] != 0.0:
            floor = math.floor(math.atan2(qy - reports[q, 2], qx - reports[q, 1]) * factor)
            if not (floor == reports[q, 3] or floor == reports[q, 3] - k):
                return False
    return True


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _rejection_kernel(kind, key, stream, index, rows, first_pair, budget, redraw, px, py, x, scale,
                      disc, sectors, sector_k, out, done):  # pragma: no cover - compiled
    n = px.shape[0]
    limit = (np.uint64(0xFFFFFFFFFFFFFFFF) // np.uint64(n)) * np.uint64(n)
    has_disc = disc.shape[0] > 0
    has_sectors = sectors.shape[0] > 0
    for r in range(rows.shape[0]):
        row = rows[r]
        s = stream[r]
        idx = index[r]
        x0 = x[row, 0]
        y0 = x[row, 1]
        neg = -scale[row]
        for j in range(budget):
            pair = np.uint64(first_pair + j)
            a, b = draw_u64_pair(kind, key, s, idx, pair)
            attempt = np.uint64(1)
            while a >= limit:  # probability below |P| / 2^64
                a = draw_u64(kind, key, s, idx, np.uint64(2) * pair + attempt * np.uint64(redraw))
                attempt += np.uint64(1)
            c = np.int64(a % np.uint64(n))
            u = float(np.int64(b >> _U11)) * _TWO_M53
            dx = x0 - px[c]
            dy = y0 - py[c]
            dx *= dx
            dy *= dy
            dx += dy
            if not u < math.exp(math.sqrt(dx) * neg):
                continue
            if has_disc:
                ex = px[c] - disc[r, 0]
                ey = py[c] - disc[r, 1]
                if not ex * ex + ey * ey <= disc[r, 2]:
                    continue
            if has_sectors and not _in_sectors(px[c], py[c], sectors[r], sector_k[r]):
                continue
            out[row] = c
            done[row] = True
            break


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _mask_kernel(px, py, rows, cand, disc, sectors, sector_k, out):  # pragma: no cover - compiled
    has_disc = disc.shape[0] > 0
    has_sectors = sectors.shape[0] > 0
    shared = cand.shape[0] == 1
    for r in range(rows.shape[0]):
        row = rows[r]
        line = 0 if shared else r
        for j in range(cand.shape[1]):
            c = cand[line, j]
            ok = True
            if has_disc:
                ex = px[c] - disc[row, 0]
                ey = py[c] - disc[row, 1]
                ok = ex * ex + ey * ey <= disc[row, 2]
            if ok and has_sectors:
                ok = _in_sectors(px[c], py[c], sectors[row], sector_k[row])
            out[r, j] = ok


def candidate_mask(points, rows, cand, disc=None, sectors=None, sector_k=None) -> np.ndarray:
    """Membership of candidates ``cand`` (``(b, m)``, or ``(1, m)`` shared by all rows) in the
    candidate sets of ``rows`` (the tables of :func:`rejection_rows`, indexed by row): the
    predicate of :class:`~tracs.baselines._exponential_sampler.Disc` / :class:`~tracs.baselines._sectors.Sectors`,
    compiled.  Returns bool ``(len(rows), m)``."""
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    cand = np.ascontiguousarray(np.atleast_2d(cand), dtype=np.int64)
    disc = np.zeros((0, 3)) if disc is None else np.ascontiguousarray(disc, dtype=np.float64)
    if sectors is None:
        sectors, sector_k = np.zeros((0, 1, 4)), np.zeros(0)
    out = np.empty((rows.size, cand.shape[1]), dtype=np.bool_)
    _mask_kernel(np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1]), rows, cand, disc,
                 np.ascontiguousarray(sectors, dtype=np.float64), np.ascontiguousarray(sector_k, dtype=np.float64),
                 out)
    return out


def rejection_rows(points, x, scale, draws, rows, budget: int, out, done, disc=None, sectors=None,
                   sector_k=None) -> None:
    """Rejection sampling of ``rows`` (positions in ``x``) with their first ``budget`` proposals.

    Parameters
    ----------
    points : numpy.ndarray, shape (|P|, 2)
    x : numpy.ndarray, shape (n, 2)
        True locations.
    scale : numpy.ndarray, shape (n,)
        ``ε/(2D)`` of each row.
    draws : tracs.baselines._draws.RowDraws
        The step's draws, one row per row of ``x``.
    rows : numpy.ndarray of intp
        The rows to sample.
    budget : int
        Proposals per row.
    out, done : numpy.ndarray, shape (n,)
        Filled for the rows that accept (``out`` the POI index, ``done`` True).
    disc : numpy.ndarray, shape (len(rows), 3), optional
        Centre ``(cx, cy)`` and squared radius of each row's candidate disc.
    sectors, sector_k : numpy.ndarray, shapes (len(rows), R, 4) and (len(rows),), optional
        Each row's reported sectors (has, origin x, origin y, sector) and sector count:
        a candidate must lie in every sector the row has (TP's target points; the test
        of :func:`tracs.baselines._sectors.in_sector`, whose arctangent is NumPy's).
    """
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    if not rows.size or budget <= 0:
        return
    src = draws.source
    point_rows = draws.rows[rows]
    disc = np.zeros((0, 3)) if disc is None else np.ascontiguousarray(disc, dtype=np.float64)
    if sectors is None:
        sectors, sector_k = np.zeros((0, 1, 4)), np.zeros(0)
    sectors = np.ascontiguousarray(sectors, dtype=np.float64)
    sector_k = np.ascontiguousarray(sector_k, dtype=np.float64)
    _rejection_kernel(src.kind, src.key, np.ascontiguousarray(src.stream[point_rows]),
                      np.ascontiguousarray(src.index[point_rows]), rows, int(draws.base // np.uint64(2)),
                      int(budget), _REDRAW, np.ascontiguousarray(points[:, 0]),
                      np.ascontiguousarray(points[:, 1]), np.ascontiguousarray(x, dtype=np.float64),
                      np.ascontiguousarray(scale, dtype=np.float64), disc, sectors, sector_k, out, done)


key_on_sources(globals())  # cached kernels follow every source they compile in
