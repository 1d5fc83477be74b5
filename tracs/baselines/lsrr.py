"""L-SRR: staircase randomized response over POIs grouped by closeness (Wang et al., CCS 2022)."""

from __future__ import annotations

import math
import numbers
from dataclasses import replace

import numpy as np

from .._validation import as_float_array
from ..errors import InputError, InputTypeError
from ._base import Baseline
from ._exponential_sampler import RESOLUTION

__all__ = ["LSRR", "staircase_probabilities", "default_group_sizes", "GROUPINGS"]

_BLOCK_ELEMENTS = 1 << 18  # a few rows of |P| distances at a time (cache friendly)
#: the two ways of forming the groups (see :class:`LSRR`)
GROUPINGS = ("fixed", "thresholds")
#: relative half-width of the band around a threshold inside which a KD-tree ball count
#: is redone with the sampler's own comparison (ties and rounding at a boundary)
_BAND = 1e-9


def staircase_probabilities(sizes, epsilon: float) -> np.ndarray:
    """Per-POI probability ``p_j`` of each group ``j`` (``docs/mechanisms.md`` §7).

    ``q = (m − 1)/((m − 1)·N·E − (E − 1)·R)`` and
    ``p_j = q + (m − j)·q·(E − 1)/(m − 1)`` with ``E = e^ε``, ``N = Σ n_j`` and
    ``R = Σ_j (j − 1)·n_j``; ``p_1 = E·q`` and ``p_m = q``.  Written with ``e^{−ε}``
    so that no intermediate overflows for any ε.  ``sizes`` may be a stack
    ``(..., m)`` of size vectors (one per input, for location-dependent groups); a
    group may be empty (size 0), its ``p_j`` is then returned but never used.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    m = sizes.shape[-1]
    n_total = sizes.sum(axis=-1, keepdims=True)
    r = (sizes @ np.arange(m, dtype=np.float64))[..., None]
    e_inv = math.exp(-epsilon)
    top = (m - 1) / ((m - 1) * n_total - (1.0 - e_inv) * r)  # q·E = p_1
    q = top * e_inv
    out = q + (m - 1 - np.arange(m)) / (m - 1) * (top - q)
    return out


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
    """Staircase randomized response over POIs grouped by closeness to the true POI.

    For true POI ``x`` the POIs are split into groups ``G_1(x) … G_m(x)``, nearest
    first; every POI of group ``j`` is released with probability ``p_j(x)``
    (:func:`staircase_probabilities` of the group sizes ``n_j(x)``): sample a group
    with probability ``n_j·p_j``, then a uniform POI inside it.  Two groupings:

    ``grouping="fixed"`` (default) — rank all POIs by distance from ``x``; the
    ``n_1`` nearest form ``G_1(x)``, the next ``n_2`` form ``G_2(x)``, …, the last
    ``n_m`` form ``G_m(x)``.  Guarantee: the sizes, hence ``q`` and every ``p_j``,
    are the same for every input, so any output has probability between ``q`` and
    ``p_1 = e^ε·q``: **each point is ε-LDP** (Wang et al., CCS 2022, with fixed
    sizes; ``docs/mechanisms.md`` §7).

    ``grouping="thresholds"`` — the grouping of the TraCS paper's experiments:
    ``G_j(x)`` holds the POIs whose normalised distance to ``x`` is in
    ``(t_{j−1}, t_j]`` (``t_0 = −∞``, ``t_m = ∞``; default ``thresholds=(0.3, 0.6)``,
    three groups).  Normalisation follows the paper's min-max scaling to the unit
    square: with ``(xmin, ymin, xmax, ymax)`` the bounds of the public region of the
    POI space (by default the POIs' bounding box), a point maps to
    ``((x − xmin)/(xmax − xmin), (y − ymin)/(ymax − ymin))`` and distances are
    Euclidean there.  Each axis is scaled by its own side, so on a non-square box a
    threshold is a fraction of the width along x and of the height along y (an
    ellipse in metres), exactly as after the paper's scaling.  **This variant is NOT
    ε-LDP**: the group sizes ``n_j(x)``, hence ``q(x)`` and every ``p_j(x)``, depend
    on the true location, so the worst-case privacy loss
    ``max_{x,x',y} log P(y|x)/P(y|x')`` exceeds ε (for example 2.83 at ε = 2 on a
    21 × 21 grid).  :meth:`privacy_loss` computes that actual loss exactly, and the
    ledger (:meth:`privacy_spent`) reports it instead of ε.  Use it to reproduce the
    paper's baseline, never to release data.

    Parameters
    ----------
    poi_space, epsilon, epsilon_per_trajectory
        As :class:`Baseline` (a budget per trajectory is split evenly over its points).
    sizes : sequence of int, optional
        ``grouping="fixed"`` only.  Sizes of the groups, nearest first, each ``>= 1``:
        either all ``m`` sizes (summing to ``|P|``) or the first ``m − 1`` (the last
        group takes the rest).  Default: :func:`default_group_sizes` with ``groups``
        groups.
    groups : int, optional
        Number of groups when ``sizes`` is not given (default 3, at least 2).  With
        ``grouping="thresholds"`` it must equal ``len(thresholds) + 1``.
    grouping : {"fixed", "thresholds"}
        See above.
    thresholds : sequence of float
        ``grouping="thresholds"`` only: increasing positive distances in the
        normalised unit square (default ``(0.3, 0.6)``, the paper's).

    Notes
    -----
    *Fixed grouping.*  Ties in distance at a group boundary are broken by
    ``numpy.argpartition`` on the distance row (deterministic for a given row).  Any
    assignment of tied POIs keeps the sizes, so it cannot affect the guarantee;
    :meth:`probabilities` uses the same assignment as the sampler.

    *Threshold grouping.*  A POI at exactly a threshold belongs to the nearer group;
    the comparison is made on squared normalised distances, the same in the
    sampler, :meth:`probabilities`, :meth:`group_sizes` and :meth:`privacy_loss`.

    Sampling works on blocks of distinct inputs: one Θ(|P|) partial sort (fixed) or
    Θ(|P| log |P|) sort by group (thresholds) per distinct input POI, then Θ(1) per point.

    Supported budgets: every group's mass ``n_j·p_j`` must be at least ``2^-40``
    (the group is drawn from one uniform on the ``2^-53`` grid); larger budgets are
    refused with a ``ValueError`` that states the largest one accepted (about 36 on
    7,800 POIs with the default three groups).
    """

    unit = "point"
    _deferred_check = True  # the faithful-budget check needs the group sizes

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None,
                 sizes=None, groups: int = 3, grouping: str = "fixed", thresholds=(0.3, 0.6)):
        super().__init__(poi_space, epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 2:
            raise InputError(f"groups must be an integer >= 2, got {groups!r}")
        if grouping not in GROUPINGS:
            raise InputError(f"grouping must be one of {', '.join(map(repr, GROUPINGS))}, got {grouping!r}")
        n_poi = len(poi_space)
        self.grouping = grouping
        self.thresholds = None
        self._sizes = None
        self._losses: dict[float, float] = {}
        if grouping == "thresholds":
            if sizes is not None:
                raise InputError("sizes apply to grouping='fixed'; grouping='thresholds' takes thresholds")
            self.thresholds = self._check_thresholds(thresholds)
            if groups not in (3, len(self.thresholds) + 1):
                raise InputError(f"{len(self.thresholds)} thresholds make {len(self.thresholds) + 1} groups, "
                                 f"not {groups}")
            self.groups = len(self.thresholds) + 1
            self._unit_points = self._normalised_points()
            self._table = None  # (|P|, m) group sizes, computed on first use
        else:
            if groups > n_poi:
                raise InputError(f"{groups} groups need at least {groups} POIs, the space has {n_poi}")
            self.groups = int(groups)
            self._sizes = None if sizes is None else self._check_sizes(sizes, n_poi)
            if self._sizes is not None:
                self.groups = len(self._sizes)
        self._check_construction()

    # -- validation --------------------------------------------------------------------
    @staticmethod
    def _check_thresholds(thresholds) -> tuple[float, ...]:
        values = as_float_array(thresholds, "thresholds").reshape(-1)
        if values.size < 1:
            raise InputError("give at least one threshold")
        if values[0] <= 0 or np.any(np.diff(values) <= 0):
            raise InputError(f"thresholds must be positive and strictly increasing, got {list(values)}")
        return tuple(float(v) for v in values)

    def _normalised_points(self) -> np.ndarray:
        """The POIs min-max scaled to the unit square by the public region's bounds (per axis)."""
        try:
            bounds = self.poi_space.region.bounds
        except ValueError:  # the POIs' own bounding box is flat
            bounds = self.poi_space.bounds
        xmin, ymin, xmax, ymax = (float(v) for v in bounds)
        side = np.array([xmax - xmin, ymax - ymin])
        if not np.all(side > 0):
            raise InputError("grouping='thresholds' needs a bounding box of positive width and height "
                             f"(distances are fractions of its sides), got bounds {(xmin, ymin, xmax, ymax)}")
        return (self.poi_space.points - (xmin, ymin)) / side

    def _faithful(self, epsilon: float) -> bool:
        """Whether every group's mass ``n_j·p_j`` is at least ``2^-40`` at ``epsilon``.

        The group is drawn by inverse CDF from one uniform on the ``2^-53`` grid, so a
        smaller group mass would be realised with a large relative error (or not at
        all); the rank inside the group is an exact integer draw.  With thresholds,
        every input's non-empty groups are checked.
        """
        sizes = np.asarray(self.group_sizes() if self.grouping == "thresholds" else self.sizes(epsilon))
        mass = staircase_probabilities(sizes, epsilon) * sizes
        return bool(mass[sizes > 0].min() >= RESOLUTION)

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
            raise InputTypeError("sizes must be a 1-D sequence of integers")
        values = [int(v) for v in values]
        if min(values) < 1:
            raise InputError(f"every group size must be >= 1, got {values}")
        total = sum(values)
        if total < n_poi:
            values.append(n_poi - total)
        elif total > n_poi:
            raise InputError(f"group sizes sum to {total}, more than the {n_poi} POIs")
        if len(values) < 2:
            raise InputError("L-SRR needs at least two groups")
        return tuple(values)

    def _epsilon(self, epsilon):
        eps = self.epsilon if epsilon is None else epsilon
        if eps is None:
            raise InputError("give the per-point epsilon (this mechanism was built per trajectory)")
        return eps

    # -- groups ------------------------------------------------------------------------
    def sizes(self, epsilon=None) -> tuple[int, ...]:
        """Group sizes used at budget ``epsilon`` (default: the per-point ``epsilon``).

        Fixed grouping only: with thresholds the sizes depend on the true POI
        (:meth:`group_sizes`).
        """
        if self.grouping == "thresholds":
            raise InputError("with grouping='thresholds' the group sizes depend on the true POI: "
                             "use group_sizes()")
        if self._sizes is not None:
            return self._sizes
        return default_group_sizes(len(self.poi_space), self._epsilon(epsilon), self.groups)

    def _threshold_groups(self, x_index) -> np.ndarray:
        """Group (0-based) of every POI for each input, shape ``(..., |P|)``: the sampler's comparison."""
        u = self._unit_points
        origin = u[np.asarray(x_index)]
        dx = origin[..., 0, None] - u[:, 0]
        dy = origin[..., 1, None] - u[:, 1]
        d2 = dx * dx + dy * dy
        group = np.zeros(d2.shape, dtype=np.int8)
        for t in self.thresholds:
            group += d2 > t * t
        return group

    def group_sizes(self) -> np.ndarray:
        """Sizes ``n_j(x)`` of the groups of every true POI ``x``, shape ``(|P|, m)``.

        Fixed grouping: the same row for every ``x``.  Thresholds: counts of POIs in
        the normalised balls of radius ``t_j`` around each POI, from a KD-tree
        (``O(|P| log |P|)`` plus the size of the output); any POI within a relative
        ``1e-9`` of a threshold makes that row be recounted with the exact comparison
        used by the sampler, so the sizes always agree with the sampled groups.
        """
        n_poi = len(self.poi_space)
        if self.grouping == "fixed":
            return np.tile(np.asarray(self.sizes(), dtype=np.int64), (n_poi, 1))
        if self._table is None:
            from scipy.spatial import cKDTree

            u = self._unit_points
            tree = cKDTree(u)
            within = np.empty((n_poi, len(self.thresholds)), dtype=np.int64)
            unsure = np.zeros(n_poi, dtype=bool)
            for k, t in enumerate(self.thresholds):
                low = tree.query_ball_point(u, t * (1 - _BAND), return_length=True)
                high = tree.query_ball_point(u, t * (1 + _BAND), return_length=True)
                within[:, k] = low
                unsure |= low != high
            rows = np.flatnonzero(unsure)
            step = max(1, _BLOCK_ELEMENTS // n_poi)
            for start in range(0, rows.size, step):
                block = rows[start:start + step]
                group = self._threshold_groups(block)
                for k in range(len(self.thresholds)):
                    within[block, k] = np.count_nonzero(group <= k, axis=1)
            edges = np.hstack([np.zeros((n_poi, 1), np.int64), within, np.full((n_poi, 1), n_poi)])
            self._table = np.diff(edges, axis=1)
        return self._table

    def _partition(self, x_index, sizes) -> np.ndarray:
        """POI indices partitioned by rank from each input: group ``j`` is a slice."""
        kth = np.cumsum(sizes)[:-1] - 1
        return np.argpartition(self.poi_space.distances_from(x_index), kth, axis=-1)

    # -- exact law and actual privacy loss ---------------------------------------------
    def probabilities(self, x_index, epsilon=None) -> np.ndarray:
        """Exact output distribution over the POIs for true POI ``x_index`` (an int: shape ``(|P|,)``; an
        array of ``k`` ints: ``(k, |P|)``, the groups of each input by the sampler's own partial sort),
        at ``epsilon`` (default the per-point ``epsilon``)."""
        eps = self._epsilon(epsilon)
        x = np.asarray(x_index, dtype=np.intp)
        if self.grouping == "thresholds":
            p = staircase_probabilities(self.group_sizes()[x], eps)
            return np.take_along_axis(p, self._threshold_groups(x).astype(np.intp), axis=-1)
        sizes = self.sizes(eps)
        order = self._partition(x, sizes)
        values = np.repeat(staircase_probabilities(sizes, eps), sizes)
        out = np.empty(order.shape)
        np.put_along_axis(out, order, np.broadcast_to(values, order.shape), axis=-1)
        return out

    def privacy_loss(self, epsilon=None) -> float:
        """Worst-case privacy loss per point, ``max_{x,x',y} ln P(y|x)/P(y|x')``, over this POI space.

        Fixed grouping: exactly ε (every input has the same ``p_1 = e^ε·q`` and
        ``p_m = q``, each attained by some output).  Thresholds: computed exactly.
        The loss is ``L = max_y ln(A(y)/B(y))`` with ``A(y) = max_x P(y|x)`` and
        ``B(y) = min_x P(y|x)``; ``P(y|x) = p_j(x)`` for ``y ∈ G_j(x)``, and a POI may
        be in ``G_1`` of one input and in the farthest group of another.  Write
        ``hi(x) = p_1(x)`` (``G_1(x)`` always holds ``x``) and ``lo(x)`` the ``p_j(x)``
        of ``x``'s farthest non-empty group: the largest and smallest probability
        that input ``x`` gives any output, so ``L <= ln(max hi / min lo)``.

        1. Sizes ``n_j(x)`` for every ``x`` from KD-tree ball counts
           (:meth:`group_sizes`, ``O(|P| log |P|)``), then ``p_j(x)``, ``hi``, ``lo``.
        2. A lower bound ``L_0``: ``y = x`` gives ``P(y|y) = hi(y)``, so
           ``L_0 = max_y [ln hi(y) − ln P(y|x')]`` over the 8 inputs ``x'`` of
           smallest ``lo`` (``O(|P|)`` each).
        3. A ratio above ``L_0`` needs its maximising input ``x`` with
           ``ln hi(x) >= ln min lo + L_0`` and its minimising input ``x'`` with
           ``ln lo(x') <= ln max hi − L_0``; ``A`` and ``B`` are computed exactly over
           those inputs only, and ``L = max(L_0, max_y ln A(y)/B(y))``.

        When the most isolated POI lies in the farthest group of the most crowded
        one, ``L_0`` already equals the upper bound and step 3 touches a handful of
        inputs (``O(|P| log |P|)`` in all); in the worst case step 3 is an exact
        ``O(|P|²)``-time, ``O(|P|)``-memory pass over all inputs in blocks.
        """
        eps = float(self._epsilon(epsilon))
        if self.grouping == "fixed":
            return eps
        if eps not in self._losses:
            self._losses[eps] = self._threshold_loss(eps)
        return self._losses[eps]

    def _threshold_loss(self, eps: float, *, prune: bool = True) -> float:
        sizes = self.group_sizes()
        log_p = np.log(staircase_probabilities(sizes, eps))  # (|P|, m)
        rows = np.arange(len(sizes))
        last = sizes.shape[1] - 1 - np.argmax(sizes[:, ::-1] > 0, axis=1)
        log_hi, log_lo = log_p[:, 0], log_p[rows, last]
        bound = -np.inf  # a loss some (x, x', y) attains
        if prune:
            # y = x attains P(y|x) = hi(x): pair every output with the inputs of smallest lo
            for x_low in np.argsort(log_lo, kind="stable")[:8]:
                log_far = log_p[x_low][self._threshold_groups(int(x_low))]
                bound = max(bound, float(np.max(log_hi - log_far)))
        # a ratio above `bound` needs its numerator input among `high` and its denominator among `low`
        slack = 1e-9
        high = rows[log_hi >= log_lo.min() + bound - slack]
        low = rows[log_lo <= log_hi.max() - bound + slack]
        most = np.full(len(sizes), -np.inf)
        least = np.full(len(sizes), np.inf)
        step = max(1, _BLOCK_ELEMENTS // len(sizes))
        for inputs, keep in ((high, np.maximum), (low, np.minimum)):
            for start in range(0, inputs.size, step):
                block = inputs[start:start + step]
                p = np.take_along_axis(log_p[block], self._threshold_groups(block).astype(np.intp), axis=1)
                if keep is np.maximum:
                    most = np.maximum(most, p.max(axis=0))
                else:
                    least = np.minimum(least, p.min(axis=0))
        return float(max(bound, np.max(most - least)))

    def privacy_spent(self, n: int):
        """Privacy spent on one trajectory of ``n`` points.

        With ``grouping="thresholds"`` the ledger's ``per_point`` is the actual
        worst-case loss (:meth:`privacy_loss`) at the per-point budget, not the
        nominal ε, and its note says that the variant is not ε-LDP.
        """
        ledger = super().privacy_spent(n)
        if self.grouping == "fixed":
            return ledger
        nominal = ledger.per_point
        loss = self.privacy_loss(nominal)
        return replace(ledger, per_point=loss, per_trajectory=loss * ledger.n_points,
                       note=(f"NOT ε-LDP: the groups are distance thresholds {self.thresholds}, so their "
                             f"sizes depend on the true location; the nominal ε = {nominal:g} per point "
                             f"gives a worst-case loss of {loss:.4g} per point over this POI space "
                             f"({loss * ledger.n_points:.4g} over the trajectory by sequential composition)"))

    # -- sampling ----------------------------------------------------------------------
    def _perturb(self, indices, offsets, draws):
        lengths = np.diff(offsets)
        eps = np.repeat(self.epsilon_per_point(lengths), lengths)
        self._check_scale(eps)
        out = np.empty_like(indices)
        sample = self._sample_thresholds if self.grouping == "thresholds" else self._sample
        for value in np.unique(eps):
            rows = np.flatnonzero(eps == value)
            out[rows] = sample(indices[rows], float(value), draws.at(rows, 0))
        return out

    @staticmethod
    def _blocks_of_inputs(indices, n_poi):
        """Distinct inputs in blocks: yields (inputs, point rows, position of each row's input)."""
        unique, inverse = np.unique(indices, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(unique.size + 1))
        step = max(1, _BLOCK_ELEMENTS // n_poi)
        for start in range(0, unique.size, step):
            stop = min(start + step, unique.size)
            rows = order[bounds[start]:bounds[stop]]
            yield unique[start:stop], rows, inverse[rows] - start

    def _sample(self, indices, epsilon, draws):
        """Each point's group from its own draw 0, its rank inside the group from draw 1."""
        sizes = self.sizes(epsilon)
        mass = staircase_probabilities(sizes, epsilon) * np.asarray(sizes)
        cum_mass = np.cumsum(mass)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        # group, then a uniform rank inside it
        local = np.arange(indices.size)
        group = np.searchsorted(cum_mass, draws.uniform(local, 0) * cum_mass[-1], side="right")
        group = np.minimum(group, len(sizes) - 1)
        rank = starts[group] + draws.integers(local, 1, np.asarray(sizes)[group])
        # one partial sort per distinct input, a block of inputs at a time
        out = np.empty_like(indices)
        for inputs, rows, position in self._blocks_of_inputs(indices, len(self.poi_space)):
            table = self._partition(inputs, sizes)
            out[rows] = table[position, rank[rows]]
        return out

    def _sample_thresholds(self, indices, epsilon, draws):
        table = self.group_sizes()
        sizes = table[indices]
        cum_mass = np.cumsum(staircase_probabilities(sizes, epsilon) * sizes, axis=1)
        last = sizes.shape[1] - 1 - np.argmax(sizes[:, ::-1] > 0, axis=1)
        # group (empty groups have no mass and are skipped), then a uniform rank inside it
        rows = np.arange(indices.size)
        target = draws.uniform(rows, 0) * cum_mass[:, -1]
        group = np.minimum(np.count_nonzero(cum_mass <= target[:, None], axis=1), last)
        starts = np.cumsum(sizes, axis=1) - sizes
        rank = starts[rows, group] + draws.integers(rows, 1, sizes[rows, group])
        # POIs sorted by group (then by index) for each distinct input, a block at a time
        out = np.empty_like(indices)
        for inputs, point_rows, position in self._blocks_of_inputs(indices, len(self.poi_space)):
            groups = self._threshold_groups(inputs)
            counts = np.stack([np.count_nonzero(groups == j, axis=1) for j in range(self.groups)], axis=1)
            if not np.array_equal(counts, table[inputs]):  # pragma: no cover - guarded by the band recount
                raise RuntimeError("L-SRR threshold groups disagree with their sizes")
            order = np.argsort(groups, axis=1, kind="stable")
            out[point_rows] = order[position, rank[point_rows]]
        return out
