"""The discrete Laplace law on the lattice, and its compiled sampler.

On a lattice of spacing ``h`` aligned with the input lattice (``n`` cells across
the input interval, so two inputs are at most ``n`` cells apart), the Laplace
mechanism becomes the *discrete* Laplace (two-sided geometric) offset

    ``P(D = d) = (1 − r)/(1 + r) · r^{|d|}``,  ``r = e^{−ε/n}``,

added to the snapped input's index and clamped into the public window (the end
cells absorb the tails: post-processing).  Ideal ratios: for ``|d − d'| <= n``,
``P(D = d)/P(D = d') = r^{|d| − |d'|} <= r^{−n} = e^ε`` (Ghosh, Roughgarden &
Sundararajan's geometric mechanism, STOC 2009).

Sampling is an exact inversion of the magnitude ``M = |D|``: its tail
``P(M >= m) = T_m = 2r^m/(1 + r)`` (``m >= 1``, ``T_0 = 1``) is computed as
``exp(m·ln r + ln(2/(1 + r)))`` by one compiled function (:func:`tail`), and ``M``
is the largest ``m`` with ``u < T_m`` for a lazily read uniform ``u`` (exact
comparisons); the sign is one random bit.  So the realised law is exactly
``P(M = m) = T_m − T_{m+1}`` for these doubles, and :func:`tails` gives the
same doubles to the rows and cumulative masses.  Each ``T_m`` is exact to a few ulps, so a mass
``T_m − T_{m+1} ≈ T_m(1 − r)`` is realised to a relative ``2^-51/(1 − r)``
(about ``n/ε·2^-51``: 4.7e-10 at the default ``n = 2^20`` and ε = 1), the same
floating-point term as the generic path's (``docs/privacy.md``).

:func:`magnitude` also serves truncated tails ``S_m = T'_m − shift`` up to ``top``
(Purkayastha, :mod:`tracs.mechanisms._circular_geometric`) and the staircase's steps
(:mod:`tracs.mechanisms._staircase`).  The samplers work in blocks of
:data:`BLOCK` draws: words, then logarithms, then the branch-free shortcut
(:func:`fast_magnitude`), then the exact path for the draws it leaves.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..random.kernels import draw_u64_pair
from .lattice_kernels import TWO53, below, snap, split_word

INV_TWO53 = 1.0 / TWO53

__all__ = ["laplace_constants", "tail", "tails", "threshold", "thresholds", "magnitude_from_log",
           "magnitude", "snapped_laplace", "laplace_row", "laplace_cumulative"]

#: first word of the tie extensions of a sample
EXT_WORD = 2
#: ``top`` of an untruncated magnitude
NO_TOP = 2 ** 62
#: the exact search of :func:`magnitude` starts at most here (a law whose ``S_m``
#: vanishes beyond ``2^61`` never steps past ``2^62``)
MAX_MAGNITUDE = 2.0 ** 61


def laplace_constants(epsilon: float, n: int) -> tuple[float, float]:
    """``(ln r, ln(2/(1 + r)))`` with ``r = e^{−ε/n}``."""
    log_r = -epsilon / n
    return log_r, math.log(2.0) - math.log1p(math.exp(log_r))


@helper
def tail(m, log_r, log_c):  # pragma: no cover
    """``T_m = P(M >= m)``: 1 for ``m <= 0``, else ``exp(m·ln r + ln c)``."""
    if m <= 0:
        return 1.0
    return math.exp(m * log_r + log_c)


@njit(cache=True, nogil=True)
def tails(m, log_r, log_c):  # pragma: no cover
    """:func:`tail` of every entry of the int64 array ``m`` (the thresholds the sampler compares against)."""
    flat = m.ravel()
    out = np.empty(flat.shape[0])
    for i in range(flat.shape[0]):
        out[i] = tail(flat[i], log_r, log_c)
    return out.reshape(m.shape)


@helper
def threshold(m, log_r, log_c, shift, top):  # pragma: no cover
    """``S_m = P(M >= m)`` of a magnitude truncated at ``top``: 1 for ``m <= 0``, 0 above ``top``,
    else ``exp(m·ln r + ln c) − shift`` (``shift = 0``, ``top`` huge: the untruncated :func:`tail`)."""
    if m <= 0:
        return 1.0
    if m > top:
        return 0.0
    return math.exp(m * log_r + log_c) - shift


@njit(cache=True, nogil=True)
def thresholds(m, log_r, log_c, shift, top):  # pragma: no cover
    """:func:`threshold` of every entry of the int64 array ``m``."""
    flat = m.ravel()
    out = np.empty(flat.shape[0])
    for i in range(flat.shape[0]):
        out[i] = threshold(flat[i], log_r, log_c, shift, top)
    return out.reshape(m.shape)


@helper
def magnitude_from_log(f, lu, lu_error, log_r, log_c):  # pragma: no cover
    """``(m, z)``: the answer of :func:`magnitude` decided from ``lu ≈ ln((f + ½)·2^-53)``,
    or ``m = -1``.

    ``f`` is the first 53 bits of ``u`` (as a double) and ``lu`` a logarithm
    within ``lu_error`` of the C library's (whose error the slack covers).
    ``z = (lu − ln c)/ln r`` puts ``u`` between ``T_{⌊z⌋+1}`` and ``T_{⌊z⌋}``.  When
    ``z`` lies farther from an integer than every error can move it — the unread
    bits of ``u`` (below ``2^-53``), the rounding of ``ln u`` and of each ``T_m``
    (a few ulps of ``m·ln r + ln c``), and of the division — ``⌊z⌋`` is the answer
    for every value of the unread bits and every rounding.  No branch on the
    draw: loops over it can be vector code.
    """
    z = (lu - log_c) / log_r
    base = math.floor(z)
    slack = (((base + 1.0) * abs(log_r) + abs(log_c) + abs(lu) + 4.0) * 2.0 ** -50 + 0.6 / max(f, 0.5)
             + lu_error)
    margin = slack / abs(log_r) + z * 2.0 ** -50
    sure = (f >= 1.0) & (z < 9.0e15) & (z - base > margin) & (base + 1.0 - z > margin)
    return (int(min(base, 9.0e15)) if sure else -1), z


@helper
def magnitude(first, log_r, log_c, shift, top, kind, key, stream, index, ext, fast=True):  # pragma: no cover
    """The largest ``m`` in ``0 … top`` with ``u < S_m`` (:func:`threshold`).

    ``u < S_m`` is ``u + shift < e^{m·ln r + ln c}`` up to roundings, so
    ``z = (ln(u + shift) − ln c)/ln r`` puts ``u`` between ``S_{⌊z⌋+1}`` and ``S_{⌊z⌋}``.
    When ``z`` lies farther from an integer than every error can move it — the unread
    bits of ``u`` (below ``2^-53``), the rounding of ``u + shift``, of its logarithm,
    of each ``S_m`` (a few ulps of ``m·ln r + ln c``, then the subtraction) and of the
    division — ``min(⌊z⌋, top)`` is the answer for every value of the unread bits and
    every rounding; otherwise (about ``1e-7`` of draws at the default lattice) the
    thresholds are computed and compared exactly, stepping from the estimate by
    doubling steps (a far estimate costs a few dozen comparisons, never a walk) and
    halving back.  ``fast=False`` always compares (the reference the tests hold the
    shortcut to).
    """
    f = float(np.int64(first))
    uf = (f + 0.5) / TWO53
    lu = math.log(uf + shift)
    z = (lu - log_c) / log_r
    if fast and f >= 1.0 and z < 9.0e15:
        base = math.floor(z)
        slack = ((base + 1.0) * abs(log_r) + abs(log_c) + abs(lu) + 6.0) * 2.0 ** -50 + 0.6 / f
        margin = slack / abs(log_r) + z * 2.0 ** -50
        if z - base > margin and base + 1.0 - z > margin:
            return int(min(base, top))
    m = 0
    if z > 1.0:
        m = int(min(math.ceil(z) - 1.0, MAX_MAGNITUDE, top))
    step = 1
    while m > 0 and not below(first, threshold(m, log_r, log_c, shift, top), kind, key, stream, index, ext, False):
        m = max(m - step, 0)
        step *= 2
    # here u < S_m; find the first step with S_{m+step} <= u, then halve back
    step = 1
    while below(first, threshold(m + step, log_r, log_c, shift, top), kind, key, stream, index, ext, False):
        m += step
        step *= 2
    while step > 1:  # the answer lies in [m, m + step)
        step //= 2
        if below(first, threshold(m + step, log_r, log_c, shift, top), kind, key, stream, index, ext, False):
            m += step
    return m


@njit(cache=True, nogil=True, inline="always")
def fast_magnitude(f, lu, log_r, log_c, top):  # pragma: no cover
    """:func:`magnitude`'s shortcut without branches: ``min(⌊z⌋, top)`` from ``f`` (the first 53
    bits of ``u`` as a double) and ``lu = ln(u + shift)`` at ``u = (f + ½)/2^53``, or ``-1``
    when the thresholds must be compared (the same bound as :func:`magnitude`)."""
    z = (lu - log_c) / log_r
    zc = min(max(z, 0.0), 9.0e15)
    base = math.floor(zc)
    slack = ((base + 1.0) * abs(log_r) + abs(log_c) + abs(lu) + 6.0) * 2.0 ** -50 + 0.6 / max(f, 1.0)
    margin = slack / abs(log_r) + zc * 2.0 ** -50
    ok = (f >= 1.0) and (z < 9.0e15) and (z - base > margin) and (base + 1.0 - z > margin)
    return np.int64(min(base, float(top))) if ok else np.int64(-1)


#: elements per block of the compiled samplers (their buffers stay in the first-level cache)
BLOCK = 512


@njit(cache=True, nogil=True, inline="always")
def first_uniforms(kind, key, stream, start, stop, shift, f, bits, w1s, lu):  # pragma: no cover
    """For elements ``start … stop − 1`` (buffer position ``i − start``): the first 53 bits of
    ``u`` (as a double), the snapping bits, word ``w1`` and ``ln(u + shift)`` at
    ``u = (f + ½)/2^53``; the draws in a loop of their own (vector code), the logarithms
    in another."""
    for i in range(start, stop):
        w0, w1 = draw_u64_pair(kind, key, stream, i, 0)
        first, b = split_word(w0)
        f[i - start] = float(np.int64(first))
        bits[i - start] = b
        w1s[i - start] = w1
    for i in range(stop - start):
        lu[i] = math.log((f[i] + 0.5) * INV_TWO53 + shift)


@njit(cache=True, nogil=True)
def snapped_laplace(x, origin, spacing, n, margin, count, log_r, log_c, kind, key, stream,
                    fast=True):  # pragma: no cover
    """Snap ``x[i]`` (``t = (x − origin)/spacing`` input cells) to ``k``, release
    ``clamp(k + margin ± M, 0, count − 1)``.

    Block by block: a pass without branches (vector code) takes every draw the
    shortcut decides; a second pass the rest (about ``1e-7`` of them) through
    :func:`magnitude` (``fast=False``: every draw, the reference of the tests).
    """
    size = x.shape[0]
    f, bits, lu = np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK)
    w1s = np.empty(BLOCK, dtype=np.uint64)
    out = np.empty(size, dtype=np.int64)
    for start in range(0, size, BLOCK):
        stop = min(start + BLOCK, size)
        first_uniforms(kind, key, stream, start, stop, 0.0, f, bits, w1s, lu)
        for i in range(start, stop):
            b = i - start
            k = snap((x[i] - origin) / spacing, n, bits[b])
            m = fast_magnitude(f[b], lu[b], log_r, log_c, NO_TOP)
            j = k + margin + (m if w1s[b] & np.uint64(1) else -m)
            out[i] = min(max(j, 0), count - 1) if (m >= 0 and fast) else -1
        for i in range(start, stop):
            if out[i] < 0:
                b = i - start
                k = snap((x[i] - origin) / spacing, n, bits[b])
                m = magnitude(np.uint64(np.int64(f[b])), log_r, log_c, 0.0, NO_TOP, kind, key, stream, i,
                              EXT_WORD, fast)
                j = k + margin + (m if w1s[b] & np.uint64(1) else -m)
                out[i] = min(max(j, 0), count - 1)
    return out


def _offset_cumulative(q: np.ndarray, log_r: float, log_c: float) -> np.ndarray:
    """``P(D <= q)``: ``1 − T_{q+1}/2`` for ``q >= 0``, ``T_{−q}/2`` below."""
    q = np.asarray(q, dtype=np.int64)
    t = tails(np.where(q >= 0, q + 1, -q), log_r, log_c)
    return np.where(q >= 0, 1.0 - 0.5 * t, 0.5 * t)


def laplace_cumulative(b, k, margin: int, count: int, log_r: float, log_c: float) -> np.ndarray:
    """``P(index < b | k)``: shape ``(len(b), len(k))``; only the thresholds it needs are computed."""
    b = np.asarray(b, dtype=np.int64).reshape(-1, 1)
    k = np.asarray(k, dtype=np.int64).reshape(1, -1)
    cum = _offset_cumulative(b - k - margin - 1, log_r, log_c)
    return np.where(b <= 0, 0.0, np.where(b >= count, 1.0, cum))


def laplace_row(k: int, margin: int, count: int, log_r: float, log_c: float) -> np.ndarray:
    """The realised law of input lattice point ``k`` over the ``count`` cells, each mass from
    its own thresholds (``1 − T_1`` at the offset 0, ``(T_m − T_{m+1})/2`` at ``±m``, the
    tails ``T_m/2`` in the end cells)."""
    t = tails(np.arange(count + 2), log_r, log_c)
    d = np.abs(np.arange(count) - k - margin)
    row = np.where(d == 0, 1.0 - t[1], 0.5 * (t[d] - t[d + 1]))
    row[0] = 0.5 * t[k + margin] if k + margin > 0 else 1.0 - 0.5 * t[1]
    top = count - 1 - k - margin
    row[-1] = 0.5 * t[top] if top > 0 else 1.0 - 0.5 * t[1]
    return row


key_on_sources(globals())  # cached kernels follow every source they compile in
