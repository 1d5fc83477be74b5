"""The banded lattice law of the piecewise-constant mechanisms, and its compiled samplers.

A piecewise-constant mechanism has density ``p`` on a central piece of width
``W`` and ``q = p·e^{-ε}`` elsewhere.  On a lattice of ``N`` output cells of
width ``h`` its release is *banded*: given the input lattice point ``k``, each of
the ``m`` cells of the band ``a_k, …, a_k + m − 1`` has probability
``(1 − c)/m`` and each of the other ``N − m`` cells ``c/(N − m)``, where

* ``m`` is ``W/h`` rounded to the nearest odd integer (at least 1, at most ``N``)
  — the same for every ``k``;
* the band is centred on the cell holding the centre of the mechanism's central
  piece at ``x_k``, shifted inside ``0 … N − 1`` at the ends (exactly how the
  central piece slides) — an integer function of ``k`` and public constants;
* ``c = (N − m)/(m·e^ε + N − m)``, rounded up, so that
  ``((1 − c)/m) / (c/(N − m)) <= e^ε``.

**Guarantee (ε-LDP, exact).**  Every row takes the same two values, so for any
output ``j`` and input lattice points ``k, k'``:
``P(j | k) <= (1 − c)/m <= e^ε · c/(N − m) <= e^ε · P(j | k')``.  A release
given ``x`` mixes the rows of the two lattice points around ``x``
(:func:`~tracs.mechanisms.lattice_kernels.snap`), which keeps the bound whatever
the mixing weight; nothing after snapping reads ``x``.  The sampler realises
these probabilities exactly: ``u < c`` is decided on an infinitely precise
uniform read lazily (:func:`~tracs.mechanisms.lattice_kernels.below`, so the
rare part has probability exactly the double ``c``) and the cell within the band
or outside it is an exactly uniform integer (:func:`uniform_below`).  The
realised ratio is therefore ``e^ε`` up to the rounding of ``c`` (a few ulps), at
any lattice size.

As ``h → 0`` the banded law tends to the continuous one: the band differs from
the central piece by at most one cell at each end.

Randomness of one sample (point ``index`` of ``stream``): word ``w0`` gives the
53 leading bits of ``u`` and the 11 snapping bits; the low 32 bits of ``w1`` give
the uniform integer; ties of ``u < c`` read words ``ext, ext + 1, …`` and
rejected integers words ``draw, draw + 1, …``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..random.kernels import draw_u64, draw_u64_pair
from .lattice_kernels import TWO53, below, snap, split_word, uniform_index

__all__ = ["band_width", "rare_mass", "band_row", "band_cumulative", "uniform_below", "band_cell", "affine_start",
           "affine_starts", "affine_band_index", "classical_band_index", "circular_band_index",
           "fast_affine_index", "threshold_compiled", "snapped_affine_band", "snapped_circular_band"]

_MASK32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_U32 = np.uint64(32)

#: first word of the tie extension and of the integer redraws of a 1-D sample
EXT_WORD, INT_WORD = 2, 64
#: relative amount ``c`` is raised by, above the few-ulp error of its computation
_ROUND_UP = 1.0 + 2.0 ** -45


def band_width(width: float, h: float, count: int) -> int:
    """``W/h`` rounded to the nearest odd integer, within ``1 … count``."""
    cells = width / h
    m = 2 * int(math.floor((cells - 1.0) / 2.0 + 0.5)) + 1 if cells < 2.0 ** 53 else count
    return int(min(max(m, 1), count))


def rare_mass(epsilon: float, m: int, count: int) -> float:
    """``c = (N − m)/(m·e^ε + N − m)`` rounded up: the probability of the cells outside the band.

    Written as ``1/(1 + e^{ε + ln m − ln(N − m)})``, which neither overflows nor
    cancels for any ε of the mechanisms' range; ``0`` when the band is every cell.
    """
    if m >= count:
        return 0.0
    z = epsilon + math.log(m) - math.log(count - m)
    c = 1.0 / (1.0 + math.exp(z)) if z < 700.0 else math.exp(-z)
    return min(1.0, c * _ROUND_UP)


def band_row(start: int, m: int, count: int, c: float) -> np.ndarray:
    """The realised law of one row: ``(1 − c)/m`` on ``start … start + m − 1``, ``c/(N − m)`` elsewhere."""
    row = np.full(count, c / (count - m) if count > m else 0.0)
    row[start:start + m] = (1.0 - c) / m
    return row


def band_cumulative(b: np.ndarray, starts: np.ndarray, m: int, count: int, c: float) -> np.ndarray:
    """``P(index < b)`` of banded rows whose bands start at ``starts``: shape ``(len(b), len(starts))``.

    ``starts`` may exceed ``count − m`` on a circle (the band then wraps past the end).
    """
    b = np.asarray(b, dtype=np.int64)[:, None]
    s = np.asarray(starts, dtype=np.int64)[None, :]
    inside = np.clip(np.minimum(s + m, b) - s, 0, m) + np.clip(np.minimum(s + m - count, b), 0, m)
    high = (1.0 - c) / m
    low = c / (count - m) if count > m else 0.0
    return np.clip(inside * high + (b - inside) * low, 0.0, 1.0)


@helper(uint64=("stream", "index"))
def uniform_below(m, word, kind, key, stream, index, draw):  # pragma: no cover
    """An exactly uniform integer in ``0 … m − 1`` from the low 32 bits of ``word``.

    Lemire's multiply-and-reject (ACM TOMACS 2019): ``x·m >> 32`` with the
    ``2^32 mod m`` biased products rejected and redrawn from words ``draw, draw + 1, …``;
    ``m >= 2^32`` uses 64-bit words (:func:`uniform_index`).
    """
    if m >= 4294967296:
        return uniform_index(m, kind, key, stream, index, draw)
    mm = np.uint64(m)
    prod = (word & _MASK32) * mm
    low = prod & _MASK32
    if low < mm:
        threshold = (_TWO32 - mm) % mm
        while low < threshold:
            prod = (draw_u64(kind, key, stream, index, draw) & _MASK32) * mm
            low = prod & _MASK32
            draw += 1
    return int(prod >> _U32)


@helper(uint64=("stream", "index"))
def band_part(first, word, m, count, c, kind, key, stream, index, ext, draw):  # pragma: no cover
    """The input-free half of a banded draw: ``r`` (the ``r``-th cell of the band) or
    ``−(r + 1)`` (the ``r``-th cell outside it, with probability ``c``).

    It reads only the point's words, never its input, so a recursion whose input
    depends on earlier releases can draw it ahead (:func:`band_cell_of`).
    """
    if below(first, c, kind, key, stream, index, ext, False):
        return -1 - uniform_below(count - m, word, kind, key, stream, index, draw)
    return uniform_below(m, word, kind, key, stream, index, draw)


@helper
def fast_band_part(first, word, m, count, top, fraction):  # pragma: no cover
    """:func:`band_part` without branches, and whether it is unsure (it would read further
    words: then call :func:`band_part` with the same words)."""
    rare = first < top
    size = np.uint64(count - m) if rare else np.uint64(m)
    prod = (word & _MASK32) * size
    r = np.int64(prod >> _U32)
    unsure = ((first == top) and fraction) or ((prod & _MASK32) < size) or size >= _TWO32
    return (-1 - r if rare else r), unsure


@helper
def band_cell_of(part, start, m):  # pragma: no cover
    """The cell of :func:`band_part`'s ``part`` in the row whose band is ``start … start + m − 1``."""
    if part >= 0:
        return start + part
    r = -1 - part
    return r if r < start else r + m


@helper
def circular_offset_of(part, m):  # pragma: no cover
    """The offset from the snapped input of :func:`band_part`'s ``part`` on a circle
    (band ``−half … m − 1 − half``, ``half = (m − 1) // 2``, rare cells after it)."""
    half = (m - 1) // 2
    return part - half if part >= 0 else half - part


@helper
def wrap_cell(j, n):  # pragma: no cover
    """``j mod n`` for ``j`` in ``−n … 2n − 1``, without a division."""
    j = j + n if j < 0 else j
    return j - n if j >= n else j


@helper(uint64=("stream", "index"))
def band_cell(first, word, start, m, count, c, kind, key, stream, index, ext, draw):  # pragma: no cover
    """A cell of the banded row whose band is ``start … start + m − 1`` (module notes)."""
    return band_cell_of(band_part(first, word, m, count, c, kind, key, stream, index, ext, draw), start, m)


@helper
def affine_start(k, alpha, beta, m, count):  # pragma: no cover
    """First band cell at input lattice point ``k``: the band of ``m`` cells centred on cell
    ``round(alpha·k + beta)`` (the central piece's centre), slid inside ``0 … count − 1``."""
    start = int(math.floor(alpha * k + beta + 0.5)) - (m - 1) // 2
    return min(max(start, 0), count - m)


@njit(cache=True, nogil=True)
def affine_starts(k, alpha, beta, m, count):  # pragma: no cover
    """:func:`affine_start` of every entry of ``k``."""
    out = np.empty(k.shape[0], dtype=np.int64)
    for i in range(k.shape[0]):
        out[i] = affine_start(k[i], alpha, beta, m, count)
    return out


@helper(uint64=("stream", "index"))
def affine_band_index(t, n, alpha, beta, m, count, c, first, bits, word, kind, key, stream, index, ext,
                      draw):  # pragma: no cover
    """Lattice index of a piecewise-constant mechanism: ``n`` input cells (``t`` the input in
    cells), ``count`` released points, band from :func:`affine_start` of the snapped input."""
    k = snap(t, n, bits)
    return band_cell(first, word, affine_start(k, alpha, beta, m, count), m, count, c,
                     kind, key, stream, index, ext, draw)


@helper(uint64=("stream", "index"))
def classical_band_index(t, n, m, c, first, bits, word, kind, key, stream, index, ext, draw):  # pragma: no cover
    """Lattice index of the optimal classical mechanism: ``n`` input cells and ``n + 1``
    released points (the same lattice); the band is centred on the snapped input and
    slides inside at the ends."""
    return affine_band_index(t, n, 1.0, 0.0, m, n + 1, c, first, bits, word, kind, key, stream, index, ext,
                             draw)


@helper(uint64=("stream", "index"))
def circular_band_index(t, n, m, c, first, bits, word, kind, key, stream, index, ext, draw):  # pragma: no cover
    """Lattice index of the optimal circular mechanism on ``n`` cells: the band is the ``m``
    cells centred on the snapped input, the rest of the circle the rare part."""
    k = snap(t, n, bits)
    part = band_part(first, word, m, n, c, kind, key, stream, index, ext, draw)
    return (k + circular_offset_of(part, m)) % n


@helper
def _fast_cell(first, word, start, m, count, top, fraction):  # pragma: no cover
    """:func:`band_cell` without branches, or ``-1`` when it would read further words
    (a tie of ``u < c`` or a possibly rejected integer: about ``2^-12`` of draws).

    The same decisions as :func:`fast_band_part` then :func:`band_cell_of`, written out:
    composed from those two, TraCS-C's block pass measured 5–15 % slower."""
    rare = first < top
    size = np.uint64(count - m) if rare else np.uint64(m)
    prod = (word & _MASK32) * size
    r = np.int64(prod >> _U32)
    j = (r + m if r >= start else r) if rare else start + r
    unsure = ((first == top) and fraction) or ((prod & _MASK32) < size) or size >= _TWO32
    return -1 if unsure else j


@helper
def fast_affine_index(t, n, alpha, beta, m, count, top, fraction, w0, w1):  # pragma: no cover
    """:func:`affine_band_index` on the words ``w0``, ``w1`` without branches, or ``-1`` when the
    draw needs further words (then call :func:`affine_band_index` with the same words)."""
    first, bits = split_word(w0)
    return _fast_cell(first, w1, affine_start(snap(t, n, bits), alpha, beta, m, count), m, count, top, fraction)


@njit(cache=True, nogil=True)
def snapped_affine_band(t, n, alpha, beta, m, count, c, kind, key, stream):  # pragma: no cover
    """:func:`affine_band_index` of elements ``0 … len(t) − 1`` (index = position).

    A first pass without branches (which the compiler turns into vector code)
    decides every element whose draw needs no further word; a second pass takes the
    rest, about ``2^-12`` of them, through the exact scalar path.
    """
    top, fraction = threshold_compiled(c)
    out = np.empty(t.shape[0], dtype=np.int64)
    for i in range(t.shape[0]):
        w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
        out[i] = fast_affine_index(t[i], n, alpha, beta, m, count, top, fraction, w0, w1)
    for i in range(t.shape[0]):
        if out[i] < 0:
            w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
            first, bits = split_word(w0)
            out[i] = affine_band_index(t[i], n, alpha, beta, m, count, c, first, bits, w1, kind, key, stream, i,
                                       EXT_WORD, INT_WORD)
    return out


@njit(cache=True, nogil=True)
def snapped_circular_band(t, n, m, c, kind, key, stream):  # pragma: no cover
    """:func:`circular_band_index` of elements ``0 … len(t) − 1`` (index = position), in two
    passes like :func:`snapped_affine_band`."""
    top, fraction = threshold_compiled(c)
    half = (m - 1) // 2
    out = np.empty(t.shape[0], dtype=np.int64)
    for i in range(t.shape[0]):
        w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
        first, bits = split_word(w0)
        k = snap(t[i], n, bits)
        # offsets: the band -half … half is cells 0 … m − 1 of a row starting at k − half
        d = _fast_cell(first, w1, 0, m, n, top, fraction)
        j = k - half + d  # in -half … 2n − 1: wrapped without a division
        j = j + n if j < 0 else j
        j = j - n if j >= n else j
        j = j - n if j >= n else j
        out[i] = -1 if d < 0 else j
    for i in range(t.shape[0]):
        if out[i] < 0:
            w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
            first, bits = split_word(w0)
            out[i] = circular_band_index(t[i], n, m, c, first, bits, w1, kind, key, stream, i, EXT_WORD,
                                         INT_WORD)
    return out


@helper
def threshold_compiled(c):  # pragma: no cover
    """``(floor(c·2^53) as uint64, whether c·2^53 has a fraction)``: ``u < c`` read on 53 bits.

    With ``F`` the first 53 bits of ``u``: ``F < top`` means ``u < c``, ``F > top``
    means not, and ``F == top`` is a tie (to be read further) only when
    ``c·2^53`` is not an integer.
    """
    scaled = c * TWO53
    top = math.floor(scaled)
    return np.uint64(top), scaled > top


key_on_sources(globals())  # cached kernels follow every source they compile in
