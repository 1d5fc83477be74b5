"""Bounded Laplace (B-Laplace): its scale, its exact worst-case ratio, its errors."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.mechanisms import BoundedLaplace, Laplace, bounded_laplace_scale


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0, 30.0])
@pytest.mark.parametrize("low,high", [(0.0, 1.0), (-3.0, 5.0)])
def test_scale_is_width_over_epsilon_under_local_dp(epsilon, low, high):
    assert bounded_laplace_scale(epsilon, low, high) == pytest.approx((high - low) / epsilon, rel=1e-12)
    assert BoundedLaplace(epsilon=epsilon, low=low, high=high).scale == pytest.approx((high - low) / epsilon)


def test_holohan_condition_for_a_smaller_sensitivity():
    # Δ_f below the width: the solved b satisfies b = Δ_f / (ε − ln ΔC(b)) and exceeds Δ_f/ε
    b = bounded_laplace_scale(1.0, 0.0, 1.0, sensitivity=0.5)
    mass = lambda x: 2 - np.exp(-x / b) - np.exp(-(1 - x) / b)  # noqa: E731
    assert b > 0.5 and b == pytest.approx(0.5 / (1.0 - np.log(mass(0.5) / mass(0.0))), rel=1e-10)
    with pytest.raises(ValueError, match="sensitivity must lie in"):
        bounded_laplace_scale(1.0, 0.0, 1.0, sensitivity=2.0)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_worst_ratio_on_a_grid_is_exactly_e_to_the_epsilon(epsilon):
    mech = BoundedLaplace(epsilon=epsilon)
    grid = np.linspace(0.0, 1.0, 201)
    log_pdf = np.log(mech.pdf(grid[None, :], grid[:, None]))  # [x, y]
    worst = (log_pdf[:, None, :] - log_pdf[None, :, :]).max()
    assert worst == pytest.approx(epsilon, rel=1e-9)
    assert worst <= epsilon * (1 + 1e-12)


def test_cdf_and_sf_agree_and_normalise():
    mech = BoundedLaplace(epsilon=3.0, low=-1.0, high=2.0)
    x = np.array([-1.0, 0.2, 2.0])[:, None]
    y = np.linspace(-1.0, 2.0, 31)[None, :]
    np.testing.assert_allclose(mech.cdf(y, x) + mech.sf(y, x), 1.0, atol=1e-14)
    np.testing.assert_allclose(mech.cdf(np.array(2.0), x.ravel()), 1.0, atol=1e-14)


def test_error_at_the_centre_is_below_the_plain_laplaces():
    # the renormalised density keeps every output inside the interval: its error at the
    # centre is below the plain Laplace's (which wastes mass outside)
    eps = 1.0
    assert BoundedLaplace(epsilon=eps).expected_error(0.5) < Laplace(epsilon=eps).expected_error(0.5)
