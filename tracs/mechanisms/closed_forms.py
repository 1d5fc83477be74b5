"""Closed-form constants of the optimal piecewise mechanisms and of k-RR, for arrays of budgets.

Each formula is written here once: the public classes
(:class:`~tracs.mechanisms.OptimalClassical`, :class:`~tracs.mechanisms.OptimalCircular`,
:class:`~tracs.mechanisms.KRR`, the banded lattice law of every piecewise-constant
mechanism) read their constants from these functions, and so do the compiled
perturbers (one kernel row per distinct per-point budget) and the estimators'
likelihoods.

Private: the arguments are already validated at a public boundary (budgets finite
and within ``[MIN_EPSILON, MAX_EPSILON]``, spacings and counts those of a checked
lattice), and nothing here checks them again.  Each constant has a scalar form
(one budget: the public classes) and an array form that applies it to every entry
(budgets of any shape; the band constants come back as rows ``(m, c)``, one per
budget, in ``ravel`` order).

The ε-dependent factors are evaluated with the scalar ``math.exp`` and ``math.log``,
one call per budget (callers pass distinct budgets: a per-trajectory budget has
one per trajectory length).  numpy's vectorised ``exp`` may differ from them in
the last bit, and the band's rare mass ``c`` is compared exactly with the random
words (:mod:`tracs.mechanisms.band`), so the scalar forms keep every release
bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from .band import band_width, rare_mass

__all__ = ["classical_half_width", "classical_central_width", "circular_half_width", "band", "arc_band",
           "lie_probability", "classical_half_widths", "circular_half_widths", "classical_bands", "circular_bands",
           "lie_probabilities"]


# -- one budget ---------------------------------------------------------------------------------
def classical_half_width(epsilon: float) -> float:
    """``C = 1/(2(s + 1))``, ``s = e^{ε/2}``: half the central interval of the optimal classical
    mechanism (absolute loss) on the unit interval."""
    return 0.5 / (math.exp(epsilon / 2.0) + 1.0)


def classical_central_width(epsilon: float, width: float) -> float:
    """``2C·width``: the central interval of the optimal classical mechanism (absolute loss) on an
    interval of length ``width``."""
    return 2.0 * classical_half_width(epsilon) * width


def circular_half_width(epsilon: float, period: float) -> float:
    """``C = period/(2(s + 1))``: half the high-density arc of the optimal circular mechanism
    (absolute loss) on ``[0, period)``."""
    return period / (2.0 * (math.exp(epsilon / 2.0) + 1.0))


def band(epsilon: float, central_width: float, spacing: float, count: int) -> tuple[int, float]:
    """``(m, c)`` of the banded lattice law (:mod:`tracs.mechanisms.band`): ``m`` cells of width
    ``spacing`` cover the central piece of width ``central_width``, ``c`` is the mass of the
    other ``count − m`` cells."""
    m = band_width(central_width, spacing, count)
    return m, rare_mass(epsilon, m, count)


def arc_band(epsilon: float, half_width: float, period: float, count: int) -> tuple[int, float]:
    """:func:`band` of a mechanism on the circle ``[0, period)`` of ``count`` cells whose
    high-density arc is ``2·half_width`` long, centred on the input."""
    return band(epsilon, 2.0 * half_width, period / count, count)


def lie_probability(epsilon: float, k: int) -> float:
    """``(k − 1)/(e^ε + k − 1)``, written ``(k − 1)·e^{-ε}/(1 + (k − 1)e^{-ε})`` (no overflow):
    the probability that k-RR over ``k`` values reports a wrong one."""
    tail = math.exp(-epsilon)
    return (k - 1) * (tail / (1.0 + (k - 1) * tail))


# -- arrays of budgets -------------------------------------------------------------------------
def _each(function, values, *args) -> np.ndarray:
    """``function(v, *args)`` of every entry ``v`` of ``values`` (a float array of its shape)."""
    arr = np.asarray(values, dtype=np.float64)
    return np.array([function(v, *args) for v in arr.ravel().tolist()], dtype=np.float64).reshape(arr.shape)


def classical_half_widths(epsilon) -> np.ndarray:
    """:func:`classical_half_width` of every budget."""
    return _each(classical_half_width, epsilon)


def circular_half_widths(epsilon, period: float) -> np.ndarray:
    """:func:`circular_half_width` of every budget."""
    return _each(circular_half_width, epsilon, period)


def _rows(band_of, epsilon) -> np.ndarray:
    """Rows ``(m, c)`` of ``band_of(ε)`` for every budget, in ``ravel`` order."""
    rows = [band_of(e) for e in np.asarray(epsilon, dtype=np.float64).ravel().tolist()]
    return np.array(rows, dtype=np.float64).reshape(-1, 2)


def classical_bands(epsilon, width: float, spacing: float, count: int) -> np.ndarray:
    """Rows ``(m, c)`` of the optimal classical mechanism (absolute loss) on an interval of length
    ``width`` whose lattice has ``count`` points ``spacing`` apart, for every budget."""
    return _rows(lambda e: band(e, classical_central_width(e, width), spacing, count), epsilon)


def circular_bands(epsilon, period: float, count: int) -> np.ndarray:
    """Rows ``(m, c)`` of the optimal circular mechanism (absolute loss) on ``[0, period)`` with
    ``count`` lattice points, for every budget."""
    return _rows(lambda e: arc_band(e, circular_half_width(e, period), period, count), epsilon)


def lie_probabilities(epsilon, k: int) -> np.ndarray:
    """:func:`lie_probability` of every budget."""
    return _each(lie_probability, epsilon, k)
