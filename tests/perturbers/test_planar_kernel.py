"""The planar Laplace kernel: its fast passes give the exact scalar path's indices, and
the released offsets follow the exact law."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from tracs.mechanisms.geometric import tail
from tracs.mechanisms.vector_log import LOG_ERROR, vector_log
from tracs.perturbers import PlanarLaplace
from tracs.perturbers import _planar_kernel as pk
from tracs.perturbers._sequential import keyed_points
from tracs.region import Rectangle

UNIT = Rectangle(0.0, 0.0, 1.0, 1.0)
TALL = Rectangle(-3.0, 10.0, 2.0, 90.0)


def reference_indices(p, coords, offsets, rng):
    """The indices by :func:`planar_reference` (exact scalar path only), same streams."""
    kind, key, stream_of, index_of = keyed_points(rng, offsets)
    scale = p._point_params(offsets, lambda e: p._scales(e))
    params = pk.planar_constants(scale, p._grid[2], p._grid[3])
    idx = np.empty(coords.shape, dtype=np.int64)
    pk.planar_reference(coords, offsets, kind, key, stream_of, index_of, params, p._grid, p._cells, idx)
    return idx


def corner_points(region, n, seed):
    xmin, ymin, xmax, ymax = region.bounds
    corners = np.array([[xmin, ymin], [xmax, ymin], [xmin, ymax], [xmax, ymax], region.center])
    inside = np.random.default_rng(seed).uniform([xmin, ymin], [xmax, ymax], (n, 2))
    return np.concatenate([np.repeat(corners, 20, axis=0), inside])


@pytest.mark.parametrize("region, resolution", [(UNIT, None), (TALL, 1 / 64), (UNIT, 1 / 2)],
                         ids=["unit-default", "tall-64", "unit-2"])
@pytest.mark.parametrize("eps", ["min", 0.01, 1.0, 30.0, 500.0])
def test_fast_passes_equal_the_exact_path(region, resolution, eps):
    """Same indices, point by point, as the exact scalar path (seeded keys 11; 3,100 points
    with 20 at each corner and the centre, trajectories of 31 points)."""
    probe = PlanarLaplace(region, 1.0, resolution=resolution)
    eps = probe.min_epsilon if eps == "min" else eps
    p = PlanarLaplace(region, eps, resolution=resolution)
    n = 3000 if eps > 1e-6 else 200  # the smallest budget takes the exact path nearly always
    coords = corner_points(region, n, seed=5)
    offsets = np.arange(0, len(coords) + 1, 31)
    offsets[-1] = len(coords)
    idx = p.lattice_indices(coords, offsets, rng=11)
    assert np.array_equal(idx, reference_indices(p, coords, offsets, 11))
    lx, ly = p.lattice
    out = p.perturb_many(coords, offsets, rng=11)
    assert np.array_equal(out, np.column_stack([lx.points(idx[:, 0]), ly.points(idx[:, 1])]))


def test_fast_passes_equal_the_exact_path_per_trajectory_budget():
    p = PlanarLaplace(TALL, epsilon_per_trajectory=6.0, resolution=1 / 4096)
    coords = corner_points(TALL, 2000, seed=6)
    offsets = np.array([0, 1, 7, 100, 101, 900, 2100])
    idx = p.lattice_indices(coords, offsets, rng=4)
    assert np.array_equal(idx, reference_indices(p, coords, offsets, 4))


def realised_offset_law(a, b, hx, hy, reach):
    """The realised law of the magnitudes ``(|d_x|, |d_y|)`` on ``0 … reach`` per axis (the
    rest is below 1e-10): ``T_m − T_{m+1}`` from the sampler's thresholds, thinned by ``exp(g)``."""
    def axis(h):
        log_r = -b * h
        log_c = math.log(2.0) - math.log1p(math.exp(log_r))
        t = np.array([tail(m, log_r, log_c) for m in range(reach + 2)])
        return t[:-1] - t[1:]
    m = np.arange(reach + 1)
    vx, vy = np.meshgrid(m * hx, m * hy, indexing="ij")
    accept = np.exp(b * (vx + vy) - a * np.sqrt(vx * vx + vy * vy))
    law = axis(hx)[:, None] * axis(hy)[None, :] * accept
    return law / law.sum()


def test_offset_law_matches_the_exact_pmf():
    """Magnitudes ``(|d_x|, |d_y|)`` of 200,000 releases from the centre of a 64-cell grid
    (seed 3, no clamping within reach): chi-square against the realised pmf (cells with an
    expected count of at least 5, the rest pooled) must not reject at level 1e-4; and the
    realised pmf is the ideal ``∝ exp(−a‖v‖)`` to 1e-9."""
    p = PlanarLaplace(UNIT, 80.0, resolution=1 / 64)
    n = 200_000
    coords = np.tile([[0.5, 0.5]], (n, 1))  # a grid point: snapping is exact
    idx = p.lattice_indices(coords, [0, n], rng=3)
    d = np.abs(idx - 32)
    assert d.max() < 32
    a = 80.0 * p.rate
    b = a / math.sqrt(2.0)
    hx, hy = p._grid[2], p._grid[3]
    reach = 31
    law = realised_offset_law(a, b, hx, hy, reach)
    # a magnitude pair (mx, my) collects 1, 2 or 4 signed offsets
    m = np.arange(reach + 1)
    signs = np.where(m == 0, 1, 2)[:, None] * np.where(m == 0, 1, 2)[None, :]
    vx, vy = np.meshgrid(m * hx, m * hy, indexing="ij")
    ideal = signs * np.exp(-a * np.sqrt(vx * vx + vy * vy))
    assert np.allclose(law, ideal / ideal.sum(), rtol=1e-9, atol=1e-15)
    counts = np.zeros_like(law)
    np.add.at(counts, (d[:, 0], d[:, 1]), 1)
    expected = law * n
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp_ = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue > 1e-4


@njit(error_model="numpy")
def _logs(x, out):
    for i in range(x.shape[0]):
        out[i] = vector_log(x[i])


def test_vector_log_error_bound():
    """|vector_log − math.log| on 10^6 uniforms of the sampler's form and on 2^-63 … 1."""
    rng = np.random.default_rng(0)
    f = rng.integers(0, 2**53, 500_000).astype(np.float64)
    x = np.concatenate([(f + 0.5) / 2.0**53, 2.0 ** -rng.uniform(0.0, 63.0, 500_000),
                        [2.0**-63, 2.0**-54, 1.0 - 2.0**-53, 0.5, 1.0, math.sqrt(0.5)]])
    got = np.empty_like(x)
    _logs(x, got)
    assert np.max(np.abs(got - np.log(x))) < LOG_ERROR / 10


def test_budget_below_the_grid_floor_is_refused():
    p = PlanarLaplace(UNIT, 1.0)
    assert p.min_epsilon > 1e-12
    with pytest.raises(ValueError, match="smallest supported budget"):
        PlanarLaplace(UNIT, p.min_epsilon / 2)
    PlanarLaplace(UNIT, p.min_epsilon)
