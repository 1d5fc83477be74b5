"""Scalar special functions written so that they neither overflow nor cancel.

Every mechanism constant is a function of ``ε`` that, written naively, either
overflows (``e^ε`` for large ε) or loses all its digits to cancellation
(``e^ε − 1 − ε`` for tiny ε).  The functions here are accurate to a few ulps for
every ``ε`` in ``[1e-12, 700]``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["logistic", "exp_tail", "exp_tail_ratio", "over_expm1", "check_integer", "EXP_MAX",
           "rare_probability"]


def logistic(t: float) -> float:
    """``1/(1 + e^{-t})`` without overflow for any finite ``t``."""
    if t >= 0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


#: the smallest positive double (subnormal)
SMALLEST_POSITIVE = 5e-324


def rare_probability(p):
    """``p`` as the threshold of a draw ``u < p`` that picks the *rare* branch of a choice.

    ``numpy.random.Generator.random`` returns multiples of ``2^-53`` in ``[0, 1)``, so
    ``P(u < p) = ⌈p·2^53⌉/2^53 >= p``: comparing against the small probability can only
    round the rare branch *up* (never to 0), which moves every probability ratio
    towards 1.  Comparing against the likely probability instead rounds it to 1 once
    ``1 − p < 2^-54`` and the rare branch becomes unreachable (unbounded loss).  A
    probability that underflowed to 0 becomes the smallest positive double, so that
    ``u = 0`` still reaches the branch.  Works on a float or an array.
    """
    out = np.maximum(p, SMALLEST_POSITIVE)
    return float(out) if np.ndim(out) == 0 else out


def _tail_series(x: float, n: int) -> float:
    """``Σ_{j ≥ n} x^j / j!`` for ``|x| < 1`` (terms fall at least geometrically)."""
    term = x**n / math.factorial(n)
    total = 0.0
    j = n
    while True:
        total += term
        j += 1
        term *= x / j
        if abs(term) <= 1e-18 * abs(total):
            return total


def exp_tail(x: float, n: int) -> float:
    """``e^x − Σ_{j<n} x^j/j!``: the exponential minus its Taylor polynomial of degree ``n − 1``.

    For ``|x| < 1`` the tail series is summed directly (no cancellation); for
    larger ``|x|`` the difference is at least ``x^n/n!·e^{-|x|}``-ish and does
    not cancel badly.
    """
    if abs(x) < 1.0:
        return _tail_series(x, n)
    poly = sum(x**j / math.factorial(j) for j in range(n))
    return math.exp(x) - poly


def exp_tail_ratio(x: float, n: int) -> float:
    """``exp_tail(x, n) / (e^x − 1)`` for ``x > 0``, finite for every ``x`` (no overflow)."""
    if x < 1.0:
        return _tail_series(x, n) / math.expm1(x)
    # divide numerator and denominator by e^x
    poly = sum(x**j / math.factorial(j) for j in range(n))
    return (1.0 - poly * math.exp(-x)) / -math.expm1(-x)


#: largest ``t`` with ``e^t`` finite in double precision (``log`` of the largest float)
EXP_MAX = 709.78


def over_expm1(a: float, t: float) -> float:
    """``a/(e^t − 1)`` for ``t > 0`` without overflow: ``a·e^{-t}`` where ``e^t`` overflows.

    Past ``t = 709`` the relative difference between ``1/(e^t − 1)`` and ``e^{-t}``
    is below ``e^{-709}``: both are the same double.
    """
    if t < EXP_MAX:
        return a / math.expm1(t)
    return a * math.exp(-t)


def check_integer(value, name: str, minimum: int) -> int:
    """Validate an integer parameter ``>= minimum``; integral floats such as ``6.0`` are accepted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not isinstance(value, numbers.Integral):
        if not (math.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value
