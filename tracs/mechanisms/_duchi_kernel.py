"""The compiled sampler of Duchi's mechanism on its two-point lattice.

Given the input lattice point ``x_k`` (``n`` cells across ``[low, high]``),
the high output has probability ``P+ = w·σ(ε) + (1 − w)·σ(−ε)`` and the low one
``P− = w·σ(−ε) + (1 − w)·σ(ε)`` with ``w = (x_k − low)/(high − low)``
(:func:`plus_minus`, the one function that computes them: the rows of
:meth:`~tracs.mechanisms.Duchi.lattice_pmf` call it too).  The less likely of
the two outputs is released when ``u < min(P+, P−)`` for a lazily read uniform
``u`` (:func:`~tracs.mechanisms.lattice_kernels.below`), so it has probability
exactly that double and the other output the rest: the realised row is
``[P−, P+]`` with the rarer entry exact and the other one ``1 −`` it.

Randomness of element ``i`` (point ``i`` of the stream): word 0 gives the 53
leading bits of ``u`` and the 11 snapping bits; a tie of ``u`` with the
threshold on those 53 bits reads words 1, 2, … (about ``2^-53`` of draws).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..random.kernels import draw_u64
from .lattice_kernels import TWO53, below, snap, split_word

__all__ = ["plus_minus", "plus_minus_many", "snapped_duchi"]


#: first word of the tie extension of a sample
EXT_WORD = 1


@helper
def plus_minus(k, low, high, spacing, hi, lo):  # pragma: no cover
    """``(P+, P−)`` at input lattice point ``k``: ``x_k = min(low + k·spacing, high)``,
    ``w = (x_k − low)/(high − low)``, ``(w·hi + (1 − w)·lo, w·lo + (1 − w)·hi)``."""
    x = min(low + float(k) * spacing, high)
    w = (x - low) / (high - low)
    return w * hi + (1.0 - w) * lo, w * lo + (1.0 - w) * hi


@njit(cache=True, nogil=True)
def plus_minus_many(k, low, high, spacing, hi, lo):  # pragma: no cover
    """:func:`plus_minus` of every entry of the int64 array ``k``: an array ``(len(k), 2)``."""
    out = np.empty((k.shape[0], 2))
    for i in range(k.shape[0]):
        out[i, 0], out[i, 1] = plus_minus(k[i], low, high, spacing, hi, lo)
    return out


@helper
def _decide(first, plus, minus):  # pragma: no cover
    """``(high output?, tie?)``: the rarer output's ``u < min(P+, P−)`` read on 53 bits."""
    rare_high = plus <= minus
    c = plus if rare_high else minus
    scaled = c * TWO53
    top = math.floor(scaled)
    f = float(np.int64(first))
    pick = f < top
    tie = (f == top) and (scaled > top) and (scaled < TWO53)
    return pick == rare_high, tie


@njit(cache=True, nogil=True)
def snapped_duchi(x, n, low, high, spacing, hi, lo, kind, key, stream):  # pragma: no cover
    """Lattice indices (0: low output, 1: high) for the inputs ``x`` (index = position).

    A first pass without branches (vector code) decides every element on the 53
    leading bits of its uniform; a second pass settles the ties exactly.
    """
    size = x.shape[0]
    out = np.empty(size, dtype=np.int64)
    for i in range(size):
        first, bits = split_word(draw_u64(kind, key, stream, i, 0))
        k = snap((x[i] - low) / spacing, n, bits)
        plus, minus = plus_minus(k, low, high, spacing, hi, lo)
        high_out, tie = _decide(first, plus, minus)
        out[i] = -1 if tie else int(high_out)
    for i in range(size):
        if out[i] < 0:
            first, bits = split_word(draw_u64(kind, key, stream, i, 0))
            k = snap((x[i] - low) / spacing, n, bits)
            plus, minus = plus_minus(k, low, high, spacing, hi, lo)
            rare_high = plus <= minus
            pick = below(first, plus if rare_high else minus, kind, key, stream, i, EXT_WORD, False)
            out[i] = int(pick == rare_high)
    return out


key_on_sources(globals())  # cached kernels follow every source they compile in
