"""The direction–distance recursion shared by TraCS-D and the Strawman.

Point ``i`` of a trajectory is perturbed around the reference ``o`` (the
previous *released* point; the public anchor for the first point):

1. ``(φ, u) = region.direction_distance(o, τ_i)``;
2. ``φ'`` from the direction mechanism, ``u'`` from the optimal classical
   mechanism on ``[0, 1]``;
3. output ``o + u'·R(o, φ')·(cos φ', sin φ')``, clamped into the region (after
   sampling, for floating-point error only).

Two engines give the same law and, up to last-bit differences of ``sin``/``cos``/
``atan2`` between libm and numpy, the same numbers from the same generator:
``"compiled"`` (default) walks the flat array once in a numba kernel (any mix of
trajectory lengths, one very long trajectory included); ``"numpy"`` vectorises
across trajectories, step ``k`` processing the ``k``-th point of every trajectory
at once (a readable reference; it holds all uniforms in memory).
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms import OptimalClassical
from ..mechanisms.optimal import side_mass
from ..region import Rectangle
from . import _kernels
from ._base import Perturber, check_share, resolve_anchor

TWO_PI = 2.0 * math.pi
DEFAULT_DIRECTION_SHARE = math.pi / (math.pi + 1.0)


def side_masses(epsilon: np.ndarray) -> np.ndarray:
    """``1/(1 + e^{ε/2})`` for each ε: the low-density mass of the optimal mechanisms.

    The threshold of their rare branch (``u < side``); the same doubles as
    :func:`tracs.mechanisms.optimal.side_mass` (never 0).
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    return np.array([side_mass(float(e)) for e in eps.ravel()]).reshape(eps.shape)


def classical_constants(epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(side mass, unit half-width)`` of :class:`OptimalClassical` for each ε."""
    eps = np.asarray(epsilon, dtype=np.float64)
    half = np.array([OptimalClassical(epsilon=float(e)).half_width for e in eps.ravel()])
    return side_masses(eps), half.reshape(eps.shape)


class SequentialPerturber(Perturber):
    """Base of TraCS-D and the Strawman (see the module docstring)."""

    _mode: int = _kernels.MODE_CIRCULAR
    _sectors: int = 0

    def __init__(self, region, epsilon=None, *, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None):
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory,
                         round_to=round_to)
        self.direction_share = check_share(direction_share, "direction_share")
        self._anchor = resolve_anchor(region, anchor)
        self.anchor = anchor if isinstance(anchor, str) else tuple(self._anchor)
        normals, offsets = region.halfplanes
        self._nx = np.ascontiguousarray(normals[:, 0])
        self._ny = np.ascontiguousarray(normals[:, 1])
        self._hb = np.ascontiguousarray(offsets)
        self._rect = isinstance(region, Rectangle)
        self._bbox = np.array(region.bounds, dtype=np.float64)

    @property
    def anchor_point(self) -> tuple[float, float]:
        """The reference of every trajectory's first point."""
        return (float(self._anchor[0]), float(self._anchor[1]))

    # -- budget split --------------------------------------------------------------
    def shares(self, epsilon) -> np.ndarray:
        """Direction share of the per-point budget for each per-point ε."""
        eps = np.asarray(epsilon, dtype=np.float64)
        return np.full(eps.shape, self.direction_share)

    def split(self, n: int | None = None) -> tuple[float, float]:
        """``(ε_direction, ε_distance)`` spent on every point (of a trajectory of ``n``
        points, needed only with a per-trajectory budget)."""
        if n is None and self.epsilon is None:
            raise ValueError("with epsilon_per_trajectory, give the trajectory length n")
        eps = self.epsilon if self.epsilon is not None else float(self.privacy_spent(n).per_point)
        share = float(self.shares(np.array([eps]))[0])
        eps_dir = share * eps
        return eps_dir, eps - eps_dir

    def _direction_params(self, eps_dir: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-ε constants of the direction mechanism (kernel columns 0 and 1)."""
        raise NotImplementedError

    def _params(self, eps: np.ndarray) -> np.ndarray:
        eps_dir = self.shares(eps) * eps
        eps_dist = eps - eps_dir
        d0, d1 = self._direction_params(eps_dir)
        r0, r1 = classical_constants(eps_dist)
        return np.column_stack([d0, d1, r0, r1])

    # -- engines ---------------------------------------------------------------------
    def _run(self, coords, offsets, rng, *, engine="compiled"):
        params = self._point_params(offsets, self._params)
        if engine == "numpy":
            return self._run_numpy(coords, offsets, rng, params)
        if engine != "compiled":
            raise ValueError(f"engine must be 'compiled' or 'numpy', got {engine!r}")
        out = np.empty_like(coords)
        traj = 0
        for start, stop, uniforms in self._draw_chunks(len(coords), rng):
            traj = _kernels.sequential_kernel(
                coords, offsets, start, stop, traj, uniforms, params, self._anchor,
                self._nx, self._ny, self._hb, self._rect, self._bbox, self.region.tolerance,
                self._mode, self._sectors, out)
        return out

    def _run_numpy(self, coords, offsets, rng, params):
        uniforms = rng.random((len(coords), self.uniforms_per_point))
        lengths = np.diff(offsets)
        order = np.argsort(-lengths, kind="stable")
        starts, sorted_len = offsets[:-1][order], lengths[order]
        rows = params[order] if len(params) > 1 else np.broadcast_to(params, (len(order), 4))
        out = np.empty_like(coords)
        for k in range(int(sorted_len[0])):
            active = int(np.searchsorted(-sorted_len, -k, side="left"))
            idx = starts[:active] + k
            ref = np.broadcast_to(self._anchor, (active, 2)) if k == 0 else out[idx - 1]
            out[idx] = self._step(ref, coords[idx], uniforms[idx], rows[:active])
        return out

    def _step(self, ref, tau, uni, rows):
        """One vectorised step: perturb ``tau`` around ``ref`` (arrays of points)."""
        phi, u = self.region._direction_distance(ref, tau)
        phi2 = self._direction_step(phi, uni, rows)
        u2 = classical_step(u, 0.0, 1.0, rows[:, 2], rows[:, 3], uni[:, 2], uni[:, 3])
        c, s = np.cos(phi2), np.sin(phi2)
        reach = u2 * self.region._exit_distance(ref, c, s)
        out = np.column_stack([ref[:, 0] + reach * c, ref[:, 1] + reach * s])
        return self.region._clamp_from(ref, out)

    def _direction_step(self, phi, uni, rows):
        raise NotImplementedError


def wrap_step(y: np.ndarray) -> np.ndarray:
    """``y mod 2π`` in ``[0, 2π)`` (vectorised; the circle's ``wrap``)."""
    y = np.mod(y, TWO_PI)
    return np.where(y >= TWO_PI, 0.0, y)


def classical_step(x, low, high, side, half, sel, v):
    """Vectorised twin of :func:`tracs.perturbers._kernels.classical` (``side``: side mass)."""
    width = high - low
    left = low + width * np.clip((x - low) / width - half, 0.0, 1.0 - 2.0 * half)
    central = 2.0 * half * width
    z = low + v * (width - central)
    outer = np.where(z < left, z, z + central)
    return np.clip(np.where(sel < side, outer, left + v * central), low, high)


def sector_position_step(phi: np.ndarray, w: float) -> np.ndarray:
    """Vectorised twin of :func:`tracs.perturbers._kernels.sector_position`."""
    t = phi / w
    r = np.floor(t + 0.5)
    return np.where(np.abs(t - r) <= _kernels.SNAP_ULPS * _kernels.EPS * r, r, t)
