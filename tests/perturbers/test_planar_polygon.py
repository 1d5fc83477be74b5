"""Planar Laplace on a convex polygon releases only points of its declared grid.

Seeds fixed; every check is exact (bit for bit), no tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tracs
from tracs.privacy.lattice_check import off_lattice
from tracs.region import ConvexRegion

PENTAGON = ConvexRegion([(0, 0), (2000, 0), (2300, 900), (800, 1400), (-200, 700)])
HEXAGON = ConvexRegion([(1000 * math.cos(a), 1000 * math.sin(a)) for a in np.arange(6) * math.pi / 3])
SLIVER = ConvexRegion([(0, 0), (1000, 0), (1000, 1)])  # acute corner: few grid points near its tip


def _inside(region, n, seed):
    gen = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = region.bounds
    pts = np.column_stack([gen.uniform(xmin, xmax, 4 * n), gen.uniform(ymin, ymax, 4 * n)])
    return np.vstack([pts[region.contains(pts)][:n], region.vertices])


@pytest.mark.parametrize("region, epsilon, resolution", [
    (PENTAGON, 1.0, None), (HEXAGON, 0.5, None), (HEXAGON, 2.0, 2.0 ** -6), (SLIVER, 1.0, None),
    (PENTAGON, 0.1, 2.0 ** -8),
])
def test_every_release_is_a_grid_point_inside_the_polygon(region, epsilon, resolution):
    pl = tracs.PlanarLaplace(region, epsilon, resolution=resolution)
    pts = _inside(region, 5_000, 1)
    offsets = np.arange(len(pts) + 1)
    out = pl.perturb_many(pts, offsets, rng=7)
    assert off_lattice(out, pl.lattice) == (0, None)
    assert region.contains(out).all()
    idx = pl.lattice_indices(pts, offsets, rng=7)  # the same draws, as grid indices
    lx, ly = pl.lattice
    assert np.array_equal(lx.points(idx[:, 0]), out[:, 0]) and np.array_equal(ly.points(idx[:, 1]), out[:, 1])


def test_polygon_audit_passes_with_its_grid_checked():
    report = tracs.audit_perturber(tracs.PlanarLaplace(PENTAGON, 1.0), samples=4_000)
    assert report.passed and report.off_lattice == 0, str(report)


def test_polygon_too_thin_for_its_grid_is_refused():
    # on a grid of 3 cells per side the point nearest to this triangle's centre lies outside it
    triangle = ConvexRegion([(299.7, 422.7), (28.3, 124.3), (670.6, 647.2)])
    with pytest.raises(ValueError, match="the polygon is too thin for the grid"):
        tracs.PlanarLaplace(triangle, 1.0, resolution=1 / 3)
    tracs.PlanarLaplace(triangle, 1.0, resolution=1 / 4)  # a finer grid fits
