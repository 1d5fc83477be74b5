"""The discrete Purkayastha law on the circle's lattice, and its compiled sampler.

On the ``n`` cells of the circle (spacing ``h = period/n``), the released cell is
``(k + D) mod n`` for the snapped input ``k`` and a signed offset ``D`` with

    ``P(D = d) ∝ r^{|d|}``,  ``r = e^{−κh} = e^{−2ε/n}``,  ``|d| <= H = ⌊n/2⌋``

(for even ``n`` the offsets ``±H`` are the same cell, which so gets ``r^H`` once):
the continuous law ``∝ e^{−κ·d(y, x)}`` with the circular distance counted in cells.

**Guarantee.**  A cell ``j`` is at circular distances ``δ, δ' ∈ [0, H]`` from two
lattice inputs ``k, k'``, and its masses are ``r^δ/Z`` and ``r^{δ'}/Z`` with the
same ``Z``, so ``P(j | k)/P(j | k') = r^{δ − δ'} <= r^{−H} <= r^{−n/2} = e^ε``
(tight for even ``n``).

**Sampling (exact).**  The magnitude ``M = |D|`` has the tails of the discrete
Laplace magnitude (``T_m = 2r^m/(1 + r)``, :mod:`tracs.mechanisms.geometric`)
truncated at ``H``: ``S_m = P(M >= m) = (T_m − τ)/(1 − τ)`` for ``1 <= m <= H``, with
``τ = r^H`` for even ``n`` (half of the antipode's mass beyond ``H``) and
``τ = T_{H+1}`` for odd ``n``; ``S_0 = 1``, ``S_{H+1} = 0``.  The sampler computes
``S_m = e^{m·ln r + ln c'} − τ/(1 − τ)`` (``c' = c/(1 − τ)``) and takes the largest
``m <= H`` with ``u < S_m`` (:func:`~tracs.mechanisms.geometric.magnitude` with
``shift = τ/(1 − τ)``, ``top = H``: from ``ln(u + shift)`` when safely between two
thresholds, else by exact comparisons); the sign is one random bit (for even ``n``
both signs of ``H`` are the antipode).  The realised law is exactly
``P(M = m) = S_m − S_{m+1}`` for these doubles, which the rows and cumulative
masses use.  The subtraction of ``shift`` costs what Laplace's tails cost: a mass is
realised to a relative ``2^-52·(S_m + shift)/P(M = m)``, about ``n/ε·2^-52``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .geometric import BLOCK, fast_magnitude, first_uniforms, laplace_constants, magnitude, thresholds
from .lattice_kernels import snap

__all__ = ["circle_constants", "circle_offsets", "circle_row", "circle_cumulative", "snapped_circle"]

EXT_WORD = 2
_U63 = np.uint64(63)


def circle_constants(epsilon: float, n: int) -> tuple[int, float, float, float]:
    """``(H, ln r, ln c', shift)`` of the truncated magnitude on ``n`` cells (module notes)."""
    top = n // 2
    log_r, log_c = laplace_constants(2.0 * epsilon, n)
    log_tau = top * log_r if n % 2 == 0 else (top + 1) * log_r + log_c
    one_minus = -math.expm1(log_tau)
    return top, log_r, log_c - math.log(one_minus), math.exp(log_tau) / one_minus


def circle_offsets(n: int, top: int, log_r: float, log_c: float, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """``(d, P(D = d))`` for ``d = −H … H``: ``1 − S_1`` at 0, ``(S_m − S_{m+1})/2`` at ``±m``."""
    s = thresholds(np.arange(top + 2, dtype=np.int64), log_r, log_c, shift, top)
    d = np.arange(-top, top + 1)
    m = np.abs(d)
    return d, np.where(m == 0, 1.0 - s[1], 0.5 * (s[m] - s[m + 1]))


def circle_row(k: int, n: int, top: int, log_r: float, log_c: float, shift: float) -> np.ndarray:
    """The realised law of input lattice point ``k`` over the ``n`` cells."""
    d, p = circle_offsets(n, top, log_r, log_c, shift)
    row = np.zeros(n)
    np.add.at(row, np.mod(k + d, n), p)
    return row


def _offset_cumulative(x, top, log_r, log_c, shift):
    """``P(D <= x)``: ``1 − S_{x+1}/2`` for ``x >= 0``, ``S_{−x}/2`` below."""
    x = np.asarray(x, dtype=np.int64)
    s = thresholds(np.where(x >= 0, x + 1, -x), log_r, log_c, shift, top)
    return np.where(x >= 0, 1.0 - 0.5 * s, 0.5 * s)


def circle_cumulative(b, k, n: int, top: int, log_r: float, log_c: float, shift: float) -> np.ndarray:
    """``P(index < b | k)``: shape ``(len(b), len(k))``.

    ``(k + D) mod n < b`` when ``k + D`` lies in ``[s, s + b)`` for one of ``s = −n, 0, n``
    (the offsets span fewer than ``2n`` values, each in one of these windows).
    """
    b = np.asarray(b, dtype=np.int64).reshape(-1, 1)
    k = np.asarray(k, dtype=np.int64).reshape(1, -1)
    cum = np.zeros(np.broadcast(b, k).shape)
    for s in (-n, 0, n):
        cum += (_offset_cumulative(s - k + b - 1, top, log_r, log_c, shift)
                - _offset_cumulative(s - k - 1, top, log_r, log_c, shift))
    return np.clip(np.where(b <= 0, 0.0, np.where(b >= n, 1.0, cum)), 0.0, 1.0)


@njit(cache=True, nogil=True)
def snapped_circle(x, spacing, n, top, log_r, log_c, shift, kind, key, stream, fast=True):  # pragma: no cover
    """Snap ``x[i]`` (``t = x/spacing`` input cells, ``[0, n)``) to ``k``, release ``(k ± M) mod n``.

    Word ``w0`` gives ``u``'s first 53 bits and the snapping bits, bit 63 of ``w1`` the
    sign; ties of ``u`` read words 2, 3, ….  Block by block: a pass without branches
    (vector code) takes every draw the shortcut decides, a second pass the rest
    through :func:`~tracs.mechanisms.geometric.magnitude` (``fast=False``: every draw,
    the reference of the tests).
    """
    size = x.shape[0]
    f, bits, lu = np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK)
    w1s = np.empty(BLOCK, dtype=np.uint64)
    out = np.empty(size, dtype=np.int64)
    for start in range(0, size, BLOCK):
        stop = min(start + BLOCK, size)
        first_uniforms(kind, key, stream, start, stop, shift, f, bits, w1s, lu)
        for i in range(start, stop):
            c = i - start
            k = snap(x[i] / spacing, n, bits[c])
            m = fast_magnitude(f[c], lu[c], log_r, log_c, top)
            j = _wrap(k + m if w1s[c] >> _U63 else k - m, n)
            out[i] = j if (m >= 0 and fast) else -1
        for i in range(start, stop):
            if out[i] < 0:
                c = i - start
                k = snap(x[i] / spacing, n, bits[c])
                m = magnitude(np.uint64(np.int64(f[c])), log_r, log_c, shift, top, kind, key, stream, i, EXT_WORD,
                              fast)
                out[i] = _wrap(k + m if w1s[c] >> _U63 else k - m, n)
    return out


@njit(cache=True, nogil=True, inline="always")
def _wrap(j, n):  # pragma: no cover
    """``j mod n`` for ``j`` in ``−n … 2n − 1``, without a division."""
    j = j + n if j < 0 else j
    return j - n if j >= n else j


key_on_sources(globals())  # cached kernels follow every source they compile in
