"""TraCS-C: coordinate-wise perturbation on a rectangle (Zheng & Hu, PETS 2026).

Each coordinate goes through the optimal classical mechanism on its side of the
rectangle: ``x`` at ``ε_x``, ``y`` at ``ε_y``, ``ε_x + ε_y = ε``.  The output density
is the product of the two, so the ratio between any two inputs is at most
``e^{ε_x}·e^{ε_y} = e^ε``: every point is ε-LDP over the rectangle.  Points are
independent, so the whole batch is one vectorised pass.
"""

from __future__ import annotations

import numpy as np

from ..region import Rectangle
from . import _kernels
from ._base import Perturber, check_share
from ._sequential import classical_constants, classical_step

__all__ = ["TraCSC"]


class TraCSC(Perturber):
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

    Notes
    -----
    No reference point and no anchor: points are perturbed independently.  A
    point on an edge or corner is an ordinary input (the central interval slides
    inside the side).  Outputs are clamped to the rectangle after sampling, for
    floating-point error only.
    """

    uniforms_per_point = 4

    def __init__(self, region, epsilon=None, *, x_share=0.5, epsilon_per_trajectory=None,
                 round_to=None):
        if not isinstance(region, Rectangle):
            raise TypeError("TraCS-C needs a Rectangle region; for a polygon use "
                            f"Rectangle(*region.bounds), got {type(region).__name__}")
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory,
                         round_to=round_to)
        self.x_share = check_share(x_share, "x_share")
        self._bbox = np.array(region.bounds, dtype=np.float64)

    def shares(self, epsilon) -> np.ndarray:
        """``ε_x / ε`` for each per-point ε."""
        eps = np.asarray(epsilon, dtype=np.float64)
        if self.x_share == "optimal":
            from ._split import optimal_x_share

            # per-trajectory budgets: the fixed grid, so a trajectory's share depends on its length only
            return optimal_x_share(self.region, eps, grid=self._basis == "per_trajectory")
        return np.full(eps.shape, self.x_share)

    def split(self, n: int | None = None) -> tuple[float, float]:
        """``(ε_x, ε_y)`` spent on every point (``n`` needed with a per-trajectory budget)."""
        if n is None and self.epsilon is None:
            raise ValueError("with epsilon_per_trajectory, give the trajectory length n")
        eps = self.epsilon if self.epsilon is not None else float(self.privacy_spent(n).per_point)
        eps_x = float(self.shares(np.array([eps]))[0]) * eps
        return eps_x, eps - eps_x

    def _params(self, eps):
        eps_x = self.shares(eps) * eps
        x0, x1 = classical_constants(eps_x)
        y0, y1 = classical_constants(eps - eps_x)
        return np.column_stack([x0, x1, y0, y1])

    def _run(self, coords, offsets, rng, *, engine="compiled"):
        params = self._point_params(offsets, self._params)
        if engine == "numpy":
            uni = rng.random((len(coords), self.uniforms_per_point))
            rows = params if len(params) == 1 else np.repeat(params, np.diff(offsets), axis=0)
            xmin, ymin, xmax, ymax = self._bbox
            return np.column_stack([
                classical_step(coords[:, 0], xmin, xmax, rows[:, 0], rows[:, 1], uni[:, 0], uni[:, 1]),
                classical_step(coords[:, 1], ymin, ymax, rows[:, 2], rows[:, 3], uni[:, 2], uni[:, 3]),
            ])
        if engine != "compiled":
            raise ValueError(f"engine must be 'compiled' or 'numpy', got {engine!r}")
        out = np.empty_like(coords)
        traj = 0
        for start, stop, uniforms in self._draw_chunks(len(coords), rng):
            traj = _kernels.coordinate_kernel(coords, offsets, start, stop, traj, uniforms,
                                              params, self._bbox, out)
        return out
