"""Batched keyed draws for NumPy-level samplers (the discrete baselines).

Bit for bit the draws of :mod:`tracs.random` (``draw_u64`` / ``draw_uniform`` of
``(kind, key, stream, index, draw)``), for many entries in one compiled pass: the
Philox block (``tracs.random.kernels.philox4x32``, compiled inline) makes the loop over
entries straight-line (vectorisable) code; the ChaCha20 key (``"secure"``) takes the scalar path of
:mod:`tracs.random.kernels`.

* :func:`uniform_at` / :func:`words_at` — one draw per entry, each entry with its own
  ``(stream, index, draw)``;
* :func:`proposals` — an exact uniform integer and a uniform per (point, proposal),
  from one generator block, for rejection samplers.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..random.kernels import draw_u64, draw_u64_pair, philox4x32

__all__ = ["uniform_at", "words_at", "proposals"]

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_U11 = np.uint64(11)
_ONE = np.uint64(1)
_TWO_M53 = 2.0 ** -53


def _is_philox(key) -> bool:
    return np.asarray(key).dtype == np.uint64


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _philox_words(key, stream, index, draw, out):  # pragma: no cover - compiled
    k0 = np.uint64(key[0]) & _M32
    k1 = np.uint64(key[1]) & _M32
    for i in range(out.shape[0]):
        s = stream[i]
        d = draw[i]
        c0, c1, c2, c3 = philox4x32(d >> _ONE, index[i] & _M32, s & _M32, s >> _S32, k0, k1)
        low = c0 | (c1 << _S32)
        high = c2 | (c3 << _S32)
        out[i] = high if d & _ONE else low


@numba.njit(cache=True, nogil=True)
def _scalar_words(kind, key, stream, index, draw, out):  # pragma: no cover - compiled
    for i in range(out.shape[0]):
        out[i] = draw_u64(kind, key, stream[i], index[i], draw[i])


def words_at(kind, key, stream, index, draw) -> np.ndarray:
    """``draw_u64(kind, key, stream[i], index[i], draw[i])`` for every ``i`` (1-D uint64 arrays)."""
    out = np.empty(len(stream), dtype=np.uint64)
    if not out.size:
        return out
    if _is_philox(key):
        _philox_words(key, stream, index, draw, out)
    else:
        _scalar_words(kind, key, stream, index, draw, out)
    return out


def uniform_at(kind, key, stream, index, draw) -> np.ndarray:
    """``draw_uniform(kind, key, stream[i], index[i], draw[i])`` for every ``i``."""
    return (words_at(kind, key, stream, index, draw) >> _U11).astype(np.float64) * _TWO_M53


@numba.njit(cache=True, nogil=True)
def _proposals(kind, key, stream, index, rows, first_pair, m, n, redraw, cand, u):  # pragma: no cover
    limit = (np.uint64(0xFFFFFFFFFFFFFFFF) // np.uint64(n)) * np.uint64(n)
    for r in range(rows.shape[0]):
        s = stream[rows[r]]
        idx = index[rows[r]]
        for j in range(m):
            pair = np.uint64(first_pair + j)
            a, b = draw_u64_pair(kind, key, s, idx, pair)
            attempt = np.uint64(1)
            while a >= limit:  # probability below n / 2^64
                a = draw_u64(kind, key, s, idx, np.uint64(2) * pair + attempt * np.uint64(redraw))
                attempt += np.uint64(1)
            cand[r, j] = np.int64(a % np.uint64(n))
            u[r, j] = float(np.int64(b >> _U11)) * _TWO_M53


def proposals(kind, key, stream, index, rows, first_pair: int, m: int, n: int, redraw: int):
    """Draw pairs ``first_pair … first_pair + m − 1`` of points ``rows``: an exact uniform
    integer in ``0 … n − 1`` from the even word (redrawn at ``even + redraw·r`` while it
    falls in the last incomplete block of ``n``) and a uniform from the odd word.

    Returns ``(cand int64 (b, m), u float64 (b, m))``; the same numbers as
    ``integers(draw = 2·pair)`` and ``uniform(draw = 2·pair + 1)`` of
    :class:`tracs.baselines._draws.PointDraws`.
    """
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    cand = np.empty((rows.size, int(m)), dtype=np.int64)
    u = np.empty((rows.size, int(m)))
    if cand.size:
        _proposals(kind, key, stream, index, rows, int(first_pair), int(m), int(n), int(redraw), cand, u)
    return cand, u


key_on_sources(globals())  # cached kernels follow every source they compile in
