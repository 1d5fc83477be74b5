"""The compiled (numba) samplers of the optimal mechanisms against the NumPy reference.

Both paths consume the same uniforms in the same order and perform the same
floating-point operations, so the outputs must be bit-identical.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracs.mechanisms as m
from tracs._validation import as_generator
from tracs.mechanisms._base import COMPILED_MIN_SIZE

MECHANISMS = [
    lambda e: m.OptimalClassical(epsilon=e),
    lambda e: m.OptimalClassical(epsilon=e, low=-7.5, high=1e3),
    lambda e: m.OptimalCircular(epsilon=e),
    lambda e: m.OptimalCircular(epsilon=e, period=360.0),
]


def reference(mech, x, seed):
    """The NumPy path: validate, ``_sample``, clamp."""
    rng = as_generator(seed)
    y = mech._sample(mech.input_domain.validate(x), rng)
    return mech.output_domain.clip(np.asarray(y, dtype=np.float64))


def inputs(mech, n, seed=0):
    dom = mech.input_domain
    x = dom.low + (dom.high - dom.low) * np.random.default_rng(seed).random(n)
    x[0] = dom.low
    x[1] = dom.high if dom.contains(dom.high) else np.nextafter(dom.high, dom.low)
    return x


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("make", MECHANISMS)
def test_kernel_is_bit_identical_to_numpy(make, epsilon):
    mech = make(epsilon)
    assert mech._has_kernel()
    x = inputs(mech, 3 * COMPILED_MIN_SIZE).reshape(3, -1)
    fast = mech.sample(x, rng=17)
    assert fast.shape == x.shape
    np.testing.assert_array_equal(fast, reference(mech, x, 17))
    assert np.all(mech.output_domain.contains(fast))


@pytest.mark.parametrize("make", MECHANISMS)
def test_kernel_rejects_bad_inputs(make):
    mech = make(1.0)
    dom = mech.input_domain
    outside = dom.high + 1.0
    for bad in (math.nan, math.inf, -math.inf, dom.low - 1e-9, outside):
        x = inputs(mech, 2 * COMPILED_MIN_SIZE)
        x[1234] = bad
        with pytest.raises(ValueError):
            mech.sample(x, rng=0)
    with pytest.raises(TypeError):
        mech.sample(np.array(["a"] * COMPILED_MIN_SIZE), rng=0)


def test_circle_period_itself_is_rejected_by_the_kernel():
    mech = m.OptimalCircular(epsilon=1.0)
    x = np.zeros(COMPILED_MIN_SIZE)
    x[-1] = 2 * math.pi
    with pytest.raises(ValueError, match="outside the circle"):
        mech.sample(x)
