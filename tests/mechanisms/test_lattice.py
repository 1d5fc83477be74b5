"""Exact privacy on the public lattice: full pmfs at adversarial input pairs, the lattice's
public form, bit-exact releases, and the floating-point attack that motivated it.

Every pmf is enumerated at ``resolution=1/63`` (a few dozen to a few thousand lattice
values): the largest ratio between two inputs must be at most ``e^ε`` up to a relative
``1e-12``, and no value may have mass under one input and none under another.  Windows
that grow like 1/ε (Laplace, Staircase, the enlarged outputs) reach hundreds of
thousands of values at ε = 0.01; there the documented bound of the cumulative
thresholds, a relative ``count·2^-50``, is the tolerance (``docs/privacy.md``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracs.mechanisms as m
from tracs.mechanisms.lattice import DEFAULT_RESOLUTION, Lattice, check_resolution

RES = 1 / 63
FACTORIES = {
    "OptimalClassical": lambda e: m.OptimalClassical(epsilon=e, resolution=RES),
    "OptimalClassical[-3,5]": lambda e: m.OptimalClassical(epsilon=e, low=-3.0, high=5.0, resolution=RES),
    "OptimalCircular": lambda e: m.OptimalCircular(epsilon=e, resolution=RES),
    "OptimalCircular[T=360]": lambda e: m.OptimalCircular(epsilon=e, period=360.0, resolution=RES),
    "OptimalClassical[square]": lambda e: m.OptimalClassical(epsilon=e, resolution=RES, loss="square"),
    "OptimalClassical[square,-3,5]": lambda e: m.OptimalClassical(epsilon=e, low=-3.0, high=5.0, resolution=RES,
                                                                  loss="square"),
    "OptimalCircular[square]": lambda e: m.OptimalCircular(epsilon=e, resolution=RES, loss="square"),
    "OptimalUnbiased": lambda e: m.OptimalUnbiased(epsilon=e, resolution=RES),
    "SquareWave": lambda e: m.SquareWave(epsilon=e, resolution=RES),
    "PiecewiseMechanism": lambda e: m.PiecewiseMechanism(epsilon=e, resolution=RES),
    "PTT": lambda e: m.PTT(epsilon=e, resolution=RES),
    "Laplace": lambda e: m.Laplace(epsilon=e, resolution=RES),
    "BoundedLaplace": lambda e: m.BoundedLaplace(epsilon=e, resolution=RES),
    "IIPTT": lambda e: m.IIPTT(epsilon=e, resolution=RES),
    "Staircase": lambda e: m.Staircase(epsilon=e, resolution=RES),
    "Purkayastha": lambda e: m.Purkayastha(epsilon=e, resolution=RES),
    "Duchi": lambda e: m.Duchi(epsilon=e, resolution=RES),
    "Compressed(SW)": lambda e: m.Compressed(m.SquareWave(epsilon=e, resolution=RES)),
    "Truncated(Laplace)": lambda e: m.Truncated(m.Laplace(epsilon=e, resolution=RES)),
    "Truncated(PM)": lambda e: m.Truncated(m.PiecewiseMechanism(epsilon=e, resolution=RES)),
}
EPSILONS = [0.01, 0.5, 1.0, 4.0, 20.0, 60.0]


def adversarial_inputs(mech):
    """Ends, the input lattice points next to them, midpoints between lattice points, and
    pairs 1e-7 apart (the attack's pair)."""
    dom = mech.input_domain
    step = mech.input_lattice.spacing
    high = dom.high if dom.contains(dom.high) else np.nextafter(dom.high, dom.low)
    xs = [dom.low, dom.low + step, dom.low + 0.5 * step, high, high - step, high - 0.5 * step,
          dom.low + 0.3 * (dom.high - dom.low), dom.low + 0.3 * (dom.high - dom.low) + 1e-7,
          dom.low + 0.5 * (dom.high - dom.low), np.nextafter(dom.low, dom.high)]
    return [x for x in xs if dom.contains(x)]


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_full_pmf_ratio_at_adversarial_pairs(name, epsilon):
    mech = FACTORIES[name](epsilon)
    if epsilon < mech.min_epsilon:
        return
    pmfs = np.array([mech.lattice_pmf(x) for x in adversarial_inputs(mech)])
    assert pmfs.shape[1] == mech.lattice.count
    assert np.all(np.isfinite(pmfs)) and np.all(pmfs >= 0.0)
    np.testing.assert_allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    positive = pmfs > 0.0
    # no lattice value with mass under one input and none under another
    assert np.all(positive.all(axis=0) | ~positive.any(axis=0))
    support = positive.all(axis=0)
    ratio = pmfs[:, support].max(axis=0) / pmfs[:, support].min(axis=0)
    slack = max(1e-12, getattr(mech, "mechanism", mech).lattice.count * 2.0 ** -50)
    assert ratio.max() <= math.exp(epsilon) * (1 + slack)


@pytest.mark.parametrize("name", ["OptimalClassical", "OptimalCircular", "OptimalUnbiased", "PTT",
                                  "OptimalClassical[square]", "OptimalCircular[square]"])
def test_the_bound_is_attained(name):
    """The optimal mechanisms leave no slack on the lattice either (ratio e^ε within 1e-9)."""
    mech = FACTORIES[name](2.0)
    inp = mech.input_lattice
    rows = np.array([mech.lattice_row(k) for k in range(inp.count)])
    assert (rows.max(axis=0) / rows.min(axis=0)).max() == pytest.approx(math.exp(2.0), rel=1e-9)


def test_lattice_pmf_is_the_mixture_of_two_rows():
    mech = FACTORIES["OptimalClassical"](1.0)
    step = mech.input_lattice.spacing
    x = 5.25 * step  # a quarter of the way from point 5 to point 6
    want = 0.75 * mech.lattice_row(5) + 0.25 * mech.lattice_row(6)
    np.testing.assert_allclose(mech.lattice_pmf(x), want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(mech.lattice_pmf(5 * step), mech.lattice_row(5))


def test_floating_point_attack_finds_nothing():
    """The Mironov-style test on OptimalClassical (ε = 1): inputs 0.3 and 0.3 + 1e-7 reach
    exactly the same releases (every lattice value has positive mass under both), and
    the releases are lattice values, so no low bit depends on the input."""
    mech = m.OptimalClassical(epsilon=1.0, resolution=RES)
    a, b = mech.lattice_pmf(0.3), mech.lattice_pmf(0.3 + 1e-7)
    assert np.all(a > 0) and np.all(b > 0)
    assert max((a / b).max(), (b / a).max()) <= math.e * (1 + 1e-12)
    big = m.OptimalClassical(epsilon=1.0)  # the default lattice
    y = big.sample(np.full(200_000, 0.3), rng=1)
    z = big.sample(np.full(200_000, 0.3 + 1e-7), rng=2)
    lat = big.lattice
    for out in (y, z):
        assert np.array_equal(lat.points(lat.index(out)), out)


# -- the lattice is public and releases are bit-exact lattice values -------------------------
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_releases_are_lattice_values_bit_for_bit(name):
    mech = FACTORIES[name](1.5)
    lat = mech.lattice
    assert isinstance(lat, tuple) and len(lat) == 3
    origin, spacing, count = lat
    x = np.repeat(adversarial_inputs(mech), 300)
    y = mech.sample(x, rng=9)
    k = np.rint((y - origin) / spacing).astype(np.int64)
    assert np.all((k >= 0) & (k < count))
    assert np.array_equal(origin + k.astype(np.float64) * spacing, y)
    assert np.array_equal(mech.sample_index(x, rng=9), k)


def test_lattice_depends_on_public_parameters_only():
    a = m.OptimalClassical(epsilon=1.0, low=2.0, high=7.0)
    b = m.OptimalClassical(epsilon=9.0, low=2.0, high=7.0)
    assert a.lattice == b.lattice == Lattice(2.0, 5.0 / 2**20, 2**20 + 1)
    assert m.OptimalCircular(epsilon=1.0).lattice == Lattice(0.0, 2 * math.pi / 2**20, 2**20)


def test_resolution_sets_the_spacing():
    mech = m.OptimalClassical(epsilon=1.0, low=0.0, high=10.0, resolution=0.01)
    assert mech.lattice.count == 101 and mech.lattice.spacing == pytest.approx(0.1, rel=1e-15)
    assert mech.lattice.points(100) <= 10.0
    assert check_resolution(None) == round(1 / DEFAULT_RESOLUTION)


@pytest.mark.parametrize("bad, error, fragment", [(0.0, ValueError, "resolution"), (0.7, ValueError, "resolution"),
                                                  (math.nan, ValueError, "resolution"),
                                                  (1e-13, ValueError, "2\\^40"), ("x", TypeError, "real"),
                                                  (0.1j, ValueError, "real")])
def test_bad_resolution(bad, error, fragment):
    with pytest.raises(error, match=fragment):
        m.OptimalClassical(epsilon=1.0, resolution=bad)


def test_secure_and_keyed_randomness():
    mech = m.OptimalClassical(epsilon=1.0)
    x = np.linspace(0, 1, 1000)
    y = mech.sample(x, rng="secure")
    assert np.array_equal(mech.lattice.points(mech.lattice.index(y)), y)
    from tracs.random import Secure

    assert np.array_equal(mech.sample(x, rng=Secure(5)), mech.sample(x, rng=Secure(5)))
    # element i uses point index i: a prefix is released identically
    assert np.array_equal(mech.sample(x[:10], rng=3), mech.sample(x, rng=3)[:10])


def test_pmf_of_a_large_lattice_is_refused_clearly():
    with pytest.raises(ValueError, match="enumerating the lattice.s .* values .* of tables, more than the limit of 1 GiB"):
        m.Laplace(epsilon=1.0).lattice_pmf(0.5)


def test_samples_follow_the_exact_pmf():
    """Seeded goodness of fit of the samplers to the enumerated pmf, on 40 bins of consecutive
    lattice values (TV < 0.01 from 200,000 draws; sampling noise is about 0.004)."""
    for name in ("OptimalClassical", "OptimalCircular", "OptimalClassical[square]", "OptimalCircular[square]",
                 "SquareWave", "Laplace", "Staircase",
                 "Purkayastha", "Duchi", "Truncated(PM)"):
        mech = FACTORIES[name](1.0)
        x0 = adversarial_inputs(mech)[6]
        lat = mech.lattice
        y = mech.sample(np.full(200_000, x0), rng=5)
        bins = np.minimum(lat.index(y) * 40 // lat.count, 39)
        counts = np.bincount(bins, minlength=40) / y.size
        want = np.bincount(np.arange(lat.count) * 40 // lat.count, weights=mech.lattice_pmf(x0), minlength=40)
        assert 0.5 * np.abs(counts - want).sum() < 0.01, name


def test_laplace_cumulative_on_the_default_lattice_computes_only_what_it_needs():
    """lattice_cumulative on the default lattice (about 8.5e7 values at ε = 1) evaluates only
    the thresholds of the boundaries asked for; the values agree with a coarse lattice's rows."""
    mech = m.Laplace(epsilon=1.0)
    count = mech.lattice.count
    b = np.array([0, 1, count // 2, count - 1, count])
    cum = mech.lattice_cumulative(b, np.array([0, 2**19, 2**20]))
    assert cum.shape == (5, 3) and np.all(np.diff(cum, axis=0) >= 0.0)
    np.testing.assert_array_equal(cum[0], 0.0)
    np.testing.assert_array_equal(cum[-1], 1.0)
    coarse = m.Laplace(epsilon=1.0, resolution=RES)
    rows = np.array([coarse.lattice_row(k) for k in range(coarse.input_lattice.count)]).T
    edges = np.arange(coarse.lattice.count + 1)
    np.testing.assert_allclose(coarse.lattice_cumulative(edges, np.arange(rows.shape[1])),
                               np.vstack([np.zeros(rows.shape[1]), np.cumsum(rows, axis=0)]), rtol=0, atol=1e-12)
