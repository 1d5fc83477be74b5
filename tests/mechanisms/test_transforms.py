"""The output transforms Compressed and Truncated: construction, closed forms, post-processing."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracs.mechanisms as m


def test_wrappers_reject_what_they_cannot_transform():
    with pytest.raises(TypeError):
        m.Compressed(m.Laplace(epsilon=1.0))  # unbounded output
    with pytest.raises(TypeError):
        m.Truncated(m.OptimalCircular(epsilon=1.0))  # no interval input
    with pytest.raises(TypeError):
        m.Truncated(m.KRR(epsilon=1.0, k=3))  # not a continuous mechanism
    with pytest.raises(TypeError):
        m.Compressed("PM")


def test_wrappers_forward_epsilon_and_domains():
    pm = m.PiecewiseMechanism(epsilon=2.0, low=0.0, high=4.0)
    for wrapper in (m.Compressed(pm), m.Truncated(pm)):
        assert wrapper.epsilon == 2.0
        assert wrapper.input_domain == pm.input_domain
        assert wrapper.output_domain == pm.input_domain
        assert repr(wrapper).startswith(type(wrapper).__name__ + "(PiecewiseMechanism(")


def test_compressed_is_the_linear_image():
    sw = m.SquareWave(epsilon=1.5)
    comp = m.Compressed(sw)
    A, B = sw.output_domain.low, sw.output_domain.high
    x = np.linspace(0, 1, 9)[:, None]
    y = np.linspace(0.001, 0.999, 301)[None, :]
    inner_y = A + y * (B - A)
    np.testing.assert_allclose(comp.pdf(y, x), sw.pdf(inner_y, x) * (B - A), rtol=1e-12)
    np.testing.assert_allclose(comp.cdf(y, x), sw.cdf(inner_y, x), rtol=1e-12, atol=1e-15)
    # the same uniforms give the same points, mapped
    z = np.linspace(0, 1, 1000)
    np.testing.assert_allclose(comp.sample(z, rng=4), (sw.sample(z, rng=4) - A) / (B - A), atol=1e-15)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_truncated_laplace_atoms_in_closed_form(epsilon):
    lap = m.Laplace(epsilon=epsilon, low=-1.0, high=3.0)
    trunc = m.Truncated(lap)
    for x0 in (-1.0, 0.5, 3.0):
        locations, masses = trunc.atoms(x0)
        np.testing.assert_array_equal(locations, [-1.0, 3.0])
        expected = [0.5 * math.exp(-epsilon * (x0 + 1.0) / 4.0), 0.5 * math.exp(-epsilon * (3.0 - x0) / 4.0)]
        np.testing.assert_allclose(masses, expected, rtol=1e-12)
        # cdf jumps by the atoms at the ends
        assert trunc.cdf(-1.0, x0) == pytest.approx(masses[0], rel=1e-12)
        assert trunc.cdf(np.nextafter(3.0, 0.0), x0) == pytest.approx(1.0 - masses[1], rel=1e-9)
        assert trunc.cdf(3.0, x0) == 1.0


def test_truncation_is_clipping_of_the_same_draws():
    """The same draws, clipped to the wrapped lattice's first and last points inside [0, 1]."""
    lap = m.Laplace(epsilon=0.7)
    trunc = m.Truncated(lap)
    x = np.linspace(0, 1, 5000)
    lo, hi = trunc.lattice.points(0), trunc.lattice.points(trunc.lattice.count - 1)
    assert 0.0 <= lo <= lap.lattice.spacing and 1.0 - lap.lattice.spacing <= hi <= 1.0
    np.testing.assert_allclose(trunc.sample(x, rng=8), np.clip(lap.sample(x, rng=8), lo, hi),
                               rtol=0, atol=1e-13)  # each on its own lattice, bit for bit
    inner = lap.sample_index(x, rng=8)
    first = int(lap.lattice.index(lo))
    np.testing.assert_array_equal(trunc.sample_index(x, rng=8),
                                  np.clip(inner, first, first + trunc.lattice.count - 1) - first)


def test_truncated_errors_match_direct_computation():
    # E|clip(Y) − x|^p for Laplace, by direct quadrature of the clipped variable
    from scipy import integrate

    lap = m.Laplace(epsilon=1.2)
    trunc = m.Truncated(lap)
    for x0 in (0.0, 0.3, 1.0):
        for p in (1, 2):
            direct, _ = integrate.quad(lambda t: abs(min(max(t, 0.0), 1.0) - x0) ** p * float(lap.pdf(t, x0)),
                                       -60, 60, points=[0.0, x0, 1.0], limit=400)
            assert float(trunc.expected_error(x0, p)) == pytest.approx(direct, rel=1e-9)
