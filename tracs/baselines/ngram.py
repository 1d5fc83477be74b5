"""NGram (Cunningham et al., PVLDB 2021) in the per-location form that keeps ε-LDP."""

from __future__ import annotations

import numpy as np

from .._validation import check_finite
from ..errors import InputError
from ._base import Baseline
from ._exponential_sampler import Disc, em_probabilities, sample_em

__all__ = ["NGram"]


class NGram(Baseline):
    """Exponential mechanism restricted to the POIs reachable from the previous release.

    Point ``i`` of a trajectory is released by the exponential mechanism (sensitivity
    the public diameter ``D``) over the candidate set
    ``C_i = {p ∈ P : d(ŷ_{i−1}, p) ≤ θ}`` built around the previously **released**
    point ``ŷ_{i−1}``; ``C_1 = P``, and an empty ``C_i`` falls back to ``P``.

    Guarantee: ``C_i`` is a function of public values only (θ and earlier outputs), and
    the exponential mechanism over any fixed set with sensitivity ``D`` is ε-LDP for
    every input in ``P``; so each point is ε-LDP given the earlier outputs, and a
    trajectory of ``n`` points is ``nε``-LDP by adaptive sequential composition.

    Parameters
    ----------
    poi_space, epsilon, epsilon_per_trajectory
        As :class:`Baseline` (a budget per trajectory is split evenly over its points).
    theta : float, optional
        Public reachability radius in metres (default ``D/4``); plays the role of the
        paper's "speed × time gap" bound.

    Notes
    -----
    *Deviation from the paper.*  The original perturbs overlapping n-grams among the
    grams feasible under public reachability, spending ``ε/(|τ| − n + 1)`` per gram,
    and reconstructs the trajectory afterwards.  This per-location form keeps its key
    idea (restrict the output to what is reachable) at a per-point budget.  Building
    the candidate set around the *true* previous location, as some re-implementations
    do, makes the output support depend on the input and is not LDP.

    The recursion is sequential along a trajectory and vectorised across trajectories:
    step ``i`` of every trajectory at once.  Supported budgets per point: as
    :class:`ExponentialMechanism` (``ε <= 2(40·ln 2 − ln|P|)``, larger ones refused).
    """

    unit = "point"

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None, theta=None):
        super().__init__(poi_space, epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        if theta is None:
            theta = poi_space.diameter / 4.0
        self.theta = check_finite(theta, "theta")
        if self.theta <= 0:
            raise InputError(f"theta must be > 0, got {self.theta}")

    def candidates(self, previous_index) -> np.ndarray:
        """Boolean mask of ``C_i`` over the POIs given the previous released POI (or ``None``)."""
        if previous_index is None:
            return np.ones(len(self.poi_space), dtype=bool)
        points = self.poi_space.points
        dx = points[:, 0] - points[previous_index, 0]
        dy = points[:, 1] - points[previous_index, 1]
        return dx * dx + dy * dy <= self.theta * self.theta

    def probabilities(self, x_index, previous_index=None, epsilon=None) -> np.ndarray:
        """Exact distribution of one release given the true POI and the previous release."""
        eps = self.epsilon if epsilon is None else epsilon
        if eps is None:
            raise InputError("give the per-point epsilon (this mechanism was built per trajectory)")
        dist = self.poi_space.distances_from(x_index)
        return em_probabilities(dist, eps / (2.0 * self.poi_space.diameter),
                                self.candidates(previous_index))

    def _perturb(self, indices, offsets, draws):
        points = self.poi_space.points
        lengths = np.diff(offsets)
        eps = np.repeat(self.epsilon_per_point(lengths), lengths)
        self._check_scale(eps)
        scale = eps / (2.0 * self.poi_space.diameter)
        out = np.empty_like(indices)
        starts = offsets[:-1]
        theta2 = self.theta * self.theta
        for step in range(int(lengths.max(initial=0))):
            rows = starts[lengths > step] + step
            accept = Disc(points, points[out[rows - 1]], theta2) if step else None
            out[rows] = sample_em(points, points[indices[rows]], scale[rows], draws.at(rows, 0), accept)
        return out
