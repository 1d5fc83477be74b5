"""Duchi's compiled sampler: the same numbers as the NumPy passes it replaced, and its realised law."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.mechanisms import Duchi
from tracs.mechanisms import lattice_kernels as lk
from tracs.mechanisms._duchi_kernel import _decide
from tracs.mechanisms._numeric import logistic
from tracs.mechanisms.lattice import _Draws, lattice_point, snap_indices


def _numpy_indices(mech, x, rng):
    """The NumPy sampler the kernel replaced (word 0: snapping bits and ``u``; ties from word 1)."""
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    draws = _Draws(rng, flat.size)
    inp = mech.input_lattice
    k = snap_indices((flat - inp.origin) / inp.spacing, inp.count - 1, draws.bits)
    xk = np.minimum(lattice_point(inp.origin, inp.spacing, k), mech.high)
    w = (xk - mech.low) / (mech.high - mech.low)
    hi, lo = logistic(mech.epsilon), logistic(-mech.epsilon)
    plus, minus = w * hi + (1.0 - w) * lo, w * lo + (1.0 - w) * hi
    rare_high = plus <= minus
    pick = draws.below(np.arange(flat.size), np.where(rare_high, plus, minus), False)
    return np.where(rare_high, pick, ~pick).astype(np.int64)


@pytest.mark.parametrize("epsilon", [1e-100, 1e-8, 0.1, 1.0, 5.0, 50.0, 700.0])
@pytest.mark.parametrize("low, high, resolution", [(-1.0, 1.0, None), (0.0, 3.0, 1 / 7), (-5.0, 100.0, 2.0 ** -10)])
def test_kernel_matches_the_numpy_sampler_bit_for_bit(epsilon, low, high, resolution):
    mech = Duchi(epsilon=epsilon, low=low, high=high, resolution=resolution)
    x = low + (high - low) * np.random.default_rng(0).random(20_000)
    x[:3] = [low, high, (low + high) / 2.0]
    for seed in (1, 2):
        got = mech.sample_index(x, rng=seed)
        np.testing.assert_array_equal(got, _numpy_indices(mech, x, seed))
        np.testing.assert_array_equal(mech.sample(x, rng=seed), lattice_point(*mech.lattice[:2], got))


def test_kernel_runs_on_the_secure_generator_and_keeps_shapes():
    mech = Duchi(epsilon=1.0)
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    y = mech.sample_index(x, rng="secure")
    assert y.shape == (3, 4) and set(np.unique(y)) <= {0, 1}
    np.testing.assert_array_equal(mech.sample_index(x, rng=9), _numpy_indices(mech, x, 9).reshape(3, 4))


@pytest.mark.parametrize("c", [0.25, 1e-300, 5e-324, 0.3, 1.0 / 3.0])
def test_decide_flags_exactly_the_ties_of_the_first_53_bits(c):
    # first word at, below and above floor(c·2^53): a tie only at it and only when c·2^53 has a fraction
    top = math.floor(c * lk.TWO53)
    fractional = c * lk.TWO53 > top
    for first, expect_high, expect_tie in ((top, False, fractional), (top + 1, False, False)):
        high, tie = _decide(np.uint64(first), c, 1.0 - c)  # the high output is the rare one
        assert (bool(high), bool(tie)) == (expect_high, expect_tie)
    if top > 0:
        high, tie = _decide(np.uint64(top - 1), c, 1.0 - c)
        assert bool(high) and not tie
        low, tie = _decide(np.uint64(top - 1), 1.0 - c, c)  # the low output is the rare one
        assert not bool(low) and not tie


@pytest.mark.parametrize("epsilon, x", [(0.5, 0.3), (2.0, -0.9), (1e-100, 0.0)])
def test_empirical_law_matches_lattice_pmf(epsilon, x):
    # 4e5 draws at seed 11: the frequency of the high output within 5 standard errors of lattice_pmf
    mech = Duchi(epsilon=epsilon, resolution=1 / 5)
    n = 400_000
    p_high = mech.lattice_pmf(x)[1]
    freq = mech.sample_index(np.full(n, x), rng=11).mean()
    assert abs(freq - p_high) <= 5.0 * math.sqrt(p_high * (1.0 - p_high) / n)


@pytest.mark.parametrize("epsilon", [1e-100, 700.0])
def test_extreme_budgets_keep_both_outputs_and_the_ratio(epsilon):
    mech = Duchi(epsilon=epsilon, resolution=1 / 4)
    rows = np.array([mech.lattice_pmf(x) for x in np.linspace(-1.0, 1.0, 9)])
    assert np.all(rows > 0.0)
    ratio = rows.max(axis=0) / rows.min(axis=0)
    assert np.all(np.log(ratio) <= epsilon * (1.0 + 1e-12))
    y = mech.sample_index(np.array([-1.0, 1.0] * 500), rng=4)
    if epsilon > 1.0:  # each end's own output has probability 1 − σ(−700) ≈ 1 − 1e-304
        np.testing.assert_array_equal(y, np.tile([0, 1], 500))
    else:  # a fair coin at both ends
        assert set(np.unique(y)) == {0, 1}
