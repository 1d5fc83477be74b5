"""The collector's estimate of TraCS-C reports, kept up to date batch by batch.

TraCS-C's likelihood depends on the reports only through how many fall in each
output bin (a report is binned by its lattice value), so each grid asked for keeps
those counts — its sufficient statistics, a few thousand numbers — and adds each
committed batch's accepted reports to them.  They are built from the database
once per grid, in chunks of lattice indices (:meth:`Store.lattice_pairs`: the
reports are never all in memory), and again when the database holds reports this
process did not count (a PostgreSQL database other collector processes write to).

A grid's first fit is ``tracs estimate``'s fit of the export of the stored reports,
with the same options (:func:`tracs.estimate.grid_density.plan_density`): EM from
the uniform start, at ε ≥ 2 with the smoothing weight chosen on held-out reports.
A fit after further batches starts EM from the previous estimate, with the same
smoothing weight and stopping rule (a warm start: tens of passes instead of
hundreds).  EM on these grids stops before it converges (the stopping rule fires
on a slow path), so a warm-started fit stops elsewhere than a fit from the uniform
start; the fit is made afresh — the weight chosen again — once the reports have
grown by :attr:`LatticeCounts.REFIT` since the last fresh fit, and then equals
``tracs estimate`` of the export again.  Other methods are estimated from the
export (:func:`tracs.cli.serve.estimate_csv`).
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
from ..estimate import expectation_maximisation as fitting
from ..estimate.expectation_maximisation import ProductBlock


__all__ = ["LatticeCounts"]


class LatticeCounts:
    """The TraCS-C estimates of the reports of ``store``'s collection, one per grid asked for.

    ``applies``: the method is TraCS-C (otherwise nothing is counted).  The lattice
    indices of new batches wait in a list per grid until its next estimate; a grid
    not asked for while :attr:`PENDING` reports came is dropped (built again from the
    database when asked for).  The last :attr:`GRIDS` grids asked for are kept.
    """

    PENDING = 1 << 20
    #: most grids whose fits are kept (the oldest asked for first is dropped)
    GRIDS = 4
    #: a grid is fitted afresh (uniform start, smoothing weight chosen again) once its reports have
    #: grown by this share since its last fresh fit; 0: every estimate is fitted afresh
    REFIT = 0.1

    def __init__(self, store, parameters):
        self.store, self.parameters = store, parameters
        self.applies = parameters.method == "tracs-c" and parameters.perturber().epsilon is not None
        self._lock, self._fitting = threading.Lock(), threading.Lock()
        self._grids = {}  # grid -> its fit (_GridFit)

    def add(self, i: np.ndarray, j: np.ndarray) -> None:
        """Count the accepted reports of a committed batch (their lattice indices)."""
        if self.applies and len(i):
            pairs = np.column_stack([i, j]).astype(np.int64, copy=False)
            with self._lock:
                for grid, fit in list(self._grids.items()):
                    fit.pending.append(pairs)
                    fit.waiting += len(pairs)
                    if fit.waiting >= self.PENDING:  # asked for too long ago: built again next time
                        del self._grids[grid]

    def estimate_csv(self, grid: int) -> bytes:
        """The CSV of the estimate on ``grid`` × ``grid`` cells (``tracs estimate``'s columns)."""
        with self._fitting:
            fit, chunks = self._fit_of(grid)
            if chunks is not None:
                for pairs in chunks:
                    fit.count(pairs)
            with self._lock:
                pending, fit.pending, fit.waiting = fit.pending, [], 0
            for pairs in pending:
                fit.count(pairs)
            return fit.refresh(self.parameters.crs, self.REFIT)

    def _fit_of(self, grid: int):
        """``(fit, chunks)``: the kept fit of ``grid``, or a new one and the chunks of the stored
        lattice indices it is built from (their snapshot taken while no batch is written, so that
        it and the batches counted later hold every report once)."""
        new = None
        while True:
            with self.store.writing():
                stored = self.store.count() if self.store.SHARED else None
                with self._lock:
                    fit = self._grids.get(grid)
                    if fit is not None and (stored is None or fit.counted + fit.waiting == stored):
                        return fit, None
                    if new is not None:
                        self._grids.pop(grid, None)
                        while len(self._grids) >= self.GRIDS:  # the public endpoint may ask for any grid
                            del self._grids[next(iter(self._grids))]
                        self._grids[grid] = new
                        chunks = self.store.lattice_pairs()
                        return new, _chain(next(chunks, None), chunks)
            new = _GridFit(self.parameters, grid)  # made while batches are written (its matrices take a while)


def _chain(first, rest):
    """``first`` (unless ``None``), then the chunks of ``rest``."""
    if first is not None:
        yield first
    yield from rest


def plan_of(model, grid: int):
    """The plan of ``tracs estimate --grid GRID``'s fit (its default options) for TraCS-C reports."""
    from ..estimate.grid_density import plan_density

    eps = float(model.epsilon)
    return plan_density(model, 0, eps, eps, grid=(grid, grid))


class _GridFit:
    """One grid's fit: its plan, the reports counted per output bin, the smoothing weight and the
    estimate of the last fit (the start of the next), and the CSV of the estimate."""

    def __init__(self, parameters, grid: int):
        from ..estimate.grid_density import axis_mechanisms
        from ..estimate.transition import output_grid, snap_edges

        model = parameters.perturber()
        self.eps = float(model.epsilon)
        self.plan = plan_of(model, grid)
        (self._origin, self._step) = [np.array([axis[k] for axis in parameters.release["lattice"]]) for k in (0, 1)]
        (block,) = self.plan.blocks(self._origin[None, :], None, np.full(1, self.eps), weights=np.zeros(1))
        self.first, self.second = block.first, block.second
        self.edges = []  # the output bins' edges per axis, as the blocks snap them
        for mechanism, edges in zip(axis_mechanisms(model, self.eps), (self.plan.xe, self.plan.ye)):
            out = output_grid(edges, self.plan.output_bins)
            out[0], out[-1] = -np.inf, np.inf
            self.edges.append(snap_edges(mechanism, out))
        self.counts = np.zeros(block.counts.shape)
        self.counted, self.pending, self.waiting = 0, [], 0
        self.weight, self.theta, self.csv, self.fitted, self.fresh = None, None, None, -1, 0

    def count(self, pairs: np.ndarray) -> None:
        """Add the reports of lattice indices ``pairs`` (rows ``(i, j)``) to the counts per output bin."""
        from ..estimate.transition import bin_index

        points = self._origin + pairs * self._step
        key = bin_index(points[:, 0], self.edges[0]) * self.counts.shape[1] + bin_index(points[:, 1], self.edges[1])
        self.counts += np.bincount(key, minlength=self.counts.size).reshape(self.counts.shape)
        self.counted += len(pairs)

    def refresh(self, crs, refit: float) -> bytes:
        """The CSV of the estimate of the counted reports: the kept one when no report came since,
        else a fit afresh (the first, or after the reports grew by ``refit``) or warm-started."""
        if self.csv is not None and self.fitted == self.counted:
            return self.csv
        block = ProductBlock(self.counts, self.first, self.second)
        block.eps = self.eps
        afresh = self.theta is None or self.counted >= (1 + refit) * self.fresh
        plan, start = self.plan, None
        if afresh and isinstance(plan.smoothing, str) and plan.smoothing == "cv":
            self.weight = fitting.choose_smoothing([block], plan.support(), tol=plan.tol,
                                                   max_iterations=plan.iterations, accelerate=plan.accelerate) or None
        elif not afresh:
            start = self.theta
        if isinstance(plan.smoothing, str) and plan.smoothing == "cv":
            plan = dataclasses.replace(plan, smoothing=self.weight)
        est = plan.fit([block], lambda: None, initial=start)
        self.theta = (est.detail or est).probabilities
        self.fitted, self.fresh = self.counted, self.counted if afresh else self.fresh
        self.csv = est.to_table(crs).to_csv(index=False).encode()
        return self.csv
