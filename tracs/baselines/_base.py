"""The perturber interface shared by the discrete-space baselines, and their ledger.

Every baseline is built from a public :class:`~tracs.discrete.POISpace` and a
privacy budget, snaps its inputs to their nearest POI (the true location is assumed
to be a POI; snapping is a public, deterministic map applied before the mechanism)
and releases POIs.  It offers the TraCS perturbers' interface:
``perturb(points)``, ``perturb_many(coords, offsets)`` and ``privacy_spent(n)``.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_epsilon
from ..discrete import POISpace, as_points
from ._em import MAX_EPSILON_SCALE

__all__ = ["Baseline", "BaselineLedger", "check_offsets"]


@dataclass(frozen=True)
class BaselineLedger:
    """What a baseline spends on a trajectory of ``n_points`` points.

    Attributes
    ----------
    per_point : float
        Bound on the privacy loss about any single point (changing one point of the
        trajectory, all else fixed).
    per_trajectory : float
        Bound on the privacy loss about the whole trajectory (any two trajectories of
        the same length).
    n_points : int
    unit : str
        The unit the mechanism is designed to protect at its ε: ``"point"`` (each
        location is ε-LDP; the trajectory by sequential composition) or
        ``"trajectory"`` (the whole trajectory at once).
    note : str
        How the budget is split, in words.
    """

    per_point: float
    per_trajectory: float
    n_points: int
    unit: str
    note: str = ""


def check_offsets(offsets, n: int) -> np.ndarray:
    """Validate trajectory offsets ``(T+1,)``: integers from 0 to ``n``, non-decreasing."""
    arr = np.asarray(offsets)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"offsets must be a 1-D array of length T + 1 >= 1, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"offsets must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.intp)
    if arr[0] != 0 or arr[-1] != n:
        raise ValueError(f"offsets must start at 0 and end at {n} (the number of points), "
                         f"got {int(arr[0])} … {int(arr[-1])}")
    if np.any(np.diff(arr) < 0):
        raise ValueError("offsets must be non-decreasing")
    return arr


class Baseline(ABC):
    """Base of the discrete-space baselines.

    Parameters
    ----------
    poi_space : POISpace
        The public location space.
    epsilon : float, optional
        Budget per point.
    epsilon_per_trajectory : float, optional
        Budget per trajectory.  Give exactly one of the two.  Per-point methods split a
        trajectory budget evenly over its points (``ε/n`` each for a trajectory of
        ``n`` points); trajectory-level methods given a per-point ``ε`` spend ``n·ε``
        on a trajectory of ``n`` points.  The trajectory length is treated as public.
    """

    #: the unit protected at the method's native budget: "point" or "trajectory"
    unit = "point"

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None):
        if not isinstance(poi_space, POISpace):
            raise TypeError(f"poi_space must be a tracs.POISpace, got {type(poi_space).__name__}")
        if (epsilon is None) == (epsilon_per_trajectory is None):
            raise ValueError("give exactly one of epsilon (per point) and epsilon_per_trajectory")
        self.poi_space = poi_space
        self.epsilon = None if epsilon is None else check_epsilon(epsilon)
        self.epsilon_per_trajectory = (None if epsilon_per_trajectory is None
                                       else check_epsilon(epsilon_per_trajectory,
                                                          "epsilon_per_trajectory"))

    # -- budgets -----------------------------------------------------------------------
    def _trajectory_budget(self, lengths: np.ndarray) -> np.ndarray:
        """Budget of each trajectory, given their lengths."""
        lengths = np.asarray(lengths, dtype=np.float64)
        if self.epsilon_per_trajectory is not None:
            return np.full(lengths.shape, self.epsilon_per_trajectory)
        return self.epsilon * lengths

    def _point_budget(self, lengths: np.ndarray) -> np.ndarray:
        """Budget of each point of each trajectory (per-point methods)."""
        lengths = np.asarray(lengths, dtype=np.float64)
        if self.epsilon is not None:
            return np.full(lengths.shape, self.epsilon)
        return self.epsilon_per_trajectory / np.maximum(lengths, 1.0)

    @staticmethod
    def _check_scale(epsilons, exponent_per_epsilon: float = 0.5) -> None:
        """Refuse budgets whose smallest probability would underflow in double precision.

        The smallest probability carries ``exp(−c·ε)`` with ``c = 1/2`` for the
        exponential mechanism and ``c = 1`` for L-SRR; past ``c·ε = 700`` it would be
        rounded to 0 and the ratio bound could not hold as implemented.
        """
        top = float(np.max(epsilons)) if np.size(epsilons) else 0.0
        if top * exponent_per_epsilon > MAX_EPSILON_SCALE:
            raise ValueError(
                f"a budget of {top:g} on one draw is too large to represent: its smallest "
                f"probability underflows for ε > {MAX_EPSILON_SCALE / exponent_per_epsilon:g}"
            )

    def privacy_spent(self, n: int) -> BaselineLedger:
        """Privacy spent on one trajectory of ``n`` points (see :class:`BaselineLedger`)."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        n = int(n)
        if self.unit == "point":
            eps = float(self._point_budget(np.array([n]))[0])
            return BaselineLedger(eps, eps * n, n, "point",
                                  f"each point is {eps:g}-LDP; the trajectory is "
                                  f"{eps * n:g}-LDP by sequential composition")
        total = float(self._trajectory_budget(np.array([n]))[0])
        return BaselineLedger(total, total, n, "trajectory",
                              f"the whole trajectory is {total:g}-LDP; no tighter "
                              "per-point bound is claimed" + self._split_note(n, total))

    def _split_note(self, n: int, total: float) -> str:
        return ""

    # -- perturbation ------------------------------------------------------------------
    def perturb(self, points, *, rng=None) -> np.ndarray:
        """Perturb one trajectory ``(n, 2)``; returns ``(n, 2)`` POI coordinates."""
        points = as_points(points, "points")
        return self.perturb_many(points, np.array([0, len(points)]), rng=rng)

    def perturb_many(self, coords, offsets, *, rng=None) -> np.ndarray:
        """Perturb many trajectories stored flat.

        Parameters
        ----------
        coords : array_like, shape (N, 2)
            All points, trajectory after trajectory, in metres.  Each is first snapped
            to its nearest POI.
        offsets : array_like of int, shape (T + 1,)
            Trajectory ``t`` is ``coords[offsets[t]:offsets[t + 1]]``.
        rng : None, int, SeedSequence or Generator, optional

        Returns
        -------
        numpy.ndarray, shape (N, 2)
            Released POI coordinates, in the input's order.
        """
        coords = as_points(coords, "coords")
        offsets = check_offsets(offsets, len(coords))
        _, idx = self.poi_space.round(coords)
        return self.poi_space.points[self.perturb_indices(idx, offsets, rng=rng)]

    def perturb_indices(self, indices, offsets, *, rng=None) -> np.ndarray:
        """Perturb trajectories given as POI indices (no snapping); returns POI indices."""
        indices = np.asarray(indices)
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise TypeError("indices must be a 1-D integer array")
        indices = indices.astype(np.intp)
        if indices.size and (indices.min() < 0 or indices.max() >= len(self.poi_space)):
            raise ValueError(f"indices must lie in 0 … {len(self.poi_space) - 1}")
        offsets = check_offsets(offsets, len(indices))
        return self._perturb(indices, offsets, as_generator(rng))

    @abstractmethod
    def _perturb(self, indices: np.ndarray, offsets: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
        """Validated POI indices and offsets -> released POI indices."""
