"""Compiled (numba) pieces of the lattice samplers: exact comparisons, snapping, cells.

Randomness comes from :func:`tracs.random.kernels.draw_u64` on demand: word
``main`` of a point gives the first 53 bits of its uniform ``u`` (top bits) and
the 11 snapping bits (low bits); when ``u`` ties a threshold on those 53 bits,
words ``ext, ext + 1, …`` extend it, 53 bits at a time.  So ``u`` is an
infinitely precise uniform on ``[0, 1)`` read lazily, and ``u < c`` holds with
probability exactly ``c`` for every double ``c`` (subnormals included): no
threshold is rounded to the ``2^-53`` grid.

A piecewise-constant law on ``[A, B]`` (density ``p`` on ``[l, l + W)``, ``q``
elsewhere) over ``count`` cells with inner edges ``G + j·h`` (``0 < j < count``;
the end cells reach ``A`` and ``B``) is sampled by the inverse of
its cumulative masses with verification: ``u < 1/2`` finds the cell ``j`` with
``F(e_j) <= u < F(e_{j+1})`` (``F`` the mass left of an edge), ``u >= 1/2``
reads ``v = 1 − u`` (the complemented bits) and finds ``S(e_{j+1}) <= v < S(e_j)``
(``S`` the mass right of an edge).  A closed-form guess starts the search and
two short walks make it exact.  Each side only compares against masses below
1/2, where doubles are fine, so a tail cell of mass ``2^-1000`` is as exact as
the central one.  :func:`piecewise_row` returns the realised probabilities.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..random.kernels import draw_u64

__all__ = ["below", "snap", "piecewise_cell", "piecewise_row", "uniform_index", "TWO53"]

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
        wf = float(w)
        if wf < top:
            return True
        if wf > top:
            return False
        c = t - top  # exact: the fractional part of a double
        draw += 1
    return False


@njit(cache=True, nogil=True, inline="always")
def compare(first, c):  # pragma: no cover
    """``u < c`` decided on the first 53 bits: 1 (yes), 0 (no) or 2 (a tie: read further words)."""
    if c >= 1.0:
        return 1
    if not c > 0.0:
        return 0
    t = c * TWO53
    top = math.floor(t)
    f = float(first)
    if f < top:
        return 1
    if f > top:
        return 0
    return 2


@njit(cache=True, nogil=True, inline="always")
def below(first, c, kind, key, stream, index, ext, flip):  # pragma: no cover
    """``u < c`` for the uniform whose first 53 bits are ``first`` (exact for every double ``c``)."""
    r = compare(first, c)
    if r == 2:
        t = c * TWO53
        return _below_tail(kind, key, stream, index, ext, t - math.floor(t), flip)
    return r == 1


@njit(cache=True, nogil=True, inline="always")
def split_word(w):  # pragma: no cover
    """``(first 53 bits of u, snapping bits)`` of a main word."""
    return w >> _U11, float(w & _SNAP_MASK)


@njit(cache=True, nogil=True, inline="always")
def snap(t, n, bits):  # pragma: no cover
    """Randomised rounding of ``t`` in ``[0, n]`` to ``floor(t)`` or ``floor(t) + 1``.

    The upper one is taken with probability ``ceil(frac·2048)/2048``: the mixing
    weight need not be exact (any weight keeps the guarantee), only unbiased to
    ``2^-11`` of a cell.
    """
    i = math.floor(t)
    if i < 0.0:
        i = 0.0
    if i > n - 1:
        i = n - 1.0
    frac = t - i
    k = int(i)
    if bits < frac * SNAP_SCALE:
        k += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def _edge(j, A, B, G, h, count):  # pragma: no cover
    """Edge ``j`` of the cells: ``A``, then ``G + j·h`` inside, then ``B``."""
    if j <= 0:
        return A
    if j >= count:
        return B
    return G + j * h


@njit(cache=True, nogil=True, inline="always")
def mass_left(e, A, p, q, l, W):  # pragma: no cover
    """Mass of ``[A, e)`` of the piecewise-constant law."""
    return q * (min(e, l) - A) + p * min(max(e - l, 0.0), W) + q * max(e - (l + W), 0.0)


@njit(cache=True, nogil=True, inline="always")
def mass_right(e, B, p, q, l, W):  # pragma: no cover
    """Mass of ``[e, B)`` of the piecewise-constant law."""
    r = l + W
    return q * (B - max(e, r)) + p * min(max(r - e, 0.0), W) + q * max(l - e, 0.0)


@njit(cache=True, nogil=True, inline="always")
def _guess(y, G, h, count):  # pragma: no cover
    t = (y - G) / h
    if not t >= 0.0:
        return 0
    if t >= count - 1:
        return count - 1
    return int(t)


@njit(cache=True, nogil=True, inline="always")
def _guess_left(first, A, G, h, count, p, q, l, W):  # pragma: no cover
    """The cell of ``F^{-1}(u)`` in closed form (exact up to a cell; verified after)."""
    uf = float(first) / TWO53
    a1 = q * (l - A)
    a2 = a1 + p * W
    if uf < a1:
        y = A + uf / q
    elif uf < a2:
        y = l + (uf - a1) / p
    else:
        y = l + W + (uf - a2) / q
    return _guess(y, G, h, count)


@njit(cache=True, nogil=True, inline="always")
def _guess_right(v, B, G, h, count, p, q, l, W):  # pragma: no cover
    """The cell of ``S^{-1}(1 − u)`` in closed form (``v`` the complemented bits)."""
    vf = float(v) / TWO53
    r = l + W
    b1 = q * (B - r)
    b2 = b1 + p * W
    if vf < b1:
        y = B - vf / q
    elif vf < b2:
        y = r - (vf - b1) / p
    else:
        y = l - (vf - b2) / q
    return _guess(y, G, h, count)


@njit(cache=True, nogil=True, inline="always")
def piecewise_fast(first, A, B, G, h, count, p, q, l, W):  # pragma: no cover
    """:func:`piecewise_cell` decided on the first 53 bits of ``u``; ``-1`` if a comparison ties
    (probability about ``2^-52`` per comparison: then the exact version reads further words)."""
    if first < HALF53:
        j = _guess_left(first, A, G, h, count, p, q, l, W)
        while j > 0:
            r = compare(first, mass_left(_edge(j, A, B, G, h, count), A, p, q, l, W))
            if r == 2:
                return -1
            if r == 0:
                break
            j -= 1
        while j < count - 1:
            r = compare(first, mass_left(_edge(j + 1, A, B, G, h, count), A, p, q, l, W))
            if r == 2:
                return -1
            if r == 1:
                break
            j += 1
        return j
    v = first ^ MASK53
    j = _guess_right(v, B, G, h, count, p, q, l, W)
    while j < count - 1:
        r = compare(v, mass_right(_edge(j + 1, A, B, G, h, count), B, p, q, l, W))
        if r == 2:
            return -1
        if r == 0:
            break
        j += 1
    while j > 0:
        r = compare(v, mass_right(_edge(j, A, B, G, h, count), B, p, q, l, W))
        if r == 2:
            return -1
        if r == 1:
            break
        j -= 1
    return j



@njit(cache=True, nogil=True)
def piecewise_cell(first, A, B, G, h, count, p, q, l, W, kind, key, stream, index, ext):  # pragma: no cover
    """The cell of ``u`` (first 53 bits ``first``) under the piecewise-constant law (module notes)."""
    if first < HALF53:
        j = _guess_left(first, A, G, h, count, p, q, l, W)
        while j > 0 and below(first, mass_left(_edge(j, A, B, G, h, count), A, p, q, l, W),
                              kind, key, stream, index, ext, False):
            j -= 1
        while j < count - 1 and not below(first, mass_left(_edge(j + 1, A, B, G, h, count), A, p, q, l, W),
                                          kind, key, stream, index, ext, False):
            j += 1
        return j
    v = first ^ MASK53
    j = _guess_right(v, B, G, h, count, p, q, l, W)
    while j < count - 1 and below(v, mass_right(_edge(j + 1, A, B, G, h, count), B, p, q, l, W),
                                  kind, key, stream, index, ext, True):
        j += 1
    while j > 0 and not below(v, mass_right(_edge(j, A, B, G, h, count), B, p, q, l, W),
                              kind, key, stream, index, ext, True):
        j -= 1
    return j


@njit(cache=True, nogil=True)
def piecewise_row(A, B, G, h, count, p, q, l, W, out):  # pragma: no cover
    """Realised probability of every cell under :func:`piecewise_cell`, into ``out``.

    ``|[F_j, F_{j+1}) ∩ [0, ½)| + |[S_{j+1}, S_j) ∩ [0, ½)|`` with the very
    thresholds the sampler compares against (``F_0 = 0``, ``F_count = 1``,
    ``S_0 = 1``, ``S_count = 0``); one rounding of the final difference.
    """
    f_prev = 0.0
    s_prev = 1.0
    for j in range(count):
        if j + 1 >= count:
            f_next = 1.0
            s_next = 0.0
        else:
            e = _edge(j + 1, A, B, G, h, count)
            f_next = mass_left(e, A, p, q, l, W)
            s_next = mass_right(e, B, p, q, l, W)
        left = max(0.0, min(f_next, 0.5) - min(f_prev, 0.5))
        right = max(0.0, min(s_prev, 0.5) - min(s_next, 0.5))
        out[j] = left + right
        f_prev = f_next
        s_prev = s_next
    return out


@njit(cache=True, nogil=True)
def uniform_index(m, kind, key, stream, index, draw):  # pragma: no cover
    """An exactly uniform integer in ``0..m-1`` from words ``draw, draw + 1, …`` (rejection)."""
    mm = np.uint64(m)
    limit = np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % mm + np.uint64(1)) % mm
    while True:
        w = draw_u64(kind, key, stream, index, draw)
        if w <= limit:
            return int(w % mm)
        draw += 1


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
        out[t] = _below_tail(kind, key, stream, idx[t], ext, rest[t], flip[t])


@njit(cache=True, nogil=True)
def piecewise_cells(first, lefts, A, B, G, h, count, p, q, W, kind, key, stream):  # pragma: no cover
    """:func:`piecewise_cell` for elements ``0..n-1`` (index = position, ties from word 1 on)."""
    n = first.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        j = piecewise_fast(first[i], A, B, G, h, count, p, q, lefts[i], W)
        if j < 0:
            j = piecewise_cell(first[i], A, B, G, h, count, p, q, lefts[i], W, kind, key, stream, i, 1)
        out[i] = j
    return out
