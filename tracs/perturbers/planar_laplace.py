"""Planar Laplace on a public grid, clamped to the region ("T-Laplace" in the TraCS paper).

The textbook sampler (a Gamma(2) radius and a uniform angle in binary64) leaks
its input through the low bits of its output, as every floating-point sampler
of a continuous law does (Mironov, CCS 2012).  Here the release is discrete
from the start:

1. each coordinate is snapped to the public grid ``xmin + i·h_x`` (``i = 0..n``,
   ``n = round(1/resolution)`` cells per side of the region's bounding box, its
   edges included) by randomised rounding, giving the grid index ``k``;
2. an offset ``d ∈ Z²`` is drawn with probability ∝ ``exp(−a·‖(d_x h_x, d_y h_y)‖)``,
   ``a = ε / (diameter + 2·‖(h_x, h_y)‖)``, exactly: on each axis a two-sided
   geometric law with rate ``b = a/√2`` (a magnitude by exact inversion of its
   tails ``2r^m/(1 + r)``, ``r = e^{−b h}``, and a sign bit), thinned by the exact
   acceptance ``u < exp(−a‖v‖ + b‖v‖₁)`` (at most 1), repeated until accepted;
3. the release is the grid point ``clamp(k + d)`` (clamped releases land on the
   region's edges); for a convex polygon it is then moved to the nearest point of
   the region.

The sampler and its word layout are in :mod:`tracs.perturbers._planar_kernel`.

**Guarantee (ε-LDP, exact).**  The proposal puts mass ∝ ``exp(−b‖v‖₁)`` on
``d`` and accepts it with probability ``exp(−a‖v‖ + b‖v‖₁)``, so an accepted
offset has mass ``p(d) ∝ exp(−a‖v‖)``, whatever the input.  For two snapped
inputs ``k, k'`` and any grid point ``j``,
``P(k + d = j) / P(k' + d = j) = exp(a(‖j − k'‖ − ‖j − k‖)) <= exp(a·‖k − k'‖) <= e^ε``
(distances in metres; snapped points are at most ``diameter + 2‖h‖`` apart).
Snapping mixes the rows of two grid points, which keeps the bound.  Clamping to
the grid and to the region is post-processing: it costs no privacy, but it is
not free of information either — a release on the boundary says the unclamped
point fell outside, an event whose probability differs between inputs by at
most ``e^ε`` like any other.  The realised law is this one for the computed
doubles (the magnitudes' tails and ``exp`` of the acceptance exponent, each a few
ulps from the real number, and input-independent); every comparison of a
uniform with them is exact.  ``privacy_spent`` reports ε exactly.

**Smallest budget.**  The magnitudes are searched on int64, so the perturber
refuses a budget whose tails would not vanish in binary64 before ``2^61`` cells
(``min_epsilon``: ``PlanarLaplace(Rectangle(0, 0, 1, 1), 1.0).min_epsilon`` is 6.8e-10
on a square at the default grid; 1e-12 on coarse grids).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import read_only
from ..mechanisms.lattice import Lattice, check_resolution, fit_spacing
from ..region import Rectangle
from . import _planar_kernel
from ._base import Perturber
from ._sequential import LatticeReleases, keyed_points

__all__ = ["PlanarLaplace"]

#: largest per-point ε: every offset up to the grid's span keeps a normal-double probability
MAX_PLANAR_EPSILON = 500.0


class PlanarLaplace(LatticeReleases, Perturber):
    """Discrete planar Laplace on the public grid, clamped to the region (see the module notes).

    Parameters
    ----------
    region : Rectangle or ConvexRegion
    epsilon : float, optional
        Budget per point (or ``epsilon_per_trajectory``, split evenly), at most 500.
    epsilon_per_trajectory, round_to
        As for :class:`TraCSD`.
    resolution : float, optional
        Grid spacing as a fraction of each side of the bounding box; default ``2^-20``.
    """

    def __init__(self, region, epsilon=None, *, epsilon_per_trajectory=None, round_to=None,
                 resolution=None):
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory,
                         round_to=round_to)
        self._cells = max(2, check_resolution(resolution))
        self.resolution = resolution
        xmin, ymin, xmax, ymax = region.bounds
        self._grid = np.array([xmin, ymin, fit_spacing(xmin, xmax, self._cells),
                               fit_spacing(ymin, ymax, self._cells)])
        if self.epsilon is not None:
            self._scales(np.array([self.epsilon]))

    @property
    def lattice(self) -> tuple[Lattice, Lattice]:
        """The public grid, edges included: ``(x lattice, y lattice)``."""
        xmin, ymin, hx, hy = (float(v) for v in self._grid)
        return Lattice(xmin, hx, self._cells + 1), Lattice(ymin, hy, self._cells + 1)

    @property
    def rate(self) -> float:
        """``a / ε = 1 / (diameter + 2‖h‖)``: the noise rate per unit of budget (per metre)."""
        return 1.0 / (self.region.diameter + 2.0 * math.hypot(self._grid[2], self._grid[3]))

    def _scales(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64).reshape(-1)
        if np.any(eps > MAX_PLANAR_EPSILON):
            raise ValueError(f"epsilon = {float(eps.max()):g} exceeds {MAX_PLANAR_EPSILON:g}, the largest "
                             "budget the planar Laplace grid samples exactly")
        floor = self.min_epsilon
        if np.any(eps < floor):
            raise ValueError(f"epsilon = {float(eps.min())!r} is below the smallest supported budget "
                             f"{floor:.3g} (of this grid)")
        return eps * self.rate

    @property
    def min_epsilon(self) -> float:
        """The smallest per-point budget: 1e-12, or more on a fine grid, where the offsets'
        geometric tails must vanish in binary64 before ``2^61`` cells (module notes)."""
        grid = _planar_kernel.MIN_LOG_RATE * math.sqrt(2.0) / (self.rate * min(self._grid[2], self._grid[3]))
        return max(1e-12, grid)

    def _run(self, coords, offsets, rng):
        out = self._release(coords, offsets, rng)[0]
        if not isinstance(self.region, Rectangle):
            self.region._clip(out)
        return out

    def _release(self, coords, offsets, rng, indices=True):
        scale = self._point_params(offsets, lambda e: self._scales(e))
        kind, key, stream_of, index_of = keyed_points(rng, offsets)
        out = np.empty_like(coords)
        idx = np.empty(coords.shape, dtype=np.int64)
        params = _planar_kernel.planar_constants(scale, self._grid[2], self._grid[3])
        _planar_kernel.planar_kernel(read_only(coords), read_only(np.asarray(offsets, dtype=np.int64)), kind, key,
                                     stream_of, index_of, params,
                                     self._grid, self._cells, out, idx)
        return out, idx
