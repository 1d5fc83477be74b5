"""The compiled samplers of the geometric family (Laplace, Staircase, Purkayastha).

* the released law matches ``lattice_row`` at a lattice input and ``lattice_pmf`` between
  two (chi-square over cells with an expected
  count of at least 20, the rest pooled; 200 000 draws at seed 5; p-value above
  1e-6, so a wrong mass of a few percent fails);
* the shortcut of the compiled samplers (decisions read from ``ln u``) gives the same
  indices as the reference path that always compares the thresholds, bit for bit;
* ``lattice_cumulative`` equals the cumulative sums of the rows (to ``max(1e-13, count·2^-52)``,
  the rounding of summing a row);
* at uniforms on and next to each threshold the shortcut defers or agrees with the exact
  comparisons;
* releases are lattice values, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import tracs.mechanisms as m
from tracs.mechanisms import _circular_geometric, geometric, _staircase
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


def _near(thresholds):
    """First-53-bit values of ``u`` at, next to and farther from ``floor(c·2^53)`` for each threshold ``c``."""
    tops = np.floor(np.asarray(thresholds) * 2.0 ** 53)
    steps = [-3, -2, -1, 0, 1, 2, 3, -2 ** 24, 2 ** 24, -2 ** 34, 2 ** 34]
    return [int(t) + d for t in tops for d in steps if 0 <= int(t) + d < 2 ** 53]


LAWS = {
    "Laplace n=2^20": lambda: (*geometric.laplace_constants(1.0, 2 ** 20), 0.0, geometric.NO_TOP),
    "Laplace n=63 ε=0.01": lambda: (*geometric.laplace_constants(0.01, 63), 0.0, geometric.NO_TOP),
    "circle n=2^20": lambda: _circle_law(1.0, 2 ** 20),
    "circle n=63 ε=0.01": lambda: _circle_law(0.01, 63),
    "circle n=64 ε=30": lambda: _circle_law(30.0, 64),
}


def _circle_law(epsilon, n):
    top, log_r, log_c, shift = _circular_geometric.circle_constants(epsilon, n)
    return log_r, log_c, shift, top


@pytest.mark.parametrize("law", sorted(LAWS))
def test_shortcut_at_the_thresholds(law):
    """Uniforms whose first 53 bits sit on or next to a threshold: the shortcut either
    defers (-1) or agrees with the exact comparisons (ties read further keyed words)."""
    log_r, log_c, shift, top = LAWS[law]()
    ks = resolve_streams(8, None, 1)
    stream = np.uint64(ks.streams[0])
    m = np.unique(np.concatenate([np.arange(1, 40), np.geomspace(1, 5e7, 60).astype(np.int64)]))
    m = m[m <= top]
    firsts = _near(geometric.thresholds(m, log_r, log_c, shift, top))
    deferred = 0
    for i, first in enumerate(firsts):
        f = float(first)
        lu = math.log((f + 0.5) * 2.0 ** -53 + shift)
        fast = geometric.fast_magnitude(f, lu, log_r, log_c, top)
        exact = geometric.magnitude(np.uint64(first), log_r, log_c, shift, top, ks.kind, ks.key, stream, i, 2, False)
        deferred += fast < 0
        assert fast < 0 or fast == exact, (first, fast, exact)
    assert 0 < deferred < len(firsts)  # both paths are exercised


@pytest.mark.parametrize("epsilon, n, gamma", [(1.0, 2 ** 20, 0.38), (0.01, 63, 0.5), (30.0, 64, 0.3)])
def test_staircase_shortcut_at_the_thresholds(epsilon, n, gamma):
    inner, log_r, log_t = _staircase.staircase_constants(epsilon, gamma, n)
    ks = resolve_streams(8, None, 1)
    stream = np.uint64(ks.streams[0])
    j = np.arange(0, 30)
    even = geometric.thresholds(j, log_r, 0.0, 0.0, geometric.NO_TOP)
    odd = geometric.thresholds(j + 1, log_r, log_t, 0.0, geometric.NO_TOP)
    deferred = 0
    firsts = _near(np.concatenate([even, odd]))
    for i, first in enumerate(firsts):
        f = float(first)
        lu = math.log((f + 0.5) * 2.0 ** -53)
        w1 = np.uint64(0xFFFFFFFFFFFFFFFF)  # low 32 bits: a cell integer that is never rejected
        fast, sure = _staircase._fast_offset(f, lu, w1, n, inner, log_r, log_t)
        exact = _staircase.staircase_offset(np.uint64(first), w1, n, inner, log_r, log_t, ks.kind, ks.key, stream,
                                            i, False)
        deferred += not sure
        assert not sure or fast == exact, (first, fast, exact)
    assert 0 < deferred < len(firsts)  # both paths are exercised
