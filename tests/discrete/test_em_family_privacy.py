"""Exact privacy checks of the per-point baselines (EM, NGram, L-SRR) and their samplers.

Privacy: the output distribution over the POIs is computed exactly for every input
of a small adversarial POI set, and the largest log-ratio over all input pairs and
outputs must not exceed ε (relative slack 1e-9 for floating point).

Samplers: each sampler must draw from the distribution whose ratio was checked;
chi-square goodness of fit with fixed seeds, alpha = 1e-4 per test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from tracs.baselines import LSRR, ExponentialMechanism, NGram
from tracs.baselines._exponential_sampler import em_probabilities, sample_em
from tracs.baselines.lsrr import staircase_probabilities

from poi_helpers import max_log_ratio

EPSILONS = [0.5, 2.0, 8.0]
ALPHA = 1e-4
SLACK = 1e-9


def assert_fits(samples, probs, n_categories):
    counts = np.bincount(samples, minlength=n_categories)
    impossible = probs <= 0
    assert counts[impossible].sum() == 0, "sampled an output of probability 0"
    keep = ~impossible
    expected = probs[keep] * len(samples)
    assert chisquare(counts[keep], expected * counts[keep].sum() / expected.sum()).pvalue > ALPHA


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_em_is_epsilon_ldp_exactly(adversarial_space, epsilon):
    em = ExponentialMechanism(adversarial_space, epsilon)
    probs = em.probabilities(np.arange(len(adversarial_space)))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    assert max_log_ratio(probs) <= epsilon * (1 + SLACK)


def test_em_ratio_is_nearly_attained_between_far_points(adversarial_space):
    # the two ends of the diameter: ratio e^{ε/2} from numerators alone, close to ε overall
    em = ExponentialMechanism(adversarial_space, 2.0)
    probs = em.probabilities(np.arange(len(adversarial_space)))
    assert max_log_ratio(probs) > 1.0


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_ngram_is_epsilon_ldp_for_every_public_previous_release(adversarial_space, epsilon):
    theta = adversarial_space.diameter / 6
    ng = NGram(adversarial_space, epsilon, theta=theta)
    inputs = np.arange(len(adversarial_space))
    for previous in [None, *range(len(adversarial_space))]:
        probs = np.array([ng.probabilities(x, previous) for x in inputs])
        support = probs[0] > 0
        # the support depends only on the public previous release, never on the input
        assert np.all((probs > 0) == support)
        assert max_log_ratio(probs[:, support]) <= epsilon * (1 + SLACK)


def test_ngram_empty_candidate_set_falls_back_to_all(adversarial_space):
    ng = NGram(adversarial_space, 2.0, theta=1e-3)
    outlier = int(np.argmax(adversarial_space.points[:, 0]))
    # around the outlier only itself is within θ: the candidate set is {outlier}
    assert ng.candidates(outlier).sum() == 1
    tiny = NGram(adversarial_space, 2.0, theta=1e-9)
    assert tiny.candidates(outlier).sum() == 1  # the previous release itself is always a candidate
    np.testing.assert_allclose(ng.probabilities(3, outlier)[outlier], 1.0)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("sizes", [None, (1, 1), (2, 5), (3, 3, 3, 4)])
def test_lsrr_is_epsilon_ldp_exactly(grid_space, epsilon, sizes):
    # the grid has many exact ties at group boundaries
    lsrr = LSRR(grid_space, epsilon, sizes=sizes)
    probs = np.array([lsrr.probabilities(x) for x in range(len(grid_space))])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    ratio = max_log_ratio(probs)
    assert ratio <= epsilon * (1 + SLACK)
    assert ratio == pytest.approx(epsilon, rel=1e-9)  # p_1/p_m = E exactly


def test_staircase_probabilities_match_the_closed_form_for_three_groups():
    for eps in EPSILONS:
        e = np.exp(eps)
        n1, n2, n3 = 3, 7, 11
        q = 2 / (2 * e * n1 + (e + 1) * n2 + 2 * n3)
        np.testing.assert_allclose(staircase_probabilities([n1, n2, n3], eps),
                                   [e * q, (e + 1) * q / 2, q], rtol=1e-12)
    # no overflow at huge ε
    p = staircase_probabilities([1, 1, 5], 600.0)
    np.testing.assert_allclose(p, [2 / 3, 1 / 3, 2 / 3 * np.exp(-600.0)], rtol=1e-12)
    assert p[2] > 0


def test_lsrr_groups_are_the_nearest_pois(grid_space):
    lsrr = LSRR(grid_space, 2.0, sizes=(1, 4))
    for x in range(len(grid_space)):
        p = lsrr.probabilities(x)
        d = grid_space.distances_from(x)
        assert np.argmax(p) == x  # the nearest POI to a POI is itself
        top = np.sort(p)[::-1]
        second = p == top[1]
        assert second.sum() == 4 and d[second].max() <= np.sort(d)[4] + 1e-9


def test_lsrr_size_validation(grid_space):
    with pytest.raises(ValueError, match=">= 1"):
        LSRR(grid_space, 1.0, sizes=(0, 3))
    with pytest.raises(ValueError, match="more than"):
        LSRR(grid_space, 1.0, sizes=(15, 15))
    with pytest.raises(ValueError, match="groups"):
        LSRR(grid_space, 1.0, groups=1)
    assert LSRR(grid_space, 1.0, sizes=(2, 3)).sizes() == (2, 3, 15)


# -- samplers draw from the checked distributions ------------------------------------------


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_em_sampler_fits(adversarial_space, epsilon):
    em = ExponentialMechanism(adversarial_space, epsilon)
    x = 5
    out = em.perturb_indices(np.full(60_000, x), [0, 60_000], rng=11)
    assert_fits(out, em.probabilities(x), len(adversarial_space))


@pytest.mark.parametrize("budget", [None, 0])
def test_both_em_sampling_paths_fit_with_more_than_one_chunk(budget):
    # 150 POIs: the inverse-CDF path uses three chunks of 64 weights
    rng = np.random.default_rng(3)
    pts = rng.uniform(0, 1000, size=(150, 2))
    scale = 8.0 / (2 * 1414.0)
    allowed = np.arange(150) % 3 != 0

    def accept(rows, cand):
        return cand % 3 != 0

    x = np.repeat(pts[[17]], 60_000, axis=0)
    out = sample_em(pts, x, scale, np.random.default_rng(5), accept, budget=budget)
    d = np.hypot(*(pts - pts[17]).T)
    assert_fits(out, em_probabilities(d, scale, allowed), 150)


def test_em_sampler_empty_candidate_set_uses_all():
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])

    def nothing(rows, cand):
        return np.zeros(np.broadcast_shapes(rows[:, None].shape, cand.shape), dtype=bool)

    out = sample_em(pts, np.zeros((30_000, 2)), 0.3, np.random.default_rng(0), nothing)
    assert_fits(out, em_probabilities(np.array([0.0, 1.0, 1.0]), 0.3), 3)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_lsrr_sampler_fits(grid_space, epsilon):
    lsrr = LSRR(grid_space, epsilon, sizes=(2, 5))
    for x in (0, 7):
        out = lsrr.perturb_indices(np.full(40_000, x), [0, 40_000], rng=x)
        assert_fits(out, lsrr.probabilities(x), len(grid_space))


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_ngram_sampler_fits_given_the_previous_release(grid_space, epsilon):
    ng = NGram(grid_space, epsilon, theta=150.0)
    trials = 40_000
    idx = np.tile([7, 12], trials)
    out = ng.perturb_indices(idx, np.arange(0, 2 * trials + 1, 2), rng=4).reshape(trials, 2)
    assert_fits(out[:, 0], ng.probabilities(7), len(grid_space))
    for previous in (7, 0):
        sel = out[:, 0] == previous
        assert_fits(out[sel, 1], ng.probabilities(12, previous), len(grid_space))


# -- ledgers ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ExponentialMechanism, NGram, LSRR])
def test_per_point_ledgers(grid_space, cls):
    ledger = cls(grid_space, 2.0).privacy_spent(5)
    assert (ledger.per_point, ledger.per_trajectory, ledger.n_points, ledger.unit) == (2.0, 10.0, 5, "point")
    split = cls(grid_space, epsilon_per_trajectory=3.0).privacy_spent(6)
    assert split.per_point == pytest.approx(0.5) and split.per_trajectory == pytest.approx(3.0)


@pytest.mark.parametrize("cls", [ExponentialMechanism, NGram, LSRR])
def test_budget_validation(grid_space, cls):
    with pytest.raises(TypeError, match="exactly one"):  # no budget: a missing argument, as for the perturbers
        cls(grid_space)
    with pytest.raises(ValueError, match="exactly one"):
        cls(grid_space, 1.0, epsilon_per_trajectory=2.0)
    with pytest.raises(ValueError):
        cls(grid_space, -1.0)
    with pytest.raises(TypeError):
        cls(grid_space.points, 1.0)
    with pytest.raises(ValueError, match="too large"):
        cls(grid_space, 1500.0)
