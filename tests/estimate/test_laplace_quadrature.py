"""The planar Laplace likelihood of clamped reports (tracs.estimate._laplace): the compiled
quadrature against the same Gauss–Legendre rule written out in NumPy, and its memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tracs.estimate._laplace import _NODES_CORNER, _NODES_LINE, _REACH, _laplace_likelihood


def _reference(y, sx, sy, centres, rate):
    """Every row by the module's rule, with NumPy temporaries (interior, edge line, corner quadrant)."""
    t, w = np.polynomial.legendre.leggauss(_NODES_LINE)
    t, w = 0.5 * (t + 1) * _REACH / rate, 0.5 * w * _REACH / rate
    tc, wc = np.polynomial.legendre.leggauss(_NODES_CORNER)
    tc, wc = 0.5 * (tc + 1) * _REACH / rate, 0.5 * wc * _REACH / rate
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


@pytest.mark.parametrize("rate", [0.004, 0.05])
def test_every_kind_of_report_equals_the_quadrature_written_out(rate):
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 1000, (200, 2))
    sides = np.array([(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)] * 3)
    y = rng.uniform(0, 1000, (len(sides), 2))
    for axis in (0, 1):
        y[sides[:, axis] < 0, axis], y[sides[:, axis] > 0, axis] = 0.0, 1000.0
    got = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, rate)
    np.testing.assert_allclose(got, _reference(y, sides[:, 0], sides[:, 1], centres, rate), rtol=1e-12, atol=0)
    per_report = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, np.full(len(y), rate))
    np.testing.assert_array_equal(per_report, got)  # one rate per report: the same rows


def test_corner_reports_need_no_temporaries_of_cells_times_nodes():
    centres = np.random.default_rng(4).uniform(0, 1000, (20_000, 2))
    y = np.array([[0.0, 0.0], [1000.0, 1000.0], [0.0, 1000.0], [1000.0, 0.0]])
    sides = np.array([[-1, -1], [1, 1], [-1, 1], [1, -1]])
    _laplace_likelihood(y[:1], sides[:1, 0], sides[:1, 1], centres[:10], 0.01)  # compiled or loaded first
    tracemalloc.start()
    try:
        out = _laplace_likelihood(y, sides[:, 0], sides[:, 1], centres, 0.01)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == (4, 20_000) and np.all(out > 0)
    # the rows themselves are 0.64 MB; NumPy temporaries of cells × 40 × 40 nodes would be 256 MB
    assert peak < 8 * out.nbytes
