"""The compiled samplers of the geometric family (Laplace, Staircase, Purkayastha).

* the released law matches ``lattice_row`` at a lattice input and ``lattice_pmf`` between
  two (chi-square over cells with an expected
  count of at least 20, the rest pooled; 200 000 draws at seed 5; p-value above
  1e-6, so a wrong mass of a few percent fails);
* the shortcut of the compiled samplers (decisions read from ``ln u``) gives the same
  indices as the reference path that always compares the thresholds, bit for bit;
* ``lattice_cumulative`` equals the cumulative sums of the rows (to ``max(1e-13, count·2^-52)``,
  the rounding of summing a row);
* releases are lattice values, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import tracs.mechanisms as m
from tracs.random import resolve_streams

RES = 1 / 63
FAMILY = {
    "Laplace": lambda e, res=RES: m.Laplace(epsilon=e, resolution=res),
    "Laplace[-3,5]": lambda e, res=RES: m.Laplace(epsilon=e, low=-3.0, high=5.0, resolution=res),
    "Staircase": lambda e, res=RES: m.Staircase(epsilon=e, resolution=res),
    "Staircase[-3,5,γ=0.3]": lambda e, res=RES: m.Staircase(epsilon=e, low=-3.0, high=5.0, gamma=0.3,
                                                            resolution=res),
    "Purkayastha": lambda e, res=RES: m.Purkayastha(epsilon=e, resolution=res),
    "Purkayastha[T=360,n=64]": lambda e, res=1 / 64: m.Purkayastha(epsilon=e, period=360.0, resolution=res),
}


def chi_square_p(counts: np.ndarray, row: np.ndarray) -> float:
    """p-value of the counts against the row (cells expecting fewer than 20 draws pooled)."""
    expected = row * counts.sum()
    big = expected >= 20.0
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] < 20.0:  # fold a small pooled bin into the last big one
        obs, exp = np.append(obs[:-2], obs[-2:].sum()), np.append(exp[:-2], exp[-2:].sum())
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


@pytest.mark.parametrize("name", sorted(FAMILY))
@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_released_law_matches_lattice_row(name, epsilon):
    mech = FAMILY[name](epsilon)
    inp = mech.input_lattice
    for x0, want in ((float(inp.points(17)), mech.lattice_row(17)),  # a lattice input: one row
                     (float(inp.points(17)) + 0.3 * inp.spacing, None)):  # between two: the snapped mixture
        x = np.full(200_000, x0)
        idx = mech.sample_index(x, rng=5)
        counts = np.bincount(idx, minlength=mech.lattice.count)
        assert chi_square_p(counts, mech.lattice_pmf(x0) if want is None else want) > 1e-6


@pytest.mark.parametrize("name", sorted(FAMILY))
@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 1.0, 5.0, 40.0, 300.0])
@pytest.mark.parametrize("res", [RES, None])
def test_shortcut_equals_reference_path(name, epsilon, res):
    mech = FAMILY[name](epsilon, res)
    x = np.random.default_rng(2).uniform(0.0, 1.0, 50_000)
    dom = mech.input_domain
    lo, hi = (0.0, dom.period) if hasattr(dom, "period") else (dom.low, dom.high)
    x = lo + (hi - lo) * x
    ks = resolve_streams(9, None, 1)
    fast = mech._compiled_indices(x, ks, True)
    slow = mech._compiled_indices(x, ks, False)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("name", sorted(FAMILY))
@pytest.mark.parametrize("epsilon", [0.01, 1.0, 20.0])
def test_cumulative_equals_summed_rows(name, epsilon):
    mech = FAMILY[name](epsilon)
    ks = np.arange(mech.input_lattice.count)
    rows = np.array([mech.lattice_row(int(k)) for k in ks])
    count = mech.lattice.count
    summed = np.vstack([np.zeros(ks.size), np.cumsum(rows, axis=1).T])
    b = np.unique(np.linspace(0, count, 200).astype(np.int64))
    tol = max(1e-13, count * 2.0 ** -52)  # rounding of a cumulative sum over the row
    np.testing.assert_allclose(mech.lattice_cumulative(b, ks), summed[b], rtol=0, atol=tol)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=0, atol=tol)


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_releases_are_lattice_values_bit_for_bit(name):
    mech = FAMILY[name](1.0, None)
    dom = mech.input_domain
    lo, hi = (0.0, dom.period) if hasattr(dom, "period") else (dom.low, dom.high)
    x = lo + (hi - lo) * np.random.default_rng(4).random((300, 7))
    values = mech.sample(x, rng=3)
    idx = mech.sample_index(x, rng=3)
    lat = mech.lattice
    assert values.shape == x.shape and idx.shape == x.shape
    assert ((idx >= 0) & (idx < lat.count)).all()
    np.testing.assert_array_equal(values.view(np.uint64), lat.points(idx).view(np.uint64))
