"""Rare branches stay reachable at every ε, and the realised probabilities keep ε.

Every release is a lattice index drawn by exact comparisons of a lazily extended
uniform (:mod:`tracs.mechanisms.lattice_kernels`): ``u < c`` holds with
probability exactly ``c`` for every double ``c``, so no threshold is rounded to a
grid and no branch becomes unreachable.  These tests check the comparison itself
with scripted random words, that every lattice cell keeps a positive probability
up to the largest ε each mechanism accepts, and the perturbers at extreme budgets.
The discrete baselines still sample on the ``2^-53`` grid and refuse budgets they
cannot realise faithfully (last section).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.baselines._exponential_sampler import em_max_epsilon
from tracs.poi_space import POISpace
from tracs.mechanisms import (KRR, Duchi, Laplace, OptimalCircular, OptimalClassical, OptimalUnbiased,
                              PiecewiseMechanism, PTT, Purkayastha, SquareWave, Staircase)
from tracs.mechanisms import lattice_kernels as lk
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.perturbers import _kernels
from tracs.region import Rectangle

UNIT = Rectangle(0.0, 0.0, 1.0, 1.0)


# -- the exact comparison -------------------------------------------------------------------
class ScriptedWords:
    """Stands in for ``draw_u64``: word ``d`` of the extension is ``words[d - ext]``."""

    def __init__(self, words):
        self.words = [np.uint64(w) for w in words]

    def __call__(self, kind, key, stream, index, draw):
        return self.words[int(draw) - 1]


@pytest.fixture
def python_below(monkeypatch):
    """``below`` run as plain Python with scripted extension words."""
    tail = lk._below_tail.py_func

    def run(first, c, words, flip=False):
        monkeypatch.setattr(lk, "draw_u64", ScriptedWords(words))
        monkeypatch.setattr(lk, "_below_tail", tail)
        return lk.below.py_func(np.uint64(first), c, 0, None, 0, 0, 1, flip)
    return run


def test_comparison_reads_further_words_only_on_a_tie(python_below):
    c = 3 * 2.0 ** -60  # below the first word's resolution: first == 0 ties
    assert python_below(1, c, []) is False  # first word above: decided at once
    # tie on the first 53 bits: the next word's top 53 bits against c·2^53 = 3·2^-7
    below_word = (int(3 * 2.0 ** 46) - 1) << 11
    above_word = (int(3 * 2.0 ** 46) + 1) << 11
    assert python_below(0, c, [below_word]) is True
    assert python_below(0, c, [above_word]) is False
    # equal again on the second word: the third decides (c has no more bits: not below)
    assert python_below(0, c, [int(3 * 2.0 ** 46) << 11, 0]) is False
    # the smallest subnormal, 2^-1074: ties while the words are 0, decided by the 20th
    # extension word against 2^39 (2^-1074 · 2^(53·21))
    tiny = 5e-324
    assert python_below(0, tiny, [0] * 19 + [1 << 63]) is False
    assert python_below(0, tiny, [0] * 20) is True
    assert python_below(0, tiny, [0] * 19 + [(1 << 39) << 11]) is False


def test_comparison_probability_is_the_threshold():
    """Seeded: u < c for c = 0.3 + 2^-55 over 400,000 keyed draws, within 4 sigma."""
    n = 400_000
    draws = np.empty(n, dtype=np.uint64), np.empty(n)
    from tracs.random import resolve_streams

    ks = resolve_streams(11, None, 1)
    lk.first_words(ks.kind, ks.key, np.uint64(ks.streams[0]), n, 0, *draws)
    c = 0.3 + 2.0 ** -55
    hits = np.mean(draws[0].astype(np.float64) < math.floor(c * lk.TWO53))
    assert abs(hits - c) < 4 * math.sqrt(c * (1 - c) / n)


# -- every lattice cell stays reachable up to each mechanism's largest ε -----------------------
LIMITS = [(OptimalClassical, {}), (OptimalCircular, {}), (OptimalUnbiased, {}), (SquareWave, {}),
          (PiecewiseMechanism, {}), (PTT, {}), (Laplace, {}), (Staircase, {}), (Purkayastha, {})]


#: mechanisms whose low-density part has mass about e^{-ε/2}: a point mass in practice at ε >= 200
#: (Square Wave keeps about 1/ε outside its window; Laplace, Staircase and Purkayastha spread
#: over cells as wide as their scale/ε)
POINT_MASS_AT_200 = (OptimalClassical, OptimalCircular, OptimalUnbiased, PiecewiseMechanism, PTT)


@pytest.mark.parametrize("cls, kwargs", LIMITS, ids=[c.__name__ for c, _ in LIMITS])
@pytest.mark.parametrize("which", ["largest", "200"])
def test_every_cell_has_positive_mass_at_extreme_epsilon(cls, kwargs, which):
    eps = cls.max_epsilon if which == "largest" else 200.0
    mech = cls(epsilon=eps, resolution=1 / 31, **kwargs)
    dom = mech.input_domain
    xs = [dom.low, 0.37 * dom.low + 0.63 * dom.high, np.nextafter(dom.high, dom.low)]
    pmfs = np.array([mech.lattice_pmf(x) for x in xs])
    assert np.all(np.isfinite(pmfs)) and np.all(pmfs > 0.0)
    assert np.allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if cls in POINT_MASS_AT_200:
        # ε >= ~200: in practice a point mass at the snapped input's cell (two cells: the
        # two input lattice points around x); the rest has mass below e^{-99}
        assert np.all(1.0 - np.sort(pmfs, axis=1)[:, -2:].sum(axis=1) < 1e-40)


@pytest.mark.parametrize("cls, kwargs", LIMITS, ids=[c.__name__ for c, _ in LIMITS])
def test_sampling_at_the_largest_epsilon(cls, kwargs):
    mech = cls(epsilon=cls.max_epsilon, **kwargs)
    dom = mech.input_domain
    x = np.linspace(dom.low, np.nextafter(dom.high, dom.low), 1001)
    y = mech.sample(x, rng=1)
    assert np.all(np.isfinite(y))
    lat = mech.lattice
    assert np.array_equal(lat.points(lat.index(y)), y)


@pytest.mark.parametrize("eps", [38.0, 100.0, 700.0])
@pytest.mark.parametrize("k", [2, 6])
def test_krr_lies_with_positive_probability_and_exact_ratio(eps, k):
    mech = KRR(epsilon=eps, k=k)
    pmf = mech.lattice_pmf(0)
    assert np.all(pmf > 0)
    assert pmf[0] / pmf[1] <= math.exp(eps) * (1 + 1e-12)


def test_krr_lie_frequency():
    """Seeded: the lie frequency at ε = 1, k = 6 matches (k−1)/(e^ε+k−1) within 4 sigma."""
    mech, n = KRR(epsilon=1.0, k=6), 200_000
    lied = np.mean(mech.sample(np.full(n, 2), rng=4) != 2)
    q = mech.lie_probability
    assert abs(lied - q) < 4 * math.sqrt(q * (1 - q) / n)


def test_duchi_both_outputs_have_positive_mass_at_large_epsilon():
    mech = Duchi(epsilon=200.0)
    for x in (-1.0, 0.0, 1.0):
        pmf = mech.lattice_pmf(x)
        assert np.all(pmf > 0) and pmf.sum() == pytest.approx(1.0)


# -- perturbers at extreme budgets ----------------------------------------------------------
@pytest.mark.parametrize("cls, eps, near", [(TraCSC, 1400.0, 1e-3), (TraCSD, 700.0, 1e-3),
                                            (Strawman, 700.0, 1.0), (PlanarLaplace, 500.0, 0.05)])
def test_perturbers_at_their_largest_budget(cls, eps, near):
    kwargs = {"x_share": 0.5} if cls is TraCSC else ({"direction_share": 0.5} if cls is not PlanarLaplace else {})
    pts = np.array([[0.8, 0.5], [0.5, 0.5], [0.0, 0.0], [1.0, 0.3]])
    out = cls(UNIT, eps, **kwargs).perturb(pts, rng=3)
    assert np.all(np.isfinite(out)) and np.all(UNIT.contains(out))
    assert np.all(np.abs(out - pts) < near)  # TraCS: a point mass at the input's lattice point


@pytest.mark.parametrize("cls", [TraCSC, TraCSD, Strawman, PlanarLaplace])
def test_perturbers_refuse_budgets_beyond_the_limit(cls):
    with pytest.raises(ValueError, match="exceeds"):
        cls(UNIT, 2000.0)


# -- sector edges ------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [4, 6, 12])
def test_sector_edges_snap_to_the_upper_sector(k):
    w = 2 * math.pi / k
    phis = []
    for j in range(k):
        edge = j * w
        phis += [edge, *(np.nextafter(edge, d) for d in (0.0, 10.0)),
                 edge * (1 - 3e-16), edge * (1 + 3e-16), edge + 1e-9, edge - 1e-9]
    phis = np.mod(np.array([p for p in phis if 0.0 <= p]), 2 * math.pi)
    sector = np.array([int(_kernels.sector_position(p, w)) % k for p in phis])
    nearest = np.round(phis / w)
    on_edge = np.abs(phis / w - nearest) <= 4 * 2.0**-52 * np.maximum(nearest, 1)
    expected = np.where(on_edge, nearest % k, np.floor(phis / w) % k).astype(int)
    assert np.array_equal(sector, expected)


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
