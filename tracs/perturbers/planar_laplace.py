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
   region's edges); for a convex polygon, a grid point outside the polygon is
   moved to a grid point inside it (:meth:`PlanarLaplace.into_region`: the grid
   point nearest to its projection onto the polygon, walked towards the public
   centre in steps doubling from half a cell until one is inside), so every
   release is a point of the declared grid, bit for bit.

The sampler and its word layout are in :mod:`tracs.perturbers._planar_kernel`.

**Guarantee (ε-LDP, exact).**  The proposal puts mass ∝ ``exp(−b‖v‖₁)`` on
``d`` and accepts it with probability ``exp(−a‖v‖ + b‖v‖₁)``, so an accepted
offset has mass ``p(d) ∝ exp(−a‖v‖)``, whatever the input.  For two snapped
inputs ``k, k'`` and any grid point ``j``,
``P(k + d = j) / P(k' + d = j) = exp(a(‖j − k'‖ − ‖j − k‖)) <= exp(a·‖k − k'‖) <= e^ε``
(distances in metres; snapped points are at most ``diameter + 2‖h‖`` apart).
Snapping mixes the rows of two grid points, which keeps the bound.  Clamping to
the grid and moving into the polygon are post-processing (fixed functions of
the released grid index and public parameters): it costs no privacy, but it is
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
from ..errors import InputError
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
        if not isinstance(region, Rectangle):
            self._check_polygon_grid()

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
            raise InputError(f"epsilon = {float(eps.max()):g} exceeds {MAX_PLANAR_EPSILON:g}, the largest "
                             "budget the planar Laplace grid samples exactly")
        floor = self.min_epsilon
        if np.any(eps < floor):
            raise InputError(f"epsilon = {float(eps.min())!r} is below the smallest supported budget "
                             f"{floor:.3g} (of this grid)")
        return eps * self.rate

    @property
    def min_epsilon(self) -> float:
        """The smallest per-point budget: 1e-12, or more on a fine grid, where the offsets'
        geometric tails must vanish in binary64 before ``2^61`` cells (module notes)."""
        grid = _planar_kernel.MIN_LOG_RATE * math.sqrt(2.0) / (self.rate * min(self._grid[2], self._grid[3]))
        return max(1e-12, grid)

    def _run(self, coords, offsets, rng):
        return self._release(coords, offsets, rng)[0]

    def _check_polygon_grid(self) -> None:
        centre = self._round_to_grid(np.asarray(self.region.center, dtype=np.float64)[None, :])[1]
        if not self.region._contains(centre)[0]:
            raise InputError("the polygon is too thin for the grid: the grid point nearest to its centre "
                             "lies outside it; use a finer resolution")

    def _round_to_grid(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, grid points)`` of the grid points nearest to ``points`` (indices clamped)."""
        xmin, ymin, hx, hy = self._grid
        idx = np.column_stack([np.rint((points[:, 0] - xmin) / hx), np.rint((points[:, 1] - ymin) / hy)])
        idx = np.clip(idx, 0, self._cells).astype(np.int64)
        return idx, np.column_stack([xmin + idx[:, 0] * hx, ymin + idx[:, 1] * hy])

    def into_region(self, idx: np.ndarray, out: np.ndarray) -> None:
        """Move released grid points outside a convex polygon to grid points inside it, in place.

        A point ``q`` outside goes to its projection ``p`` onto the polygon, then to
        the grid point nearest to ``p + t·(c − p)`` (``c`` the polygon's public
        centre) for ``t = 0`` and then steps ``t·|c − p|`` of ½, 1, 2, 4 … cells
        (up to ``t = 1``), the first one inside the polygon.  It ends at ``c``'s grid
        point at the latest, which lies inside (checked at construction).  A fixed
        function of the released index and public parameters (post-processing).
        """
        region = self.region
        todo = np.flatnonzero(~region._contains(out))
        if len(todo) == 0:
            return
        p = region._clip(out[todo].copy())
        c = np.asarray(region.center, dtype=np.float64)
        span = np.hypot(c[0] - p[:, 0], c[1] - p[:, 1])
        cell = float(min(self._grid[2], self._grid[3]))
        step = 0.0
        while len(todo):
            t = np.minimum(1.0, step / np.maximum(span, cell))
            k, q = self._round_to_grid(p + t[:, None] * (c - p))
            ok = region._contains(q) | (t >= 1.0)
            idx[todo[ok]], out[todo[ok]] = k[ok], q[ok]
            todo, p, span = todo[~ok], p[~ok], span[~ok]
            step = 0.5 * cell if step == 0.0 else 2.0 * step

    def _release(self, coords, offsets, rng, indices=True):
        scale = self._point_params(offsets, lambda e: self._scales(e))
        kind, key, stream_of, index_of = keyed_points(rng, offsets)
        out = np.empty_like(coords)
        idx = np.empty(coords.shape, dtype=np.int64)
        params = _planar_kernel.planar_constants(scale, self._grid[2], self._grid[3])
        _planar_kernel.planar_kernel(read_only(coords), read_only(np.asarray(offsets, dtype=np.int64)), kind, key,
                                     stream_of, index_of, params,
                                     self._grid, self._cells, out, idx)
        if not isinstance(self.region, Rectangle):
            self.into_region(idx, out)
        return out, idx
