"""Every ε from 1e-6 to 50: finite constants, errors and densities, no overflow warnings;
property tests (hypothesis) over random ε and inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_contract import CASES, NAMES, input_grid

import tracs.mechanisms as m

SWEEP = np.geomspace(1e-6, 50.0, 15)


@pytest.mark.parametrize("name", NAMES)
def test_every_epsilon_gives_finite_numbers(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow or invalid-value warning fails the test
        for epsilon in SWEEP:
            mech = CASES[name](float(epsilon))
            x = input_grid(mech, 7)
            for p in (1, 2):
                errors = mech.expected_error(x, p)
                assert np.all(np.isfinite(errors)) and np.all(errors > 0), (epsilon, p)
                worst = mech.worst_case_error(p)
                assert math.isfinite(worst) and worst >= errors.max() * (1 - 1e-9)
            y = mech.sample(np.repeat(x, 50), rng=0)
            assert np.all(np.isfinite(y)) and np.all(mech.output_domain.contains(y))
            density = mech.pdf(y, np.repeat(x, 50))
            assert np.all(np.isfinite(density)) and np.all(density >= 0)


@pytest.mark.parametrize("name", NAMES)
def test_errors_fall_with_epsilon(name):
    # more budget, less error (worst case, squared)
    worst = [CASES[name](float(e)).worst_case_error(2) for e in (0.5, 1.0, 2.0, 4.0, 8.0)]
    assert all(a > b for a, b in zip(worst, worst[1:]))


@pytest.mark.parametrize("make", [m.KRR, m.Duchi])
def test_discrete_every_epsilon(make):
    for epsilon in SWEEP:
        mech = make(epsilon=float(epsilon), k=5) if make is m.KRR else make(epsilon=float(epsilon))
        assert math.isfinite(mech.worst_case_error(1)) and mech.worst_case_error(1) > 0


epsilons = st.floats(min_value=1e-6, max_value=50.0, allow_nan=False)
fractions = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NAMES), epsilon=epsilons, t=fractions, seed=st.integers(0, 2**32 - 1))
def test_samples_lie_in_the_support(name, epsilon, t, seed):
    """Any ε, any input: samples lie in the output domain where the density (or an atom) is positive."""
    mech = CASES[name](epsilon)
    dom = mech.input_domain
    x0 = dom.low + t * (dom.high - dom.low)
    if not dom.contains(x0):
        x0 = np.nextafter(dom.high, dom.low)
    y = mech.sample(np.full(64, x0), rng=seed)
    assert np.all(mech.output_domain.contains(y))
    locations, _ = mech.atoms(x0)
    on_atom = np.isin(y, locations)
    density = mech.pdf(y[~on_atom], x0)
    assert np.all(np.isfinite(density)) and np.all(density > 0)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NAMES), epsilon=epsilons, t1=fractions, t2=fractions)
def test_ratio_holds_for_random_pairs(name, epsilon, t1, t2):
    mech = CASES[name](epsilon)
    dom = mech.input_domain
    xs = [dom.low + t * (dom.high - dom.low) for t in (t1, t2)]
    xs = [x if dom.contains(x) else np.nextafter(dom.high, dom.low) for x in xs]
    y = mech.sample(np.full(200, xs[0]), rng=1)
    a, b = mech.pdf(y, xs[0]), mech.pdf(y, xs[1])
    assert np.all(a <= math.exp(epsilon) * b * (1 + 1e-9))
