"""The compiled sampler of :func:`tracs.estimate.synthesize.synthesize`: the rows' alias tables and
every trajectory's cells and points, in output order.

The uniforms are drawn by the caller in the order of the step-major layout the
sampler was first written with (step by step, the trajectories still running
sorted longest first), so a trajectory at sorted position ``p`` takes, at step
``t``, the uniform ``u[step_start[t] + p]``: the output is the same for the same
generator.  The kernel walks blocks of :data:`BLOCK` consecutive positions step by
step, so the uniforms of a step are read in order and the block's outputs stay in
cache.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources

__all__ = ["alias_tables", "sample_trajectories", "BLOCK"]

#: sorted positions walked together
BLOCK = 512


@numba.njit(cache=True, nogil=True)
def alias_tables(q, prob, alias):
    """Marsaglia's square histogram of every row of ``q`` (scaled to sum to the row's length), in place.

    ``len(row) − 1`` times, the smallest open entry of the row (the first of equal ones)
    is closed with ``prob = q`` and its alias the largest open entry (the first of equal
    ones), which gives up ``1 − q`` of its own.
    """
    rows, c = q.shape
    closed = np.zeros(c, dtype=np.bool_)
    for r in range(rows):
        closed[:] = False
        row = q[r]
        for _ in range(c - 1):
            small, large = -1, -1
            low, high = np.inf, -np.inf
            for k in range(c):
                if closed[k]:
                    continue
                if row[k] < low:
                    low, small = row[k], k
                if row[k] > high:
                    high, large = row[k], k
            if small < 0:  # no open entry below inf (not for a finite row): numpy's argmin picks the first
                small = 0
            if large < 0:
                large = 0
            prob[r, small], alias[r, small] = row[small], large
            row[large] -= 1.0 - row[small]
            closed[small] = True


@numba.njit(cache=True, nogil=True)
def sample_trajectories(u, first, order, running, step_start, offsets, prob, alias, xe, ye, w, cells, coords):
    """Fill ``cells`` (N,) and ``coords`` (N, 2) of every trajectory.

    Parameters
    ----------
    u : (N,) uniforms of the steps (step-major order, see the module); ``first[p]`` the first cell of
        the trajectory at sorted position ``p``; ``order[p]`` the trajectory at sorted position ``p``.
    running, step_start : (steps,) trajectories still running at every step, and (steps + 1,) where
        every step's uniforms start; ``offsets`` (T + 1,) the trajectories'.
    prob, alias : the transition rows' alias tables, flat (``C·C``, ``C = Gx·Gy``).
    xe, ye : cell edges; a cell is ``ix·Gy + iy``.
    w : (N, 2) uniforms placing every point within its cell (output order).
    """
    gy = len(ye) - 1
    c = (len(xe) - 1) * gy
    count = len(first)
    current = np.empty(BLOCK, dtype=np.int64)
    for p0 in range(0, count, BLOCK):
        p1 = min(p0 + BLOCK, count)
        for p in range(p0, p1):
            current[p - p0] = first[p]
            cells[offsets[order[p]]] = first[p]
        for t in range(1, len(running)):
            end = min(p1, running[t])
            if end <= p0:
                break
            base = step_start[t]
            for p in range(p0, end):
                x = u[base + p] * c
                k = min(np.int64(x), c - 1)
                at = current[p - p0] * c + k
                cell = k if x - k < prob[at] else alias[at]
                current[p - p0] = cell
                cells[offsets[order[p]] + t] = cell
    for r in range(len(cells)):
        ix, iy = cells[r] // gy, cells[r] % gy
        coords[r, 0] = xe[ix] + w[r, 0] * (xe[ix + 1] - xe[ix])
        coords[r, 1] = ye[iy] + w[r, 1] * (ye[iy + 1] - ye[iy])


key_on_sources(globals())
