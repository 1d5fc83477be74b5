"""Every report's likelihood per cell and its within-cell mean of the true point, per chunk.

The tables :mod:`tracs.estimate.smoothing` runs on, made from the same likelihoods
as the per-point posterior (:mod:`tracs.estimate.denoise`): for a report ``r`` and a
cell ``k`` cut into ``S`` equal parts (TraCS-C: ``subcells²`` equal parts;
TraCS-D / Strawman: ``subcells²`` public points), ``L_k(r)`` is the mean of the
report's likelihood over the parts and ``m_k(r)`` the likelihood-weighted mean of
their centres.  With a prior ``θ`` spread evenly within cells, the per-point posterior
mean is ``Σ_k θ_k L_k(r) m_k(r) / Σ_k θ_k L_k(r)``.

TraCS-C tables are separable (``L = Lx[i, a]·Ly[j, b]``, ``m = (mx[i, a], my[j, b])``);
TraCS-D / Strawman tables are dense, expanded from the runs of
:mod:`tracs.estimate._runs` one chunk of trajectories at a time.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ._directional import directional_blocks
from ._runs import RunBlock
from .grid_density import _axis_points, _epsilons, _subpoints, axis_mechanisms
from .transition import bin_index, output_grid, snap_edges, transition_matrix
from ._laplace import _clamped_sides, _laplace_likelihood

__all__ = ["split_edges", "AxesTables", "DirectionalTables", "laplace_rows"]


def split_edges(edges: np.ndarray, parts: int) -> np.ndarray:
    """Every interval of ``edges`` cut into ``parts`` equal ones."""
    t = np.arange(parts) / parts
    inner = (edges[:-1, None] + np.diff(edges)[:, None] * t).ravel()
    return np.append(inner, edges[-1])


def _axis_table(mechanism, edges, parts):
    """(output bin edges, ``L`` (bins, cells), ``m`` (bins, cells)) of one axis."""
    fine = split_edges(edges, parts)
    out = output_grid(fine, None)
    out[0], out[-1] = -np.inf, np.inf
    out = snap_edges(mechanism, out)
    a = transition_matrix(mechanism, fine, out).reshape(len(out) - 1, len(edges) - 1, parts)
    centres = 0.5 * (fine[:-1] + fine[1:]).reshape(len(edges) - 1, parts)
    mass = a.sum(axis=2)  # > 0: every column of a transition matrix is positive on every bin
    return out, mass / parts, (a * centres).sum(axis=2) / mass


class AxesTables:
    """TraCS-C: every report's rows of the two axes' tables (``reports × cells`` per axis)."""

    def __init__(self, pts, off, perturber, grid, parts):
        xe, ye = grid
        eps = _epsilons(perturber, off, len(pts))
        values, inverse = np.unique(eps, return_inverse=True)
        self.lx, self.ly = np.empty((len(pts), len(xe) - 1)), np.empty((len(pts), len(ye) - 1))
        self.mx, self.my = np.empty_like(self.lx), np.empty_like(self.ly)
        for g, e in enumerate(values):
            sel = np.flatnonzero(inverse == g)
            mx, my = axis_mechanisms(perturber, float(e))
            for mech, edges, col, lik, mean in ((mx, xe, 0, self.lx, self.mx), (my, ye, 1, self.ly, self.my)):
                out, table, within = _axis_table(mech, edges, parts)
                b = bin_index(pts[sel, col], out)
                lik[sel], mean[sel] = table[b], within[b]

    def chunk(self, start, stop, means=True):
        """``(L, mx, my)`` of reports ``start:stop``: (n, Gx, Gy), (n, Gx, 1), (n, 1, Gy) (the means are
        views, so ``means`` changes nothing)."""
        lx, ly = self.lx[start:stop], self.ly[start:stop]
        return lx[:, :, None] * ly[:, None, :], self.mx[start:stop, :, None], self.my[start:stop, None, :]


@numba.njit(cache=True, nogil=True)
def _expand_runs(runs, table_index, coefs, xs, ys, per_cell, lik, sx, sy, sums):
    """Sum a chunk's run likelihoods per cell: ``lik[r, a, b] += L``, and with ``sums`` ``sx += L·x``,
    ``sy += L·y``."""
    n, rows, cols = runs.shape[0], runs.shape[1], xs.shape[0]
    for r in range(n):
        t = table_index[r]
        c0, cw, cr, cwr = coefs[t, 0], coefs[t, 1], coefs[t, 2], coefs[t, 3]
        for j in range(rows):
            o = runs[r, j]
            wl, wr, al, ar, ll, lr = int(o[0]), int(o[1]), int(o[2]), int(o[3]), int(o[4]), int(o[5])
            b = j // per_cell
            for c in range(cols):
                w = 1.0 if wl <= c < wr else 0.0
                d = (1.0 if al <= c < ar else 0.0) - (1.0 if ll <= c < lr else 0.0)
                v = c0 + cw * w + cr * d + cwr * w * d
                a = c // per_cell
                lik[r, a, b] += v
                if sums:
                    sx[r, a, b] += v * xs[c]
                    sy[r, a, b] += v * ys[j]


class DirectionalTables:
    """TraCS-D / Strawman: dense tables per chunk of whole trajectories, from the blocks of
    :func:`tracs.estimate._directional.directional_blocks` (each report's reference is the
    previous released report of its trajectory, or the public anchor)."""

    def __init__(self, pts, off, perturber, grid, parts):
        self.pts, self.off, self.perturber, self.parts = pts, off, perturber, parts
        self.eps = _epsilons(perturber, off, len(pts))
        xe, ye = grid
        self.shape = (len(xe) - 1, len(ye) - 1)
        self.xs, self.ys = _axis_points(xe, parts), _axis_points(ye, parts)
        self.support = _subpoints(xe, ye, parts)
        self.centres = _subpoints(xe, ye, 1)[:, 0, :]

    def chunk(self, start, stop, means=True):
        """``(L, mx, my)`` of reports ``start:stop`` (whole trajectories), each (n, Gx, Gy); without
        ``means``, ``(L, None, None)`` (the within-cell means are not computed)."""
        off = self.off[(self.off >= start) & (self.off <= stop)] - start
        n, s = stop - start, self.parts
        lik = np.zeros((n,) + self.shape)
        sx, sy = (np.zeros((n,) + self.shape) for _ in range(2)) if means else (None, None)
        for block in directional_blocks(self.pts[start:stop], off, self.perturber, self.eps[start:stop],
                                        self.xs, self.ys, s, self.support):
            rows = block.rows
            if isinstance(block, RunBlock):
                parts = [(block.runs[i] if block.runs is not None else block._compute_runs(i), b0)
                         for i, b0 in enumerate(block.starts)]
                for runs, b0 in parts:
                    m = runs.shape[0]
                    ll = np.zeros((m,) + self.shape)
                    lx, ly = (np.zeros((m,) + self.shape) for _ in range(2)) if means else (ll, ll)
                    _expand_runs(runs, block.table_index[b0:b0 + m], block.coefs, self.xs, self.ys, s, ll, lx, ly,
                                 means)
                    sel = rows[b0:b0 + m]
                    lik[sel] = ll / (s * s)
                    if means:
                        sx[sel], sy[sel] = lx / ll, ly / ll
            else:  # reports equal to their reference: one likelihood row per cell, the cells' centres
                lik[rows] = block.likelihood.reshape((len(rows),) + self.shape)
                if means:
                    sx[rows] = self.centres[:, 0].reshape(self.shape)
                    sy[rows] = self.centres[:, 1].reshape(self.shape)
        return lik, sx, sy


def laplace_rows(pts, perturber, eps, points, memo=None, out=None) -> np.ndarray:
    """Planar Laplace: every report's likelihood at ``points`` (reports × points), each row up to a
    factor of its own; ``memo`` and ``out`` as for :func:`tracs.estimate._laplace._laplace_likelihood`.

    The estimator's likelihood at the report itself rather than at its bin's centre:
    ``exp(−ε·rate·|y − τ|)`` inside the region, the density integrated along the outward normal
    line for a report clamped onto an edge, over the outward quadrant at a corner.
    """
    sx, sy = _clamped_sides(pts, perturber, perturber.region)
    xmin, ymin, xmax, ymax = perturber.region.bounds
    y = np.column_stack([np.where(sx < 0, xmin, np.where(sx > 0, xmax, pts[:, 0])),
                         np.where(sy < 0, ymin, np.where(sy > 0, ymax, pts[:, 1]))])
    return _laplace_likelihood(y, sx, sy, points, eps * perturber.rate, memo, out)


key_on_sources(globals())
