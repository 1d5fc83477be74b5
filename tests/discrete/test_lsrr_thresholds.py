"""L-SRR with the paper's distance-threshold groups: not ε-LDP, and its actual loss computed exactly.

The actual loss ``max_{x,x',y} log P(y|x)/P(y|x')`` is checked against the brute-force
maximum over the full probability matrix (every input × every output, built with
``probabilities``), on a grid with exact ties and on random layouts; the groups are
checked against an independent distance computation.  Sampler: chi-square goodness
of fit, fixed seed, alpha = 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from tracs.baselines import LSRR
from tracs.poi_space import POISpace
from tracs.region import Rectangle

from poi_helpers import max_log_ratio

ALPHA = 1e-4


def full_matrix(model) -> np.ndarray:
    return np.array([model.probabilities(x) for x in range(len(model.poi_space))])


@pytest.fixture(scope="module")
def grid21() -> POISpace:
    step = np.arange(21) * 50.0  # 21 × 21 grid, 1 km square: many exact distance ties
    return POISpace(np.array([(x, y) for x in step for y in step]))


def test_thresholds_on_a_21_grid_are_not_ldp_and_the_loss_is_exact(grid21):
    model = LSRR(grid21, 2.0, grouping="thresholds")
    probs = full_matrix(model)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    brute = max_log_ratio(probs)
    assert model.privacy_loss() == pytest.approx(brute, rel=1e-12)
    assert model.privacy_loss() > 2.0 + 0.5  # about 2.79: well above the nominal ε = 2
    assert model.privacy_loss() == pytest.approx(2.79, abs=0.01)
    # the pruned computation equals the plain all-pairs pass
    assert model._threshold_loss(2.0, prune=False) == pytest.approx(brute, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_loss_equals_brute_force_on_random_layouts(seed, epsilon):
    # uniform points plus a dense cluster and a few outliers: extreme inputs near and far
    rng = np.random.default_rng(seed)
    pts = np.vstack([rng.random((40, 2)) * [3000, 1000],
                     [1500, 500] + rng.normal(scale=60, size=(30, 2)),
                     rng.random((3, 2)) * [3000, 1000]])
    model = LSRR(POISpace(pts), epsilon, grouping="thresholds", thresholds=(0.15, 0.4))
    brute = max_log_ratio(full_matrix(model))
    assert model.privacy_loss() == pytest.approx(brute, rel=1e-12)
    assert model.privacy_loss() > epsilon


def test_groups_follow_the_per_axis_unit_square_normalisation():
    # a 2 × 10 box: a threshold is a fraction of the width along x and of the height along y
    pts = np.array([[0, 0], [0.5, 0], [0, 2.5], [0, 4.0], [2.0, 10.0], [0.7, 0]])
    space = POISpace(pts, region=Rectangle(0, 0, 2, 10))
    model = LSRR(space, 1.0, grouping="thresholds")
    # from (0, 0): (0.5, 0) -> 0.25 and (0, 2.5) -> 0.25: group 1; (0, 4) -> 0.4 and
    # (0.7, 0) -> 0.35: group 2; (2, 10) -> √2: group 3
    np.testing.assert_array_equal(model.group_sizes()[0], [3, 2, 1])
    p = model.probabilities(0)
    assert p[0] == p[1] == p[2] > p[3] == p[5] > p[4]


def test_group_sizes_match_an_independent_distance_computation():
    rng = np.random.default_rng(3)
    pts = rng.random((300, 2)) * [5000, 2000]
    model = LSRR(POISpace(pts), 2.0, grouping="thresholds")
    unit = (pts - pts.min(axis=0)) / (pts.max(axis=0) - pts.min(axis=0))
    d = np.hypot(*(unit[:, None, :] - unit[None, :, :]).transpose(2, 0, 1))
    groups = (d > 0.3).astype(int) + (d > 0.6)
    expected = np.stack([(groups == j).sum(axis=1) for j in range(3)], axis=1)
    np.testing.assert_array_equal(model.group_sizes(), expected)


def test_sampler_fits_the_exact_law(grid21):
    model = LSRR(grid21, 3.0, grouping="thresholds")
    for x in (0, 220):  # a corner and the centre
        out = model.perturb_indices(np.full(60_000, x), [0, 60_000], rng=x + 1)
        probs = model.probabilities(x)
        counts = np.bincount(out, minlength=len(grid21))
        assert chisquare(counts, probs * len(out)).pvalue > ALPHA
    # same seed, same release
    pts = grid21.points[[0, 5, 220, 440]]
    np.testing.assert_array_equal(model.perturb(pts, rng=7), model.perturb(pts, rng=7))


def test_ledger_reports_the_actual_loss(grid21):
    model = LSRR(grid21, 2.0, grouping="thresholds")
    ledger = model.privacy_spent(4)
    assert ledger.per_point == pytest.approx(model.privacy_loss()) and ledger.per_point > 2.0
    assert ledger.per_trajectory == pytest.approx(4 * ledger.per_point)
    assert "NOT ε-LDP" in ledger.note and "2.79" in ledger.note
    # per trajectory: the loss at the per-point share ε/n
    per_traj = LSRR(grid21, epsilon_per_trajectory=8.0, grouping="thresholds").privacy_spent(4)
    assert per_traj.per_point == pytest.approx(ledger.per_point)
    # the default (fixed sizes) grouping is ε-LDP: loss exactly ε, ledger unchanged
    fixed = LSRR(grid21, 2.0)
    assert fixed.privacy_loss() == 2.0 and fixed.privacy_spent(4).per_point == 2.0
    assert "NOT" not in fixed.privacy_spent(4).note


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(grouping="rings"), ValueError, "grouping"),
    (dict(grouping="thresholds", sizes=(3, 5)), ValueError, "sizes"),
    (dict(grouping="thresholds", thresholds=(0.6, 0.3)), ValueError, "increasing"),
    (dict(grouping="thresholds", thresholds=(0.0, 0.3)), ValueError, "positive"),
    (dict(grouping="thresholds", thresholds=(0.3, np.nan)), ValueError, "thresholds"),
    (dict(grouping="thresholds", groups=4), ValueError, "groups"),
])
def test_bad_options(grid21, kwargs, error, match):
    with pytest.raises(error, match=match):
        LSRR(grid21, 1.0, **kwargs)


def test_degenerate_box_and_sizes_are_refused():
    line = POISpace(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="positive width and height"):
        LSRR(line, 1.0, grouping="thresholds")
    square = POISpace(np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="group_sizes"):
        LSRR(square, 1.0, grouping="thresholds").sizes()
