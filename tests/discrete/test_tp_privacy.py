"""Exact privacy checks of TP and ATP by enumeration on tiny trajectories.

For a trajectory of 2 or 3 POIs on a 10-POI space, the output distribution of one
copy is enumerated exactly from the algorithm's definition (EM, k-RR on fixed
sectors, restricted EM with fallback, and for ATP the anchor EM and the Square Wave
radius), written here independently of the sampler with the public primitives.
Each copy must be (ε_T/2)-LDP and the merged output of a 2-point trajectory
ε_T-LDP, for every pair of input trajectories; the sampler must match the
enumerated merged distribution (chi-square, fixed seed, alpha = 1e-4).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from tracs.baselines import ATP, TP
from tracs.baselines._exponential_sampler import em_probabilities
from tracs.baselines.tp import auto_sectors, in_sector, sector_index
from tracs.poi_space import POISpace
from tracs.mechanisms import KRR, SquareWave

from poi_helpers import max_log_ratio

EPSILONS = [0.5, 2.0, 8.0]
SLACK = 1e-9


@pytest.fixture(scope="module")
def tiny_space() -> POISpace:
    # a 3 x 3 grid (exact sector-boundary and collinear cases) plus one off-grid point
    xs, ys = np.meshgrid([0.0, 100.0, 200.0], [0.0, 100.0, 200.0])
    return POISpace(np.vstack([np.column_stack([xs.ravel(), ys.ravel()]), [[430.0, 60.0]]]))


def _em(space, x, eps, allowed=None):
    return em_probabilities(space.distances_from(x), eps / (2 * space.diameter), allowed)


def _regions(model, traj):
    """ATP's anchor regions as (probability, mask) pairs; TP: all of P with probability 1."""
    space, pts = model.poi_space, model.poi_space.points
    if not isinstance(model, ATP):
        return [(1.0, np.ones(len(space), dtype=bool))]
    b = {key: np.asarray(val).item() for key, val in model.budgets(len(traj)).items()}
    _, (anchor,) = space.round(pts[list(traj)].mean(axis=0, keepdims=True))
    sw = SquareWave(epsilon=b["radius"], low=0.0, high=space.diameter)
    regions = []
    for released, p_anchor in enumerate(_em(space, anchor, b["anchor"])):
        dist = space.distances_from(released)
        far = min(dist[list(traj)].max(), space.diameter)
        # the region is {d <= R}: it changes only where R = max(r~, 0) crosses a distance
        levels = np.unique(dist)
        cdf = np.append(sw.cdf(levels[1:], far), 1.0)
        mass = np.diff(np.concatenate([[0.0], cdf]))
        regions += [(p_anchor * p_r, dist <= level) for level, p_r in zip(levels, mass)]
    return regions


def _target_kernel(model, x, n_origins, region, b, sectors):
    """D[o_1, …, y]: distribution of a target's release given its origins' releases."""
    k = int(b["k"])
    weights = np.exp(-b["point"] / (2 * model.poi_space.diameter) * model.poi_space.distances_from(x))
    if n_origins == 0:
        w = np.where(region, weights, 0.0)
        return w / w.sum()
    krr = KRR(epsilon=b["direction"], k=k).pmf(np.arange(k)[None, :], sectors[:, x, None])  # (o, s)
    member = sectors[:, None, :] == np.arange(k)[None, :, None]  # (o, s, y)
    if n_origins == 1:
        allowed = region & member  # (o, s, y)
        p_rep = krr
    else:
        allowed = region & member[:, None, :, None, :] & member[None, :, None, :, :]  # (o, o', s, s', y)
        p_rep = krr[:, None, :, None] * krr[None, :, None, :]
    empty = ~allowed.any(axis=-1, keepdims=True)
    allowed = np.where(empty, region, allowed)  # empty intersection: the allowed set itself
    w = np.where(allowed, weights, 0.0)
    w /= w.sum(axis=-1, keepdims=True)
    if n_origins == 1:
        return np.einsum("os,osy->oy", p_rep, w)
    return np.einsum("abst,abstz->abz", p_rep, w)


def copy_distribution(model, traj, parity):
    """Exact distribution of one copy's releases over P^n, for n = 2 or 3."""
    space, pts = model.poi_space, model.poi_space.points
    n = len(traj)
    b = {key: np.asarray(val).item() for key, val in model.budgets(n).items()}
    sectors = sector_index(pts[:, None, :], pts[None, :, :], int(b["k"]))  # (origin, y)
    out = 0.0
    for p_region, region in _regions(model, traj):
        if p_region == 0:
            continue

        def em(i):
            return _em(space, traj[i], b["point"], region)

        def kern(i, n_origins):
            return _target_kernel(model, traj[i], n_origins, region, b, sectors)

        if (n, parity) == (2, 0):
            dist = np.einsum("a,ab->ab", em(0), kern(1, 1))
        elif (n, parity) == (2, 1):
            dist = np.einsum("b,ba->ab", em(1), kern(0, 1))
        elif (n, parity) == (3, 0):
            dist = np.einsum("a,c,acb->abc", em(0), em(2), kern(1, 2))
        else:
            dist = np.einsum("b,ba,bc->abc", em(1), kern(0, 1), kern(2, 1))
        out = out + p_region * dist
    return out


def merge_kernel(space):
    """M[a, b, o]: probability that the merge of releases a and b outputs o."""
    pts = space.points
    d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
    cost = d[:, None, :] + d[None, :, :]  # cost[a, b, o] = d(a, o) + d(b, o)
    best = d[:, :, None]
    ties = cost <= best + 1e-9 * space.diameter
    return ties / ties.sum(axis=2, keepdims=True)


def merged_distribution(model, traj):
    first, second = copy_distribution(model, traj, 0), copy_distribution(model, traj, 1)
    kernel = merge_kernel(model.poi_space)
    return np.einsum("ab,cd,aco,bdp->op", first, second, kernel, kernel)


@pytest.mark.parametrize("cls", [TP, ATP])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_two_point_trajectories_exactly(tiny_space, cls, epsilon):
    model = cls(tiny_space, epsilon_per_trajectory=epsilon)
    m = len(tiny_space)
    trajectories = list(itertools.product(range(m), repeat=2))  # every pair of inputs
    if cls is ATP:  # slower to enumerate (anchor x radius): a third of the pairs
        trajectories = trajectories[::3] + [(9, 0), (0, 9)]
    copies = {p: [] for p in (0, 1)}
    for traj in trajectories:
        for parity in (0, 1):
            dist = copy_distribution(model, traj, parity)
            assert dist.sum() == pytest.approx(1.0, abs=1e-12)
            copies[parity].append(dist.ravel())
    for parity in (0, 1):
        assert max_log_ratio(np.array(copies[parity])) <= epsilon / 2 * (1 + SLACK)
    # merged output for adversarial pairs: corners, centre, the outlier, equal points
    chosen = [(0, 8), (8, 0), (4, 4), (9, 0), (0, 9), (2, 6), (9, 9), (0, 0)]
    merged = np.array([merged_distribution(model, traj).ravel() for traj in chosen])
    np.testing.assert_allclose(merged.sum(axis=1), 1.0, atol=1e-12)
    assert max_log_ratio(merged) <= epsilon * (1 + SLACK)


@pytest.mark.parametrize("cls", [TP, ATP])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_three_point_trajectories_exactly(tiny_space, cls, epsilon):
    model = cls(tiny_space, epsilon_per_trajectory=epsilon)
    rng = np.random.default_rng(7)
    chosen = [(0, 4, 8), (8, 4, 0), (9, 9, 9), (0, 9, 0), (4, 4, 4), (2, 9, 6)]
    chosen += [tuple(rng.integers(0, len(tiny_space), 3)) for _ in range(6)]
    for parity in (0, 1):
        dists = np.array([copy_distribution(model, traj, parity).ravel() for traj in chosen])
        np.testing.assert_allclose(dists.sum(axis=1), 1.0, atol=1e-12)
        assert max_log_ratio(dists) <= epsilon / 2 * (1 + SLACK)


@pytest.mark.parametrize("cls", [TP, ATP])
@pytest.mark.parametrize("epsilon", [2.0, 8.0])
def test_sampler_matches_the_enumeration(tiny_space, cls, epsilon):
    model = cls(tiny_space, epsilon_per_trajectory=epsilon)
    traj = (2, 9)
    exact = merged_distribution(model, traj).ravel()
    trials = 60_000
    out = model.perturb_indices(np.tile(traj, trials), np.arange(0, 2 * trials + 1, 2), rng=99)
    counts = np.bincount(out[0::2] * len(tiny_space) + out[1::2], minlength=exact.size)
    assert counts[exact == 0].sum() == 0
    keep = exact > 0
    assert chisquare(counts[keep], exact[keep] * trials / exact[keep].sum()).pvalue > 1e-4


def test_sectors_are_a_fixed_partition():
    rng = np.random.default_rng(0)
    origin = np.array([3.0, -2.0])
    pts = np.vstack([rng.normal(size=(500, 2)) * 10, origin, origin + [5, 0], origin + [0, 5],
                     origin + [-5, 0], origin + [0, -5], origin + [5, 5]])
    for k in (2, 4, 6, 12):
        s = sector_index(origin, pts, k)
        assert s.min() >= 0 and s.max() <= k - 1
        members = np.array([in_sector(origin, pts, k, j) for j in range(k)])
        np.testing.assert_array_equal(members.sum(axis=0), 1)  # every point in exactly one
        np.testing.assert_array_equal(members.argmax(axis=0), s)
        bearing = np.mod(np.arctan2(*(pts - origin)[:, ::-1].T), 2 * np.pi)
        expected = np.floor(bearing / (2 * np.pi / k))
        away = np.abs(bearing / (2 * np.pi / k) - np.round(bearing / (2 * np.pi / k))) > 1e-9
        np.testing.assert_array_equal(s[away], expected[away])
    assert sector_index(origin, origin, 6) == 0  # a point on its origin: bearing 0


def test_sector_count_grows_with_the_direction_budget():
    assert auto_sectors([0.1, 1.0, 1.2, 1.7, 2.3, 2.5]).tolist() == [2, 2, 4, 6, 6, 12]


@pytest.mark.parametrize("cls", [TP, ATP])
def test_budget_split_adds_up(tiny_space, cls):
    model = cls(tiny_space, epsilon_per_trajectory=4.0)
    for n in (1, 2, 5):
        b = {key: float(val) for key, val in model.budgets(n).items()}
        spent = b["anchor"] + b["radius"] + (n - 1) * b["direction"] + n * b["point"]
        assert spent == pytest.approx(b["copy"]) and b["copy"] == pytest.approx(2.0)
    ledger = model.privacy_spent(5)
    assert (ledger.per_trajectory, ledger.per_point, ledger.unit) == (4.0, 4.0, "trajectory")
    per_point = cls(tiny_space, 1.5).privacy_spent(4)
    assert per_point.per_trajectory == pytest.approx(6.0) and per_point.basis == "per_point"
    if cls is ATP:
        b = model.budgets(3)
        assert float(b["anchor"]) == pytest.approx(4.0 / 32) and float(b["radius"]) == pytest.approx(12.0 / 32)
        assert 2 * float(b["direction"]) == pytest.approx(36.0 / 32)


def test_merge_breaks_ties_at_random(tiny_space):
    model = TP(tiny_space, epsilon_per_trajectory=1.0)
    rng = np.random.default_rng(5)
    first = np.full(30_000, 0)
    second = np.full(30_000, 8)  # the diagonal of the grid: 0, 4 and 8 are all minimisers
    out = model._merge(first, second, rng)
    counts = np.bincount(out, minlength=len(tiny_space))
    assert set(np.flatnonzero(counts)) == {0, 4, 8}
    assert chisquare(counts[[0, 4, 8]]).pvalue > 1e-4
    # far pairs take the scan path: same rule
    far = TP(POISpace(np.column_stack([np.arange(200.0), np.zeros(200)])), 1.0)
    out = far._merge(np.zeros(20_000, dtype=np.intp), np.full(20_000, 199), rng)
    assert chisquare(np.bincount(out, minlength=200)).pvalue > 1e-4


def test_sectors_validation(tiny_space):
    with pytest.raises(ValueError, match="sectors"):
        TP(tiny_space, 1.0, sectors=5)
    with pytest.raises(ValueError, match="sectors"):
        ATP(tiny_space, 1.0, sectors="many")
    assert int(TP(tiny_space, 1.0, sectors=12).budgets(3)["k"]) == 12
