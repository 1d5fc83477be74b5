"""k-RR and Duchi specifics (the shared contract is in test_contract.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.mechanisms import KRR, Duchi


@pytest.mark.parametrize("k", [2, 3, 12])
def test_krr_lies_with_the_total_probability(k):
    # the lie probability in total, not per value (a published pitfall)
    mech = KRR(epsilon=1.5, k=k)
    assert mech.worst_case_error() == pytest.approx((k - 1) / (math.exp(1.5) + k - 1), rel=1e-12)
    assert mech.keep_probability + (k - 1) * mech.other_probability == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("epsilon", [1e-6, 1.0, 50.0])
def test_krr_samples_stay_in_range(epsilon):
    mech = KRR(epsilon=epsilon, k=6)
    x = np.tile(np.arange(6), 20_000)
    y = mech.sample(x, rng=3)
    assert y.dtype == np.int64 and y.shape == x.shape
    assert y.min() >= 0 and y.max() <= 5  # never the out-of-range value k


def test_krr_accepts_integral_floats_and_shapes():
    mech = KRR(epsilon=1.0, k=6.0)
    assert mech.k == 6 and isinstance(mech.k, int)
    y = mech.sample(np.array([[0.0, 5.0], [2.0, 3.0]]), rng=0)
    assert y.shape == (2, 2)
    np.testing.assert_array_equal(mech.sample([1, 2, 3], rng=5), mech.sample([1, 2, 3], rng=5))


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(epsilon=0.0, k=3), ValueError),
        (dict(epsilon=-1.0, k=3), ValueError),
        (dict(epsilon=math.nan, k=3), ValueError),
        (dict(epsilon=math.inf, k=3), ValueError),
        (dict(epsilon="1", k=3), TypeError),
        (dict(epsilon=1.0, k=1), ValueError),
        (dict(epsilon=1.0, k=2.5), ValueError),
        (dict(epsilon=1.0, k="6"), TypeError),
        (dict(epsilon=1.0, k=True), TypeError),
    ],
)
def test_krr_invalid_parameters(kwargs, error):
    with pytest.raises(error):
        KRR(**kwargs)


@pytest.mark.parametrize("x, error", [([0, 6], ValueError), ([-1], ValueError), ([0.5], ValueError),
                                      ([math.nan], ValueError), (["a"], TypeError)])
def test_krr_invalid_inputs(x, error):
    with pytest.raises(error):
        KRR(epsilon=1.0, k=6).sample(x)


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (0.0, 1.0), (3.0, 7.5)])
def test_duchi_is_unbiased(low, high):
    for epsilon in (1e-6, 1.0, 50.0):
        mech = Duchi(epsilon=epsilon, low=low, high=high)
        x = np.linspace(low, high, 201)
        lo, hi = mech.outputs
        mean = mech.pmf(hi, x) * hi + mech.pmf(lo, x) * lo
        np.testing.assert_allclose(mean, x, atol=1e-9 * (hi - lo) + 1e-12)


def test_duchi_sampling_and_errors():
    mech = Duchi(epsilon=1.0)
    n = 200_000
    for x0 in (-1.0, 0.0, 0.4, 1.0):
        y = mech.sample(np.full(n, x0), rng=7)
        assert set(np.unique(y)) <= set(mech.outputs)
        for p in (1, 2):
            err = np.abs(y - x0) ** p
            # Monte Carlo tolerance: 5 standard errors (plus rounding, the error is constant at x = 0)
            tol = 5 * err.std() / math.sqrt(n) + 1e-12
            assert abs(err.mean() - mech.expected_error(x0, p)) <= tol
    c = 1 / math.tanh(0.5)
    assert mech.worst_case_error(1) == pytest.approx(c)
    assert mech.worst_case_error(2) == pytest.approx(c**2)


def test_duchi_invalid():
    with pytest.raises(ValueError):
        Duchi(epsilon=1.0, low=1.0, high=1.0)
    with pytest.raises(ValueError):
        Duchi(epsilon=1.0).sample([1.5])
    with pytest.raises(ValueError):
        Duchi(epsilon=1.0).sample([math.nan])


def test_krr_lie_probability_and_threshold():
    """The lie probability is the 0/1 error; its threshold is never 0, even at huge ε."""
    m = KRR(epsilon=2.0, k=6)
    assert m.lie_probability == pytest.approx(5 / (math.exp(2.0) + 5), rel=1e-15)
    assert m.lie_probability == m.worst_case_error()
    assert m.lie_threshold >= m.lie_probability
    assert KRR(epsilon=700.0, k=2).lie_probability > 0.0  # compared exactly: lying stays possible
    with pytest.raises(ValueError, match="exceeds 700"):
        KRR(epsilon=1000.0, k=2)
