"""Batched keyed draws: many points' uniforms at once, vectorised across points.

Bit for bit the draws of :mod:`tracs.random` (``draw_uniform(kind, key, stream,
index, draw)``), computed in loops whose body is the same straight-line Philox
block for every point, so that the compiler turns them into SIMD code (the inner
loop runs over points, one draw number at a time).  On a machine with AVX-512 this
is about ten times faster than one block per call; the ChaCha20 key (``"secure"``)
takes the scalar path of :mod:`tracs.random.kernels`.

* :func:`uniform_columns` — ``out[d, i]`` = draw ``d`` of point ``i`` (``width`` draws
  per point, the rows of :func:`tracs.random.keyed_uniforms` transposed);
* :func:`uniform_at` / :func:`words_at` — one draw per entry, each entry with its own
  ``(stream, index, draw)``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..random.kernels import draw_u64, draw_u64_pair, draw_uniform_pair

__all__ = ["uniform_columns", "uniform_at", "words_at", "proposals"]

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_U11 = np.uint64(11)
_ONE = np.uint64(1)
_PM0 = np.uint64(0xD2511F53)
_PM1 = np.uint64(0xCD9E8D57)
_PW0 = np.uint64(0x9E3779B9)
_PW1 = np.uint64(0xBB67AE85)
_TWO_M53 = 2.0 ** -53


@numba.njit(cache=True, nogil=True, inline="always")
def _philox(c0, c1, c2, c3, k0, k1):  # pragma: no cover - compiled
    # Philox4x32-10, the same rounds as tracs.random.kernels.philox4x32, kept here inlined:
    # calling that (not inlined) function from the loops below stops them being
    # vectorised, about 8 times slower (measured); test_keyed_draws checks the bits agree
    for _ in range(10):
        p0 = _PM0 * c0
        p1 = _PM1 * c2
        n0 = (p1 >> _S32) ^ c1 ^ k0
        n2 = (p0 >> _S32) ^ c3 ^ k1
        c1 = p1 & _M32
        c3 = p0 & _M32
        c0 = n0
        c2 = n2
        k0 = (k0 + _PW0) & _M32
        k1 = (k1 + _PW1) & _M32
    return c0, c1, c2, c3


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _philox_columns(key, stream, index, out):  # pragma: no cover - compiled
    # stream/index are the points' own slices: indexing them by the loop counter alone
    # (no offset) is what lets the compiler vectorise the loop
    k0 = np.uint64(key[0]) & _M32
    k1 = np.uint64(key[1]) & _M32
    width, n = out.shape
    for pair in range(width // 2):
        for i in range(n):
            s = stream[i]
            c0, c1, c2, c3 = _philox(np.uint64(pair), index[i] & _M32, s & _M32, s >> _S32, k0, k1)
            out[2 * pair, i] = float(np.int64((c0 | (c1 << _S32)) >> _U11)) * _TWO_M53
            out[2 * pair + 1, i] = float(np.int64((c2 | (c3 << _S32)) >> _U11)) * _TWO_M53
    if width % 2:
        pair = width // 2
        for i in range(n):
            s = stream[i]
            c0, c1, c2, c3 = _philox(np.uint64(pair), index[i] & _M32, s & _M32, s >> _S32, k0, k1)
            out[width - 1, i] = float(np.int64((c0 | (c1 << _S32)) >> _U11)) * _TWO_M53


@numba.njit(cache=True, nogil=True)
def _scalar_columns(kind, key, stream, index, out):  # pragma: no cover - compiled
    width, n = out.shape
    for i in range(n):
        s, idx = stream[i], index[i]
        for pair in range((width + 1) // 2):
            a, b = draw_uniform_pair(kind, key, s, idx, pair)
            out[2 * pair, i] = a
            if 2 * pair + 1 < width:
                out[2 * pair + 1, i] = b


def _is_philox(key) -> bool:
    return np.asarray(key).dtype == np.uint64


def uniform_columns(kind, key, stream, index, start: int, stop: int, width: int, out=None) -> np.ndarray:
    """Draws ``0 … width − 1`` of points ``start … stop − 1``: an ``(stop − start, width)`` view.

    The array is stored draw-major (``(width, n)`` C order, in ``out[:, :n]`` when a
    buffer is given) and returned transposed: ``result[i, d]`` is
    ``draw_uniform(kind, key, stream[start + i], index[start + i], d)``.
    """
    n = int(stop - start)
    size = int(width) * n
    # a C-contiguous (width, n) array (so that the compiled loop vectorises), in the buffer if given
    out = np.empty((int(width), n)) if out is None else out.reshape(-1)[:size].reshape(int(width), n)
    if out.size:
        stream, index = stream[int(start):int(stop)], index[int(start):int(stop)]
        if _is_philox(key):
            _philox_columns(key, stream, index, out)
        else:
            _scalar_columns(kind, key, stream, index, out)
    return out.T


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _philox_words(key, stream, index, draw, out):  # pragma: no cover - compiled
    k0 = np.uint64(key[0]) & _M32
    k1 = np.uint64(key[1]) & _M32
    for i in range(out.shape[0]):
        s = stream[i]
        d = draw[i]
        c0, c1, c2, c3 = _philox(d >> _ONE, index[i] & _M32, s & _M32, s >> _S32, k0, k1)
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
