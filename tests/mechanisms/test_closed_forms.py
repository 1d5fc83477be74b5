"""The private closed forms (tracs.mechanisms.closed_forms) that the perturbers and estimators read
for arrays of budgets equal, bit for bit, the constants of the public mechanisms built one budget at
a time, over a table of budgets from the smallest supported to the largest and the per-point budgets
of per-trajectory budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs._validation import MAX_EPSILON, MIN_EPSILON
from tracs.mechanisms import KRR, OptimalCircular, OptimalClassical
from tracs.mechanisms.closed_forms import (circular_bands, circular_half_widths, classical_bands,
                                            classical_half_widths, lie_probabilities)

#: single budgets (tiny to the largest sampled) and per-point budgets of per-trajectory budgets
#: 2, 60 and 700 shared over trajectories of 1 … 40 points
EPSILONS = np.unique(np.concatenate([
    [MIN_EPSILON, 1e-60, 1e-12, 1e-6, 1e-3, 0.01, 0.1, 1 / 3, 0.5, 1.0, 2.0, math.pi, 7.5, 10.0, 38.0, 50.0,
     100.0, 300.0, 699.0, MAX_EPSILON],
    2.0 / np.arange(1, 41), 60.0 / np.arange(1, 41), 700.0 / np.arange(1, 41)]))
RESOLUTIONS = [None, 1 / 1000, 1 / 7, 0.5]


def _rows(objects) -> np.ndarray:
    return np.array([m.band() for m in objects], dtype=np.float64)


@pytest.mark.parametrize("resolution", RESOLUTIONS)
@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-3.5, 12.25), (100.0, 1e6), (0.0, 1e-9)])
def test_classical_bands_equal_the_public_mechanism(low, high, resolution):
    public = [OptimalClassical(epsilon=float(e), low=low, high=high, resolution=resolution) for e in EPSILONS]
    lattice = public[0].lattice
    assert np.array_equal(classical_bands(EPSILONS, high - low, lattice.spacing, lattice.count), _rows(public))
    assert np.array_equal(classical_half_widths(EPSILONS), [m.half_width for m in public])


@pytest.mark.parametrize("resolution", RESOLUTIONS)
@pytest.mark.parametrize("period", [2 * math.pi, 1.0, 360.0])
def test_circular_bands_equal_the_public_mechanism(period, resolution):
    public = [OptimalCircular(epsilon=float(e), period=period, resolution=resolution) for e in EPSILONS]
    assert np.array_equal(circular_bands(EPSILONS, period, public[0].lattice.count), _rows(public))
    assert np.array_equal(circular_half_widths(EPSILONS, period), [m.half_width for m in public])


@pytest.mark.parametrize("k", [2, 6, 9, 1000])
def test_lie_probabilities_equal_krr(k):
    assert np.array_equal(lie_probabilities(EPSILONS, k), [KRR(epsilon=float(e), k=k).lie_probability
                                                          for e in EPSILONS])


def test_half_widths_are_the_papers_closed_forms():
    """``C = 1/(2(e^{ε/2} + 1))`` on the unit interval, ``period/(2(e^{ε/2} + 1))`` on the circle
    (Zheng, Mishra & Hu, Theorems 3.7 and 4.2), to the last bit of the scalar forms."""
    expected = [0.5 / (math.exp(e / 2.0) + 1.0) for e in EPSILONS.tolist()]
    assert np.array_equal(classical_half_widths(EPSILONS), expected)
    assert np.array_equal(circular_half_widths(EPSILONS, 2 * math.pi),
                          [2 * math.pi / (2.0 * (math.exp(e / 2.0) + 1.0)) for e in EPSILONS.tolist()])
    assert classical_half_widths(MIN_EPSILON) == 0.25
    assert classical_half_widths(MAX_EPSILON) == pytest.approx(0.5 * math.exp(-350.0), rel=1e-15)


def test_shapes_follow_the_budgets():
    eps = np.array([[0.5, 1.0, 2.0], [4.0, 8.0, 16.0]])
    assert classical_half_widths(eps).shape == (2, 3) and circular_half_widths(eps, 1.0).shape == (2, 3)
    assert lie_probabilities(eps, 4).shape == (2, 3)
    rows = classical_bands(eps, 1.0, 1 / 64, 65)
    assert rows.shape == (6, 2) and np.array_equal(rows[4], classical_bands(8.0, 1.0, 1 / 64, 65)[0])
    assert circular_bands(np.array([], dtype=float), 1.0, 64).shape == (0, 2)
