"""Planar Laplace (clipped) likelihoods over binned reports.

Reports are binned; interior bins use the Laplace density at the bin centre,
reports clipped onto an edge the density integrated along the outward normal line,
corners over the outward quadrant (Gauss–Legendre).  One dense block per ε.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..errors import InputTypeError
from ..region import Rectangle
from . import expectation_maximisation as fitting
from .transition import bin_index, output_grid

__all__ = ["laplace_keys", "laplace_counts", "merge_counts", "laplace_blocks"]

# -- planar Laplace ----------------------------------------------------------------------
_NODES_LINE = 64
_NODES_CORNER = 40
_REACH = 40.0  # integrate the outward part up to REACH / ε' (e^-40 of the mass left)


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


def _laplace_likelihood(y, sx, sy, centres, rate) -> np.ndarray:
    """Likelihood rows (reports × cells), each up to a factor of its own; ``rate`` one number or
    one per report (:func:`_likelihood_rows`, compiled: no temporaries of cells × nodes)."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    rates = np.broadcast_to(np.asarray(rate, dtype=np.float64), (len(y),)).copy()
    t, w = np.polynomial.legendre.leggauss(_NODES_LINE)
    tc, wc = np.polynomial.legendre.leggauss(_NODES_CORNER)
    out = np.empty((len(y), len(centres)))
    _likelihood_rows(y, np.asarray(sx, dtype=np.int64), np.asarray(sy, dtype=np.int64),
                     np.ascontiguousarray(centres, dtype=np.float64), rates,
                     0.5 * (t + 1) * _REACH, 0.5 * w * _REACH, 0.5 * (tc + 1) * _REACH, 0.5 * wc * _REACH, out)
    return out


@numba.njit(cache=True, nogil=True)
def _likelihood_rows(y, sx, sy, centres, rates, t, w, tc, wc, out):
    """Every row of :func:`_laplace_likelihood` into ``out``: the density at an interior report;
    for a report clamped onto an edge, Gauss–Legendre along the outward normal line over
    ``[0, REACH / rate]`` (nodes ``t / rate``, weights ``w / rate``); at a corner, the same on
    both axes over the outward quadrant."""
    for r in range(y.shape[0]):
        rate = rates[r]
        for k in range(centres.shape[0]):
            dx = y[r, 0] - centres[k, 0]
            dy = y[r, 1] - centres[k, 1]
            if sx[r] == 0 and sy[r] == 0:
                out[r, k] = np.exp(-rate * np.sqrt(dx * dx + dy * dy))
            elif sx[r] == 0 or sy[r] == 0:
                total = 0.0
                for a in range(t.size):
                    step = t[a] / rate
                    ex, ey = dx + sx[r] * step, dy + sy[r] * step
                    total += np.exp(-rate * np.sqrt(ex * ex + ey * ey)) * (w[a] / rate)
                out[r, k] = total
            else:
                total = 0.0
                for a in range(tc.size):
                    qx = dx + sx[r] * (tc[a] / rate)
                    for b in range(tc.size):
                        qy = dy + sy[r] * (tc[b] / rate)
                        total += np.exp(-rate * np.sqrt(qx * qx + qy * qy)) * (wc[a] / rate) * (wc[b] / rate)
                out[r, k] = total


key_on_sources(globals())
