"""A toy trajectory perturber: randomized response over the public cells of a grid.

Every requirement tracs places on a perturber of another package, as this one meets it:

1. **A class of** :class:`tracs.perturbers.Perturber`.  Its constructor takes the public
   region and the budget, ``epsilon`` (per point) or ``epsilon_per_trajectory``, and
   passes them to ``super().__init__`` (which checks them and provides
   ``privacy_spent``, ``epsilon_per_point``, ``perturb``, ``perturb_many`` with
   per-user ``keys`` and ``workers``).  Every other parameter is public: given by the
   user or fixed in advance, never computed from the data.
2. **``_run(coords, offsets, rng)``** releases a validated flat batch (``coords`` of
   shape (N, 2) inside the region, trajectory ``t`` is ``coords[offsets[t]:offsets[t+1]]``)
   and draws every random number from ``rng``, the batch's keyed streams
   (:class:`tracs.perturbers._base.KeyedSource`: ``kind``, ``key``, ``streams``,
   ``offsets``), here through :func:`tracs.random.keyed_uniforms`.  A point's draws then
   depend only on the seed, its user's key and its position in the trajectory, so a
   user's release does not depend on the other users of the file.  No loop over points
   in Python: the batch is one vectorised pass.
3. **A public lattice.**  Every release is a point of the lattice the ``lattice``
   property declares (here one :class:`tracs.mechanisms.Lattice` per axis: the cell
   centres), computed as ``Lattice.points(k)`` so that it equals the lattice value bit
   for bit.  ``tracs audit`` checks the released values against it (without it the
   audit reports the method as *unverifiable*, never as passing), ``tracs estimate``
   refuses reports off it, and the release sidecar records it.
4. **An exact ε bound.**  The probability of each released lattice point, as sampled
   (not only as intended), satisfies the ε-LDP ratio: here the keep probability is
   rounded *down* to a multiple of 2^-53 (the uniforms' grid) and the other cell is
   drawn from a power-of-two number of cells, so the sampled pmf is exactly the one of
   the docstring of :class:`RandomCells`, whose ratio is at most e^ε.
5. **A registry entry** (:data:`METHOD`, a :class:`tracs.methods.Method`): its name
   (``tracs perturb -m toy-cells``), label, kind ``PERTURBER``, a factory
   ``factory(context, budget, **options)`` building it from the public
   :class:`tracs.methods.MethodContext` (``context.region``) and ``budget``
   (``{"epsilon": e}`` or ``{"epsilon_per_trajectory": e}``), ``model`` (the class, so
   :func:`tracs.methods.method_of` finds the entry of a built object), ``sidecar`` (the
   options a release records and gives back to the factory to rebuild the same
   perturber: ``tracs estimate``), ``estimator`` (the name of its density
   estimator: :mod:`tracs_toy.estimator`), ``keyed`` (it draws from keyed per-user
   streams) and ``lattice`` (the shape of its lattice: ``GRID``, one per axis).  The
   engine's callers, the audit, the sidecar and the collector ask these two fields,
   never the built object; a test builds every entry and checks they agree.  A method with compiled kernels also gives
   ``warm`` (first calls on tiny inputs) and ``family`` (a key of
   ``tracs._numba_cache.KERNEL_FAMILIES``); this one has none.
6. **An entry point** naming :data:`METHOD` in the group ``tracs.methods``
   (``pyproject.toml``).  Nothing else: every command, the evaluation, the audit and
   the sidecar read the registry.
"""

from __future__ import annotations

import numpy as np

from tracs.mechanisms import Lattice
from tracs.methods import GRID, PERTURBER, Method
from tracs.perturbers import Perturber
from tracs.random import KeyedStreams, keyed_uniforms
from tracs.region import Rectangle

__all__ = ["METHOD", "RandomCells"]

#: the largest per-point ε: beyond it the keep probability is within 2^-53 of 1
MAX_EPSILON = 30.0


class RandomCells(Perturber):
    """Randomized response over the ``cells × cells`` public cells of a rectangle.

    A point is released as the centre of its own cell with probability ``p``, else
    as the centre of a uniformly drawn cell (its own included), with
    ``p = floor(2^53 · (e^ε − 1)/(e^ε − 1 + k)) · 2^-53 − 2^-53`` (clamped at 0) and
    ``k = cells²``.  The released centre ``c`` of a point in cell ``o`` has
    probability ``p·[c = o] + (1 − p)/k``; the ratio between two inputs is at most
    ``1 + p·k/(1 − p) ≤ e^ε``.

    Parameters
    ----------
    region : tracs.Rectangle
        The public region.
    epsilon : float, optional
        Budget per point, at most :data:`MAX_EPSILON` (or give ``epsilon_per_trajectory``).
    cells : int
        Cells per side, a power of two from 2 to 1024 (public; default 8).
    epsilon_per_trajectory : float, optional
        Budget per trajectory, split evenly over its points.
    """

    def __init__(self, region, epsilon=None, *, cells=8, epsilon_per_trajectory=None):
        if not isinstance(region, Rectangle):
            raise TypeError(f"RandomCells needs a Rectangle region, got {type(region).__name__}")
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or not 2 <= cells <= 1024 \
                or cells & (cells - 1):
            raise ValueError(f"cells must be a power of two from 2 to 1024, got {cells!r}")
        if self.epsilon is not None and self.epsilon > MAX_EPSILON:
            raise ValueError(f"epsilon must be at most {MAX_EPSILON:g}, got {self.epsilon!r}")
        self.cells = int(cells)

    @property
    def lattice(self) -> tuple[Lattice, Lattice]:
        """The released points: the cell centres, one lattice per axis."""
        xmin, ymin, xmax, ymax = (float(v) for v in self.region.bounds)
        hx, hy = (xmax - xmin) / self.cells, (ymax - ymin) / self.cells
        return Lattice(xmin + hx / 2, hx, self.cells), Lattice(ymin + hy / 2, hy, self.cells)

    def cell_of(self, points) -> np.ndarray:
        """The flat index ``i·cells + j`` of the cell holding each point (a public function)."""
        points = np.asarray(points, dtype=np.float64)
        lx, ly = self.lattice
        i = np.clip(np.floor((points[:, 0] - (lx.origin - lx.spacing / 2)) / lx.spacing), 0, self.cells - 1)
        j = np.clip(np.floor((points[:, 1] - (ly.origin - ly.spacing / 2)) / ly.spacing), 0, self.cells - 1)
        return i.astype(np.int64) * self.cells + j.astype(np.int64)

    def keep_probability(self, eps) -> np.ndarray:
        """``p`` of the class docstring for each per-point budget in ``eps`` (a multiple of 2^-53)."""
        eps = np.asarray(eps, dtype=np.float64)
        if np.any(eps > MAX_EPSILON):
            raise ValueError(f"a per-point epsilon exceeds {MAX_EPSILON:g}")
        e = np.expm1(eps)
        ticks = np.floor(e / (e + self.cells ** 2) * 2.0 ** 53) - 1.0  # one tick below: rounding never adds
        return np.maximum(ticks, 0.0) * 2.0 ** -53

    def _run(self, coords, offsets, rng):
        eps = np.repeat(self.epsilon_per_point(np.diff(offsets)), np.diff(offsets))
        u = keyed_uniforms(KeyedStreams(rng.kind, rng.key, rng.streams), rng.offsets, 2)
        k = self.cells ** 2
        cell = np.where(u[:, 0] < self.keep_probability(eps), self.cell_of(coords),
                        np.floor(u[:, 1] * k).astype(np.int64))
        lx, ly = self.lattice
        return np.column_stack([lx.points(cell // self.cells), ly.points(cell % self.cells)])

    def __repr__(self):
        return f"{super().__repr__()[:-1]}, cells={self.cells})"


def build(context, budget, *, cells=8):
    """The registry's factory: :class:`RandomCells` on the public region at ``budget``."""
    return RandomCells(context.region, cells=cells, **budget)


#: the registry entry, named by the entry point ``toy-cells`` of the group ``tracs.methods``
METHOD = Method("toy-cells", "Toy cells", PERTURBER, build, "toy: randomized response over 8 x 8 public cells",
                model=RandomCells, sidecar=("cells",), estimator="toy-cells", keyed=True, lattice=GRID)
