"""Bounded Laplace and II-PTT: the compiled sampler realises the generic lattice law bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.mechanisms import IIPTT, BoundedLaplace
from tracs.mechanisms import _cdf_kernels as ck
from tracs.mechanisms.bounded_laplace import _mass
from tracs.mechanisms.lattice import LatticeMixin


def _triangle(z):
    z = np.clip(z, -1.0, 1.0)
    return np.where(z <= 0.0, 0.5 * (1.0 + z) ** 2, 1.0 - 0.5 * (1.0 - z) ** 2)


class _NumpyBoundedLaplace(BoundedLaplace):
    """The NumPy masses the compiled ones replaced."""

    def _cdf(self, y, x):
        b, low = self.scale, self.low
        y = np.clip(y, self.low, self.high)
        below = -np.exp(-(x - np.minimum(y, x)) / b) * np.expm1(-(np.minimum(y, x) - low) / b)
        above = -np.expm1(-(x - low) / b) - np.expm1(-(np.maximum(y, x) - x) / b)
        return np.where(y <= x, below, above) / _mass(x, self.low, self.high, b)

    def _sf(self, y, x):
        b, high = self.scale, self.high
        y = np.clip(y, self.low, self.high)
        above = -np.exp(-(np.maximum(y, x) - x) / b) * np.expm1(-(high - np.maximum(y, x)) / b)
        below = -np.expm1(-(high - x) / b) - np.expm1(-(x - np.minimum(y, x)) / b)
        return np.where(y >= x, above, below) / _mass(x, self.low, self.high, b)


class _NumpyIIPTT(IIPTT):
    """The NumPy masses the compiled ones replaced."""

    def _cdf(self, y, x):
        mid, half, k, a, B, q0 = self._params()
        u, c = np.clip((y - mid) / half, -B, B), k * (x - mid) / half
        return np.minimum(q0 * (u + B) + _triangle((u - c) / a) / k, 1.0)

    def _sf(self, y, x):
        mid, half, k, a, B, q0 = self._params()
        u, c = np.clip((y - mid) / half, -B, B), k * (x - mid) / half
        return np.minimum(q0 * (B - u) + _triangle((c - u) / a) / k, 1.0)


CASES = [(cls, eps) for cls in (BoundedLaplace, IIPTT) for eps in (1e-3, 0.1, 1.0, 5.0, 50.0, 700.0)]
CASES += [(BoundedLaplace, 1e-6)]
CASES += [(BoundedLaplace, 1e-100)]
NUMPY = {BoundedLaplace: _NumpyBoundedLaplace, IIPTT: _NumpyIIPTT}


def _inputs(mech, n, seed=0):
    dom = mech.input_domain
    x = dom.low + (dom.high - dom.low) * np.random.default_rng(seed).random(n)
    x[:3] = [dom.low, dom.high, (dom.low + dom.high) / 2.0]
    return x


@pytest.mark.parametrize("cls, epsilon", CASES)
@pytest.mark.parametrize("resolution", [None, 1 / 63])
def test_compiled_sampler_is_the_generic_bisection_bit_for_bit(cls, epsilon, resolution):
    # the same masses (compiled) through the NumPy bisection, and the replaced NumPy masses
    mech = cls(epsilon=epsilon, resolution=resolution)
    old = NUMPY[cls](epsilon=epsilon, resolution=resolution)
    x = _inputs(mech, 4001)  # odd: one element outside the pairs of the fast pass
    for seed in (3, 4):
        got = mech.sample_index(x, rng=seed)
        np.testing.assert_array_equal(got, LatticeMixin._sample_indices(mech, x, seed))
        np.testing.assert_array_equal(got, LatticeMixin._sample_indices(old, x, seed))
        assert got.min() >= 0 and got.max() < mech.lattice.count


@pytest.mark.parametrize("cls, epsilon", CASES)
def test_mirrored_cdf_is_the_sf_bit_for_bit(cls, epsilon):
    # the fast pass compares 1 − u against F'(−e | −x) of the mirrored law; the rows use S(e | x)
    mech = cls(epsilon=epsilon, resolution=1 / 63)
    A, B, G, h, count = mech._grid()
    rng = np.random.default_rng(5)
    x = mech._input_point(rng.integers(0, mech.input_lattice.count, 3000))
    y = np.concatenate([G + rng.integers(0, count + 1, 3000) * h, [A, B, A - h, B + h], x[:4]])
    x = np.concatenate([x, x[:4], x[:4]])
    p = mech._law_parameters()
    mp = ck.mirror_parameters(mech._LAW, p)
    np.testing.assert_array_equal(ck.masses(mech._LAW, False, -y, -x, mp), ck.masses(mech._LAW, True, y, x, p))


@pytest.mark.parametrize("cls", [BoundedLaplace, IIPTT])
def test_secure_generator_and_shapes(cls):
    mech = cls(epsilon=1.0, resolution=1 / 63)
    x = _inputs(mech, 600).reshape(20, 30)
    got = mech.sample_index(x, rng="secure")
    assert got.shape == (20, 30) and got.min() >= 0 and got.max() < mech.lattice.count
    np.testing.assert_array_equal(mech.sample_index(x, rng=8).reshape(-1),
                                  LatticeMixin._sample_indices(mech, x.reshape(-1), 8))


@pytest.mark.parametrize("cls, epsilon", [(BoundedLaplace, 0.7), (BoundedLaplace, 6.0), (IIPTT, 0.7), (IIPTT, 6.0)])
def test_empirical_law_matches_lattice_row(cls, epsilon):
    # 3e5 draws at seed 21 from an input lattice point: every cell's frequency within
    # 5 standard errors (plus 1e-4) of lattice_row
    mech = cls(epsilon=epsilon, resolution=1 / 7)
    inp = mech.input_lattice
    k = 2
    n = 300_000
    row = mech.lattice_row(k)
    got = mech.sample_index(np.full(n, float(inp.points(np.array([k]))[0])), rng=21)
    freq = np.bincount(got, minlength=row.size) / n
    assert np.all(np.abs(freq - row) <= 5.0 * np.sqrt(row * (1.0 - row) / n) + 1e-4)


@pytest.mark.parametrize("cls, epsilon", [c for c in CASES if c[0] is BoundedLaplace or c[1] >= 0.1] + [(IIPTT, 1e-3)])
def test_cumulative_is_the_sum_of_the_realised_rows(cls, epsilon):
    mech = cls(epsilon=epsilon, resolution=1 / 15)
    count = mech.lattice.count
    ks = np.arange(mech.input_lattice.count)
    rows = np.array([mech.lattice_row(int(k)) for k in ks])
    cum = mech.lattice_cumulative(np.arange(count + 1), ks)
    expect = np.concatenate([np.zeros((1, ks.size)), np.cumsum(rows, axis=1).T])
    np.testing.assert_allclose(cum, expect, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("cls, epsilon", [(BoundedLaplace, 1e-100), (BoundedLaplace, 700.0), (IIPTT, 1e-3),
                                          (IIPTT, 700.0)])
def test_extreme_budgets_keep_every_cell_and_the_ratio(cls, epsilon):
    # rows at every input lattice point (resolution 1/15): all cells positive, the log ratio
    # within ε plus the documented floating-point term count·2^-51
    mech = cls(epsilon=epsilon, resolution=1 / 15)
    rows = np.array([mech.lattice_row(k) for k in range(mech.input_lattice.count)])
    assert np.all(rows > 0.0)
    log_ratio = np.log(rows.max(axis=0)) - np.log(rows.min(axis=0))
    assert np.all(log_ratio <= epsilon + rows.shape[1] * 2.0 ** -51 + 1e-12)
    assert math.isclose(rows.sum(axis=1).max(), 1.0, rel_tol=1e-12)
