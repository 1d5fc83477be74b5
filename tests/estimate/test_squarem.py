"""SQUAREM's step-length safeguard (tracs.estimate.expectation_maximisation.run_em)."""

from __future__ import annotations

import numpy as np

from tracs.estimate.expectation_maximisation import STEP_FACTOR, STEP_MAX, DenseBlock, run_em


def _flat_mixture(seed=3, n=2000, g=16):
    """Points of a Gaussian blob seen through Gaussian noise twice as wide: a flat likelihood,
    where EM crawls (plain EM does not meet the stopping rule within 2000 passes)."""
    rng = np.random.default_rng(seed)
    cells = np.stack(np.meshgrid(np.arange(g), np.arange(g), indexing="ij"), -1).reshape(-1, 2)
    true = rng.normal([5, 10], 2, (n, 2))
    seen = true + rng.normal(0, 4, true.shape)
    likelihood = np.exp(-((seen[:, None, :] - cells[None, :, :]) ** 2).sum(-1) / 32)
    return [DenseBlock(likelihood)], np.ones((g, g), dtype=bool)


def test_the_safeguard_is_the_squarem_package_default():
    assert (STEP_MAX, STEP_FACTOR) == (1.0, 4.0)


def test_accelerated_em_converges_on_a_flat_likelihood_where_plain_em_crawls():
    # seed 3: plain EM stops at the 2000-pass safeguard (log-likelihood -2455.600); before the
    # step length was capped SQUAREM did too (-2455.768);
    # with the cap it meets the rule after 1045 passes at -2455.410
    blocks, support = _flat_mixture()
    plain = run_em(blocks, support, accelerate=False)
    fast = run_em(blocks, support)
    assert not plain.converged and plain.iterations >= 2000
    assert fast.converged and fast.iterations < 1500
    assert fast.loglik >= plain.loglik
    np.testing.assert_allclose(fast.theta.sum(), 1.0, rtol=1e-12)
