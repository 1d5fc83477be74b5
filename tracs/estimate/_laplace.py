"""Planar Laplace (clipped) likelihoods over binned reports.

Reports are binned; interior bins use the Laplace density at the bin centre,
reports clipped onto an edge the density integrated along the outward normal line,
corners over the outward quadrant (:mod:`tracs.estimate._laplace_integrals`).  One dense
block per ε.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, InputTypeError
from ..region import Rectangle
from . import expectation_maximisation as fitting
from ._laplace_integrals import edge_rows, edge_tables, interior_rows, quadrant
from .transition import bin_index, output_grid

__all__ = ["laplace_keys", "laplace_counts", "merge_counts", "laplace_blocks"]

def laplace_keys(pts, perturber, xe, ye, output_bins) -> np.ndarray:
    """The (clamped side, output bin) key of every planar Laplace report (the rows of
    :func:`laplace_blocks` are the distinct keys, in increasing order)."""
    region = perturber.region
    if not isinstance(region, Rectangle):
        raise InputTypeError("planar Laplace estimation needs a Rectangle region (clipping onto a "
                             "polygon has no closed-form preimage here)")
    bx, by = output_grid(xe, output_bins), output_grid(ye, output_bins)
    on_x, on_y = _clamped_sides(pts, perturber, region)
    kind = (on_x + 1) * 3 + (on_y + 1)  # 4 = interior
    ix, iy = bin_index(pts[:, 0], bx), bin_index(pts[:, 1], by)
    return (kind * (len(bx) - 1) + ix) * (len(by) - 1) + iy


def laplace_counts(pts, perturber, eps, xe, ye, output_bins) -> list:
    """The sufficient statistics of planar Laplace reports: per ε, the distinct
    (clamped side, output bin) keys and their counts, ``[(ε, keys, counts), …]``."""
    stats = []
    for e in np.unique(eps):
        keys, counts = np.unique(laplace_keys(pts[eps == e], perturber, xe, ye, output_bins), return_counts=True)
        stats.append((float(e), keys, counts))
    return stats


def merge_counts(parts) -> list:
    """:func:`laplace_counts` of several parts of the reports as those of all of them."""
    by_eps: dict = {}
    for stats in parts:
        for e, keys, counts in stats:
            by_eps.setdefault(e, []).append((keys, counts))
    merged = []
    for e in sorted(by_eps):
        keys = np.concatenate([k for k, _ in by_eps[e]])
        counts = np.concatenate([c for _, c in by_eps[e]])
        uniq, inverse = np.unique(keys, return_inverse=True)
        merged.append((e, uniq, np.bincount(inverse, weights=counts).astype(np.int64)))
    return merged


def laplace_blocks(stats, perturber, xe, ye, output_bins) -> list:
    """One dense block per ε from :func:`laplace_counts`: a likelihood row per distinct key."""
    region = perturber.region
    xmin, ymin, xmax, ymax = region.bounds
    bx, by = output_grid(xe, output_bins), output_grid(ye, output_bins)
    centres = np.stack(np.meshgrid(0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:]),
                                   indexing="ij"), axis=-1).reshape(-1, 2)
    blocks = []
    for e, uniq, counts in stats:
        rate = e * perturber.rate if hasattr(perturber, "rate") else e / region.diameter
        kind_u = uniq // ((len(bx) - 1) * (len(by) - 1))
        rem = uniq % ((len(bx) - 1) * (len(by) - 1))
        yx = 0.5 * (bx[rem // (len(by) - 1)] + bx[rem // (len(by) - 1) + 1])
        yy = 0.5 * (by[rem % (len(by) - 1)] + by[rem % (len(by) - 1) + 1])
        sx, sy = kind_u // 3 - 1, kind_u % 3 - 1
        yx = np.where(sx < 0, xmin, np.where(sx > 0, xmax, yx))
        yy = np.where(sy < 0, ymin, np.where(sy > 0, ymax, yy))
        lik = _laplace_likelihood(np.column_stack([yx, yy]), sx, sy, centres, rate)
        blocks.append(fitting.DenseBlock(lik, counts.astype(np.float64)))
    return blocks


def _clamped_sides(p, perturber, region):
    """-1 / 0 / +1 per axis: the report was clamped onto the low side, is inside, or the high side.

    On a public release grid (``perturber.lattice``) the clamped releases are the
    outermost grid points; otherwise the region's edges.
    """
    lattice = getattr(perturber, "lattice", None)
    sides = []
    for axis in (0, 1):
        if lattice is not None:
            k = lattice[axis].index(p[:, axis])
            low, high = k <= 0, k >= lattice[axis].count - 1
        else:
            low, high = p[:, axis] <= region.bounds[axis], p[:, axis] >= region.bounds[axis + 2]
        sides.append(np.where(low, -1, np.where(high, 1, 0)))
    return sides


def _laplace_likelihood(y, sx, sy, centres, rate, memo=None, out=None) -> np.ndarray:
    """Likelihood rows (reports × points), each up to a factor of its own; ``rate`` one number or
    one per report; ``memo`` a dict kept between calls with the same ``centres`` (their corner rows
    and edge tables, made once); ``out`` an array (reports × points) to write them into.

    An interior report: ``exp(−rate·|y − c|)``.  A report clamped onto an edge: the density
    integrated over the outward normal half-line, ``F(rate·u, rate·v) / rate``
    (:mod:`tracs.estimate._laplace_integrals`: tables per distance ``u`` of the points from the
    edge, evaluated at the offsets ``v`` along it).  At a corner: over the outward quadrant,
    ``Q(rate·u, rate·w) / rate²``, one row shared by the corner's reports.  Reports clamped onto
    the same side at the same rate share their tables; nothing of reports × points × nodes is held.
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1, 2)
    sx, sy = np.asarray(sx, dtype=np.int64), np.asarray(sy, dtype=np.int64)
    rates = np.broadcast_to(np.asarray(rate, dtype=np.float64), (len(y),))
    centres = np.ascontiguousarray(centres, dtype=np.float64)
    out = np.empty((len(y), len(centres))) if out is None else out
    interior_rows(y, np.flatnonzero((sx == 0) & (sy == 0)), np.ascontiguousarray(rates), centres, out)
    clamped = np.flatnonzero((sx != 0) | (sy != 0))
    sides = np.column_stack([rates, sx, sy, np.where(sx != 0, y[:, 0], 0.0), np.where(sy != 0, y[:, 1], 0.0)])
    groups, which = np.unique(sides[clamped], axis=0, return_inverse=True)
    memo = {} if memo is None else memo
    for g, side in enumerate(map(tuple, groups)):
        rows = clamped[which.ravel() == g]
        e, side_x, side_y = side[:3]
        if side_x and side_y:
            if side not in memo:
                memo[side] = quadrant(*_distances(side, centres)) / (e * e)
            out[rows] = memo[side]
            continue
        along, position = (y[rows, 1], centres[:, 1]) if side_x else (y[rows, 0], centres[:, 0])
        reach = e * (max(along.max(), position.max()) - min(along.min(), position.min()))
        if side not in memo or memo[side][0] < reach:  # tables up to twice the farthest offset so far
            dist = _distances(side, centres)[0 if side_x else 1]
            columns, column = np.unique(dist, return_inverse=True)
            memo[side] = (2.0 * reach, column.ravel().astype(np.int64), dist) + edge_tables(columns, 2.0 * reach)
        _, column, dist, scale, coefs = memo[side]
        edge_rows(np.ascontiguousarray(along), rows, float(e), np.ascontiguousarray(position), column, dist,
                  scale, coefs, out)
    return out


def _distances(side, centres) -> tuple:
    """The points' distances (in ``1 / rate``) from the edges a report's side ``(rate, sx, sy, x, y)``
    was clamped onto, per axis (``None`` for an axis not clamped)."""
    e, side_x, side_y, at_x, at_y = side
    u = e * side_x * (at_x - centres[:, 0]) if side_x else None
    w = e * side_y * (at_y - centres[:, 1]) if side_y else None
    if any(d is not None and np.any(d < 0) for d in (u, w)):
        raise InputError("planar Laplace likelihoods need points inside the region: a point lies "
                         "beyond the edge its reports were clamped onto")
    return u, w
