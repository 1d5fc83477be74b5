"""Closed-form constants of the optimal piecewise mechanisms and of k-RR, for arrays of budgets.

Each formula is written here once: the public classes
(:class:`~tracs.mechanisms.OptimalClassical`, :class:`~tracs.mechanisms.OptimalCircular`,
:class:`~tracs.mechanisms.KRR`, the banded lattice law of every piecewise-constant
mechanism) read their constants from these functions, and so do the compiled
perturbers (one kernel row per distinct per-point budget) and the estimators'
likelihoods.

Private: the arguments are already validated at a public boundary (budgets finite
and within ``[MIN_EPSILON, MAX_EPSILON]``, spacings and counts those of a checked
lattice), and nothing here checks them again.  Array in, array out: budgets may be
any shape (the band constants come back as rows ``(m, c)``, one per budget, in
``ravel`` order).

The ε-dependent factors are evaluated with the scalar ``math.exp`` and ``math.log``,
one call per budget (callers pass distinct budgets: a per-trajectory budget has
one per trajectory length).  numpy's vectorised ``exp`` may differ from them in
the last bit, and the band's rare mass ``c`` is compared exactly with the random
words (:mod:`tracs.mechanisms._band`), so the scalar forms keep every release
bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from ._band import band_width, rare_mass

__all__ = ["classical_half_widths", "classical_central_widths", "circular_half_widths", "bands",
           "classical_bands", "circular_bands", "lie_probabilities"]


def _each(function, values) -> np.ndarray:
    """``function`` of every entry of ``values`` (a float array of the same shape)."""
    arr = np.asarray(values, dtype=np.float64)
    return np.array([function(v) for v in arr.ravel().tolist()], dtype=np.float64).reshape(arr.shape)


def classical_half_widths(epsilon) -> np.ndarray:
    """``C = 1/(2(s + 1))``, ``s = e^{ε/2}``: half the central interval of the optimal classical
    mechanism (absolute loss) on the unit interval."""
    return _each(lambda e: 0.5 / (math.exp(e / 2.0) + 1.0), epsilon)


def classical_central_widths(epsilon, width: float) -> np.ndarray:
    """``2C·width``: the central interval of the optimal classical mechanism on an interval of
    length ``width``."""
    return 2.0 * classical_half_widths(epsilon) * width


def circular_half_widths(epsilon, period: float) -> np.ndarray:
    """``C = period/(2(s + 1))``: half the high-density arc of the optimal circular mechanism
    (absolute loss) on ``[0, period)``."""
    return _each(lambda e: period / (2.0 * (math.exp(e / 2.0) + 1.0)), epsilon)


def bands(epsilon, central_width, spacing: float, count: int) -> np.ndarray:
    """Rows ``(m, c)`` of the banded lattice law (:mod:`tracs.mechanisms._band`): ``m`` cells of
    width ``spacing`` cover the central piece of width ``central_width`` (an array of the shape
    of ``epsilon``), ``c`` is the mass of the other ``count − m`` cells."""
    eps = np.asarray(epsilon, dtype=np.float64).ravel().tolist()
    widths = np.broadcast_to(np.asarray(central_width, dtype=np.float64), np.shape(epsilon)).ravel().tolist()
    rows = []
    for e, w in zip(eps, widths):
        m = band_width(w, spacing, count)
        rows.append((m, rare_mass(e, m, count)))
    return np.array(rows, dtype=np.float64).reshape(-1, 2)


def classical_bands(epsilon, width: float, spacing: float, count: int) -> np.ndarray:
    """Rows ``(m, c)`` of the optimal classical mechanism (absolute loss) on an interval of length
    ``width`` whose lattice has ``count`` points ``spacing`` apart."""
    return bands(epsilon, classical_central_widths(epsilon, width), spacing, count)


def circular_bands(epsilon, period: float, count: int) -> np.ndarray:
    """Rows ``(m, c)`` of the optimal circular mechanism (absolute loss) on ``[0, period)`` with
    ``count`` lattice points."""
    return bands(epsilon, 2.0 * circular_half_widths(epsilon, period), period / count, count)


def lie_probabilities(epsilon, k: int) -> np.ndarray:
    """``(k − 1)/(e^ε + k − 1)``, written ``(k − 1)·e^{-ε}/(1 + (k − 1)e^{-ε})`` (no overflow):
    the probability that k-RR over ``k`` values reports a wrong one."""
    def lie(e):
        tail = math.exp(-e)
        return (k - 1) * (tail / (1.0 + (k - 1) * tail))

    return _each(lie, epsilon)
