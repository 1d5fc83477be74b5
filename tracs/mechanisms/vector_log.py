"""A natural logarithm that compiles to vector code, with a proven error bound.

``math.log`` in a numba loop is a call into the C library, one element at a
time.  :func:`vector_log` is written with multiplications, comparisons and
selects only, so loops over it become vector code.  It is used where a decision
taken from ``ln u`` carries an error margin and undecided cases are settled
exactly (:func:`tracs.mechanisms.geometric.magnitude_from_log`); its absolute
error enters that margin as :data:`LOG_ERROR`.

Method, for a normal double ``x`` in ``[2^-63, 2)``: the largest ``k`` in
``0 … 63`` with ``m = x·2^k < √2`` is found bit by bit (each step multiplies by
a power of two: exact), so ``m ∈ [√½, √2)`` and ``ln x = ln m − k·ln 2``; with
``s = (m − 1)/(m + 1)``, ``|s| <= 3 − 2√2 < 0.1716``,
``ln m = 2·atanh(s) = 2(s + s³/3 + … + s^17/17) + R``.

Error bound: ``|R| <= 2|s|^19/(19(1 − s²)) < 3.2e-16``; ``m − 1`` is exact
(Sterbenz), ``s`` carries two roundings and the Horner sum a few more on terms
below ``0.35`` (``< 1e-15`` in all); ``k·ln 2`` (``k <= 63``, the double ``ln 2``
within ``2^-54`` of the real one) and the last subtraction are within
``ulp(44)`` each (``< 1.5e-14``).  So ``|vector_log(x) − ln x| < 2e-14``;
:data:`LOG_ERROR` ``= 2^-42 ≈ 2.3e-13`` leaves a tenfold margin
(``tests/mechanisms/test_vector_log.py`` measures the error on 10^6 points
against ``math.log``).
"""

from __future__ import annotations

import math

from .._numba_cache import key_on_sources
from .._jit import helper

__all__ = ["vector_log", "LOG_ERROR"]

#: bound on ``|vector_log(x) − ln x|`` for ``x`` in ``[2^-63, 2)`` (module notes)
LOG_ERROR = 2.0 ** -42
LN2 = math.log(2.0)
SQRT2 = math.sqrt(2.0)


@helper
def vector_log(x):  # pragma: no cover
    """``ln x`` for a double ``x`` in ``[2^-63, 2)``, within :data:`LOG_ERROR` (no branches)."""
    k = 0.0
    # the largest k with x·2^k < √2, bit by bit (written out: a loop here is not unrolled)
    up = x * 4294967296.0 < SQRT2
    x = x * 4294967296.0 if up else x
    k = k + 32.0 if up else k
    up = x * 65536.0 < SQRT2
    x = x * 65536.0 if up else x
    k = k + 16.0 if up else k
    up = x * 256.0 < SQRT2
    x = x * 256.0 if up else x
    k = k + 8.0 if up else k
    up = x * 16.0 < SQRT2
    x = x * 16.0 if up else x
    k = k + 4.0 if up else k
    up = x * 4.0 < SQRT2
    x = x * 4.0 if up else x
    k = k + 2.0 if up else k
    up = x * 2.0 < SQRT2
    x = x * 2.0 if up else x
    k = k + 1.0 if up else k
    s = (x - 1.0) / (x + 1.0)
    z = s * s
    p = 2.0 / 17.0
    p = p * z + 2.0 / 15.0
    p = p * z + 2.0 / 13.0
    p = p * z + 2.0 / 11.0
    p = p * z + 2.0 / 9.0
    p = p * z + 2.0 / 7.0
    p = p * z + 2.0 / 5.0
    p = p * z + 2.0 / 3.0
    return (2.0 * s + s * z * p) - k * LN2


key_on_sources(globals())  # cached kernels follow every source they compile in
