"""The square-error optimal piecewise mechanism (``loss="square"``).

* brute force: a grid over the reduced form's parameters (central density, density
  ratio, placement of the central piece) finds no worst-case square error below the
  optimiser's, to a relative 1e-9, and comes within 1 % of it;
* the optimiser's density solves the first-order condition
  ``(a − 2)p³ + 3ap − 2a² = 0`` (``a = e^ε``) to a relative 1e-7, and has the limits
  ``u → 1 − 1/√3`` (ε → 0) and ``u → 1/3`` (ε → ∞);
* each loss's mechanism is the better one for its own loss;
* ε-LDP: density ratio ``e^ε`` exactly (relative 1e-12) and the lattice pmf bound
  (also in ``test_contract.py`` / ``test_lattice.py``, where both are parametrised);
* ``expected_error(x, 2)`` agrees with Monte Carlo (seed 11, 400,000 draws, 5 standard
  errors);
* the square-error staircase comparison: the optimal GPM's worst case is below the
  ``x²``-optimal staircase's at every ε of the paper's range;
* bad inputs raise ``ValueError`` naming ``loss``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import tracs.mechanisms as m
from tracs.mechanisms.optimal_square import square_exponent, square_shape, worst_square_error

EPSILONS = [0.1, 0.5, 1.0, 2.5, 5.0, 10.0]


def err_three_piece(x, p, q, left, width):
    """``E(Y − x)²`` on [0, 1] of density ``p`` on ``[left, left + width)`` and ``q`` elsewhere."""
    return q * ((1 - x) ** 3 + x**3) / 3 + (p - q) * ((left + width - x) ** 3 - (left - x) ** 3) / 3


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.5, 5.0])
def test_brute_force_grid_finds_nothing_better(epsilon):
    """Grid: 201 central densities ``p = e^{εu}``, 21 ratios ``q = p·e^{−kε}`` (k ∈ [0, 1]),
    21 placements per input, 21 inputs; worst case = max over inputs of the best placement."""
    u = np.linspace(0.0, 1.0, 201)[:, None, None, None]
    k = np.linspace(0.0, 1.0, 21)[None, :, None, None]
    frac = np.linspace(0.0, 1.0, 21)[None, None, :, None]
    x = np.linspace(0.0, 1.0, 21)[None, None, None, :]
    p = np.exp(epsilon * u)
    q = p * np.exp(-k * epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(p > q, (1 - q) / (p - q), 1.0)  # p = q: the uniform density
    feasible = (width >= 0) & (width <= 1)
    # the placement grid includes the centred, clipped placement of every input
    centred = np.clip(x - width / 2, 0.0, 1.0 - width)
    lefts = np.concatenate([frac * (1 - width) + 0 * x, centred + 0 * frac[..., :1, :]], axis=2)
    errors = err_three_piece(x, p, q, lefts, width)
    worst = np.where(feasible[..., 0, 0], errors.min(axis=2).max(axis=-1), np.inf)
    best_grid = float(worst.min())
    ours = m.OptimalClassical(epsilon=epsilon, loss="square").worst_case_error(2)
    assert ours <= best_grid * (1 + 1e-9)
    assert best_grid <= ours * 1.01  # the grid is fine enough to mean something
    assert ours == pytest.approx(worst_square_error(epsilon), rel=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS + [20.0])
def test_first_order_condition(epsilon):
    a = math.exp(epsilon)
    root = brentq(lambda p: ((a - 2) * p**3 + 3 * a * p - 2 * a * a) / a**2, 1.0, a, xtol=1e-14, rtol=1e-15)
    assert square_shape(epsilon).high == pytest.approx(root, rel=1e-7)


def test_limits_and_monotone_exponent():
    assert square_exponent(1e-6) == pytest.approx(1 - 1 / math.sqrt(3), abs=1e-6)
    assert square_exponent(700.0) == pytest.approx(1 / 3, abs=1e-3)
    us = [square_exponent(e) for e in (0.01, 0.1, 1.0, 5.0, 20.0, 100.0)]
    assert all(a > b for a, b in zip(us, us[1:]))


@pytest.mark.parametrize("epsilon", [1e-100, 1e-3, 1.0, 50.0, 700.0])
def test_shape_is_normalised_at_every_budget(epsilon):
    shape = square_shape(epsilon)
    assert shape.central_mass + shape.side_mass == pytest.approx(1.0, abs=1e-12)
    assert shape.high * shape.width == pytest.approx(shape.central_mass, rel=1e-12)
    assert 0.0 < shape.width < 1.0
    assert shape.high / shape.low <= math.exp(epsilon) * (1 + 1e-15)
    if epsilon >= 1e-3:  # below, both densities round to 1
        assert math.log(shape.high) - math.log(shape.low) == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_each_loss_wins_its_own_worst_case(epsilon):
    for cls, kw in [(m.OptimalClassical, {"low": -3.0, "high": 5.0}), (m.OptimalCircular, {})]:
        square = cls(epsilon=epsilon, loss="square", **kw)
        absolute = cls(epsilon=epsilon, **kw)
        assert square.worst_case_error(2) < absolute.worst_case_error(2)
        assert absolute.worst_case_error(1) < square.worst_case_error(1)


def test_square_gain_grows_with_epsilon():
    """The square-error optimum decays like e^{-2ε/3}, Theorem 3.7's like e^{-ε/2}."""
    ratio = [m.OptimalClassical(epsilon=e, loss="square").worst_case_error(2)
             / m.OptimalClassical(epsilon=e).worst_case_error(2) for e in (1.0, 5.0, 10.0, 20.0)]
    assert all(a > b for a, b in zip(ratio, ratio[1:]))
    assert ratio[-1] < 0.1


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_circle_is_the_reduced_interval_problem(epsilon):
    """Figure 5 / Lemma 4.1: the circle's constant error is a quarter of the interval's
    end-point error (period 1), so both use the same central density."""
    circle = m.OptimalCircular(epsilon=epsilon, period=1.0, loss="square")
    x = np.linspace(0.0, 0.999, 7)
    np.testing.assert_allclose(circle.expected_error(x, 2), worst_square_error(epsilon) / 4, rtol=1e-12)
    numeric = m.Mechanism._expected_error(circle, x, 2)  # quadrature of the density
    np.testing.assert_allclose(numeric, worst_square_error(epsilon) / 4, rtol=1e-9)
    scaled = m.OptimalCircular(epsilon=epsilon, loss="square")
    assert scaled.worst_case_error(2) == pytest.approx(worst_square_error(epsilon) / 4 * (2 * math.pi) ** 2,
                                                       rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 3.0, 20.0])
def test_density_ratio_is_exactly_e_to_epsilon(epsilon):
    for mech in (m.OptimalClassical(epsilon=epsilon, loss="square"),
                 m.OptimalCircular(epsilon=epsilon, loss="square")):
        y = np.linspace(0.0, 1.0, 501) * (mech.output_domain.high - mech.output_domain.low) * 0.999
        dens = mech.pdf(y[None, :], np.linspace(0.0, 0.99, 41)[:, None] * mech.input_domain.high)
        ratio = dens.max(axis=0) / dens.min(axis=0)
        assert ratio.max() <= math.exp(epsilon) * (1 + 1e-12)
        assert ratio.max() == pytest.approx(math.exp(epsilon), rel=1e-12)


def test_lattice_release_unchanged():
    mech = m.OptimalClassical(epsilon=1.5, loss="square", resolution=1 / 63)
    pmfs = np.array([mech.lattice_pmf(x) for x in (0.0, 0.3, 1.0)])
    np.testing.assert_allclose(pmfs.sum(axis=1), 1.0, atol=1e-12)
    assert (pmfs.max(axis=0) / pmfs.min(axis=0)).max() <= math.exp(1.5) * (1 + 1e-12)
    y = mech.sample(np.full(1000, 0.3), rng=4)
    np.testing.assert_array_equal(mech.lattice.points(mech.lattice.index(y)), y)


MC_N = 400_000


@pytest.mark.parametrize("epsilon", [0.7, 4.0])
def test_expected_square_error_matches_monte_carlo(epsilon):
    for mech in (m.OptimalClassical(epsilon=epsilon, low=-3.0, high=5.0, loss="square"),
                 m.OptimalCircular(epsilon=epsilon, loss="square")):
        for x0 in (mech.input_domain.low, 0.37 * mech.input_domain.high, np.nextafter(mech.input_domain.high, 0)):
            err = mech.output_domain.distance(mech.sample(np.full(MC_N, x0), rng=11), x0) ** 2
            tol = 5 * err.std() / math.sqrt(MC_N)
            assert abs(err.mean() - float(mech.expected_error(x0, p=2))) <= tol, (mech, x0)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0])
def test_below_the_square_error_staircase(epsilon):
    """The paper's staircase comparison under (y − x)²: the staircase with its x²-optimal
    step fraction (Geng & Viswanath), worst case over [0, 1], stays above the optimal GPM."""
    stair = m.Staircase(epsilon=epsilon, gamma=m.staircase_square_gamma(epsilon))
    ours = m.OptimalClassical(epsilon=epsilon, loss="square").worst_case_error(2)
    assert ours < stair.worst_case_error(2)
    assert stair.worst_case_error(2) <= m.Staircase(epsilon=epsilon).worst_case_error(2)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_staircase_square_gamma_minimises_the_square_error(epsilon):
    res = minimize_scalar(lambda g: float(m.Staircase(epsilon=epsilon, gamma=g).expected_error(0.5, 2)),
                          bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-11})
    assert m.staircase_square_gamma(epsilon) == pytest.approx(res.x, abs=1e-6)


@pytest.mark.parametrize("make, error, fragment", [
    (lambda: m.OptimalClassical(epsilon=1.0, loss="cube"), ValueError, "loss must be"),
    (lambda: m.OptimalClassical(epsilon=1.0, loss="Square"), ValueError, "'Square'"),
    (lambda: m.OptimalClassical(epsilon=1.0, loss=None), ValueError, "loss must be"),
    (lambda: m.OptimalCircular(epsilon=1.0, loss=2), ValueError, "loss must be"),
    (lambda: m.OptimalCircular(epsilon=1.0, loss="cube"), ValueError, "'absolute'"),
    (lambda: m.OptimalClassical(epsilon=0.0, loss="square"), ValueError, "epsilon"),
    (lambda: m.OptimalClassical(epsilon=1.0, low=1.0, high=1.0, loss="square"), ValueError, "low < high"),
    (lambda: m.OptimalCircular(epsilon=1.0, period=-1.0, loss="square"), ValueError, "period"),
    (lambda: m.OptimalClassical(epsilon=1.0, loss="square").expected_error(0.5, p=3), ValueError, "p must be"),
])
def test_bad_inputs(make, error, fragment):
    with pytest.raises(error, match=fragment):
        make()


def test_default_is_unchanged():
    a, b = m.OptimalClassical(epsilon=2.0), m.OptimalClassical(epsilon=2.0, loss="absolute")
    assert a == b and a.half_width == 0.5 / (math.exp(1.0) + 1.0)
    assert a.sample(np.linspace(0, 1, 50), rng=3).tolist() == b.sample(np.linspace(0, 1, 50), rng=3).tolist()


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_random_five_piece_mechanisms_do_no_better(epsilon):
    """2,000 random five-piece GPMs (seed 8): densities ``m·e^{εt_i}``, random lengths,
    normalised; arranged at x = 0 in the best order (densities falling from 0), their
    error at x = 0 — a lower bound of their worst case — is never below ours."""
    rng = np.random.default_rng(8)
    t = rng.uniform(0.0, 1.0, (2000, 5))
    t[:, 0], t[:, 1] = 0.0, 1.0  # use the whole ratio e^ε
    lengths = rng.dirichlet(np.ones(5), 2000)
    dens = np.exp(epsilon * t)
    dens /= (dens * lengths).sum(axis=1, keepdims=True)
    order = np.argsort(-dens, axis=1)
    dens, lengths = np.take_along_axis(dens, order, 1), np.take_along_axis(lengths, order, 1)
    right = np.cumsum(lengths, axis=1)
    left = right - lengths
    at_zero = (dens * (right**3 - left**3) / 3).sum(axis=1)
    assert at_zero.min() >= worst_square_error(epsilon) * (1 - 1e-12)
