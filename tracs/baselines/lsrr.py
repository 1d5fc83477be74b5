"""L-SRR: staircase randomized response over POIs grouped by closeness (Wang et al., CCS 2022)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._base import Baseline
from ._em import RESOLUTION

__all__ = ["LSRR", "staircase_probabilities", "default_group_sizes"]

_BLOCK_ELEMENTS = 1 << 18  # a few rows of |P| distances at a time (cache friendly)


def staircase_probabilities(sizes, epsilon: float) -> np.ndarray:
    """Per-POI probability ``p_j`` of each group ``j`` (spec ``BASELINES.md``).

    ``q = (m − 1)/((m − 1)·N·E − (E − 1)·R)`` and
    ``p_j = q + (m − j)·q·(E − 1)/(m − 1)`` with ``E = e^ε``, ``N = Σ n_j`` and
    ``R = Σ_j (j − 1)·n_j``; ``p_1 = E·q`` and ``p_m = q``.  Written with ``e^{−ε}``
    so that no intermediate overflows for any ε.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    m = len(sizes)
    n_total = sizes.sum()
    r = np.dot(np.arange(m), sizes)
    e_inv = math.exp(-epsilon)
    top = (m - 1) / ((m - 1) * n_total - (1.0 - e_inv) * r)  # q·E = p_1
    q = top * e_inv
    return q + (m - 1 - np.arange(m)) / (m - 1) * (top - q)


def default_group_sizes(n_poi: int, epsilon: float, groups: int = 3) -> tuple[int, ...]:
    """Public default group sizes: ``groups − 1`` equal inner groups, the rest outside.

    The common inner size ``s`` minimises the expected distance of the output under
    a uniform-density model in which the ``r``-th nearest POI lies at a distance
    proportional to ``√r``.  Depends only on ``|P|``, ε and ``groups`` (all public), so
    the sizes are the same for every input, as the guarantee requires.
    """
    inner = groups - 1
    largest = (n_poi - 1) // inner
    candidates = np.unique(np.round(np.geomspace(1, largest, 256)).astype(np.int64))
    best, best_cost = 1, math.inf
    for s in candidates:
        sizes = [int(s)] * inner + [n_poi - inner * int(s)]
        mass = staircase_probabilities(sizes, epsilon) * np.asarray(sizes)
        edges = np.concatenate([[0.0], np.cumsum(sizes)])
        mean_dist = (edges[1:] ** 1.5 - edges[:-1] ** 1.5) / (edges[1:] - edges[:-1])
        cost = float(np.dot(mass, mean_dist))
        if cost < best_cost:
            best, best_cost = int(s), cost
    return tuple([best] * inner + [n_poi - inner * best])


class LSRR(Baseline):
    """Staircase randomized response with groups of fixed sizes.

    For true POI ``x``, rank all POIs by distance from ``x``; the ``n_1`` nearest
    form ``G_1(x)``, the next ``n_2`` form ``G_2(x)``, …, the last ``n_m`` form
    ``G_m(x)``.  Every POI of group ``j`` is released with probability ``p_j``
    (:func:`staircase_probabilities`): sample a group with probability ``n_j·p_j``,
    then a uniform POI inside it.

    Guarantee: the sizes, hence ``q`` and every ``p_j``, are the same for every input,
    so any output has probability between ``q`` and ``p_1 = e^ε·q``: each point is
    ε-LDP (Wang et al., CCS 2022, with fixed sizes; spec ``BASELINES.md``).

    Parameters
    ----------
    poi_space, epsilon, epsilon_per_trajectory
        As :class:`Baseline` (a budget per trajectory is split evenly over its points).
    sizes : sequence of int, optional
        Sizes of the groups, nearest first, each ``>= 1``: either all ``m`` sizes
        (summing to ``|P|``) or the first ``m − 1`` (the last group takes the rest).
        Default: :func:`default_group_sizes` with ``groups`` groups.
    groups : int, optional
        Number of groups when ``sizes`` is not given (default 3, at least 2).

    Notes
    -----
    *Deviation from the paper.*  The paper forms groups by distance thresholds around
    ``x``; then the sizes, and with them ``q``, depend on ``x`` and the loss exceeds
    ε (2.8 at ε = 2 on a 21 × 21 grid).  Fixed sizes restore the guarantee.

    Ties in distance at a group boundary are broken by ``numpy.argpartition`` on the
    distance row (deterministic for a given row).  Any assignment of tied POIs keeps
    the sizes, so it cannot affect the guarantee; :meth:`probabilities` uses the same
    assignment as the sampler.

    Sampling works on blocks of distinct inputs: one Θ(|P|) partial sort per distinct
    input POI, then Θ(1) per point.

    Supported budgets: every group's mass ``n_j·p_j`` must be at least ``2^-40``
    (the group is drawn from one uniform on the ``2^-53`` grid); larger budgets are
    refused with a ``ValueError`` that states the largest one accepted (about 36 on
    7,800 POIs with the default three groups).
    """

    unit = "point"
    _deferred_check = True  # the faithful-budget check needs the group sizes

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None,
                 sizes=None, groups: int = 3):
        super().__init__(poi_space, epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 2:
            raise ValueError(f"groups must be an integer >= 2, got {groups!r}")
        n_poi = len(poi_space)
        if groups > n_poi:
            raise ValueError(f"{groups} groups need at least {groups} POIs, the space has {n_poi}")
        self.groups = int(groups)
        self._sizes = None if sizes is None else self._check_sizes(sizes, n_poi)
        if self._sizes is not None:
            self.groups = len(self._sizes)
        self._check_construction()

    def _faithful(self, epsilon: float) -> bool:
        """Whether every group's mass ``n_j·p_j`` is at least ``2^-40`` at ``epsilon``.

        The group is drawn by inverse CDF from one uniform on the ``2^-53`` grid, so a
        smaller group mass would be realised with a large relative error (or not at
        all); the rank inside the group is an exact integer draw.
        """
        sizes = self.sizes(epsilon)
        mass = staircase_probabilities(sizes, epsilon) * np.asarray(sizes)
        return bool(mass.min() >= RESOLUTION)

    def _max_draw_epsilon(self, epsilon):
        if self._faithful(epsilon):
            return epsilon
        # bisection on [0, epsilon] for the largest budget that passes (sizes depend on ε)
        lo, hi = 0.0, float(epsilon)
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self._faithful(mid) else (lo, mid)
        return lo

    @staticmethod
    def _check_sizes(sizes, n_poi: int) -> tuple[int, ...]:
        values = np.asarray(sizes)
        if values.ndim != 1 or values.size < 1 or values.dtype.kind not in "iu":
            raise TypeError("sizes must be a 1-D sequence of integers")
        values = [int(v) for v in values]
        if min(values) < 1:
            raise ValueError(f"every group size must be >= 1, got {values}")
        total = sum(values)
        if total < n_poi:
            values.append(n_poi - total)
        elif total > n_poi:
            raise ValueError(f"group sizes sum to {total}, more than the {n_poi} POIs")
        if len(values) < 2:
            raise ValueError("L-SRR needs at least two groups")
        return tuple(values)

    def sizes(self, epsilon=None) -> tuple[int, ...]:
        """Group sizes used at budget ``epsilon`` (default: the per-point ``epsilon``)."""
        if self._sizes is not None:
            return self._sizes
        eps = self.epsilon if epsilon is None else epsilon
        if eps is None:
            raise ValueError("give the per-point epsilon (this mechanism was built per trajectory)")
        return default_group_sizes(len(self.poi_space), eps, self.groups)

    def _partition(self, x_index, sizes) -> np.ndarray:
        """POI indices partitioned by rank from each input: group ``j`` is a slice."""
        kth = np.cumsum(sizes)[:-1] - 1
        return np.argpartition(self.poi_space.distances_from(x_index), kth, axis=-1)

    def probabilities(self, x_index, epsilon=None) -> np.ndarray:
        """Exact output distribution over the POIs for true POI ``x_index`` (int)."""
        eps = self.epsilon if epsilon is None else epsilon
        if eps is None:
            raise ValueError("give the per-point epsilon (this mechanism was built per trajectory)")
        sizes = self.sizes(eps)
        order = self._partition(int(x_index), sizes)
        out = np.empty(len(self.poi_space))
        out[order] = np.repeat(staircase_probabilities(sizes, eps), sizes)
        return out

    def _perturb(self, indices, offsets, rng):
        lengths = np.diff(offsets)
        eps = np.repeat(self._point_budget(lengths), lengths)
        self._check_scale(eps)
        out = np.empty_like(indices)
        for value in np.unique(eps):
            rows = np.flatnonzero(eps == value)
            out[rows] = self._sample(indices[rows], float(value), rng)
        return out

    def _sample(self, indices, epsilon, rng):
        sizes = self.sizes(epsilon)
        mass = staircase_probabilities(sizes, epsilon) * np.asarray(sizes)
        cum_mass = np.cumsum(mass)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        # group, then a uniform rank inside it
        group = np.searchsorted(cum_mass, rng.random(indices.size) * cum_mass[-1], side="right")
        group = np.minimum(group, len(sizes) - 1)
        rank = starts[group] + rng.integers(0, np.asarray(sizes)[group])
        # one partial sort per distinct input, a block of inputs at a time
        unique, inverse = np.unique(indices, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(unique.size + 1))
        step = max(1, _BLOCK_ELEMENTS // len(self.poi_space))
        out = np.empty_like(indices)
        for start in range(0, unique.size, step):
            stop = min(start + step, unique.size)
            table = self._partition(unique[start:stop], sizes)
            rows = order[bounds[start]:bounds[stop]]
            out[rows] = table[inverse[rows] - start, rank[rows]]
        return out
