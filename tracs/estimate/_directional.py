"""Likelihood blocks of TraCS-D and the Strawman (see :mod:`tracs.estimate._runs`).

Each report's reference is public post-processing of earlier reports: the
previous report of its trajectory, or the perturber's public anchor for the first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mechanisms.closed_forms import circular_half_widths, classical_half_widths
from ..perturbers import Strawman
from . import _coded, _runs
from .memory import refuse_above
from . import expectation_maximisation as fitting

#: reports per chunk of runs
CHUNK = 1 << 14
#: directions used to integrate over the outward arc of a boundary reference
_ARC_NODES = 3600
#: (report, point) pairs of the reports equal to their reference worked at once
SPECIAL_BLOCK = 1 << 20


def references(reports: np.ndarray, offsets: np.ndarray, anchor) -> np.ndarray:
    """The public reference of every report: the previous report, or the anchor."""
    refs = np.empty_like(reports)
    refs[1:] = reports[:-1]
    starts = offsets[:-1][np.diff(offsets) > 0]
    refs[starts] = np.asarray(anchor, dtype=np.float64)
    return refs


def _split(perturber, eps):
    """Per-report (ε_φ, ε_r) and the per-report index into the distinct pairs."""
    values, inverse = np.unique(eps, return_inverse=True)
    eps_dir = perturber.shares(values) * values
    return eps_dir, values - eps_dir, inverse


def along_true(perturber) -> bool:
    """Whether ``perturber`` normalises the distance along the true direction (TraCS-D with
    ``distance_along="true"``, the registry's ``tracs-d-paper``): ``A`` and ``L`` of
    :mod:`tracs.estimate._runs` are then the region scaled about the reference, not discs."""
    return getattr(perturber, "distance_along", "released") == "true"


def directional_blocks(reports, offsets, perturber, eps, xs, ys, per_cell, support_points, *,
                       workers: int = 1, memory=None):
    """EM blocks for TraCS-D / Strawman reports: a :class:`~tracs.estimate._runs.RunBlock` and,
    where needed, a dense block of the reports equal to their reference.

    ``xs``, ``ys`` are the columns and rows of the cells' public points (``per_cell``
    per axis), ``support_points`` those points as (K, S, 2) for the dense block.
    ``memory`` (bytes or ``None``) decides whether the runs are kept
    (:func:`plan_memory`).  Every block's ``rows`` holds the indices of its reports.
    """
    region = perturber.region
    refs = references(reports, offsets, perturber.anchor_point)
    eps_dir, eps_dist, inverse = _split(perturber, eps)
    half_r = classical_half_widths(eps_dist)[inverse]
    sectors = perturber.sectors if isinstance(perturber, Strawman) else 1
    mode = _coded.MODE_SECTORS if isinstance(perturber, Strawman) else _coded.MODE_ARC
    if mode == _coded.MODE_ARC:
        half_dir = circular_half_widths(eps_dir, 2 * np.pi)[inverse]
    else:
        half_dir = np.zeros(len(eps_dir))[inverse]
    cos_half = np.cos(half_dir) if mode == _coded.MODE_ARC else half_dir
    normals, hb = region.halfplanes
    halfplanes = (np.ascontiguousarray(normals[:, 0], dtype=np.float64),
                  np.ascontiguousarray(normals[:, 1], dtype=np.float64),
                  np.ascontiguousarray(hb, dtype=np.float64))
    same = np.all(reports == refs, axis=1)
    regular = np.flatnonzero(~same)
    special = np.flatnonzero(same)
    plan = plan_memory(len(reports), len(special), len(xs), len(ys), support_points.shape[0],
                       workers, memory)
    blocks = []
    if len(regular):
        if len(special):
            take = lambda a: np.ascontiguousarray(a[regular])  # noqa: E731
        else:
            take = np.ascontiguousarray
        geometry = {"reports": take(reports), "refs": take(refs), "cos_half": take(cos_half),
                    "half_dir": take(half_dir), "half_r": take(half_r), "mode": mode,
                    "sectors": sectors, "halfplanes": halfplanes, "along_true": along_true(perturber),
                    "xs": np.ascontiguousarray(xs), "ys": np.ascontiguousarray(ys)}
        del refs
        blocks.append(_runs.RunBlock(geometry, per_cell, inverse[regular].astype(np.int64),
                                     _runs.coefficients(eps_dir, eps_dist), chunk=plan.chunk,
                                     keep=plan.keep, workers=workers))
        blocks[-1].rows = regular
    if len(special):
        refs = references(reports, offsets, perturber.anchor_point)
        lik = _special_likelihood(refs[special], perturber, eps_dir[inverse[special]],
                                  eps_dist[inverse[special]], half_dir[special], half_r[special],
                                  support_points, region)
        blocks.append(fitting.DenseBlock(lik))
        blocks[-1].rows = special
    return blocks


@dataclass(frozen=True)
class MemoryPlan:
    """How a TraCS-D / Strawman fit uses memory: ``keep`` the runs or recompute them, per ``chunk``."""

    keep: bool
    chunk: int
    need: int


#: working bytes per report besides the runs: reference, report, three half-widths,
#: pair index, weight, row index, the references' and masks' temporaries
PER_REPORT = 2 * 16 + 3 * 8 + 3 * 8 + 16 + 16
#: runs kept when they fit the budget; without a budget, when they take at most this
DEFAULT_KEEP = 2 << 30


def plan_memory(reports: int, special: int, columns: int, rows: int, cells: int, workers: int,
                memory) -> MemoryPlan:
    """Keep the runs when they fit ``memory`` (bytes; ``None``: :data:`DEFAULT_KEEP`), else
    recompute them per chunk; ``MemoryError`` naming the budget when even that cannot fit.

    Peak bytes: ``PER_REPORT`` per report, ``rows × 6 × itemsize`` per report when the
    runs are kept (else per report of a chunk, per worker), one ``rows × (columns + 1)``
    difference array of float64 per worker and a few θ-sized arrays, and one float64 per
    (cell, report equal to its reference).
    """
    item = np.dtype(_runs.run_dtype(columns)).itemsize
    per_run = rows * 6 * item
    cell_arrays = 8 * rows * (columns + 1) * (workers + 4) + 8 * cells * 8
    base = PER_REPORT * reports + cell_arrays + 8 * cells * special
    kept = base + per_run * reports
    if memory is None:
        return MemoryPlan(per_run * reports <= DEFAULT_KEEP, CHUNK, kept)
    if kept <= memory:
        return MemoryPlan(True, CHUNK, kept)
    chunk = CHUNK
    while chunk > 256 and base + workers * chunk * per_run > memory:
        chunk //= 2
    need = base + workers * chunk * per_run
    refuse_above(need, memory, f"estimating {reports:,} reports on {cells:,} cells ({rows} rows of "
                               f"{columns} points)")
    return MemoryPlan(False, chunk, need)


def _special_likelihood(refs, perturber, eps_dir, eps_dist, half_dir, half_r, points, region) -> np.ndarray:
    """Likelihood of the reports equal to their reference (up to a factor per report); ``half_dir`` and ``half_r``
    are the half-widths of each report's direction and distance mechanisms.

    On the boundary the ray may leave at once (``R(o, φ') = 0``): the report is
    ``o`` with probability ``P(φ' outward | φ)`` (plus the zero-probability event
    ``u' = 0``).  Inside, ``y = o`` means ``u' = 0``: likelihood ``g(0 | u)``.
    Blocks of reports at a time (at most :data:`SPECIAL_BLOCK` (report, point) pairs).
    """
    K, S = points.shape[0], points.shape[1]
    flat = points.reshape(-1, 2)
    n = _ARC_NODES
    step = 2 * np.pi / n
    grid = (np.arange(n) + 0.5) * step
    cos_grid, sin_grid = np.cos(grid), np.sin(grid)
    lik = np.empty((len(refs), K))
    per = max(1, SPECIAL_BLOCK // max(len(flat), n))
    for start in range(0, len(refs), per):
        block = slice(start, start + per)
        o = refs[block][:, None, :]
        phi, u = region._direction_distance(o, flat[None, :, :])  # (reports, points)
        half = half_r[block][:, None]
        left = np.clip(u - half, 0.0, 1.0 - 2 * half)
        g0 = np.where(left <= 0.0, 1.0, np.exp(-eps_dist[block])[:, None])
        outward = region._exit_distance(o, cos_grid, sin_grid) <= 0.0  # (reports, nodes)
        low = np.exp(-eps_dir[block])[:, None]
        if isinstance(perturber, Strawman):
            k = perturber.sectors
            node_sector = np.minimum((grid / (2 * np.pi / k)).astype(np.int64), k - 1)
            sector = np.minimum((phi / (2 * np.pi / k)).astype(np.int64), k - 1)
            inside = np.bincount(node_sector, minlength=k)[sector].astype(np.float64)
            per_sector = np.zeros((len(o), k))
            for s in range(k):  # k sectors, not reports
                per_sector[:, s] = outward[:, node_sector == s].sum(axis=1)
            inside_out = np.take_along_axis(per_sector, sector, axis=1)
        else:
            inside, inside_out = _arc_counts(phi, half_dir[block][:, None], outward, step)
        total_out = outward.sum(axis=1, dtype=np.float64)[:, None]
        mass = (inside_out + low * (total_out - inside_out)) / (inside + low * (n - inside))
        mass = np.where(outward.any(axis=1)[:, None], mass, g0)
        lik[block] = mass.reshape(len(o), K, S).mean(axis=2)
    return lik


def _arc_counts(phi, c, outward, step):
    """Nodes ``(j + 1/2)·step`` within circular distance ``< c`` of each ``φ`` (reports × points), and how
    many of them are ``outward`` (reports × nodes): the nodes of an arc form one cyclic run of
    indices, found from its two ends."""
    n = outward.shape[1]

    def near(j):
        d = np.abs(phi - (np.mod(j, n) + 0.5) * step) % (2 * np.pi)
        return np.minimum(d, 2 * np.pi - d) < c

    lo = np.floor((phi - c) / step - 0.5).astype(np.int64) + 1
    hi = np.ceil((phi + c) / step - 0.5).astype(np.int64) - 1
    lo = np.where(near(lo - 1), lo - 1, np.where(near(lo), lo, lo + 1))
    hi = np.where(near(hi + 1), hi + 1, np.where(near(hi), hi, hi - 1))
    count = hi - lo + 1
    full = count >= n
    lo, hi = np.where(full, 0, lo), np.where(full, n - 1, hi)
    cum = np.zeros((outward.shape[0], 3 * n + 1), dtype=np.int64)  # indices -n … 2n - 1
    np.cumsum(np.tile(outward, 3), axis=1, out=cum[:, 1:])
    inside = np.clip(hi - lo + 1, 0, n)
    upper = np.take_along_axis(cum, np.clip(hi + n + 1, 0, 3 * n), axis=1)
    lower = np.take_along_axis(cum, np.clip(lo + n, 0, 3 * n), axis=1)
    inside_out = np.where(inside > 0, upper - lower, 0)
    return inside.astype(np.float64), inside_out.astype(np.float64)
