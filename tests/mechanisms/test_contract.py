"""The contract every continuous one-dimensional mechanism obeys, checked on all of them.

* privacy: exact density ratio ``pdf(y|x1) <= e^ε pdf(y|x2)`` (relative tolerance
  1e-9, floating-point rounding only) on 201 inputs (end points included) × 2,401
  outputs at ε ∈ {1e-3, 0.5, 1, 2, 5, 10, 20, 50}, and the same for point masses;
* the density plus point masses integrates to 1;
* the cdf matches samples (Kolmogorov–Smirnov, fixed seed, α = 1e-3 per test;
  with point masses the KS p-value is conservative, so point-mass frequencies
  are checked separately with a binomial bound);
* ``expected_error`` matches the Monte Carlo mean error (5 standard errors);
* outputs lie in the output domain for every ε from 1e-6 to 50; same seed, same
  samples; invalid parameters and inputs raise.

The discrete-output mechanisms (k-RR, Duchi) get the same contract with their
pmf: exact ratio per output, sums to 1, chi-square fit of samples (α = 1e-3),
expected error against Monte Carlo, reproducibility, invalid ε.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _quadrature import integrate_moment
from scipy import stats

import tracs.mechanisms as m
from tracs.methods import MECHANISM, view

# name -> factory(epsilon) ; non-default domains included on purpose
CASES = {
    "OptimalClassical": lambda e: m.OptimalClassical(epsilon=e),
    "OptimalClassical[-3,5]": lambda e: m.OptimalClassical(epsilon=e, low=-3.0, high=5.0),
    "OptimalCircular": lambda e: m.OptimalCircular(epsilon=e),
    "OptimalCircular[T=360]": lambda e: m.OptimalCircular(epsilon=e, period=360.0),
    "OptimalClassical[square,-3,5]": lambda e: m.OptimalClassical(epsilon=e, low=-3.0, high=5.0, loss="square"),
    "OptimalCircular[square]": lambda e: m.OptimalCircular(epsilon=e, loss="square"),
    "OptimalUnbiased": lambda e: m.OptimalUnbiased(epsilon=e),
    "SquareWave": lambda e: m.SquareWave(epsilon=e),
    "SquareWave[2,4]": lambda e: m.SquareWave(epsilon=e, low=2.0, high=4.0),
}
for _name in ["PiecewiseMechanism", "PTT", "Laplace", "Staircase", "Purkayastha", "BoundedLaplace", "IIPTT"]:
    CASES[_name] = (lambda cls: lambda e: cls(epsilon=e))(getattr(m, _name))
CASES["Compressed(PM)"] = lambda e: m.Compressed(m.PiecewiseMechanism(epsilon=e))
CASES["Compressed(SW)"] = lambda e: m.Compressed(m.SquareWave(epsilon=e))
CASES["Truncated(PM)"] = lambda e: m.Truncated(m.PiecewiseMechanism(epsilon=e))
CASES["Truncated(SW)"] = lambda e: m.Truncated(m.SquareWave(epsilon=e))
CASES["Truncated(Laplace)"] = lambda e: m.Truncated(m.Laplace(epsilon=e))
CASES["Truncated(Staircase)"] = lambda e: m.Truncated(m.Staircase(epsilon=e, low=-1.0, high=2.0))

NAMES = sorted(CASES)


def budget_range(name) -> tuple[float, float]:
    """``(min_epsilon, max_epsilon)`` the mechanism accepts (errors name them beyond)."""
    mech = CASES[name](1.0)
    return mech.min_epsilon, mech.max_epsilon


def make_or_refuse(name, epsilon):
    """The mechanism at ``epsilon``, or ``None`` after checking the ValueError that names the limit."""
    low, high = budget_range(name)
    if epsilon < low:
        with pytest.raises(ValueError, match="smallest budget"):
            CASES[name](epsilon)
        return None
    if epsilon > high:
        with pytest.raises(ValueError, match="exceeds"):
            CASES[name](epsilon)
        return None
    return CASES[name](epsilon)
PRIVACY_EPSILONS = [1e-3, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
RTOL = 1e-9
MANY_LEVELS = {"Staircase", "Truncated(Staircase)"}


def input_grid(mech, n: int = 201) -> np.ndarray:
    """``n`` inputs spanning the input domain, both end points included."""
    dom = mech.input_domain
    grid = np.linspace(dom.low, dom.high, n)
    if not dom.contains(dom.high):  # the circle: the largest float below the period
        grid[-1] = np.nextafter(dom.high, dom.low)
    return grid


def output_grid(mech, n: int = 2401) -> np.ndarray:
    """Outputs covering the output domain (or a wide window of the real line)."""
    dom, inp = mech.output_domain, mech.input_domain
    if math.isfinite(dom.low) and math.isfinite(dom.high):
        lo, hi = dom.low, dom.high
    else:
        width = inp.high - inp.low
        lo, hi = inp.low - 4 * width, inp.high + 4 * width
    grid = np.linspace(lo, hi, n)
    if not dom.contains(hi):
        grid = grid[:-1]
    return grid


# -- privacy -----------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", PRIVACY_EPSILONS)
@pytest.mark.parametrize("name", NAMES)
def test_density_ratio_is_bounded(name, epsilon):
    mech = CASES[name](epsilon)
    x = input_grid(mech)
    y = output_grid(mech)
    if name in MANY_LEVELS:
        # the staircase density has many levels: an output within one rounding
        # error of a step edge can land one step off for one input when |y - x|
        # is rounded.  That is a property of evaluating the density in floating
        # point, not of the sampler (which draws the step index exactly), so the
        # straddling points below are left out for it.
        edges = np.empty(0)
    else:
        # add outputs straddling every end point of every input's pieces
        edges = np.concatenate([mech._breakpoints(np.array(xi)) for xi in x[::10]]).ravel()
    edges = edges[np.isfinite(edges)]
    extra = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)])
    extra = extra[mech.output_domain.contains(extra)]
    y = np.concatenate([y, extra])
    density = mech.pdf(y[None, :], x[:, None])  # (inputs, outputs)
    assert np.all(np.isfinite(density)) and np.all(density >= 0)
    top, bottom = density.max(axis=0), density.min(axis=0)
    bound = math.exp(epsilon) * bottom * (1 + RTOL)
    worst = np.argmax(top - bound)
    assert np.all(top <= bound), f"ratio violated at y={y[worst]}: {top[worst]} vs {bottom[worst]}"


@pytest.mark.parametrize("epsilon", PRIVACY_EPSILONS)
@pytest.mark.parametrize("name", NAMES)
def test_atom_ratio_is_bounded(name, epsilon):
    mech = CASES[name](epsilon)
    x = input_grid(mech)
    per_input = [mech.atoms(xi) for xi in x]
    locations = per_input[0][0]
    if locations.size == 0:
        assert all(loc.size == 0 for loc, _ in per_input)
        return
    masses = np.array([mass for _, mass in per_input])  # (inputs, atoms)
    for loc, _ in per_input:
        np.testing.assert_array_equal(loc, locations)  # atoms sit at fixed public places
    assert np.all(masses > 0)
    assert np.all(masses.max(axis=0) <= math.exp(epsilon) * masses.min(axis=0) * (1 + RTOL))


# -- normalisation -----------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 5.0, 20.0])
@pytest.mark.parametrize("name", NAMES)
def test_density_integrates_to_one(name, epsilon):
    # (at ε = 50 the Square Wave window, 1e-21 wide, is below float resolution:
    #  its mass is checked through the closed-form cdf instead, below)
    mech = CASES[name](epsilon)
    dom = mech.output_domain
    for x0 in input_grid(mech, 5):
        x0 = float(x0)
        atoms = float(np.sum(mech.atoms(x0)[1]))
        if math.isfinite(dom.low) and math.isfinite(dom.high):
            assert integrate_moment(mech, x0, dom.low, dom.high) + atoms == pytest.approx(1.0, abs=1e-7)
        else:
            # the real line: the density over x0 ± 3Δ must match the cdf there
            # (whose limits 0 and 1 at ±infinity are checked below)
            reach = 3.0 * (mech.input_domain.high - mech.input_domain.low)
            lo, hi = x0 - reach, x0 + reach
            expected = float(mech.cdf(hi, x0) - mech.cdf(lo, x0))
            assert integrate_moment(mech, x0, lo, hi) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 1.0, 50.0])
@pytest.mark.parametrize("name", NAMES)
def test_cdf_runs_from_zero_to_one(name, epsilon):
    mech = make_or_refuse(name, epsilon)
    if mech is None:
        return
    x = input_grid(mech, 11)
    dom = mech.output_domain
    below = np.nextafter(dom.low, -np.inf) if math.isfinite(dom.low) else -1e300
    above = dom.high if math.isfinite(dom.high) else 1e300
    np.testing.assert_allclose(mech.cdf(below, x), 0.0, atol=1e-12)
    np.testing.assert_allclose(mech.cdf(above, x), 1.0, atol=1e-12)
    y = output_grid(mech, 501)
    values = mech.cdf(y[None, :], x[:, None])
    assert np.all(np.diff(values, axis=1) >= -1e-12)  # non-decreasing


# -- sampling ----------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 1.0, 20.0, 50.0])
@pytest.mark.parametrize("name", NAMES)
def test_samples_inside_output_domain(name, epsilon):
    mech = make_or_refuse(name, epsilon)
    if mech is None:
        return
    x = np.repeat(input_grid(mech, 21), 2000)
    y = mech.sample(x, rng=1)
    assert y.shape == x.shape and y.dtype == np.float64
    assert np.all(np.isfinite(y))
    assert np.all(mech.output_domain.contains(y))
    lat = mech.lattice  # every release is a lattice value, bit for bit
    assert np.array_equal(lat.points(lat.index(y)), y)


KS_N = 100_000
KS_ALPHA = 1e-3


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
@pytest.mark.parametrize("name", NAMES)
def test_samples_follow_cdf(name, epsilon):
    mech = CASES[name](epsilon)
    dom = mech.input_domain
    inputs = [float(v) for v in input_grid(mech, 5)]  # end points + three inner points
    for i, x0 in enumerate(inputs):
        y = mech.sample(np.full(KS_N, x0), rng=1000 + i)
        locations, masses = mech.atoms(x0)
        # point masses sit on the end lattice points (the clipped releases)
        lat = mech.lattice
        locations = lat.points(np.clip(lat.index(locations), 0, lat.count - 1))
        inside = ~np.isin(y, locations)
        for loc, mass in zip(locations, masses):
            # point masses: binomial bound of 5 standard deviations (plus 1 count)
            hits = np.count_nonzero(y == loc)
            sd = math.sqrt(KS_N * mass * (1 - mass))
            assert abs(hits - KS_N * mass) <= 5 * sd + 1, f"atom at {loc}: {hits} vs {KS_N * mass}"
        # continuous part: KS against the cdf conditioned on missing the point masses
        # (scipy's KS assumes a continuous cdf; with the atoms left in it would not apply)
        rest = 1.0 - float(np.sum(masses))

        def conditional_cdf(t, x0=x0, locations=locations, masses=masses, rest=rest):
            t = np.asarray(t, dtype=float)
            under = np.sum(masses * (locations <= t[..., None]), axis=-1)
            return (mech.cdf(t, x0) - under) / rest

        result = stats.kstest(y[inside], conditional_cdf)
        assert result.pvalue > KS_ALPHA, f"x={x0}: KS D={result.statistic:.4g}"
    assert dom is not None


MC_N = 200_000


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
@pytest.mark.parametrize("name", NAMES)
def test_expected_error_matches_monte_carlo(name, epsilon):
    mech = CASES[name](epsilon)
    inputs = input_grid(mech, 3)
    dist = mech.output_domain.distance
    for p in (1, 2):
        exact = mech.expected_error(inputs, p)
        assert exact.shape == inputs.shape
        for x0, e0 in zip(inputs, exact):
            err = dist(mech.sample(np.full(MC_N, x0), rng=5), x0) ** p
            # tolerance: 5 standard errors of the Monte Carlo mean
            tol = 5 * err.std() / math.sqrt(MC_N) + 1e-12
            assert abs(err.mean() - e0) <= tol, f"x={x0}, p={p}: MC {err.mean()} vs {e0}"
        assert mech.worst_case_error(p) >= exact.max() * (1 - 1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_samples(name):
    mech = CASES[name](1.0)
    x = np.resize(input_grid(mech, 50), (20, 50))
    a = mech.sample(x, rng=42)
    np.testing.assert_array_equal(a, mech.sample(x, rng=42))
    # a Generator gives a seed drawn from it: the same state, the same samples
    np.testing.assert_array_equal(mech.sample(x, rng=np.random.default_rng(42)),
                                  mech.sample(x, rng=np.random.default_rng(42)))
    assert not np.array_equal(a, mech.sample(x, rng=43))
    assert a.shape == (20, 50)
    assert mech.sample(np.float64(x[0, 0]), rng=1).shape == ()


# -- invalid parameters and inputs ---------------------------------------------------------
@pytest.mark.parametrize("bad, error", [(0.0, ValueError), (-1.0, ValueError), (math.nan, ValueError),
                                        (math.inf, ValueError), ("1", TypeError), (None, TypeError)])
@pytest.mark.parametrize("name", NAMES)
def test_invalid_epsilon(name, bad, error):
    with pytest.raises(error):
        CASES[name](bad)


@pytest.mark.parametrize("name", NAMES)
def test_invalid_inputs(name):
    mech = CASES[name](1.0)
    dom = mech.input_domain
    width = dom.high - dom.low
    for bad in ([dom.low - 0.01 * width], [dom.high + 0.01 * width], [math.nan], [math.inf]):
        with pytest.raises(ValueError):
            mech.sample(bad)
        with pytest.raises(ValueError):
            mech.pdf(0.0, bad)
    with pytest.raises(TypeError):
        mech.sample(["a"])
    with pytest.raises(ValueError):
        mech.expected_error(dom.low, p=3)


@pytest.mark.parametrize("cls", [m.OptimalClassical, m.OptimalUnbiased, m.SquareWave, m.PiecewiseMechanism,
                                 m.PTT, m.Laplace, m.Staircase])
def test_invalid_interval(cls):
    for low, high in [(1.0, 1.0), (2.0, 1.0), (math.nan, 1.0), (0.0, math.inf)]:
        with pytest.raises(ValueError):
            cls(epsilon=1.0, low=low, high=high)
    with pytest.raises(TypeError):
        cls(epsilon=1.0, low="0", high=1.0)


def test_every_mechanism_is_covered():
    exported = {name for name in m.__all__ if isinstance(getattr(m, name), type)}
    continuous = {name for name in exported if issubclass(getattr(m, name), m.Mechanism)}
    abstract = {"Mechanism", "PiecewiseConstantMechanism"}
    covered = {name.split("[")[0].split("(")[0] for name in CASES}
    assert continuous - abstract <= covered


# -- discrete outputs (k-RR, Duchi): the same contract with a pmf -----------------------------
DISCRETE = {
    "KRR(k=2)": lambda e: m.KRR(epsilon=e, k=2),
    "KRR(k=6)": lambda e: m.KRR(epsilon=e, k=6),
    "KRR(k=1000)": lambda e: m.KRR(epsilon=e, k=1000),
    "Duchi": lambda e: m.Duchi(epsilon=e),
    "Duchi[3,7.5]": lambda e: m.Duchi(epsilon=e, low=3.0, high=7.5),
}
DISCRETE_NAMES = sorted(DISCRETE)


def discrete_grids(mech):
    """``(inputs, outputs)``: every value for k-RR; 201 inputs and the two outputs for Duchi."""
    if isinstance(mech, m.KRR):
        values = np.arange(mech.k)
        return values, values
    return np.linspace(mech.low, mech.high, 201), np.array(mech.outputs)


@pytest.mark.parametrize("epsilon", [1e-6] + PRIVACY_EPSILONS)
@pytest.mark.parametrize("name", DISCRETE_NAMES)
def test_pmf_sums_to_one_and_ratio_is_bounded(name, epsilon):
    mech = DISCRETE[name](epsilon)
    x, y = discrete_grids(mech)
    table = mech.pmf(y[None, :], x[:, None])  # (inputs, outputs)
    np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(table > 0)
    assert np.all(table.max(axis=0) <= math.exp(epsilon) * table.min(axis=0) * (1 + RTOL))


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
@pytest.mark.parametrize("name", DISCRETE_NAMES)
def test_discrete_samples_follow_pmf(name, epsilon):
    # chi-square goodness of fit (outputs with expected count < 5 pooled), alpha = 1e-3
    mech = DISCRETE[name](epsilon)
    x, y = discrete_grids(mech)
    n = 60_000
    for i, x0 in enumerate([x[0], x[len(x) // 3], x[-1]]):
        sample = mech.sample(np.full(n, x0), rng=200 + i)
        counts = np.array([np.count_nonzero(sample == v) for v in y])
        assert counts.sum() == n  # nothing outside the output set
        expected = n * mech.pmf(y, x0)
        small = expected < 5
        if small.any():
            counts = np.append(counts[~small], counts[small].sum())
            expected = np.append(expected[~small], expected[small].sum())
        assert stats.chisquare(counts, expected).pvalue > KS_ALPHA


@pytest.mark.parametrize("name", DISCRETE_NAMES)
def test_discrete_expected_error_matches_monte_carlo(name):
    mech = DISCRETE[name](1.0)
    x, _ = discrete_grids(mech)
    dist = (lambda a, b: (a != b).astype(float)) if isinstance(mech, m.KRR) else (lambda a, b: np.abs(a - b))
    for p in (1, 2):
        for x0 in (x[0], x[len(x) // 2], x[-1]):
            err = dist(mech.sample(np.full(MC_N, x0), rng=9), x0) ** p
            tol = 5 * err.std() / math.sqrt(MC_N) + 1e-12  # 5 standard errors
            assert abs(err.mean() - float(mech.expected_error(x0, p))) <= tol
            assert mech.worst_case_error(p) >= float(mech.expected_error(x0, p)) * (1 - 1e-12)


@pytest.mark.parametrize("name", DISCRETE_NAMES)
def test_discrete_same_seed_same_samples(name):
    mech = DISCRETE[name](1.0)
    x = np.resize(discrete_grids(mech)[0], (30, 40))
    a = mech.sample(x, rng=42)
    assert a.shape == x.shape
    np.testing.assert_array_equal(a, mech.sample(x, rng=42))
    assert not np.array_equal(a, mech.sample(x, rng=43))


@pytest.mark.parametrize("bad, error", [(0.0, ValueError), (-1.0, ValueError), (math.nan, ValueError),
                                        (math.inf, ValueError), ("1", TypeError), (None, TypeError)])
@pytest.mark.parametrize("name", DISCRETE_NAMES)
def test_discrete_invalid_epsilon(name, bad, error):
    with pytest.raises(error):
        DISCRETE[name](bad)


def _shape(mech) -> tuple:
    """A mechanism's class, and its wrapped mechanism's for an output transform."""
    inner = getattr(mech, "mechanism", None)
    return (type(mech), None if inner is None else _shape(inner))


@pytest.mark.parametrize("name", list(view(MECHANISM)))
def test_every_registered_mechanism_is_in_the_contract(name):
    """Each 1-D mechanism of the registry (tracs.methods) is built by some case above: a
    mechanism registered without a contract case fails here, by name."""
    covered = {_shape(factory(1.0)) for factory in (*CASES.values(), *DISCRETE.values())}
    assert _shape(view(MECHANISM)[name].build(None, 1.0)) in covered, f"{name} has no contract case"
