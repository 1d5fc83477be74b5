"""The revisit prior over the POIs (tracs.estimate.revisits) and denoise(..., revisit=...)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import Density
from tracs.estimate.denoising import denoise
from tracs.estimate.revisits import REVISIT, revisit_priors
from tracs.perturbers import TraCSC, TraCSD

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)


def _rows(n, pois, seed):
    rng = np.random.default_rng(seed)
    lik = rng.random((n, pois)) + 0.01
    base = rng.random((n, pois)) + 0.01
    return lik, base / base.sum(axis=1, keepdims=True)


def _by_hand(lik, base, offsets, alpha, rounds):
    """The defining formula, one report at a time: π_i = (α b_i + Σ_{j≠i} q_j) / (α + n − 1)."""
    q = base * lik
    q /= q.sum(axis=1, keepdims=True)
    prior = base.copy()
    for _ in range(rounds):
        new = np.empty_like(prior)
        for a, b in zip(offsets[:-1], offsets[1:]):
            for i in range(a, b):
                others = [j for j in range(a, b) if j != i]
                new[i] = (alpha * base[i] + q[others].sum(axis=0)) / (alpha + len(others))
        prior = new
        q = prior * lik
        q /= q.sum(axis=1, keepdims=True)
    return prior


@pytest.mark.parametrize("rounds", [1, 3])
@pytest.mark.parametrize("alpha", [0.5, 4.0])
def test_priors_follow_the_formula_report_by_report(rounds, alpha):
    # three trajectories of 4, 1 and 3 reports over 5 POIs (seed 1): the vectorised rounds equal the
    # formula applied report by report to 1e-12; every row sums to 1
    lik, base = _rows(8, 5, 1)
    offsets = np.array([0, 4, 5, 8])
    got = revisit_priors(lik, base, offsets, alpha, rounds)
    np.testing.assert_allclose(got, _by_hand(lik, base, offsets, alpha, rounds), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-12)


def test_a_trajectory_of_one_report_keeps_its_base_prior():
    lik, base = _rows(3, 4, 2)
    got = revisit_priors(lik, base, np.array([0, 1, 2, 3]), REVISIT)
    np.testing.assert_array_equal(got, base)


@pytest.mark.parametrize("with_empty", [[0, 0, 4, 4, 5, 8], [0, 4, 5, 8, 8], [0, 4, 4, 4, 5, 8, 8]])
def test_empty_trajectories_change_nothing(with_empty):
    # empty trajectories first, between others or last give the priors of the same rows without them
    lik, base = _rows(8, 5, 8)
    np.testing.assert_array_equal(revisit_priors(lik, base, np.array(with_empty), 4.0),
                                  revisit_priors(lik, base, np.array([0, 4, 5, 8]), 4.0))


def test_a_reports_own_law_never_enters_its_first_round_prior():
    # leave-one-out: after one round report 0's prior depends on the other reports' laws only
    lik, base = _rows(4, 6, 3)
    changed = lik.copy()
    changed[0] = np.random.default_rng(4).random(6) + 0.01
    offsets = np.array([0, 4])
    first = revisit_priors(lik, base, offsets, 2.0, rounds=1)
    second = revisit_priors(changed, base, offsets, 2.0, rounds=1)
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.allclose(first[1:], second[1:])


def test_a_heavy_base_weight_gives_the_base_prior():
    lik, base = _rows(6, 5, 5)
    got = revisit_priors(lik, base, np.array([0, 6]), 1e12)
    np.testing.assert_allclose(got, base, rtol=1e-9)


def test_trajectories_do_not_see_each_other():
    # redrawing the rows of the second trajectory leaves the first one's priors unchanged, bit for bit
    lik, base = _rows(7, 5, 6)
    other_lik, other_base = _rows(7, 5, 7)
    offsets = np.array([0, 3, 7])
    lik2, base2 = lik.copy(), base.copy()
    lik2[3:], base2[3:] = other_lik[3:], other_base[3:]
    np.testing.assert_array_equal(revisit_priors(lik, base, offsets, 4.0)[:3],
                                  revisit_priors(lik2, base2, offsets, 4.0)[:3])


def _revisiting_users(pert, seed, users=12, length=20, venues=3):
    """``(pois, truth, offsets, reports)``: every user checks in at ``venues`` POIs of their own, again
    and again, among 60 POIs spread over the region."""
    rng = np.random.default_rng(seed)
    pois = rng.uniform([0.02, 0.02], [1.98, 0.98], (60, 2))
    own = np.array([rng.choice(60, venues, replace=False) for _ in range(users)])
    truth = pois[np.concatenate([rng.choice(own[u], length) for u in range(users)])]
    offsets = np.arange(0, users * length + 1, length)
    return pois, truth, offsets, pert.perturb_many(truth, offsets, rng=seed + 1)


@pytest.mark.parametrize("make", [lambda r: TraCSC(r, 8.0), lambda r: TraCSD(r, 8.0)], ids=["tracs-c", "tracs-d"])
def test_revisits_lower_the_error_when_users_come_back(make):
    # 12 users × 20 check-ins at 3 POIs of their own (seed 11), ε = 8, the uniform prior over the region,
    # the transition fixed (scale 0.5, jump 0.2): the revisit prior's mean error is at most half that of
    # the prior given the trajectory alone (measured: 0.071 against 0.186 for TraCS-C, 0.074 against
    # 0.203 for TraCS-D; at ε = 2 0.506 against 0.534 and 0.497 against 0.525)
    pert = make(REGION)
    pois, truth, off, reports = _revisiting_users(pert, 11)
    flat = Density(np.full((4, 3), 1 / 12), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    options = dict(offsets=off, pois=pois, trajectory=True, scale=0.5, jump=0.2)
    alone = np.linalg.norm(denoise(reports, pert, flat, revisit=None, **options) - truth, axis=1).mean()
    mixed = np.linalg.norm(denoise(reports, pert, flat, **options) - truth, axis=1).mean()
    assert mixed <= 0.5 * alone, (mixed, alone)


def test_revisit_none_is_the_prior_given_the_trajectory_and_workers_do_not_matter():
    # revisit=None: the posterior under the prior given the trajectory alone; any weight: the same
    # points for 1 and 2 workers, bit for bit (chunks of whole trajectories)
    pert = TraCSD(REGION, 2.0)
    pois, _, off, reports = _revisiting_users(pert, 12)
    p = np.random.default_rng(13).random((4, 3))
    prior = Density(p / p.sum(), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    options = dict(offsets=off, pois=pois, trajectory=True, scale=0.5, jump=0.2)
    base = denoise(reports, pert, prior, revisit=None, **options)
    mixed = denoise(reports, pert, prior, revisit=2.0, **options)
    assert not np.array_equal(base, mixed)
    np.testing.assert_array_equal(mixed, denoise(reports, pert, prior, revisit=2.0, workers=2, **options))
