"""The Bayes-optimal error of denoised releases on uniform points (``examples/denoise_bound.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import denoise_bound  # noqa: E402


def _medians(px, py, cx, cy):
    """The medians and means of the product posteriors ``px[r] ⊗ py[r]``."""
    points = np.stack(np.meshgrid(cx, cy, indexing="ij"), axis=-1).reshape(-1, 2)
    return denoise_bound.dense_medians((px[:, :, None] * py[:, None, :]).reshape(len(px), -1), points)


def test_median_of_a_symmetric_posterior_is_its_centre():
    """A posterior symmetric about (0.5, 0.3) on both axes: median and mean both there (1e-9)."""
    cx, cy = np.linspace(0.1, 0.9, 9), np.linspace(0.1, 0.5, 5)
    px = np.array([[1, 2, 3, 4, 9, 4, 3, 2, 1]], float)
    py = np.array([[1, 5, 2, 5, 1]], float)
    med, mean = _medians(px / px.sum(), py / py.sum(), cx, cy)
    np.testing.assert_allclose(med, [[0.5, 0.3]], atol=1e-9)
    np.testing.assert_allclose(mean, [[0.5, 0.3]], atol=1e-12)


def test_median_of_a_skewed_posterior_beats_its_mean():
    """Mass 0.6 at x = 0 and 0.4 at x = 1 (one axis, one row): the median is 0, the mean 0.4; the
    expected distance to the posterior is 0.4 at the median and 0.48 at the mean."""
    med, mean = _medians(np.array([[0.6, 0.4]]), np.array([[1.0]]), np.array([0.0, 1.0]),
                                       np.array([0.0]))
    assert med[0, 0] == pytest.approx(0.0, abs=1e-6)
    assert mean[0, 0] == pytest.approx(0.4)


def test_dense_median_minimises_the_expected_distance():
    """Random posteriors on a 10 × 5 grid: the mean is the axes' means (1e-12), and no point of a fine
    grid about the median has a smaller expected distance to the posterior."""
    cx, cy = np.linspace(0.05, 0.95, 10), np.linspace(0.1, 0.5, 5)
    px = np.random.default_rng(0).random((3, 10))
    py = np.random.default_rng(1).random((3, 5))
    px, py = px / px.sum(axis=1, keepdims=True), py / py.sum(axis=1, keepdims=True)
    points = np.stack(np.meshgrid(cx, cy, indexing="ij"), axis=-1).reshape(-1, 2)
    dense = (px[:, :, None] * py[:, None, :]).reshape(3, -1)
    med, mean = denoise_bound.dense_medians(dense, points)
    np.testing.assert_allclose(mean, np.column_stack([px @ cx, py @ cy]), atol=1e-12)
    # the median minimises the expected distance: no point of a fine grid about it does better
    for r in range(3):
        cost = lambda m: float(dense[r] @ np.hypot(*(m - points).T))  # noqa: E731
        around = med[r] + np.stack(np.meshgrid(*[np.linspace(-0.01, 0.01, 11)] * 2), -1).reshape(-1, 2)
        assert cost(med[r]) <= min(cost(m) for m in around) + 1e-9


def test_bound_on_the_unit_square():
    """Seed 0, 300 points, 60 × 60 grid, ε = 1: both ratios between 0.7 and 0.95 (the full run gives
    about 0.82), the median's at most the mean's plus 0.01 (Monte Carlo noise of 300 points)."""
    raw, mean, med, se = denoise_bound.bound((0.0, 0.0, 1.0, 1.0), 1.0, 300, 60, 0)
    assert 0.3 < raw < 0.6
    assert 0.7 < med < 0.95 and 0.7 < mean < 0.95
    assert med <= mean + 0.01
    assert 0.005 < se < 0.05


@pytest.mark.parametrize("method, low, high", [("tracs-d", 0.65, 0.85), ("strawman", 0.62, 0.82),
                                               ("planar-laplace", 0.45, 0.7)])
def test_bound_of_the_other_methods(method, low, high):
    """Seed 0, 200 points (two walks), 40 × 40 grid, ε = 1: the ratios in a band about the full run's
    (TraCS-D about 0.74, the Strawman 0.72, planar Laplace 0.57), the median's at most the mean's
    plus 0.01."""
    raw, mean, med, se = denoise_bound.bound((0.0, 0.0, 1.0, 1.0), 1.0, 200, 40, 0, method)
    assert 0.3 < raw < 0.8
    assert low < med < high and med <= mean + 0.01


def test_points_must_fill_whole_walks():
    with pytest.raises(ValueError, match="points must be a multiple of 100, got 150"):
        denoise_bound.bound((0.0, 0.0, 1.0, 1.0), 1.0, 150, 20, 0)
