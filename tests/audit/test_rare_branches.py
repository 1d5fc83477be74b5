"""Rare branches stay reachable at every ε, and the realised probabilities keep ε.

``Generator.random`` returns multiples of ``2^-53`` in ``[0, 1)``.  A yes/no choice
written ``u < p_likely`` rounds ``p_likely`` to 1 once ``1 − p_likely < 2^-54`` and the
rare branch can never happen (unbounded loss).  The samplers compare against the rare
branch's own probability instead.  These tests drive the real code paths with
generators whose uniforms are chosen (``u = 0`` and the largest uniform ``1 − 2^-53``)
and read the exact realised probabilities off the ``2^-53`` grid.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.baselines._em import em_max_epsilon
from tracs.discrete import POISpace
from tracs.mechanisms import KRR, Duchi, OptimalClassical, OptimalCircular, Staircase
from tracs.mechanisms._base import COMPILED_MIN_SIZE
from tracs.perturbers import Strawman, TraCSC, TraCSD
from tracs.perturbers import _kernels
from tracs.region import Rectangle

TOP = 1.0 - 2.0**-53  # the largest value Generator.random returns
GRID = 2**53
UNIT = Rectangle(0.0, 0.0, 1.0, 1.0)


class StreamGenerator(np.random.Generator):
    """A numpy Generator whose ``random`` returns a fixed pattern of uniforms.

    Uniforms are served in order from ``pattern`` (repeated), whatever the sizes of
    the calls, so a sampler that draws ``(n,)`` twice and one that draws ``(2n,)``
    once see the same values.  ``integers`` and the rest come from a real PCG64.
    """

    def __init__(self, pattern):
        super().__init__(np.random.PCG64(0))
        self.pattern = np.asarray(pattern, dtype=np.float64).ravel()
        self.used = 0

    def random(self, size=None, dtype=np.float64, out=None):
        count = int(np.prod(size)) if size is not None else 1
        idx = (self.used + np.arange(count)) % self.pattern.size
        self.used += count
        values = self.pattern[idx]
        return values.reshape(size) if size is not None else float(values[0])


class ScriptedSource:
    """The perturbers' per-point uniforms (``block`` / ``random``) from a fixed pattern, in order.

    Perturbers draw from keyed per-user streams; feeding their kernels directly is how
    a test reaches a chosen branch.
    """

    def __init__(self, pattern, width):
        self.stream = StreamGenerator(pattern)
        self.width = width

    def block(self, start, stop, buffer=None):
        return self.stream.random((stop - start, self.width))

    def random(self, shape):
        return self.stream.random(shape)


def scripted(perturber, pts, pattern, engine):
    """``perturber`` on one trajectory ``pts`` with the kernels fed ``pattern`` (see :class:`ScriptedSource`)."""
    perturber.region.validate_points(pts, "pts")
    source = ScriptedSource(pattern, perturber.uniforms_per_point)
    return perturber._run(np.asarray(pts, dtype=np.float64), np.array([0, len(pts)]), source, engine=engine)


def realised_probability(branch_taken) -> Fraction:
    """Exact probability of ``{u < t}`` for the threshold hidden in ``branch_taken(u)``.

    ``branch_taken`` must be true on an initial segment of the grid ``i·2^-53`` (a
    ``u < t`` test); the count of grid points in that segment is found by bisection.
    """
    lo, hi = 0, GRID  # branch taken at lo·2^-53 ... unknown beyond
    if not branch_taken(0.0):
        return Fraction(0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if branch_taken(mid / GRID):
            lo = mid
        else:
            hi = mid
    return Fraction(lo + 1, GRID)


# -- k-RR -------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [38.0, 100.0])
@pytest.mark.parametrize("k", [2, 6])
def test_krr_lies_at_u_zero_and_keeps_at_the_top(eps, k):
    mech = KRR(epsilon=eps, k=k)
    x = np.arange(k).repeat(50)
    lied = mech.sample(x, rng=StreamGenerator([0.0]))
    assert np.all(lied != x)  # the rare branch is reachable
    kept = mech.sample(x, rng=StreamGenerator([TOP]))
    assert np.all(kept == x)


@pytest.mark.parametrize("eps", [30.0, 36.0, 38.0, 40.0, 100.0, 700.0])
def test_krr_realised_loss_is_at_most_epsilon(eps):
    """k = 2: the realised lie probability q' = ⌈q·2^53⌉/2^53 >= q gives loss <= ε."""
    mech = KRR(epsilon=eps, k=2)

    def lies(u):
        return bool(mech.sample(np.array([0]), rng=StreamGenerator([u]))[0] != 0)

    q = realised_probability(lies)
    assert q > 0
    assert q == Fraction(math.ceil(Fraction(mech.worst_case_error()) * GRID), GRID)
    loss = math.log((1 - q) / q)  # the larger of the two ratios (q <= 1/2)
    assert loss <= eps  # exact: the realised ratio is below e^ε


def test_duchi_both_outputs_reachable_at_large_epsilon():
    mech = Duchi(epsilon=200.0)
    x = np.array([-1.0, 1.0])
    lo, hi = mech.outputs
    assert np.all(mech.sample(x, rng=StreamGenerator([0.0])) == [hi, lo])  # the rare ones
    assert np.all(mech.sample(x, rng=StreamGenerator([TOP])) == [lo, hi])


def test_staircase_outer_step_reachable_at_large_epsilon():
    mech = Staircase(epsilon=200.0)
    g = mech.step_fraction  # ≈ 4e-44: the inner part of a step is tiny, B = 0 almost surely
    # uniforms per call (E comes from the bit generator): B, then U, then the sign
    outer = mech._sample(np.zeros(4), StreamGenerator([0.0] * 4 + [0.5] * 4 + [0.5] * 4))
    assert np.allclose(np.abs(outer), g + (1 - g) * 0.5)  # B = 1 is reachable
    inner = mech._sample(np.zeros(4), StreamGenerator([TOP] * 4 + [0.5] * 4 + [0.5] * 4))
    assert np.all(np.abs(inner) <= g)


# -- optimal mechanisms: numpy path and numba path ---------------------------------------
def _sizes():
    return [7, COMPILED_MIN_SIZE]  # numpy path below COMPILED_MIN_SIZE, numba at or above


# (mechanism, input, position uniform, where the side branch lands)
SIDE_CASES = {"classical": (OptimalClassical, 0.5, 0.25, 0.25),
              "circular": (OptimalCircular, 1.0, 0.5, 1.0 + math.pi)}  # the antipode


@pytest.mark.parametrize("case", sorted(SIDE_CASES))
@pytest.mark.parametrize("eps", [80.0, 200.0])
@pytest.mark.parametrize("n", _sizes())
def test_optimal_side_reachable(case, eps, n):
    cls, x0, v, landing = SIDE_CASES[case]
    mech = cls(epsilon=eps)
    x = np.full(n, x0)
    side = mech.sample(x, rng=StreamGenerator([0.0] * n + [v] * n))
    assert np.allclose(side, landing, atol=1e-12)  # low density, far from x
    central = mech.sample(x, rng=StreamGenerator([TOP] * n + [v] * n))
    assert np.all(np.abs(central - x0) <= 2 * mech.half_width + 1e-15)


@pytest.mark.parametrize("mech", [OptimalClassical(epsilon=30.0), OptimalCircular(epsilon=30.0)],
                         ids=["classical", "circular"])
@pytest.mark.parametrize("n", _sizes())
def test_optimal_realised_side_mass_rounds_up(mech, n):
    """The realised side mass is ⌈m·2^53⌉/2^53 >= m on both paths (ratio within e^ε)."""
    x = np.full(n, 0.5)
    centre_gap = 3 * mech.half_width

    def side(u):
        y = mech.sample(x, rng=StreamGenerator([u] * n + [0.25] * n))
        return bool(np.all(np.abs(y - 0.5) > centre_gap))

    m = realised_probability(side)
    exact = Fraction(1) / (1 + Fraction(math.exp(15.0)))  # 1/(s + 1), s = e^{ε/2} (as a double)
    assert m >= exact * (1 - Fraction(1, 2**50))  # rounding only ever up (to float accuracy)
    assert m <= exact + Fraction(1, GRID) + exact / 2**50


# -- perturbers: compiled and numpy engines -----------------------------------------------
ENGINES = ["compiled", "numpy"]


@pytest.mark.parametrize("engine", ENGINES)
def test_tracsc_side_reachable(engine):
    pts = np.array([[0.5, 0.5]])
    out = scripted(TraCSC(UNIT, 200.0), pts, [0.0, 0.25, 0.0, 0.25], engine)
    assert np.allclose(out, 0.25, atol=1e-12)
    out = scripted(TraCSC(UNIT, 200.0), pts, [TOP, 0.25, TOP, 0.25], engine)
    assert np.allclose(out, 0.5, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_tracsd_direction_side_reachable(engine):
    pts = np.array([[0.8, 0.5]])  # from the centre: direction 0, u = 0.6
    p = TraCSD(UNIT, 200.0)
    out = scripted(p, pts, [0.0, 0.5, TOP, 0.5], engine)
    assert np.allclose(out, [[0.2, 0.5]], atol=1e-9)  # the opposite direction
    out = scripted(p, pts, [TOP, 0.5, TOP, 0.5], engine)
    assert np.allclose(out, pts, atol=1e-9)
    out = scripted(p, pts, [TOP, 0.5, 0.0, 0.25], engine)
    assert abs(out[0, 0] - 0.8) > 0.1  # the distance's side piece


@pytest.mark.parametrize("engine", ENGINES)
def test_strawman_lies_at_large_epsilon(engine):
    pts = np.array([[0.8, 0.5]])  # sector 0 of 4 seen from the centre
    p = Strawman(UNIT, 200.0, sectors=4)
    out = scripted(p, pts, [0.0, 0.5, TOP, 0.5, 0.0], engine)
    # lie to sector 1 (pick 0), angle 3π/4 in its middle, distance u' ≈ 0.6
    assert out[0, 0] < 0.5 and out[0, 1] > 0.5
    out = scripted(p, pts, [TOP, 0.0, TOP, 0.5, 0.0], engine)
    assert np.allclose(out, pts, atol=1e-9)


# -- sector edges (both engines put a bearing on an edge in the same sector) --------------
@pytest.mark.parametrize("k", [4, 6, 12])
def test_sector_edges_snap_identically(k):
    w = 2 * math.pi / k
    phis = []
    for j in range(k):
        edge = j * w
        phis += [edge, *(np.nextafter(edge, d) for d in (0.0, 10.0)),
                 edge * (1 - 3e-16), edge * (1 + 3e-16), edge + 1e-9, edge - 1e-9]
    phis = np.mod(np.array([p for p in phis if 0.0 <= p]), 2 * math.pi)
    s = Strawman(UNIT, 1.0, sectors=k)
    n = phis.size
    uni = np.column_stack([np.full(n, TOP), np.full(n, 0.5), np.zeros(n), np.zeros(n), np.zeros(n)])
    rows = np.zeros((n, 4))  # lie probability 0 with u = TOP: report the true sector
    numpy_out = s._direction_step(phis, uni, rows)
    compiled = np.array([_kernels.sectors(p, 0.0, k, TOP, 0.0, 0.5) for p in phis])
    assert np.array_equal(numpy_out, compiled)
    sector = np.floor(numpy_out / w).astype(int) % k
    nearest = np.round(phis / w)
    on_edge = np.abs(phis / w - nearest) <= 4 * 2.0**-52 * np.maximum(nearest, 1)
    expected = np.where(on_edge, nearest % k, np.floor(phis / w) % k).astype(int)
    assert np.array_equal(sector, expected)


def test_strawman_engines_agree_on_axis_bearings():
    # bearings exactly 0, π/2, π, 3π/2 from each reference: edges of 4 sectors
    pts = np.array([[0.5, 0.9], [0.5, 0.2], [0.9, 0.2], [0.1, 0.2], [0.1, 0.7], [0.1, 0.3]])
    s = Strawman(UNIT, 4.0, sectors=4)
    for seed in range(20):
        a = s.perturb(pts, rng=seed, engine="compiled")
        b = s.perturb(pts, rng=seed, engine="numpy")
        assert np.allclose(a, b, rtol=0, atol=1e-12)


# -- baselines: faithful-resolution limits -------------------------------------------------
@pytest.fixture(scope="module")
def space():
    return POISpace(np.random.default_rng(3).uniform(0.0, 1000.0, (200, 2)))


def test_em_limit_is_the_resolution_bound(space):
    limit = em_max_epsilon(len(space))
    assert limit == pytest.approx(2 * (40 * math.log(2) - math.log(200)))
    for cls in (ExponentialMechanism, NGram):
        cls(space, limit - 0.01)
        with pytest.raises(ValueError, match="too large for a faithful double-precision"):
            cls(space, limit + 0.01)


def test_per_trajectory_budget_refused_when_perturbing(space):
    em = ExponentialMechanism(space, epsilon_per_trajectory=60.0)
    with pytest.raises(ValueError, match="largest budget accepted is 44.8"):
        em.perturb(space.points[:1], rng=0)
    em.perturb(space.points[:2], rng=0)  # 30 per point: fine


def test_lsrr_refuses_oversized_budget(space):
    LSRR(space, 10.0)
    with pytest.raises(ValueError, match="largest budget accepted"):
        LSRR(space, 60.0)


@pytest.mark.parametrize("cls", [TP, ATP])
def test_tp_refuses_oversized_steps(space, cls):
    cls(space, 10.0)
    with pytest.raises(ValueError, match="direction report"):
        cls(space, 80.0)
    short = cls(space, epsilon_per_trajectory=200.0)
    with pytest.raises(ValueError, match="too large for a faithful"):
        short.perturb(space.points[:2], rng=0)


def test_atp_caps_growing_steps_and_says_so(space):
    atp = ATP(space, 10.0)
    b = atp.budgets(np.array([1000]))
    assert float(b["anchor"][0]) == pytest.approx(em_max_epsilon(len(space)))
    assert float(b["radius"][0]) < 32.0
    assert "capped" in atp.privacy_spent(1000).note
    out = atp.perturb(space.points[np.arange(300) % 200], rng=1)
    assert out.shape == (300, 2)
