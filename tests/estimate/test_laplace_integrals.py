"""The planar Laplace likelihood of clamped reports (tracs.estimate._laplace_integrals, used by
tracs.estimate._laplace): the integrals against closed forms and SciPy's adaptive quadrature, the
edge tables against the integrals, whole rows of every kind of report against adaptive quadrature
and against the former fixed Gauss–Legendre rule, and their memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import integrate, special

from tracs.errors import InputError
from tracs.estimate._laplace import _laplace_likelihood
from tracs.estimate._laplace_integrals import edge_rows, edge_scaled, edge_tables, quadrant

#: (u, v) in units of 1 / rate: on and near the edge, along it, far out, tiny and large offsets
EDGE_CASES = [(0.0, 0.0), (0.0, 1e-9), (0.0, 1.0), (0.005, 0.0), (0.005, 1e-6), (0.005, 0.004), (0.005, 3.0),
              (1e-8, 2.0), (0.3, 0.3), (2.0, 0.01), (3.0, 3.0), (10.0, 1e-3), (1e-3, 40.0)]
#: (u, w): the corner itself, on a side, near it, far out, and one side's distance tiny beside the other's
#: (acosh(R / w) at R / w = 1 + 1e-16 lost the 1e-8 that asinh(u / w) keeps)
QUADRANT_CASES = [(0.0, 0.0), (0.0, 1.0), (0.005, 0.005), (0.005, 2.0), (1e-6, 1e-3), (0.01, 0.02), (2.0, 3.0),
                  (1.2e-7, 8.8), (3.17, 2e-7)]


def _edge_reference(u, v):
    return integrate.quad(lambda s: np.exp(-np.hypot(s, v)), u, np.inf, epsabs=0, epsrel=1e-13, limit=500)[0]


def _quadrant_reference(u, w):
    return integrate.dblquad(lambda t, s: np.exp(-np.hypot(s, t)), u, np.inf, w, np.inf, epsabs=0,
                             epsrel=1e-12)[0]


@pytest.mark.parametrize("u, v", EDGE_CASES)
def test_edge_integral_equals_adaptive_quadrature(u, v):
    got = edge_scaled(u, v)[0] * np.exp(-np.hypot(u, v))
    assert got == pytest.approx(_edge_reference(u, v), rel=1e-12, abs=0)


def test_edge_integral_closed_forms():
    # F(u, 0) = e^-u and F(0, v) = v·K1(v)
    u = np.array([0.0, 1e-6, 0.01, 0.7, 5.0, 30.0])
    np.testing.assert_allclose(edge_scaled(u, 0.0), 1.0, rtol=0, atol=0)
    v = np.array([1e-6, 0.01, 0.7, 5.0, 30.0])
    np.testing.assert_allclose(edge_scaled(0.0, v) * np.exp(-v), v * special.k1(v), rtol=1e-13)


@pytest.mark.parametrize("u, w", QUADRANT_CASES)
def test_quadrant_integral_equals_adaptive_quadrature(u, w):
    assert quadrant(u, w)[0] == pytest.approx(_quadrant_reference(u, w), rel=1e-12, abs=0)
    assert quadrant(w, u)[0] == quadrant(u, w)[0]


def test_edge_tables_equal_the_integrals():
    # every interval of the tables, the last one up to v_max and a little beyond it
    u = np.array([0.0, 1e-6, 0.004, 0.02, 0.3, 2.0, 7.0])
    scale, coefs = edge_tables(u, 6.0)
    v = np.concatenate([[0.0, 1e-12, 1e-6, 1e-3, 0.5, 6.0, 6.0 * (1 + 1e-9)],
                        np.random.default_rng(1).uniform(0.0, 6.0, 2000)])
    out = np.empty((len(v), len(u)))
    edge_rows(v, np.arange(len(v)), 1.0, np.zeros(len(u)), np.arange(len(u)), u, scale, coefs, out)
    uu, vv = np.broadcast_arrays(u, v[:, None])
    exact = (edge_scaled(uu, vv) * np.exp(-np.hypot(uu, vv).ravel())).reshape(out.shape)
    np.testing.assert_allclose(out, exact, rtol=1e-11, atol=0)


def _reports(xmax, ymax, copies, seed):
    """Reports of every kind (interior, the four edges, the four corners), clamped onto the region."""
    rng = np.random.default_rng(seed)
    sides = np.array([(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)] * copies)
    y = rng.uniform([0, 0], [xmax, ymax], (len(sides), 2))
    for axis, high in ((0, xmax), (1, ymax)):
        y[sides[:, axis] < 0, axis], y[sides[:, axis] > 0, axis] = 0.0, high
    return y, sides


def _cell_points(xmax, ymax, nx, ny, parts):
    """The centres of ``parts²`` equal parts of every cell of an nx × ny grid (as the denoiser's)."""
    xs = (np.arange(nx * parts) + 0.5) * xmax / (nx * parts)
    ys = (np.arange(ny * parts) + 0.5) * ymax / (ny * parts)
    return np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)


def test_every_kind_of_report_equals_adaptive_quadrature():
    # a 3×2 grid with 2×2 parts per cell on a 1000 × 700 rectangle, two rates (one per report too)
    centres = _cell_points(1000.0, 700.0, 3, 2, 2)
    y, sides = _reports(1000.0, 700.0, 1, 3)
    rates = np.where(np.arange(len(y)) % 2 == 0, 0.002, 0.01)
    got = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, rates)
    for r, (sx, sy) in enumerate(sides):
        e, d = rates[r], centres - y[r]
        for k in range(len(centres)):
            if sx == 0 and sy == 0:
                want = np.exp(-e * np.hypot(*d[k]))
            elif sy == 0:
                want = _edge_reference(e * sx * -d[k, 0], e * d[k, 1]) / e
            elif sx == 0:
                want = _edge_reference(e * sy * -d[k, 1], e * d[k, 0]) / e
            else:
                want = _quadrant_reference(e * sx * -d[k, 0], e * sy * -d[k, 1]) / e ** 2
            assert got[r, k] == pytest.approx(want, rel=1e-11, abs=0), (r, k)


def _former_rule(y, sx, sy, centres, rate):
    """The former likelihood: Gauss–Legendre over [0, 40 / rate] on the outward normal (64 nodes), on
    both axes at a corner (40 × 40 nodes)."""
    t, w = np.polynomial.legendre.leggauss(64)
    t, w = 0.5 * (t + 1) * 40 / rate, 0.5 * w * 40 / rate
    tc, wc = np.polynomial.legendre.leggauss(40)
    tc, wc = 0.5 * (tc + 1) * 40 / rate, 0.5 * wc * 40 / rate
    rows = []
    for r in range(len(y)):
        dx, dy = y[r, 0] - centres[:, 0], y[r, 1] - centres[:, 1]
        if sx[r] == 0 and sy[r] == 0:
            rows.append(np.exp(-rate * np.hypot(dx, dy)))
        elif sx[r] == 0 or sy[r] == 0:
            rows.append(np.exp(-rate * np.hypot(dx[:, None] + sx[r] * t, dy[:, None] + sy[r] * t)) @ w)
        else:
            q = np.hypot(dx[:, None, None] + sx[r] * tc[None, :, None], dy[:, None, None] + sy[r] * tc[None, None, :])
            rows.append(np.einsum("kab,a,b->k", np.exp(-rate * q), wc, wc))
    return np.array(rows)


@pytest.mark.parametrize("rate", [0.002, 0.01, 0.05])
def test_rows_agree_with_the_former_gauss_legendre_rule(rate):
    # 24 × 18 cells, 2 × 2 parts.  The former fixed rules are off by up to ~2e-6 relative against
    # adaptive quadrature (which the new rows match to 1e-11, above): where a point lies within a few
    # cells of the edge a report is clamped onto (the integrand bends there between nodes), at
    # corners (40 × 40 nodes over 40 / rate on both axes) and, by ~1e-8, far along the edge.  Most
    # entries agree to rounding; interior reports are the same density.
    centres = _cell_points(1000.0, 700.0, 24, 18, 2)
    y, sides = _reports(1000.0, 700.0, 3, 5)
    got = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, rate)
    old = _former_rule(y, sides[:, 0], sides[:, 1], centres, rate)
    np.testing.assert_allclose(got, old, rtol=1e-5, atol=0)
    edge = (sides[:, 0] != 0) != (sides[:, 1] != 0)
    assert np.median(np.abs(got[edge] / old[edge] - 1)) < 1e-12
    interior = (sides[:, 0] == 0) & (sides[:, 1] == 0)
    np.testing.assert_allclose(got[interior], old[interior], rtol=1e-13, atol=0)


def test_tables_kept_between_chunks_give_the_same_rows():
    centres = _cell_points(1000.0, 700.0, 8, 6, 2)
    y, sides = _reports(1000.0, 700.0, 6, 7)
    whole = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, 0.004)
    memo: dict = {}
    out = np.empty_like(whole)
    for start in range(0, len(y), 10):
        part = slice(start, start + 10)
        _laplace_likelihood(y[part], sides[part, 0], sides[part, 1], centres, 0.004, memo, out[part])
    np.testing.assert_allclose(out, whole, rtol=1e-14, atol=0)
    assert len(memo) == 8  # four edges and four corners, made once


def test_points_beyond_the_clamped_edge_are_refused():
    centres = np.array([[500.0, 300.0], [-1.0, 300.0]])
    with pytest.raises(InputError, match="a point lies beyond the edge its reports were clamped onto"):
        _laplace_likelihood(np.array([[0.0, 200.0]]), np.array([-1]), np.array([0]), centres, 0.01)


def test_clamped_reports_need_no_temporaries_of_reports_times_points():
    centres = _cell_points(1000.0, 1000.0, 100, 100, 2)  # 40,000 points
    y, sides = _reports(1000.0, 1000.0, 40, 8)
    clamped = (sides[:, 0] != 0) | (sides[:, 1] != 0)
    y, sides = y[clamped], sides[clamped]
    _laplace_likelihood(y[:9], sides[:9, 0], sides[:9, 1], centres[:10], 0.01)  # compiled or loaded first
    tracemalloc.start()
    try:
        out = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, 0.01)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == (320, 40_000) and np.all(out > 0)
    # the rows are 102 MB; the tables and one corner row add a few MB (nodes × points would be GBs)
    assert peak < 1.2 * out.nbytes
