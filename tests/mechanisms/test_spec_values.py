"""Every check value and closed form of the mechanism spec (docs/mechanisms.md), asserted."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import _quadrature
import tracs.mechanisms as m

PI = math.pi


def integrate_moment(mech, x0: float, power: int) -> float:
    """``∫ y^power · pdf(y | x0) dy`` over the whole (bounded) output interval."""
    return _quadrature.integrate_moment(mech, x0, mech.output_domain.low, mech.output_domain.high, power)


# -- §1 optimal classical mechanism on [0, 1] ----------------------------------------------
def test_classical_check_values():
    mech = m.OptimalClassical(epsilon=1.0)
    p, q = mech._densities()
    assert p == pytest.approx(1.6487, abs=1e-4)
    assert q == pytest.approx(p / math.e, rel=1e-12)
    l0 = float(mech._central_left(np.array(0.0)))
    assert (l0, l0 + mech._central_width()) == pytest.approx((0.0, 0.3775), abs=1e-4)
    l5 = float(mech._central_left(np.array(0.5)))
    assert (l5, l5 + mech._central_width()) == pytest.approx((0.3112, 0.6888), abs=1e-4)
    assert mech.expected_error(0.0, p=2) == pytest.approx(0.2209, abs=1e-4)
    assert m.SquareWave(epsilon=1.0).expected_error(0.0, p=2) == pytest.approx(0.29, abs=5e-3)
    assert mech.expected_error(0.2, p=1) == pytest.approx(0.2434, abs=1e-4)


@pytest.mark.parametrize("epsilon", [1e-6, 0.3, 1.0, 4.0, 50.0])
def test_classical_closed_forms(epsilon):
    mech = m.OptimalClassical(epsilon=epsilon)
    s = math.exp(epsilon / 2)
    c = 1 / (2 * (s + 1))
    if epsilon < 30:  # the first form of C, (s − 1)/(2(e^ε − 1)), overflows nowhere here
        assert c == pytest.approx((s - 1) / (2 * math.expm1(epsilon)), rel=1e-9)
    assert mech.half_width == pytest.approx(c, rel=1e-12)
    assert mech._central_mass() == pytest.approx(s / (s + 1), rel=1e-12)
    p, q = s, 1 / s
    x = np.linspace(0, 1, 41)
    l = np.where(x < c, 0.0, np.where(x >= 1 - c, 1 - 2 * c, x - c))
    r = l + 2 * c
    abs_err = q * (x**2 + (1 - x) ** 2) / 2 + (p - q) * ((x - l) ** 2 + (r - x) ** 2) / 2
    sq_err = q * (x**3 + (1 - x) ** 3) / 3 + (p - q) * ((x - l) ** 3 + (r - x) ** 3) / 3
    np.testing.assert_allclose(mech.expected_error(x, 1), abs_err, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(mech.expected_error(x, 2), sq_err, rtol=1e-9, atol=1e-300)
    # Lemma 3.2: the worst case is at the end points
    assert mech.worst_case_error(2) == pytest.approx(sq_err.max(), rel=1e-12)


def test_classical_any_interval_is_a_rescaling():
    unit, wide = m.OptimalClassical(epsilon=1.3), m.OptimalClassical(epsilon=1.3, low=-2.0, high=6.0)
    t = np.linspace(0, 1, 11)
    x = -2.0 + 8.0 * t
    np.testing.assert_allclose(wide.pdf(x[None, :] * 0 + x[:, None], x[:, None]) * 8.0,
                               unit.pdf(t[:, None] * np.ones(11), t[:, None]), rtol=1e-12)
    np.testing.assert_allclose(wide.expected_error(x, 2), 64.0 * unit.expected_error(t, 2), rtol=1e-12)


# -- §2 optimal circular mechanism -------------------------------------------------------------
def test_circular_check_values():
    mech = m.OptimalCircular(epsilon=1.0)
    p, q = mech._densities()
    assert p == pytest.approx(0.2624, abs=1e-4)
    assert q == pytest.approx(0.0965, abs=1e-4)
    assert mech.half_width / PI == pytest.approx(0.3775, abs=1e-4)
    two = m.OptimalCircular(epsilon=2.0)
    assert two.worst_case_error(1) == pytest.approx(0.8449, abs=1e-4)
    assert two.worst_case_error(2) == pytest.approx(1.3607, abs=1e-4)
    # the errors do not depend on x (Theorem 4.4) and match direct integration
    x = np.array([0.0, 1.0, 3.0, 6.2])
    np.testing.assert_allclose(two.expected_error(x, 2), 1.3607, atol=1e-4)
    generic = m.Mechanism._expected_error(two, x, 2)
    np.testing.assert_allclose(generic, two.expected_error(x, 2), rtol=1e-10)
    # any period: errors scale by (T/2π)^p
    deg = m.OptimalCircular(epsilon=2.0, period=360.0)
    assert deg.worst_case_error(1) == pytest.approx(two.worst_case_error(1) * 360 / (2 * PI), rel=1e-12)


def test_circular_output_never_equals_period():
    mech = m.OptimalCircular(epsilon=50.0)
    x = np.full(200_000, np.nextafter(2 * PI, 0.0))
    y = mech.sample(x, rng=0)
    assert y.max() < 2 * PI and y.min() >= 0.0
    assert m.Circle().wrap(np.array([-1e-300, -0.0, 2 * PI])).max() < 2 * PI


# -- §3 unbiased optimal mechanism ------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("x0", [0.0, 0.3, 1.0])
def test_unbiased_mass_and_mean_by_integration(epsilon, x0):
    mech = m.OptimalUnbiased(epsilon=epsilon)
    assert integrate_moment(mech, x0, 0) == pytest.approx(1.0, abs=1e-10)
    assert integrate_moment(mech, x0, 1) == pytest.approx(x0, abs=1e-10)
    s = math.exp(epsilon / 2)
    c = (s + 1) / (s - 1)
    assert mech.output_domain.low == pytest.approx(-c, rel=1e-12)
    assert mech.output_domain.high == pytest.approx(c + 1, rel=1e-12)
    l = (c + 1) / 2 * x0 - (3 * c + 1) * (c - 1) / (4 * c)
    r = (c + 1) / 2 * x0 + (c + 1) * (c - 1) / (4 * c)
    assert float(mech._central_left(np.array(x0))) == pytest.approx(l, abs=1e-12)
    assert mech._central_width() == pytest.approx(r - l, rel=1e-12)
    assert mech._densities()[0] == pytest.approx(s / (2 * c + 1), rel=1e-12)


# -- §4 peers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_pm_formulas_and_unbiased(epsilon):
    mech = m.PiecewiseMechanism(epsilon=epsilon)
    s = math.exp(epsilon / 2)
    c = (s + 1) / (s - 1)
    assert mech.output_domain.high == pytest.approx(c, rel=1e-12)
    for x0 in (-1.0, -0.2, 0.7, 1.0):
        l = (c + 1) / 2 * x0 - (c - 1) / 2
        assert float(mech._central_left(np.array(x0))) == pytest.approx(l, abs=1e-12)
        assert integrate_moment(mech, x0, 0) == pytest.approx(1.0, abs=1e-10)
        assert integrate_moment(mech, x0, 1) == pytest.approx(x0, abs=1e-10)
    assert mech._central_width() == pytest.approx(c - 1, rel=1e-12)
    assert mech._densities()[0] == pytest.approx((math.exp(epsilon) - s) / (2 * s + 2), rel=1e-12)
    # PM is the member η = s + 1 of the type-I PTT family
    ptt = m.PTT(epsilon=epsilon, eta=s + 1)
    y = np.linspace(-c, c, 301)[1:-1]  # (at ±C both put the end point on different sides)
    x = np.linspace(-1, 1, 21)
    np.testing.assert_allclose(ptt.pdf(y[None, :], x[:, None]), mech.pdf(y[None, :], x[:, None]),
                               rtol=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_ptt_theorem4_member(epsilon):
    mech = m.PTT(epsilon=epsilon)
    eta = m.piecewise.ptt_theorem4_eta(epsilon)
    # η₀ − 1 is the real root of w³ − 3w − 2e^ε (Appendix A, f(η) = η³ − 3η² − 2(e^ε − 1))
    assert eta**3 - 3 * eta**2 - 2 * math.expm1(epsilon) == pytest.approx(0.0, abs=1e-9 * eta**3)
    k, a, bound = mech._standard()
    # Eq. (19): a = [e^ε/(q(e^ε − 1))] / (η₀ − 1) with the central mass q = e^ε/(k(e^ε − 1))
    central = math.exp(epsilon) / (k * math.expm1(epsilon))
    assert mech._central_mass() == pytest.approx(central, rel=1e-12)
    assert a == pytest.approx(math.exp(epsilon) / (central * math.expm1(epsilon)) / (eta - 1), rel=1e-12)
    assert bound == pytest.approx(k + a, rel=1e-12)
    for x0 in (-1.0, 0.4, 1.0):
        assert integrate_moment(mech, x0, 0) == pytest.approx(1.0, abs=1e-10)
        assert integrate_moment(mech, x0, 1) == pytest.approx(x0, abs=1e-9)
        # Theorem 3: Var = (k − 1)x² + a/(3(η − 1))·(η³/(e^ε − 1) + 1)
        var = (k - 1) * x0**2 + a / (3 * (eta - 1)) * (eta**3 / math.expm1(epsilon) + 1)
        assert mech.expected_error(x0, 2) == pytest.approx(var, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 5.0, 20.0])
def test_square_wave_b(epsilon):
    e = math.exp(epsilon)
    naive = (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
    rel = 1e-12 if epsilon >= 0.5 else 1e-6  # the naive form cancels for small ε
    assert m.SquareWave(epsilon=epsilon).b == pytest.approx(naive, rel=rel)
    mech = m.SquareWave(epsilon=epsilon)
    p, q = mech._densities()
    assert p == pytest.approx(e / (2 * mech.b * e + 1), rel=1e-12)
    assert q == pytest.approx(1 / (2 * mech.b * e + 1), rel=1e-12)


def test_square_wave_b_limits():
    from tracs.mechanisms.piecewise import square_wave_b

    assert square_wave_b(1e-6) == pytest.approx(0.5, abs=1e-6)
    assert m.SquareWave(epsilon=1e-3).b == pytest.approx(0.5, abs=1e-3)
    assert m.SquareWave(epsilon=50.0).b == pytest.approx(49 * math.exp(-50) / 2, rel=1e-12)


def test_duchi_formulas():
    eps = 1.3
    mech = m.Duchi(epsilon=eps)
    e = math.exp(eps)
    assert mech.outputs[1] == pytest.approx((e + 1) / (e - 1), rel=1e-12)
    for x0 in (-1.0, 0.25, 1.0):
        assert mech.pmf(mech.outputs[1], x0) == pytest.approx((e - 1) * x0 / (2 * (e + 1)) + 0.5, rel=1e-12)


def test_laplace_formulas():
    mech = m.Laplace(epsilon=2.0, low=1.0, high=4.0)
    assert mech.scale == pytest.approx(1.5)
    assert mech.expected_error(2.0, 1) == pytest.approx(1.5)
    assert mech.expected_error(2.0, 2) == pytest.approx(2 * 1.5**2)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0, 10.0])
def test_staircase_formulas(epsilon):
    mech = m.Staircase(epsilon=epsilon, low=0.0, high=2.0)
    s = math.exp(epsilon / 2)
    assert mech.step_fraction == pytest.approx(1 / (1 + s), rel=1e-12)
    g, delta = mech.step_fraction, 2.0
    a = (1 - math.exp(-epsilon)) / (2 * delta * (g + math.exp(-epsilon) * (1 - g)))
    assert mech._height() == pytest.approx(a, rel=1e-12)
    assert mech.expected_error(1.0, 1) == pytest.approx(delta * s / math.expm1(epsilon), rel=1e-9)
    # E Z² against direct summation over the steps
    k = np.arange(0, int(60 / epsilon) + 5)
    inner = ((k + g) ** 3 - k**3) / 3
    outer = ((k + 1) ** 3 - (k + g) ** 3) / 3
    second = 2 * a * delta**3 * np.sum(np.exp(-k * epsilon) * (inner + math.exp(-epsilon) * outer))
    assert mech.expected_error(1.0, 2) == pytest.approx(second, rel=1e-9)


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 2.0, 50.0])
def test_purkayastha_formulas(epsilon):
    mech = m.Purkayastha(epsilon=epsilon)
    assert mech.concentration == pytest.approx(epsilon / PI, rel=1e-12)
    d = np.linspace(0, PI, 7)
    density = mech.pdf(d, 0.0)
    np.testing.assert_allclose(density / density[0], np.exp(-epsilon / PI * d), rtol=1e-12)
    for p in (1, 2):
        exact, _ = integrate.quad(lambda t: 2 * t**p * float(mech.pdf(t, 0.0)), 0, PI,
                                  epsabs=1e-14, epsrel=1e-12)
        assert mech.worst_case_error(p) == pytest.approx(exact, rel=1e-9)


def test_krr_probabilities():
    mech = m.KRR(epsilon=2.0, k=6)
    e = math.exp(2.0)
    assert mech.keep_probability == pytest.approx(e / (e + 5), rel=1e-12)
    assert mech.other_probability == pytest.approx(1 / (e + 5), rel=1e-12)


# -- §5 budget split ---------------------------------------------------------------------------
def test_optimal_split_check_value():
    split = m.optimal_split(m.OptimalClassical, m.OptimalCircular, 1 + 2 * PI, p=2)
    assert split.first_epsilon == pytest.approx(1.30, abs=5e-3)
    assert split.second_epsilon == pytest.approx(5.98, abs=5e-3)
    assert split.first_epsilon + split.second_epsilon == pytest.approx(1 + 2 * PI, rel=1e-12)
    assert split.worst_case_error == pytest.approx(0.3651, abs=1e-4)
    # the minimum: nearby splits are worse
    for delta in (-0.05, 0.05):
        e1 = split.first_epsilon + delta
        other = (m.OptimalClassical(epsilon=e1).worst_case_error(2)
                 + m.OptimalCircular(epsilon=1 + 2 * PI - e1).worst_case_error(2))
        assert other > split.worst_case_error


def test_optimal_split_accepts_callables_and_validates():
    split = m.optimal_split(lambda e: m.OptimalClassical(epsilon=e, low=0, high=10),
                            lambda e: m.OptimalClassical(epsilon=e, low=0, high=10), 4.0, p=1)
    assert split.first_epsilon == pytest.approx(2.0, abs=1e-5)  # symmetric problem
    with pytest.raises(ValueError):
        m.optimal_split(m.OptimalClassical, m.OptimalCircular, 0.0)
    with pytest.raises(ValueError):
        m.optimal_split(m.OptimalClassical, m.OptimalCircular, 1.0, p=3)
    with pytest.raises(TypeError):
        m.optimal_split(3, m.OptimalCircular, 1.0)
