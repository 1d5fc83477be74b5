"""The perturber interface: budget ledger, validation, keyed streams, lattice laws, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.mechanisms import KRR, OptimalCircular, OptimalClassical
from tracs.perturbers import PlanarLaplace, PrivacyLedger, Strawman, TraCSC, TraCSD
from tracs.region import ConvexRegion, Rectangle

UNIT = Rectangle(0, 0, 1, 1)
TALL = Rectangle(0, 0, 2, 10)
HEXAGON = ConvexRegion([(math.cos(a), math.sin(a)) for a in np.arange(6) * math.pi / 3])
ALL = [TraCSD, TraCSC, Strawman, PlanarLaplace]
SEQUENTIAL = [TraCSD, Strawman]


def batch(region, lengths, seed=0):
    rng = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = region.bounds
    pts = np.empty((0, 2))
    while len(pts) < sum(lengths):
        cand = rng.uniform((xmin, ymin), (xmax, ymax), (2 * sum(lengths) + 10, 2))
        pts = np.concatenate([pts, cand[region.contains(cand)]])
    return pts[: sum(lengths)], np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


# -- budget ----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL)
def test_ledger_per_point_and_per_trajectory(cls):
    p = cls(UNIT, 2.0)
    assert p.privacy_spent(10) == PrivacyLedger(2.0, 20.0, 10, "per_point")
    q = cls(UNIT, epsilon_per_trajectory=10.0)
    assert q.epsilon is None and q.epsilon_per_trajectory == 10.0
    assert q.privacy_spent(4) == PrivacyLedger(2.5, 10.0, 4, "per_trajectory")
    ledger = q.privacy_spent([1, 5])
    assert np.allclose(ledger.per_point, [10.0, 2.0]) and np.allclose(ledger.per_trajectory, 10.0)
    with pytest.raises(ValueError):
        p.privacy_spent(0)
    with pytest.raises(TypeError):
        p.privacy_spent(2.5)


@pytest.mark.parametrize("cls", ALL)
def test_budget_must_be_unambiguous(cls):
    with pytest.raises(ValueError):
        cls(UNIT, 1.0, epsilon_per_trajectory=5.0)
    with pytest.raises(TypeError):
        cls(UNIT)
    for bad, exc in ((0.0, ValueError), (-1.0, ValueError), (math.nan, ValueError),
                     (math.inf, ValueError), ("1", TypeError)):
        with pytest.raises(exc):
            cls(UNIT, bad)


def test_split_reports_both_parts():
    d = TraCSD(UNIT, 4.0)
    eps_dir, eps_dist = d.split()
    assert eps_dir == pytest.approx(4.0 * math.pi / (math.pi + 1)) and eps_dir + eps_dist == pytest.approx(4.0)
    c = TraCSC(TALL, epsilon_per_trajectory=10.0, x_share=0.3)
    assert c.split(5) == pytest.approx((0.6, 1.4))
    with pytest.raises(ValueError):
        c.split()


def test_per_trajectory_budget_is_exact_per_length():
    """Mixed lengths: each trajectory runs with ε_T/n_t per point — its kernel constants are
    those of a per-point budget ε_T/n_t, and the first trajectory (stream 0) is released
    exactly as when it runs alone with that budget."""
    lengths = [3, 1, 7, 3]
    pts, off = batch(UNIT, lengths)
    for cls in ALL:
        p = cls(UNIT, epsilon_per_trajectory=6.0)
        together = p.perturb_many(pts, off, rng=9)
        alone = cls(UNIT, 6.0 / 3).perturb(pts[:3], rng=9)
        assert np.array_equal(together[:3], alone), cls.__name__
        if hasattr(p, "_params"):
            rows = p._point_params(off, p._params)
            for t, n in enumerate(lengths):
                assert np.array_equal(rows[t], cls(UNIT, 6.0 / n)._params(np.array([6.0 / n]))[0])


@pytest.mark.parametrize("cls", ALL)
def test_validation_errors(cls):
    p = cls(UNIT, 1.0)
    with pytest.raises(ValueError):
        p.perturb(np.empty((0, 2)))
    with pytest.raises(ValueError):
        p.perturb([[0.5, 1.5]])  # outside the region
    with pytest.raises(ValueError):
        p.perturb([[0.5, math.nan]])
    with pytest.raises(ValueError):
        p.perturb([0.5, 0.5])
    with pytest.raises(TypeError):
        p.perturb([["a", "b"]])
    pts = np.full((4, 2), 0.5)
    with pytest.raises(ValueError):
        p.perturb_many(pts, [0, 2, 3])
    with pytest.raises(ValueError):
        p.perturb_many(pts, [0, 3, 2, 4])
    with pytest.raises(TypeError):
        p.perturb_many(pts, [0.0, 4.0])
    with pytest.raises(TypeError):
        p.perturb_many(pts)
    with pytest.raises(ValueError, match="only string accepted is 'secure'"):
        p.perturb(pts, rng="seed")
    with pytest.raises(TypeError):
        p.perturb(pts, rng=1.5)
    with pytest.raises(TypeError):
        cls("region", 1.0)


def test_constructor_errors():
    with pytest.raises(TypeError):
        TraCSC(HEXAGON, 1.0)
    with pytest.raises(ValueError):
        TraCSD(UNIT, 1.0, direction_share=1.0)
    with pytest.raises(ValueError):
        TraCSD(UNIT, 1.0, direction_share="best")
    with pytest.raises(ValueError):
        TraCSD(UNIT, 1.0, anchor="middle")
    with pytest.raises(ValueError):
        TraCSD(UNIT, 1.0, anchor=(2.0, 0.5))
    with pytest.raises(ValueError):
        Strawman(UNIT, 1.0, sectors=1)
    with pytest.raises(TypeError):
        Strawman(UNIT, 1.0, sectors=2.5)
    with pytest.raises(TypeError):
        TraCSD(UNIT, 1.0, round_to=object())


@pytest.mark.parametrize("cls", ALL)
def test_list_input_and_empty_trajectories(cls):
    p = cls(UNIT, 3.0)
    pts, off = batch(UNIT, [2, 0, 5])
    flat = p.perturb_many(pts, off, rng=4)
    parts = p.perturb_many([pts[:2], pts[2:2], pts[2:]], rng=4)
    assert [len(x) for x in parts] == [2, 0, 5]
    assert np.array_equal(np.concatenate(parts), flat)


# -- reproducibility and batching -------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL)
def test_a_trajectory_release_depends_only_on_its_stream(cls):
    """Trajectory t uses stream t of the seed's key: a batch's first trajectories are
    released exactly as in a smaller batch with the same seed; seeds matter."""
    lengths = [5, 1, 40_000, 3, 7_000]
    pts, off = batch(TALL, lengths)
    p = cls(TALL, 2.0)
    whole = p.perturb_many(pts, off, rng=123)
    head = p.perturb_many(pts[: off[3]], off[:4], rng=123)
    assert np.array_equal(whole[: off[3]], head)
    assert np.array_equal(whole, p.perturb_many(pts, off, rng=123))
    assert not np.array_equal(whole, p.perturb_many(pts, off, rng=124))


@pytest.mark.parametrize("cls", [TraCSD, Strawman, TraCSC])
def test_only_the_compiled_engine(cls):
    pts, off = batch(TALL, [3])
    with pytest.raises(ValueError, match="compiled"):
        cls(TALL, 1.0).perturb_many(pts, off, engine="numpy")


# -- the kernels release the library's mechanisms' exact lattice laws ---------------------------
def _tv(counts, pmf):
    return 0.5 * np.abs(counts / counts.sum() - pmf).sum()


def test_tracsc_indices_follow_the_classical_rows():
    """Each axis index has the exact law OptimalClassical(ε_x).lattice_pmf(x) (seeded; TV < 0.02
    over 15 cells from 60,000 draws, where a shifted central piece gives TV > 0.1)."""
    res = 1 / 15
    p = TraCSC(TALL, 3.0, x_share=0.25, resolution=res)
    point = np.array([0.43, 7.1])
    idx = p.lattice_indices(np.tile(point, (60_000, 1)), [0, 60_000], rng=3)
    for col, (lo, hi, eps) in enumerate(((0, 2, 0.75), (0, 10, 2.25))):
        mech = OptimalClassical(epsilon=eps, low=lo, high=hi, resolution=res)
        assert mech.lattice == p.lattice[col]
        pmf = mech.lattice_pmf(point[col])
        assert _tv(np.bincount(idx[:, col], minlength=15), pmf) < 0.02
    out = p.perturb_many(np.tile(point, (60_000, 1)), [0, 60_000], rng=3)
    assert np.array_equal(out[:, 0], p.lattice[0].points(idx[:, 0]))
    assert np.array_equal(out[:, 1], p.lattice[1].points(idx[:, 1]))


def test_tracsd_joint_indices_follow_direction_then_distance_rows():
    """First points (reference = anchor): the direction index follows OptimalCircular's row
    at φ and the distance index OptimalClassical's row at u = d / R(o, φ') for the *released*
    φ'; exact joint pmf over 15 × 15 cells against 60,000 seeded draws (TV < 0.03)."""
    res = 1 / 15
    p = TraCSD(UNIT, 4.0, direction_share=0.5, anchor="center", resolution=res)
    o, tau = np.array([0.5, 0.5]), np.array([0.8, 0.6])
    n = 60_000
    idx = p.lattice_indices(np.tile(tau, (n, 1)), np.arange(n + 1), rng=5)
    lat = p.lattice
    phi = math.atan2(*(tau - o)[::-1]) % (2 * math.pi)
    direction = OptimalCircular(epsilon=2.0, resolution=res).lattice_pmf(phi)
    dist = OptimalClassical(epsilon=2.0, resolution=res)
    joint = np.zeros((lat.direction.count, lat.distance.count))
    for a in range(lat.direction.count):
        ang = float(lat.direction.points(a))
        reach = float(UNIT.exit_distance(o[None], np.array([ang]))[0])
        u = min(1.0, float(np.hypot(*(tau - o))) / reach) if reach > 0 else 0.0
        joint[a] = direction[a] * dist.lattice_pmf(u)
    counts = np.zeros_like(joint)
    np.add.at(counts, (idx[:, 0], idx[:, 1]), 1)
    assert _tv(counts.ravel(), joint.ravel()) < 0.03


def test_strawman_lie_probability_is_krr():
    for eps in (0.5, 4.0):
        s = Strawman(UNIT, eps, sectors=6)
        row = s._params(np.array([eps]))[0]
        eps_dir = s.split()[0]
        assert row[0] == KRR(epsilon=eps_dir, k=6).lie_probability


def test_strawman_angles_are_whole_cells_of_the_reported_sector():
    s = Strawman(UNIT, 50.0, sectors=6, resolution=1 / 60)
    assert s.lattice.direction.count == 60
    idx = s.lattice_indices(np.array([[0.9, 0.55]]), [0, 1], rng=1)  # bearing in sector 0
    assert 0 <= idx[0, 0] < 10


# -- edge cases -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("eps", [1e-6, 1e-3, 1.0, 20.0, 50.0])
@pytest.mark.parametrize("region", [UNIT, TALL, HEXAGON])
def test_outputs_inside_and_finite(cls, eps, region):
    if cls is TraCSC and region is HEXAGON:
        return
    pts, off = batch(region, [1, 30, 300])
    # nasty inputs: vertices, edge midpoints, repeated points (τ == previous output is likely at ε=50)
    v = region.vertices
    nasty = np.concatenate([v, 0.5 * (v + np.roll(v, -1, axis=0)), v, v])
    pts = np.concatenate([pts, nasty])
    off = np.append(off, len(pts))
    kwargs = {"anchor": "corner"} if cls in SEQUENTIAL else {}
    out = cls(region, eps, **kwargs).perturb_many(pts, off, rng=0)
    assert out.shape == pts.shape and np.all(np.isfinite(out))
    assert region.contains(out).all()


@pytest.mark.parametrize("cls", SEQUENTIAL)
def test_point_equal_to_reference_is_perturbed(cls):
    """τ == o (the anchor): direction 0, u = 0, still perturbed; no crash, not returned as is."""
    p = cls(UNIT, 2.0, anchor=(0.25, 0.5))
    pts = np.tile([0.25, 0.5], (20_000, 1))
    out = p.perturb_many(pts, np.arange(20_001), rng=1)  # 20 000 trajectories of length 1
    moved = np.hypot(*(out - pts).T)
    assert np.mean(moved > 0) > 0.99
    phi = np.mod(np.arctan2(*(out - pts)[:, ::-1].T), 2 * np.pi)
    # direction perturbed around 0: both sides of 0 occur
    assert np.mean(phi < 1.0) > 0.05 and np.mean(phi > 2 * np.pi - 1.0) > 0.05


def test_anchors():
    assert TraCSD(TALL, 1.0).anchor_point == (1.0, 5.0)
    assert TraCSD(TALL, 1.0, anchor="corner").anchor_point == (0.0, 0.0)
    assert TraCSD(TALL, 1.0, anchor=(2, 10)).anchor_point == (2.0, 10.0)
    assert TraCSD(HEXAGON, 1.0, anchor="corner").anchor_point == HEXAGON.corner
    # the first output of a length-1 trajectory is centred on the anchor's view of the point
    p = TraCSD(UNIT, 50.0, anchor=(0.0, 0.0))
    out = p.perturb_many(np.tile([0.5, 0.5], (2000, 1)), np.arange(2001), rng=2)
    assert np.median(np.hypot(*(out - 0.5).T)) < 1e-3


def test_corner_anchor_collapses_often():
    """From a corner 3/4 of the directions leave at once: the output is the corner itself."""
    p = TraCSD(UNIT, 0.5, anchor="corner")
    out = p.perturb_many(np.full((4000, 2), 0.5), np.arange(4001), rng=5)
    assert np.mean(np.all(out == 0.0, axis=1)) > 0.5


class FakePOIs:
    """Duck-typed POI space: three points, nearest-neighbour rounding."""

    points = np.array([[0.1, 0.1], [0.9, 0.2], [0.5, 0.9]])

    def round(self, pts):
        d = np.sum((pts[:, None, :] - self.points[None]) ** 2, axis=2)
        idx = np.argmin(d, axis=1)
        return self.points[idx], idx


@pytest.mark.parametrize("cls", ALL)
def test_round_to_is_post_processing(cls):
    pts, off = batch(UNIT, [10, 5])
    pois = FakePOIs()
    raw = cls(UNIT, 2.0).perturb_many(pts, off, rng=6)
    rounded, idx = cls(UNIT, 2.0, round_to=pois).perturb_many(pts, off, rng=6, return_indices=True)
    assert np.array_equal(rounded, pois.round(raw)[0]) and np.array_equal(idx, pois.round(raw)[1])
    with pytest.raises(ValueError):
        cls(UNIT, 2.0).perturb(pts, return_indices=True)


def test_single_very_long_trajectory_runs():
    pts, off = batch(UNIT, [300_000])
    out = TraCSD(UNIT, 5.0).perturb(pts, rng=0)
    assert UNIT.contains(out).all()
    assert 0.0 < np.mean(np.hypot(*(out - pts).T)) < 0.5


def test_repr():
    assert "epsilon_per_trajectory=3.0" in repr(TraCSD(UNIT, epsilon_per_trajectory=3))
    assert "sectors=4" in repr(Strawman(UNIT, 1.0, sectors=4))
