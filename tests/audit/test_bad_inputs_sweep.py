"""Bad and extreme API inputs: every case is a clear ValueError/TypeError or a correct sample.

A table of named bad inputs (each with its error class and a message fragment), then
hypothesis sweeps over ε (from 5e-324 to 1e6, NaN, ±inf, negatives, complex), inputs,
regions and offsets for every mechanism and perturber.  "Correct sample" means: finite,
on the public lattice (mechanisms) or inside the region (perturbers).  Never an
OverflowError, a ZeroDivisionError, a NaN output or a silent cast of a complex number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracs.mechanisms as m
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.region import ConvexRegion, Rectangle

MECHANISMS = {
    "OptimalClassical": lambda e: m.OptimalClassical(epsilon=e),
    "OptimalCircular": lambda e: m.OptimalCircular(epsilon=e),
    "OptimalUnbiased": lambda e: m.OptimalUnbiased(epsilon=e),
    "SquareWave": lambda e: m.SquareWave(epsilon=e),
    "PiecewiseMechanism": lambda e: m.PiecewiseMechanism(epsilon=e),
    "PTT": lambda e: m.PTT(epsilon=e),
    "Duchi": lambda e: m.Duchi(epsilon=e),
    "Laplace": lambda e: m.Laplace(epsilon=e),
    "Staircase": lambda e: m.Staircase(epsilon=e),
    "Purkayastha": lambda e: m.Purkayastha(epsilon=e),
    "KRR": lambda e: m.KRR(epsilon=e, k=4),
    "Truncated(Laplace)": lambda e: m.Truncated(m.Laplace(epsilon=e)),
    "Compressed(PM)": lambda e: m.Compressed(m.PiecewiseMechanism(epsilon=e)),
    "BoundedLaplace": lambda e: m.BoundedLaplace(epsilon=e),
    "IIPTT": lambda e: m.IIPTT(epsilon=e),
}
PERTURBERS = {"TraCSD": TraCSD, "TraCSC": TraCSC, "Strawman": Strawman, "PlanarLaplace": PlanarLaplace}
UNIT = Rectangle(0.0, 0.0, 1.0, 1.0)
CLEAR = (ValueError, TypeError)


def inputs_of(mech):
    if isinstance(mech, m.KRR):
        return np.arange(mech.k)
    dom = mech.input_domain
    high = dom.high if dom.contains(dom.high) else np.nextafter(dom.high, dom.low)
    return np.array([dom.low, 0.3 * dom.low + 0.7 * dom.high, high])


def check_release(mech, y):
    assert np.all(np.isfinite(y))
    lat = mech.lattice
    assert np.array_equal(lat.points(lat.index(y)), np.asarray(y, dtype=np.float64))


# -- the table -----------------------------------------------------------------------------
BAD_EPSILONS = [(5e-324, ValueError, "smallest supported budget"), (0.0, ValueError, "> 0"),
                (-1.0, ValueError, "> 0"), (math.nan, ValueError, "finite"),
                (math.inf, ValueError, "finite"), (-math.inf, ValueError, "finite"),
                (1 + 2j, ValueError, "complex"), (2000.0, ValueError, "exceeds"),
                (1e6, ValueError, "exceeds"), ("1", TypeError, "real number"),
                (None, TypeError, "real number"), (True, TypeError, "real number")]


@pytest.mark.parametrize("bad, error, fragment", BAD_EPSILONS, ids=[repr(b[0]) for b in BAD_EPSILONS])
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_bad_epsilon_of_a_mechanism(name, bad, error, fragment):
    with pytest.raises(error, match=fragment):
        MECHANISMS[name](bad)


@pytest.mark.parametrize("bad, error, fragment", BAD_EPSILONS, ids=[repr(b[0]) for b in BAD_EPSILONS])
@pytest.mark.parametrize("name", sorted(PERTURBERS))
def test_bad_epsilon_of_a_perturber(name, bad, error, fragment):
    if bad is None:  # epsilon=None asks for a per-trajectory budget instead
        error, fragment = TypeError, "exactly one"
    with pytest.raises(error, match=fragment):
        PERTURBERS[name](UNIT, bad)


BAD_REGIONS = [((0, 0, 1e308, 1), ValueError, "within"), ((-1e308, -1e308, 1e308, 1e308), ValueError, "within"),
               ((0, 0, math.nan, 1), ValueError, "finite"), ((0, 0, 1 + 1j, 1), ValueError, "real"),
               ((0, 0, math.inf, 1), ValueError, "finite"), ((0, 0, 5e-324, 1), ValueError, "at least"),
               ((1, 0, 0, 1), ValueError, "xmin < xmax")]


@pytest.mark.parametrize("bounds, error, fragment", BAD_REGIONS, ids=[str(b[0]) for b in BAD_REGIONS])
def test_bad_rectangle(bounds, error, fragment):
    with pytest.raises(error, match=fragment):
        Rectangle(*bounds)


@pytest.mark.parametrize("vertices, error, fragment", [
    ([(0, 0), (1e308, 0), (0, 1e308)], ValueError, "within"),
    ([(0, 0), (1, 0), (0, math.nan)], ValueError, "NaN"),
    ([(0, 0), (1, 0), (0, 1j)], ValueError, "complex"),
], ids=["huge", "nan", "complex"])
def test_bad_polygon(vertices, error, fragment):
    with pytest.raises(error, match=fragment):
        ConvexRegion(vertices)


BAD_SAMPLES = [([0.5 + 0.1j], ValueError, "complex"), ([math.nan], ValueError, "NaN"),
               ([math.inf], ValueError, "NaN or infinite"), (["a"], TypeError, "numeric")]


@pytest.mark.parametrize("x, error, fragment", BAD_SAMPLES, ids=["complex", "nan", "inf", "text"])
@pytest.mark.parametrize("name", sorted(set(MECHANISMS) - {"KRR"}))
def test_bad_inputs_to_sample(name, x, error, fragment):
    with pytest.raises(error, match=fragment):
        MECHANISMS[name](1.0).sample(x, rng=0)


BAD_POINTS = [(np.array([[0.5 + 1j, 0.5]]), [0, 1], ValueError, "complex"),
              (np.array([[math.nan, 0.5]]), [0, 1], ValueError, "NaN"),
              (np.array([[2.0, 0.5]]), [0, 1], ValueError, "outside"),
              (np.array([[0.5, 0.5]]), [0, 2], ValueError, "offsets"),
              (np.array([[0.5, 0.5]]), [0.0, 1.0], TypeError, "offsets"),
              (np.array([[0.5, 0.5]]), [1, 0], ValueError, "offsets")]


@pytest.mark.parametrize("points, offsets, error, fragment", BAD_POINTS,
                         ids=["complex", "nan", "outside", "long-offsets", "float-offsets", "bad-start"])
@pytest.mark.parametrize("name", sorted(PERTURBERS))
def test_bad_points_to_perturb(name, points, offsets, error, fragment):
    with pytest.raises(error, match=fragment):
        PERTURBERS[name](UNIT, 1.0).perturb_many(points, offsets, rng=0)


# -- sweeps --------------------------------------------------------------------------------
ANY_EPSILON = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=5e-324, max_value=1e-90),
    st.floats(min_value=1e-4, max_value=1e4),
    st.sampled_from([5e-324, 1e-300, 1e-100, 1e-3, 200.0, 400.0, 600.0, 700.0, 700.1, 2000.0, 1e6]),
    st.complex_numbers(max_magnitude=10.0).filter(lambda z: z.imag != 0),
)
SWEEP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SWEEP
@given(name=st.sampled_from(sorted(MECHANISMS)), epsilon=ANY_EPSILON, t=st.floats(0.0, 1.0))
def test_any_epsilon_any_input_to_a_mechanism(name, epsilon, t):
    try:
        mech = MECHANISMS[name](epsilon)
    except CLEAR as exc:
        assert str(exc)  # a message, never a bare error
        return
    xs = inputs_of(mech)
    x = np.concatenate([xs, [xs[0] + t * (xs[-1] - xs[0])]]) if not isinstance(mech, m.KRR) else xs
    y = mech.sample(x, rng=1)
    if isinstance(mech, m.KRR):
        assert np.all((y >= 0) & (y < mech.k))
    else:
        check_release(mech, y)


REGIONS = st.one_of(
    st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(1e-3, 1e6), st.floats(1e-3, 1e6)),
    st.sampled_from([(0.0, 0.0, 1e-140, 1e-140), (-1e149, -1e149, 1e149, 1e149), (0.0, 0.0, 1.0, 1e12)]),
)


@SWEEP
@given(name=st.sampled_from(sorted(PERTURBERS)), epsilon=ANY_EPSILON, box=REGIONS,
       lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4), seed=st.integers(0, 2**32 - 1))
def test_any_epsilon_any_region_to_a_perturber(name, epsilon, box, lengths, seed):
    x0, y0, w, h = box
    region = Rectangle(x0, y0, x0 + w, y0 + h) if len(box) == 4 and w > 0 else None
    if region is None or not (region.xmin < region.xmax and region.ymin < region.ymax):
        return
    try:
        perturber = PERTURBERS[name](region, epsilon)
    except CLEAR as exc:
        assert str(exc)
        return
    n = sum(lengths)
    if n == 0:
        with pytest.raises(ValueError, match="empty"):
            perturber.perturb_many(np.zeros((0, 2)), [0] * (len(lengths) + 1), rng=seed)
        return
    rng = np.random.default_rng(seed)
    pts = np.column_stack([rng.uniform(region.xmin, region.xmax, n), rng.uniform(region.ymin, region.ymax, n)])
    pts[0] = (region.xmin, region.ymax)  # a corner
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    out = perturber.perturb_many(pts, offsets, rng=seed)
    assert out.shape == pts.shape and np.all(np.isfinite(out)) and np.all(region.contains(out))


@SWEEP
@given(name=st.sampled_from(sorted(PERTURBERS)), epsilon=ANY_EPSILON)
def test_any_per_trajectory_budget(name, epsilon):
    """Per-trajectory budgets shared out over lengths 1..1000: errors name the limit."""
    try:
        perturber = PERTURBERS[name](UNIT, epsilon_per_trajectory=epsilon)
    except CLEAR as exc:
        assert str(exc)
        return
    lengths = [1, 3, 1000]
    pts = np.full((sum(lengths), 2), 0.25)
    try:
        out = perturber.perturb_many(pts, np.concatenate([[0], np.cumsum(lengths)]), rng=2)
    except ValueError as exc:
        assert "exceeds" in str(exc) or "smallest" in str(exc) or "below" in str(exc)
        return
    assert np.all(np.isfinite(out)) and np.all(UNIT.contains(out))
