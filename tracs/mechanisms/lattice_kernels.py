"""Compiled (numba) pieces of the lattice samplers: exact comparisons, snapping, cells.

Randomness comes from :func:`tracs.random.kernels.draw_u64` on demand: word
``main`` of a point gives the first 53 bits of its uniform ``u`` (top bits) and
the 11 snapping bits (low bits); when ``u`` ties a threshold on those 53 bits,
words ``ext, ext + 1, …`` extend it, 53 bits at a time.  So ``u`` is an
infinitely precise uniform on ``[0, 1)`` read lazily, and ``u < c`` holds with
probability exactly ``c`` for every double ``c`` (subnormals included): no
threshold is rounded to the ``2^-53`` grid.

The piecewise-constant mechanisms build their banded law on these
(:mod:`tracs.mechanisms.band`); the generic path of
:mod:`tracs.mechanisms.lattice` inverts cumulative masses with :func:`below`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..random.kernels import draw_u64

__all__ = ["below", "compare", "snap", "split_word", "uniform_index", "first_words", "TWO53"]

TWO53 = 9007199254740992.0
HALF53 = 4503599627370496  # 2^52: u < 1/2 exactly when its first 53 bits are below it
MASK53 = np.uint64((1 << 53) - 1)
SNAP_SCALE = 2048.0  # 11 snapping bits
_U11 = np.uint64(11)
_SNAP_MASK = np.uint64(2047)


@njit(cache=True, nogil=True)
def _below_tail(kind, key, stream, index, ext, c, flip):  # pragma: no cover - ties are rare
    """Compare the bits after the first 53 (words ``ext, ext + 1, …``) with ``c`` in [0, 1)."""
    draw = ext
    while c > 0.0:
        w = draw_u64(kind, key, stream, index, draw) >> _U11
        if flip:
            w = w ^ MASK53
        t = c * TWO53
        top = math.floor(t)
        wf = float(np.int64(w))  # < 2^53: exact; a signed conversion is one instruction
        if wf < top:
            return True
        if wf > top:
            return False
        c = t - top  # exact: the fractional part of a double
        draw += 1
    return False


@helper
def compare(first, c):  # pragma: no cover
    """``u < c`` decided on the first 53 bits: 1 (yes), 0 (no) or 2 (a tie: read further words)."""
    if c >= 1.0:
        return 1
    if not c > 0.0:
        return 0
    t = c * TWO53
    top = math.floor(t)
    f = float(np.int64(first))  # < 2^53: exact; a signed conversion is one instruction
    if f < top:
        return 1
    if f > top:
        return 0
    return 2


@helper(uint64=("stream", "index"))
def below(first, c, kind, key, stream, index, ext, flip):  # pragma: no cover
    """``u < c`` for the uniform whose first 53 bits are ``first`` (exact for every double ``c``)."""
    r = compare(first, c)
    if r == 2:
        t = c * TWO53
        # fixed argument types (no literal word numbers): one compiled tail for every caller
        return _below_tail(kind, key, np.uint64(stream), np.uint64(index), np.int64(ext), t - math.floor(t),
                           bool(flip))
    return r == 1


@helper
def split_word(w):  # pragma: no cover
    """``(first 53 bits of u, snapping bits)`` of a main word."""
    return w >> _U11, float(np.int64(w & _SNAP_MASK))


@helper
def snap(t, n, bits):  # pragma: no cover
    """Randomised rounding of ``t`` in ``[0, n]`` to ``floor(t)`` or ``floor(t) + 1``.

    The upper one is taken with probability ``ceil(frac·2048)/2048``: the mixing
    weight need not be exact (any weight keeps the guarantee), only unbiased to
    ``2^-11`` of a cell.  Written without branches, so loops over it can become
    vector code.
    """
    i = min(max(math.floor(t), 0.0), n - 1.0)
    return int(i) + int(bits < (t - i) * SNAP_SCALE)


@helper
def rejection_limit(m):  # pragma: no cover
    """The largest word :func:`uniform_index` accepts for ``m`` values (the accepted words
    ``0 … limit`` are a whole number of runs of ``m``)."""
    mm = np.uint64(m)
    return np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % mm + np.uint64(1)) % mm


@helper(uint64=("stream", "index"))
def uniform_index(m, kind, key, stream, index, draw):  # pragma: no cover
    """An exactly uniform integer in ``0..m-1`` from words ``draw, draw + 1, …`` (rejection)."""
    # fixed argument types (no literal word numbers): one compiled loop for every caller
    return _uniform_index(np.int64(m), kind, key, np.uint64(stream), np.uint64(index), np.int64(draw))


@njit(cache=True, nogil=True)
def _uniform_index(m, kind, key, stream, index, draw):  # pragma: no cover
    limit = rejection_limit(m)
    while True:
        w = draw_u64(kind, key, stream, index, draw)
        if w <= limit:
            return int(w % np.uint64(m))
        draw += 1


@helper(uint64=("stream", "index"))
def uniform_index_from(w, m, limit, kind, key, stream, index, draw):  # pragma: no cover
    """:func:`uniform_index` whose first word ``draw`` is ``w``, already drawn (``limit``:
    :func:`rejection_limit` of ``m``); the same integer."""
    if w <= limit:
        return int(w % np.uint64(m))
    return uniform_index(m, kind, key, stream, index, draw + 1)


@njit(cache=True, nogil=True)
def first_words(kind, key, stream, n, draw, out_first, out_bits):  # pragma: no cover
    """First 53 bits and snapping bits of word ``draw`` of elements ``0..n-1`` (index = position)."""
    for i in range(n):
        w = draw_u64(kind, key, stream, i, draw)
        a, b = split_word(w)
        out_first[i] = a
        out_bits[i] = b


@njit(cache=True, nogil=True)
def resolve_ties(kind, key, stream, idx, rest, flip, ext, out):  # pragma: no cover
    """``out[t] = (bits of u after the first 53) < rest[t]`` for the tied elements ``idx``."""
    for t in range(idx.shape[0]):
        out[t] = _below_tail(kind, key, np.uint64(stream), np.uint64(idx[t]), np.int64(ext), rest[t],
                             bool(flip[t]))


key_on_sources(globals())  # cached kernels follow every source they compile in
