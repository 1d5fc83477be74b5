"""The discrete staircase law on the lattice, and its compiled sampler.

On a lattice aligned with the input lattice (``D`` cells across the input
interval, so two inputs are at most ``D`` cells apart; the step's inner part
``G = γD`` rounded, ``1 <= G < D``), a *magnitude* ``A >= 0`` has the weight

    ``g(a) ∝ e^{−jε}`` for ``a = jD + i``, ``0 <= i < G`` (inner part of step ``j``),
    ``g(a) ∝ e^{−(j+1)ε}`` for ``G <= i < D`` (outer part),

and the released offset is ``A + b`` with probability ½ or ``−A − 1 + b`` with
probability ½, ``b`` a fair bit (the two halves of the staircase centred half a
cell left and right of 0, mixed: the offset law ``¼(g(|d|) + g(|d| − 1))``,
``½g(0)`` at 0, is symmetric).  It is added to the snapped input's index and
clamped into the public window (the end cells absorb the tails).

**Guarantee.**  With ``ℓ(a)`` the exponent of ``g(a)``, ``ℓ`` is non-decreasing and
``ℓ(a + D) = ℓ(a) + 1``, so ``g(a) <= e^ε g(a')`` whenever ``|a − a'| <= D``.
Each half maps the offset ``d`` to ``a = f(d)`` with ``|f(d) − f(d')| <= |d − d'|``
(``f(d) = d`` or ``−d − 1`` on either side of the centre), and inputs ``k, k'`` are
at most ``D`` apart, so each half's row obeys ``P(j | k) <= e^ε P(j | k')``; so does
their fixed mixture, and clamping is post-processing.

**Sampling (exact).**  The step ``J`` is the largest ``j`` with ``u < T_{2j} = e^{−jε}``
(:func:`~tracs.mechanisms.geometric.magnitude`: ``P(J >= j) = e^{−jε}``), the part is
outer when ``u < T_{2J+1} = e^{−Jε}·s`` with ``s = e^{−ε} + (1 − e^{−ε})·(D − G)e^{−ε}/(G + (D − G)e^{−ε})``
(the mass of the outer part and of the later steps), and the cell is an exactly
uniform integer of the part (Lemire); both comparisons read the same lazily
extended uniform ``u``.  So the realised law of the part is exactly the measure of
``u`` between the doubles ``T`` (:func:`part_masses`), which the rows and
cumulative masses use; the masses ``T_{2j} − T_{2j+1}`` and ``T_{2j+1} − T_{2j+2}``
are fractions about ``(1 − e^{−ε})·…`` of ``T_{2j}`` (not ``1/D``), so their rounding
is a few ulps relative at every lattice size.

Randomness of one sample: word ``w0`` gives ``u``'s first 53 bits and the 11
snapping bits; ``w1`` the uniform cell (low 32 bits), the side (bit 63) and ``b``
(bit 62); ties of ``u`` read words 2, 3, …, rejected integers words 64, 65, ….
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from . import geometric
from .band import uniform_below
from .geometric import BLOCK, NO_TOP, first_uniforms, magnitude, threshold
from .lattice_kernels import TWO53, below, snap

__all__ = ["staircase_constants", "part_masses", "magnitude_tail", "staircase_row", "staircase_cumulative",
           "snapped_staircase"]

EXT_WORD, INT_WORD = 2, 64
_U63, _U62, _U32, _ONE = np.uint64(63), np.uint64(62), np.uint64(32), np.uint64(1)
_MASK32, _TWO32 = np.uint64(0xFFFFFFFF), np.uint64(1 << 32)


def staircase_constants(epsilon: float, gamma: float, n: int) -> tuple[int, float, float]:
    """``(G, ln r, ln s − ln r)`` for ``D = n`` cells: ``G = round(γn)`` in ``1 … n − 1``,
    ``r = e^{−ε}`` and ``s`` the outer part's threshold factor (module notes)."""
    inner = int(min(max(round(gamma * n), 1), n - 1))
    r = math.exp(-epsilon)
    outer = (n - inner) * r / (inner + (n - inner) * r)  # P(outer | step)
    s = r + -math.expm1(-epsilon) * outer
    return inner, -epsilon, math.log(s) + epsilon


@njit(cache=True, nogil=True, inline="always")
def _odd(j, log_r, log_t):  # pragma: no cover
    """``T_{2j+1}``: ``P(step > j or step j's outer part)`` as the sampler compares it."""
    return threshold(j + 1, log_r, log_t, 0.0, NO_TOP)


@njit(cache=True, nogil=True)
def part_masses(j, log_r, log_t):  # pragma: no cover
    """``(inner, outer)`` realised masses of the steps ``j`` (int64 array): the measure of
    ``u`` in ``[max(T_{2j+1}, T_{2j+2}), T_{2j})`` and ``[T_{2j+2}, min(T_{2j+1}, T_{2j}))``."""
    inner = np.empty(j.shape[0])
    outer = np.empty(j.shape[0])
    for i in range(j.shape[0]):
        hi = threshold(j[i], log_r, 0.0, 0.0, NO_TOP)
        lo = threshold(j[i] + 1, log_r, 0.0, 0.0, NO_TOP)
        mid = min(max(_odd(j[i], log_r, log_t), lo), hi)
        inner[i] = hi - mid
        outer[i] = mid - lo
    return inner, outer


def magnitude_tail(a, n: int, inner: int, log_r: float, log_t: float) -> np.ndarray:
    """``P(A >= a)`` for int64 ``a >= 0``: the later steps, the rest of the part, the outer part."""
    a = np.asarray(a, dtype=np.int64)
    j, i = np.divmod(a, n)
    flat_j = j.reshape(-1)
    p_in, p_out = part_masses(flat_j, log_r, log_t)
    later = geometric.thresholds(flat_j + 1, log_r, 0.0, 0.0, NO_TOP)
    i = i.reshape(-1)
    in_inner = i < inner
    rest = np.where(in_inner, p_in * (inner - i) / inner + p_out, p_out * (n - i) / (n - inner))
    return (later + rest).reshape(a.shape)


def _offset_at_least(m, n, inner, log_r, log_t):
    """``P(offset >= m)`` for int64 ``m >= 1``: ``¼(P(A >= m) + P(A >= m − 1))``."""
    return 0.25 * (magnitude_tail(m, n, inner, log_r, log_t) + magnitude_tail(m - 1, n, inner, log_r, log_t))


def staircase_cumulative(b, k, margin: int, count: int, n: int, inner: int, log_r: float,
                         log_t: float) -> np.ndarray:
    """``P(index < b | k)``: shape ``(len(b), len(k))`` (offset below ``q = b − k − margin``)."""
    b = np.asarray(b, dtype=np.int64).reshape(-1, 1)
    k = np.asarray(k, dtype=np.int64).reshape(1, -1)
    q = b - k - margin  # index < b  <=>  offset <= q − 1  <=>  offset < q
    # q >= 1: 1 − P(offset >= q); q <= 0: P(offset <= q − 1) = P(offset >= 1 − q) (symmetry)
    tail = _offset_at_least(np.where(q >= 1, q, 1 - q), n, inner, log_r, log_t)
    cum = np.where(q >= 1, 1.0 - tail, tail)
    return np.where(b <= 0, 0.0, np.where(b >= count, 1.0, cum))


def staircase_row(k: int, margin: int, count: int, n: int, inner: int, log_r: float, log_t: float) -> np.ndarray:
    """The realised law of input lattice point ``k`` over the ``count`` cells."""
    top = count + 2
    a = np.arange(top, dtype=np.int64)
    j, i = np.divmod(a, n)
    p_in, p_out = part_masses(j, log_r, log_t)
    g = np.where(i < inner, p_in / inner, p_out / (n - inner))
    d = np.arange(count) - k - margin
    ad = np.abs(d)
    row = np.where(d == 0, 0.5 * g[0], 0.25 * (g[ad] + g[np.maximum(ad - 1, 0)]))
    row[0] = float(_offset_at_least(np.array([k + margin]), n, inner, log_r, log_t)[0])
    row[-1] = float(_offset_at_least(np.array([count - 1 - k - margin]), n, inner, log_r, log_t)[0])
    return row


@njit(cache=True, nogil=True, inline="always")
def _step(first, log_r, log_t, kind, key, stream, index, fast):  # pragma: no cover
    """``(J, outer part)`` of one draw.

    ``z = ln u/ln r`` puts ``u`` below ``T_{2j}`` exactly when ``z > j``, and below
    ``T_{2j+1}`` when ``z > j + ρ`` with ``ρ = 1 + ln t/ln r``; when ``z`` lies farther from
    ``⌊z⌋``, ``⌊z⌋ + 1`` and ``⌊z⌋ + ρ`` than every error can move it (the bound of
    :func:`~tracs.mechanisms.geometric.magnitude`, with ``ln t`` for ``ln c``), both are
    read from ``z``; otherwise the thresholds are compared exactly.
    """
    f = float(np.int64(first))
    lu = math.log((f + 0.5) / TWO53)
    z = lu / log_r
    if fast and f >= 1.0 and z < 9.0e15:
        base = math.floor(z)
        slack = ((base + 1.0) * abs(log_r) + abs(log_t) + abs(lu) + 6.0) * 2.0 ** -50 + 0.6 / f
        margin = slack / abs(log_r) + z * 2.0 ** -50
        split = base + 1.0 + log_t / log_r
        if z - base > margin and base + 1.0 - z > margin and abs(z - split) > margin:
            return int(base), z > split
    j = magnitude(first, log_r, 0.0, 0.0, NO_TOP, kind, key, stream, index, EXT_WORD, fast)
    return j, below(first, _odd(j, log_r, log_t), kind, key, stream, index, EXT_WORD, False)


@njit(cache=True, nogil=True, inline="always")
def staircase_offset(first, w1, n, inner, log_r, log_t, kind, key, stream, index, fast):  # pragma: no cover
    """The offset of one draw (module notes)."""
    j, outer = _step(first, log_r, log_t, kind, key, stream, index, fast)
    if outer:
        a = j * n + inner + uniform_below(n - inner, w1, kind, key, stream, index, INT_WORD)
    else:
        a = j * n + uniform_below(inner, w1, kind, key, stream, index, INT_WORD)
    b = np.int64((w1 >> _U62) & _ONE)
    return a + b if (w1 >> _U63) else b - a - 1


@njit(cache=True, nogil=True, inline="always")
def _fast_offset(f, lu, w1, n, inner, log_r, log_t):  # pragma: no cover
    """:func:`staircase_offset` without branches, and whether it is sure: not when the
    step or part needs the thresholds compared (:func:`_step`'s bound) or the cell's
    integer may be rejected (then :func:`staircase_offset` redraws)."""
    z = lu / log_r
    zc = min(max(z, 0.0), 9.0e15)
    base = math.floor(zc)
    slack = ((base + 1.0) * abs(log_r) + abs(log_t) + abs(lu) + 6.0) * 2.0 ** -50 + 0.6 / max(f, 1.0)
    margin = slack / abs(log_r) + zc * 2.0 ** -50
    split = base + 1.0 + log_t / log_r
    outer = z > split
    size = np.uint64(n - inner) if outer else np.uint64(inner)
    prod = (w1 & _MASK32) * size
    a = np.int64(base) * n + (inner if outer else 0) + np.int64(prod >> _U32)
    b = np.int64((w1 >> _U62) & _ONE)
    offset = a + b if (w1 >> _U63) else b - a - 1
    sure = ((f >= 1.0) and (z < 9.0e15) and (z - base > margin) and (base + 1.0 - z > margin)
            and (abs(z - split) > margin) and ((prod & _MASK32) >= size) and (size < _TWO32))
    return offset, sure


@njit(cache=True, nogil=True)
def snapped_staircase(x, origin, spacing, n, margin, count, inner, log_r, log_t, kind, key, stream,
                      fast=True):  # pragma: no cover
    """Snap ``x[i]`` (``t = (x − origin)/spacing`` input cells) to ``k``, release
    ``clamp(k + margin + offset, 0, count − 1)``.

    Block by block: a pass without branches (vector code) takes every draw the
    shortcut decides; a second pass the rest through :func:`staircase_offset`
    (``fast=False``: every draw, the reference of the tests).
    """
    size = x.shape[0]
    f, bits, lu = np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK)
    w1s = np.empty(BLOCK, dtype=np.uint64)
    out = np.empty(size, dtype=np.int64)
    for start in range(0, size, BLOCK):
        stop = min(start + BLOCK, size)
        first_uniforms(kind, key, stream, start, stop, 0.0, f, bits, w1s, lu)
        for i in range(start, stop):
            c = i - start
            k = snap((x[i] - origin) / spacing, n, bits[c])
            d, sure = _fast_offset(f[c], lu[c], w1s[c], n, inner, log_r, log_t)
            j = min(max(k + margin + d, 0), count - 1)
            out[i] = j if (sure and fast) else -1
        for i in range(start, stop):
            if out[i] < 0:
                c = i - start
                k = snap((x[i] - origin) / spacing, n, bits[c])
                d = staircase_offset(np.uint64(np.int64(f[c])), w1s[c], n, inner, log_r, log_t, kind, key, stream,
                                     i, fast)
                out[i] = min(max(k + margin + d, 0), count - 1)
    return out


key_on_sources(globals())  # cached kernels follow every source they compile in
