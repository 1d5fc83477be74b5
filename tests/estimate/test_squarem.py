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


def _uncapped_reference(blocks, support, passes):
    """SQUAREM with its own extrapolation length (scheme S3, the length at least 1), written out."""
    total = sum(b.weight for b in blocks)
    maps = 0

    def step(th):
        nonlocal maps
        maps += 1
        ll, back = 0.0, np.zeros(th.shape)
        for block in blocks:
            part_ll, part = block.predict_and_back(th)
            ll, back = ll + part_ll, back + part
        new = th * back / total
        return ll, new / new.sum()

    theta = support / support.sum()
    _, nxt = step(theta)
    while maps < passes:
        ll1, theta2 = step(nxt)
        r, v = nxt - theta, theta2 - 2 * nxt + theta
        vv = float(np.sum(v * v))
        alpha = max(np.sqrt(float(np.sum(r * r)) / vv) if vv > 0 else 1.0, 1.0)
        cand = np.clip(theta + 2 * alpha * r + alpha * alpha * v, 0.0, None)
        cand = cand / cand.sum()
        ll_c, nxt_c = step(cand)
        if ll_c >= ll1:
            theta, nxt = cand, nxt_c
        else:
            theta = theta2
            _, nxt = step(theta)
    return theta, maps


def test_step_cap_false_is_squarems_own_length():
    """``step_cap=False``: the iterate after a fixed number of passes is that of SQUAREM without a cap,
    bit for bit (seed 3, 60 passes; the capped iteration is elsewhere after them)."""
    blocks, support = _flat_mixture()
    expected, passes = _uncapped_reference(blocks, support, 60)
    uncapped = run_em(blocks, support, max_iterations=passes, tol=-np.inf, step_cap=False)
    capped = run_em(blocks, support, max_iterations=passes, tol=-np.inf)
    assert uncapped.iterations == capped.iterations == passes
    assert np.array_equal(uncapped.theta, expected)
    assert np.abs(capped.theta - expected).max() > 1e-6


def test_the_mobility_models_fits_run_uncapped(monkeypatch):
    """The mobility model's fits have a fixed pass budget tuned with SQUAREM's own length: every
    ``run_em`` of :func:`fit_mobility_model` runs with ``step_cap=False``."""
    from tracs import Rectangle
    from tracs.estimate import expectation_maximisation as em
    from tracs.estimate.synthesize import fit_mobility_model
    from tracs.methods import MethodContext, get

    calls = []
    real = em.run_em

    def spy(*args, **kwargs):
        calls.append(kwargs.get("step_cap", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(em, "run_em", spy)
    perturber = get("tracs-c").build(MethodContext(region=Rectangle(0, 0, 100, 100)), 2.0)
    rng = np.random.default_rng(0)
    reports = perturber.perturb_many(rng.uniform(0, 100, (200, 2)), np.arange(0, 201, 20), rng=1)
    fit_mobility_model(reports, perturber, offsets=np.arange(0, 201, 20), grid=4)
    assert calls == [False, False, False]
