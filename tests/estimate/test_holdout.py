"""The EM pass budget chosen on held-out trajectories (``density(stop=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import Density, holdout, density
from tracs.estimate import expectation_maximisation as fitting
from tracs.estimate._directional import directional_blocks
from tracs.estimate.grid_density import _axis_points, _subpoints
from tracs.perturbers import Strawman, TraCSD

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)
GRID = (8, 8)


def _clustered(n, seed, length=20):
    """Two Gaussian clusters clipped into REGION, as trajectories of ``length`` points."""
    rng = np.random.default_rng(seed)
    c = np.where(rng.random(n)[:, None] < 0.6, [0.5, 0.3], [1.5, 0.7])
    pts = np.clip(c + rng.normal(0, 0.12, (n, 2)), [0, 0], [2, 1])
    return pts, np.arange(0, n + 1, length)


def test_folds_hold_whole_trajectories_and_are_fixed():
    off = np.r_[0, np.cumsum(np.random.default_rng(1).integers(0, 9, 40))]
    fold = holdout.trajectory_folds(off)
    assert fold.shape == (off[-1],)
    for a, b in zip(off[:-1], off[1:]):
        assert len(set(fold[a:b].tolist())) <= 1  # one fold per trajectory
    per_traj = [fold[a] for a, b in zip(off[:-1], off[1:]) if b > a]
    counts = np.bincount(np.asarray(per_traj), minlength=holdout.FOLDS)
    assert counts.min() >= 1 and set(np.unique(fold).tolist()) <= set(range(holdout.FOLDS))
    np.testing.assert_array_equal(fold, holdout.trajectory_folds(off.copy()))
    # fewer than 2·FOLDS non-empty trajectories: nothing to hold out
    assert holdout.trajectory_folds(np.array([0, 5, 5, 9, 12, 20])) is None


def test_observe_sees_every_examined_iterate():
    pts, off = _clustered(1000, 2)
    pert = TraCSD(REGION, 1.0)
    rep = pert.perturb_many(pts, off, rng=3)
    xe, ye = np.linspace(0, 2, 9), np.linspace(0, 1, 9)
    points = _subpoints(xe, ye, 1)
    blocks = directional_blocks(rep, off, pert, np.full(len(rep), 1.0), _axis_points(xe, 1),
                                _axis_points(ye, 1), 1, points)
    support = np.ones(GRID, dtype=bool)
    seen = []
    fit = fitting.run_em(blocks, support, observe=lambda th, m: seen.append((m, th.copy())))
    passes = [m for m, _ in seen]
    assert passes == sorted(passes) and passes[-1] == fit.iterations
    np.testing.assert_array_equal(seen[-1][1], fit.theta)
    # a budget stops the same path at the first examined iterate with at least that many passes
    budget = passes[len(passes) // 2]
    capped = fitting.run_em(blocks, support, max_iterations=budget)
    np.testing.assert_array_equal(capped.theta, dict(seen)[budget])


def test_auto_is_cv_below_two_and_rule_from_two():
    pts, off = _clustered(1200, 4)
    for eps, same_as in ((1.0, "cv"), (2.0, "rule")):
        pert = TraCSD(REGION, eps)
        rep = pert.perturb_many(pts, off, rng=5)
        auto = density(rep, pert, offsets=off, grid=GRID)
        other = density(rep, pert, offsets=off, grid=GRID, stop=same_as)
        np.testing.assert_array_equal(auto.probabilities, other.probabilities)
        assert auto.iterations == other.iterations


def test_cv_budget_is_deterministic_and_never_longer_than_the_rule():
    pts, off = _clustered(2000, 6)
    pert = Strawman(REGION, 1.0)
    rep = pert.perturb_many(pts, off, rng=7)
    a = density(rep, pert, offsets=off, grid=GRID, stop="cv")
    b = density(rep.copy(), Strawman(REGION, 1.0), offsets=off.copy(), grid=GRID, stop="cv")
    rule = density(rep, pert, offsets=off, grid=GRID, stop="rule")
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    assert a.iterations <= rule.iterations + 3  # a SQUAREM step evaluates up to 3 maps past the budget
    # one trajectory: nothing can be held out, the rule decides
    one = np.array([0, len(rep)])
    np.testing.assert_array_equal(density(rep, pert, offsets=one, grid=GRID, stop="cv").probabilities,
                                  density(rep, pert, offsets=one, grid=GRID, stop="rule").probabilities)


def test_cv_budget_lowers_error_at_small_epsilon():
    # TraCS-D at ε = 1, 4 000 points in trajectories of 20, data seed 8, releases 9, 10, 11:
    # the mean total-variation distance to the true 8×8 histogram with the held-out budget
    # must be at most 0.95 × the stopping rule's (measured 0.875: 0.443, 0.518, 0.332
    # against 0.527, 0.518, 0.433)
    pts, off = _clustered(4000, 8)
    pert = TraCSD(REGION, 1.0)
    truth = Density.from_points(pts, (np.linspace(0, 2, 9), np.linspace(0, 1, 9)))
    tv = {"cv": [], "rule": []}
    for seed in (9, 10, 11):
        rep = pert.perturb_many(pts, off, rng=seed)
        for stop in tv:
            tv[stop].append(density(rep, pert, offsets=off, grid=GRID, stop=stop).total_variation(truth))
    ratio = np.mean(tv["cv"]) / np.mean(tv["rule"])
    assert ratio <= 0.95, (ratio, tv)


@pytest.mark.parametrize("folds", [np.zeros(10, dtype=np.int64)], ids=["one-fold"])
def test_single_fold_has_no_training_reports(folds):
    pts, off = _clustered(10, 1, length=2)
    pert = TraCSD(REGION, 1.0)
    rep = pert.perturb_many(pts, off, rng=1)
    xe, ye = np.linspace(0, 2, 9), np.linspace(0, 1, 9)
    blocks = directional_blocks(rep, off, pert, np.full(10, 1.0), _axis_points(xe, 1), _axis_points(ye, 1),
                                1, _subpoints(xe, ye, 1))
    assert holdout.choose_passes(blocks, np.ones(GRID, dtype=bool), folds) is None
