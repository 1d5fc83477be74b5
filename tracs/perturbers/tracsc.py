"""TraCS-C: coordinate-wise perturbation on a rectangle (Zheng & Hu, PETS 2026).

Each coordinate goes through the optimal classical mechanism's lattice on its
side of the rectangle: ``x`` at ``ε_x``, ``y`` at ``ε_y``, ``ε_x + ε_y = ε``.  The
probability of a released pair of lattice values is the product of the two exact
rows, so the ratio between any two inputs is at most ``e^{ε_x}·e^{ε_y} = e^ε``:
every point is ε-LDP over the rectangle.  Points are independent, so the whole
batch is one compiled pass.
"""

from __future__ import annotations

import numpy as np

from .._validation import read_only
from ..errors import InputError, InputTypeError
from ..region import Rectangle
from . import _kernels
from ..mechanisms.closed_forms import classical_bands
from ..mechanisms.lattice import Lattice, check_resolution, fit_spacing
from ._base import KeyedSource, Perturber, check_parts, check_share
from ._sequential import LatticeReleases, keyed_trajectories
from ._split import optimal_x_share

__all__ = ["TraCSC"]


class TraCSC(LatticeReleases, Perturber):
    """TraCS-C on a :class:`~tracs.Rectangle`.

    Parameters
    ----------
    region : Rectangle
        TraCS-C needs a rectangle (for a polygon, use ``Rectangle(*polygon.bounds)``
        and clip or round the outputs).
    epsilon : float, optional
        Budget per point (or give ``epsilon_per_trajectory``, split evenly).
    x_share : float in (0, 1) or "optimal"
        ``ε_x / ε``; default 0.5 (the paper's).  ``"optimal"`` minimises the
        expected squared error for a uniform point of the rectangle
        (:func:`tracs.perturbers.optimal_x_share`).
    epsilon_per_trajectory, round_to
        As for :class:`TraCSD`.
    resolution : float, optional
        Spacing of each axis lattice as a fraction of that side; default ``2^-20``.

    Notes
    -----
    No reference point and no anchor: points are perturbed independently.  A
    point on an edge or corner is an ordinary input (the central interval slides
    inside the side).  Released coordinates are cell centres of the two axis
    lattices (:attr:`lattice`), always inside the rectangle.
    """

    def __init__(self, region, epsilon=None, *, x_share=0.5, epsilon_per_trajectory=None,
                 round_to=None, resolution=None):
        if not isinstance(region, Rectangle):
            raise InputTypeError("TraCS-C needs a Rectangle region; for a polygon use "
                                 f"Rectangle(*region.bounds), got {type(region).__name__}")
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory,
                         round_to=round_to)
        self.x_share = check_share(x_share, "x_share")
        self._bbox = np.array(region.bounds, dtype=np.float64)
        self._cells = check_resolution(resolution)
        self.resolution = resolution
        if self.epsilon is not None:
            self._point_params(None, self._params)  # a budget beyond the limits fails here, once

    @property
    def lattice(self) -> tuple[Lattice, Lattice]:
        """One public lattice per axis: ``(x lattice, y lattice)``."""
        xmin, ymin, xmax, ymax = (float(v) for v in self._bbox)
        n = self._cells
        return (Lattice(xmin, fit_spacing(xmin, xmax, n), n + 1),
                Lattice(ymin, fit_spacing(ymin, ymax, n), n + 1))

    def shares(self, epsilon) -> np.ndarray:
        """``ε_x / ε`` for each per-point ε."""
        eps = np.asarray(epsilon, dtype=np.float64)
        if self.x_share == "optimal":
            return optimal_x_share(self.region, eps)
        return np.full(eps.shape, self.x_share)

    def split(self, n: int | None = None) -> tuple[float, float]:
        """``(ε_x, ε_y)`` spent on every point (``n`` needed with a per-trajectory budget)."""
        if n is None and self.epsilon is None:
            raise InputError("with epsilon_per_trajectory, give the trajectory length n")
        eps = self.epsilon if self.epsilon is not None else float(self.privacy_spent(n).per_point)
        eps_x = float(self.shares(np.array([eps]))[0]) * eps
        return eps_x, eps - eps_x

    def _params(self, eps):
        """Kernel rows of the distinct per-point budgets ``eps``: the optimal classical mechanism's
        ``(m, c)`` on the x lattice, then on the y lattice, after :func:`check_parts` of the split."""
        eps_x = self.shares(eps) * eps
        eps_y = eps - eps_x
        check_parts(eps_x, eps_y)
        xmin, ymin, xmax, ymax = (float(v) for v in self._bbox)
        lx, ly = self.lattice
        return np.column_stack([classical_bands(eps_x, xmax - xmin, lx.spacing, lx.count),
                                classical_bands(eps_y, ymax - ymin, ly.spacing, ly.count)])

    def _release(self, coords, offsets, rng, indices=True, out=None, previous=None):
        """The releases of validated ``coords`` (and their lattice indices when ``indices``); a
        release has no reference, so ``previous`` is not read."""
        params = self._point_params(offsets, self._params)
        kind, key, streams = keyed_trajectories(rng, offsets)
        out = np.empty_like(coords) if out is None else out
        idx = np.empty(coords.shape if indices else (0, 2), dtype=np.int64)
        lx, ly = self.lattice
        _kernels.coordinate_kernel(read_only(coords), read_only(np.asarray(offsets, dtype=np.int64)), kind, key,
                                   np.ascontiguousarray(streams, dtype=np.uint64), params,
                                   self._bbox, self._cells, lx.spacing, ly.spacing, out, idx)
        return out, (idx if indices else None)

    def release_into(self, coords, offsets, streams, out) -> None:
        """The releases of validated points written into ``out`` (the engine's rows of a chunk)."""
        self._release(coords, offsets, KeyedSource(streams, offsets), indices=False, out=out)
