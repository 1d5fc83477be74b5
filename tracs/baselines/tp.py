"""TP and ATP: trajectory perturbation with direction sectors (Zhang et al., PVLDB 2023)."""

from __future__ import annotations

import functools
import itertools
import math
import numbers

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..errors import InputError
from ..mechanisms import KRR, SquareWave
from ..mechanisms import lattice_kernels as lk
from ..mechanisms.piecewise import square_wave_b
from ._base import Baseline
from ._draws import as_row_draws
from ._exponential_sampler import LOG_RESOLUTION, RESOLUTION, Disc, em_max_epsilon, sample_em
from ._radius import square_wave_per_key
from ._sectors import Sectors, in_sector, sector_index
from ._segment import on_segment, pick_on_segments, pick_uniform

__all__ = ["TP", "ATP", "sector_index", "in_sector", "auto_sectors", "SECTOR_CHOICES"]

#: the numbers of direction sectors the method chooses from
SECTOR_CHOICES = (2, 4, 6, 12)

_BALL_LIMIT = 64  # POIs in the midpoint ball above which the merge scans all POIs
#: draw sites (see ``tracs.baselines._draws``): copy ``c`` adds ``10·c``; the merge has its own
_SITE_INDEPENDENT, _SITE_REPORT, _SITE_TARGET, _SITE_ANCHOR, _SITE_RADIUS = 1, 2, 4, 5, 6
_SITE_MERGE = 30


@numba.njit(cache=True, nogil=True)
def _keyed_krr_kernel(x, k, lie, kind, key, stream, index, base):  # pragma: no cover - compiled
    """k-RR of ``x[i]`` from point ``i``'s own words ``base + …`` (the layout of
    :class:`tracs.mechanisms.KRR`'s kernel: word 0 and its extension decide the lie exactly,
    words 32+ pick the other value by exact rejection)."""
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        first, _ = lk.split_word(lk.draw_u64(kind, key, stream[i], index[i], base))
        y = x[i]
        if lk.below(first, lie, kind, key, stream[i], index[i], base + np.uint64(1), False):
            other = lk.uniform_index(k - 1, kind, key, stream[i], index[i], base + np.uint64(32))
            y = other + (1 if other >= x[i] else 0)
        out[i] = y
    return out


def keyed_krr(x, epsilon: float, k: int, draws) -> np.ndarray:
    """k-RR reports of ``x``, each point drawing from its own keyed stream (``draws``).

    The law of :meth:`tracs.mechanisms.KRR.sample` — a lie with probability exactly
    ``(k − 1)/(e^ε + k − 1)``, then a uniform other value — drawn from the words of
    ``(stream, index)`` of each point at the draw numbers of the step.
    """
    mech = KRR(epsilon=float(epsilon), k=int(k))
    x = np.ascontiguousarray(x, dtype=np.int64)
    src, rows = draws.source, draws.rows
    return _keyed_krr_kernel(x, mech.k, mech.lie_probability, src.kind, src.key,
                             np.ascontiguousarray(src.stream[rows]), np.ascontiguousarray(src.index[rows]),
                             np.uint64(draws.base))


def krr_max_epsilon(k) -> np.ndarray:
    """Largest k-RR budget realised faithfully: each other value keeps probability
    ``1/(e^ε + k − 1) >= 2^-40``, i.e. ``ε <= ln(2^40 − k + 1)`` (about 27.7)."""
    return np.log(1.0 / RESOLUTION - (np.asarray(k, dtype=np.float64) - 1.0))


@functools.lru_cache(maxsize=1)
def square_wave_max_epsilon() -> float:
    """Largest Square Wave budget realised faithfully: the high-density window
    ``2b`` (relative to the interval) stays ``>= 2^-40``, so that a uniform on the
    ``2^-53`` grid still places thousands of distinct points in it (about 31.1)."""
    lo, hi = 1.0, 2.0 * LOG_RESOLUTION
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 2.0 * square_wave_b(mid) >= RESOLUTION else (lo, mid)
    return lo


def auto_sectors(epsilon_direction) -> np.ndarray:
    """Number of sectors for a direction report of budget ``epsilon_direction`` (broadcast).

    The largest ``k`` in :data:`SECTOR_CHOICES` for which k-RR still reports the true
    sector at least as often as all others together (``e^ε ≥ k − 1``); ``k = 2`` below
    that.  Small ε gives few sectors, large ε many.
    """
    eps = np.asarray(epsilon_direction, dtype=np.float64)
    out = np.full(eps.shape, SECTOR_CHOICES[0], dtype=np.int64)
    for k in SECTOR_CHOICES[1:]:
        out = np.where(eps >= math.log(k - 1), k, out)
    return out


class TP(Baseline):
    """TP: two interleaved copies, direction sectors and a restricted exponential mechanism.

    For a trajectory ``τ = (p_1 … p_n)``:

    1. Two copies.  In copy A the points at even positions (0-based) are *independent*,
       in copy B those at odd positions; each point is independent in exactly one copy.
       Independent points are released by the exponential mechanism (EM) over the
       allowed POIs.
    2. For every other point (a *target*), each adjacent independent point's
       **released** value is a public origin (one at the ends, two inside).  The
       target's bearing from each origin falls in one of ``k`` fixed sectors
       (:func:`sector_index`); the sector index is reported with k-RR
       (:class:`tracs.mechanisms.KRR`).
    3. The target is released by EM over the allowed POIs that lie in every reported
       sector; when that set is empty, over all allowed POIs.
    4. Merge: ``p̂_i = argmin_{p∈P} d(p, p̂'_i) + d(p, p̂*_i)``: the POIs on the segment
       between the two copies' releases (within ``1e-9·D``); ties are broken
       uniformly at random, never by list order.

    Budget (of a trajectory of ``n`` points, total ``ε_T``): each copy ``ε_T/2``; inside a
    copy ``3/4`` on the ``n − 1`` direction reports and ``1/4`` on the ``n`` point EMs,
    each spread evenly.  A one-point trajectory has no direction: its EMs get the whole
    copy budget.  Allowed POIs: all of ``P`` (TP) or the anchor region (:class:`ATP`).

    Guarantee: every step is an ε_step-LDP mechanism whose parameters (origins,
    reported sectors, candidate sets) are earlier *released* values or public
    constants, so by adaptive sequential composition each copy is ``ε_T/2``-LDP and
    the pair of copies ``ε_T``-LDP for the whole trajectory; the merge is
    post-processing.  The EMs use the space's public diameter ``D`` as sensitivity
    (valid for every input in ``P``, inside or outside the restricted set).  The
    trajectory length ``n`` is treated as public.

    Supported budgets: every point EM at most ``2(40·ln 2 − ln|P|)`` and every
    direction report at most ``ln(2^40 − k + 1)`` (about 27.7), so that each
    sampler realises its smallest probability (``>= 2^-40``) faithfully from
    uniforms on the ``2^-53`` grid; larger budgets are refused with a
    ``ValueError`` (at construction for a per-point ``ε``, when perturbing for a
    budget per trajectory).  Per-point budgets up to about 36 (TP) and 49 (ATP) pass.

    Parameters
    ----------
    poi_space : tracs.POISpace
    epsilon : float, optional
        Budget per point: a trajectory of ``n`` points gets ``ε_T = n·ε``.
    epsilon_per_trajectory : float, optional
        ``ε_T`` for every trajectory whatever its length (the paper's setting).
        Give exactly one.
    sectors : int or "auto"
        ``k``, one of 2, 4, 6, 12, or ``"auto"`` (default): :func:`auto_sectors` of
        the per-report direction budget (a public function of ``ε_T`` and ``n``).

    Notes
    -----
    *Deviations from the paper, to keep the guarantee.*  Sectors form a fixed
    partition around the released origin and k-RR runs on the true sector's index
    (sectors centred on the true bearing would make the candidate set depend on the
    exact angle).  Origins are the independent points' *released* values, not their
    true locations.  Merge ties are broken at random (both copies' points always
    attain the minimum).
    """

    unit = "trajectory"
    #: shares of a copy's budget: (anchor EM, radius, directions, point EMs)
    _shares = (0.0, 0.0, 0.75, 0.25)
    _deferred_check = True  # the check needs ``sectors``

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None, sectors="auto"):
        super().__init__(poi_space, epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        if isinstance(sectors, str):
            if sectors != "auto":
                raise InputError(f"sectors must be one of {SECTOR_CHOICES} or 'auto', got {sectors!r}")
        elif isinstance(sectors, bool) or not isinstance(sectors, numbers.Integral) \
                or sectors not in SECTOR_CHOICES:
            raise InputError(f"sectors must be one of {SECTOR_CHOICES} or 'auto', got {sectors!r}")
        self.sectors = sectors if isinstance(sectors, str) else int(sectors)
        self._check_construction()

    # -- public budget arithmetic (used by the sampler and by exact checks) --------------
    def budgets(self, n) -> dict:
        """Budgets of one copy for trajectories of ``n`` points (broadcast over ``n``).

        Returns a dict of float arrays: ``"copy"``, ``"anchor"`` (anchor EM),
        ``"radius"``, ``"direction"`` (each report), ``"point"`` (each point EM), and
        the int array ``"k"``.

        The anchor EM and the radius report, whose allotments grow with ``n``, are
        capped at the largest budget their samplers realise faithfully (anchor:
        ``2(40·ln 2 − ln|P|)``, about 37.5 on 7,800 POIs; radius: about 31.1), so a
        long trajectory at a per-point ε spends less than allotted on them.  A step
        that is ε'-LDP with ε' below its allotment is also LDP at the allotment, so
        the stated guarantee holds (the ledger's note names the caps).  The other
        steps' budgets do not grow with ``n``; a budget too large for them is
        refused (see :meth:`_check_steps`).
        """
        n = np.asarray(n, dtype=np.float64)
        copy = self._trajectory_budget(n) / 2.0
        s_anchor, s_radius, s_dir, s_point = self._shares
        has_dir = n > 1
        direction = np.where(has_dir, s_dir * copy / np.maximum(n - 1.0, 1.0), 0.0)
        point = np.where(has_dir, s_point, s_point + s_dir) * copy / np.maximum(n, 1.0)
        if self.sectors == "auto":
            k = auto_sectors(direction)
        else:
            k = np.full(n.shape, self.sectors, dtype=np.int64)
        return {"copy": copy,
                "anchor": np.minimum(s_anchor * copy, em_max_epsilon(len(self.poi_space))),
                "radius": np.minimum(s_radius * copy, square_wave_max_epsilon()),
                "direction": direction, "point": point, "k": k}

    def _check_steps(self, budgets) -> None:
        """Refuse point-EM and direction budgets too large for a faithful sampler."""
        self._check_scale(budgets["point"], "one point EM")
        has_dir = budgets["direction"] > 0
        limit = krr_max_epsilon(budgets["k"])
        over = has_dir & (budgets["direction"] > limit)
        if over.any():
            i = int(np.argmax(over))
            raise InputError(
                f"a budget of {budgets['direction'][i]:g} on one direction report is too "
                f"large for a faithful double-precision k-RR sampler (k = {budgets['k'][i]}): "
                f"its lie probability would fall below 2^-40; the largest budget accepted "
                f"is {limit[i]:.4g}")

    def _check_construction(self):
        # with a per-point ε the largest point-EM and direction budgets are those of
        # one- and two-point trajectories; a budget per trajectory is checked per length
        if self.epsilon is not None:
            self._check_steps(self.budgets(np.array([1, 2])))

    def _split_note(self, n, total):
        b = self.budgets(n)
        text = (f"; two copies of {float(b['copy']):g} each; per copy {n - 1} direction "
                f"report(s) of {float(b['direction']):g} (k = {int(b['k'])}) and {n} point "
                f"EM(s) of {float(b['point']):g}")
        if self._shares[0]:
            text += f", anchor EM {float(b['anchor']):g}, radius {float(b['radius']):g}"
            allotted = self._shares[0] * float(b["copy"]), self._shares[1] * float(b["copy"])
            if allotted[0] > float(b["anchor"]) or allotted[1] > float(b["radius"]):
                text += (f" (capped from {allotted[0]:g} and {allotted[1]:g} at the largest "
                         "budgets their samplers realise faithfully; less is spent)")
        return text

    # -- sampling --------------------------------------------------------------------
    def _regions(self, indices, traj, starts, lengths, budgets, draws, parity):
        """Allowed POIs of each trajectory in one copy: ``None`` (all of P) for TP."""
        return None

    def _perturb(self, indices, offsets, draws):
        lengths = np.diff(offsets)
        lengths = lengths[lengths > 0]  # empty trajectories release nothing
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        traj = np.repeat(np.arange(lengths.size), lengths)
        pos = np.arange(indices.size) - offsets[:-1][traj]
        budgets = self.budgets(lengths)
        self._check_steps(budgets)
        copies = [self._copy(indices, traj, pos, offsets, lengths, budgets, parity, draws)
                  for parity in (0, 1)]
        return self._merge(copies[0], copies[1], draws.at(np.arange(indices.size), _SITE_MERGE))

    def _copy(self, indices, traj, pos, offsets, lengths, budgets, parity, draws):
        """Release one copy: independent points, direction reports, restricted EMs.

        Every step draws from the points' own keyed streams, at sites of its own.
        """
        points = self.poi_space.points
        scale = budgets["point"] / (2.0 * self.poi_space.diameter)
        site = 10 * parity
        region = self._regions(indices, traj, offsets[:-1], lengths, budgets, draws, parity)
        out = np.zeros_like(indices)  # rows without a neighbour read a harmless 0

        def region_test(owner):
            """Membership of the anchor region of each row's trajectory (``None``: all of P)."""
            if region is None:
                return None
            centre, radius2 = region
            return Disc(points, centre[owner], radius2[owner])

        indep = np.flatnonzero(pos % 2 == parity)
        out[indep] = sample_em(points, points[indices[indep]], scale[traj[indep]],
                               draws.at(indep, site + _SITE_INDEPENDENT), region_test(traj[indep]))

        target = np.flatnonzero(pos % 2 != parity)
        t_target = traj[target]
        k = budgets["k"][t_target]
        eps_dir = budgets["direction"][t_target]
        reports = []
        for report_site, side in enumerate((-1, 1), start=site + _SITE_REPORT):
            neighbour = pos[target] + side
            has = (neighbour >= 0) & (neighbour < lengths[t_target])
            origin = points[out[np.where(has, target + side, target)]]
            true_sector = sector_index(origin, points[indices[target]], k)
            reported = np.zeros_like(true_sector)
            for value in np.unique(eps_dir[has]):
                for kk in np.unique(k[has & (eps_dir == value)]):
                    sel = has & (eps_dir == value) & (k == kk)
                    reported[sel] = keyed_krr(true_sector[sel], value, kk,
                                              draws.at(target[sel], report_site))
            reports.append((has, origin, reported))
        in_target_region = region_test(t_target)
        accept_target = Sectors(points, k, reports, in_target_region)
        out[target] = sample_em(points, points[indices[target]], scale[t_target],
                                draws.at(target, site + _SITE_TARGET), accept_target,
                                fallback=in_target_region)
        return out

    def _merge(self, first, second, draws):
        """Uniform choice among the POIs on the segment between the two releases.

        A POI is on the segment when it lies within ``tol = 1e-9·D`` of the segment's
        line and between its ends (projection in ``[−tol, L + tol]``); both ends always
        qualify.  Candidates come from a KD-tree ball around the midpoint when it holds
        few POIs, otherwise from a blocked scan of all POIs.
        """
        points = self.poi_space.points
        out = first.copy()
        draws = as_row_draws(draws, first.size)
        differ = np.flatnonzero(first != second)
        if differ.size == 0:
            return out
        draws = draws.subset(differ)
        a, b = points[first[differ]], points[second[differ]]
        mid, half = (a + b) / 2.0, np.sqrt(((b - a) ** 2).sum(axis=1)) / 2.0
        tol = 1e-9 * self.poi_space.diameter
        radius = half + 2.0 * tol
        counts = self.poi_space.tree.query_ball_point(mid, radius, return_length=True)
        small = np.flatnonzero(counts <= _BALL_LIMIT)
        if small.size:
            balls = self.poi_space.tree.query_ball_point(mid[small], radius[small],
                                                         return_sorted=False)
            cand = np.fromiter(itertools.chain.from_iterable(balls), dtype=np.intp,
                               count=int(counts[small].sum()))
            owner = np.repeat(small, counts[small])
            ok = on_segment(points[cand, 0], points[cand, 1], a[owner], b[owner], tol)
            out[differ[small]] = pick_uniform(cand, owner, ok, small, draws.subset(small))
        big = np.flatnonzero(counts > _BALL_LIMIT)
        if big.size:
            out[differ[big]] = pick_on_segments(points, a[big], b[big], tol, draws.subset(big))
        return out


class ATP(TP):
    """ATP: TP inside a perturbed anchor region (Zhang et al., PVLDB 2023).

    Per copy, before TP: the trajectory's mean point, snapped to its nearest POI, is
    released by EM over ``P`` (budget ``ε_T/32``); the largest distance ``r`` from that
    **released** anchor to the trajectory's points (``r ∈ [0, D]``) is released with the
    Square Wave mechanism on ``[0, D]`` (``3ε_T/32``, :class:`tracs.mechanisms.SquareWave`),
    giving the radius ``R = max(r̃, 0)``.  The anchor region — the POIs within ``R`` of
    the released anchor, never empty since it holds the anchor — is then the allowed
    set of TP, with ``9ε_T/32`` on directions and ``3ε_T/32`` on point EMs (a one-point
    trajectory puts both on its EM).  Total per copy ``ε_T/2``.

    Guarantee: as :class:`TP`; the anchor and the radius are two more ε-LDP steps whose
    outputs are public to the later steps.  Sector intersections that miss the region
    fall back to the region.

    Parameters
    ----------
    poi_space, epsilon, epsilon_per_trajectory, sectors
        As :class:`TP`.

    Notes
    -----
    *Deviations from the paper.*  As :class:`TP`; in addition the radius is measured
    from the *released* anchor, so that the region around it covers the trajectory when
    the radius report is accurate, and the EMs inside the region keep the sensitivity
    ``D`` of the whole space (the true point may lie outside the noisy region, so the
    region's own diameter would not bound the score's sensitivity).
    """

    _shares = (1 / 16, 3 / 16, 9 / 16, 3 / 16)

    def _regions(self, indices, traj, starts, lengths, budgets, draws, parity):
        points = self.poi_space.points
        diameter = self.poi_space.diameter
        sums = np.zeros((lengths.size, 2))
        np.add.at(sums, traj, points[indices])
        mean = sums / np.maximum(lengths, 1)[:, None]
        _, anchor = self.poi_space.round(mean)
        site = 10 * parity
        released = sample_em(points, points[anchor], budgets["anchor"] / (2.0 * diameter),
                             draws.at(starts, site + _SITE_ANCHOR))
        centre = points[released]
        gap = points[indices] - centre[traj]
        far = np.zeros(lengths.size)
        np.maximum.at(far, traj, np.sqrt((gap * gap).sum(axis=1)))
        far = np.minimum(far, diameter)
        radius = np.empty(lengths.size)
        # each trajectory's radius under a random key drawn from its own stream: the release of
        # SquareWave.sample(far[t:t + 1], rng=key_t), all trajectories of one budget at once
        rows = draws.at(starts, site + _SITE_RADIUS)
        keys = rows.keys(np.arange(lengths.size))
        for value in np.unique(budgets["radius"]):
            chosen = np.flatnonzero(budgets["radius"] == value)
            mech = SquareWave(epsilon=float(value), low=0.0, high=diameter)
            radius[chosen] = square_wave_per_key(mech, far[chosen], rows.source.kind, keys[chosen])
        radius = np.maximum(radius, 0.0)
        return centre, radius * radius


key_on_sources(globals())  # cached kernels follow every source they compile in
