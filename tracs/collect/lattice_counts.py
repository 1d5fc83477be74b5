"""The collector's estimate of TraCS-C reports, kept up to date batch by batch.

TraCS-C's likelihood depends on the reports only through how many fall on each
value of the public lattice (a report is binned by its lattice value), so the
counts of reports per lattice pair ``(i, j)`` are its sufficient statistics.
:class:`LatticeCounts` adds each committed batch's accepted reports to them and
rebuilds them from the database with one ``GROUP BY`` when the stored count
differs from its own (at start, after a rolled-back batch, or when another
collector process writes to the same PostgreSQL database) — the reports are never
loaded.  An estimate is the fit ``tracs estimate`` makes of the export of those
reports, with the same options (:func:`tracs.estimate.grid_density.plan_density`), on the
blocks of the counts; it is kept until the next batch.  Other methods are estimated
from the export (:func:`tracs.cli.serve.estimate_csv`).
"""

from __future__ import annotations

import threading

import numpy as np

from ..estimate.expectation_maximisation import ProductBlock

__all__ = ["LatticeCounts"]


def _merged(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``keys`` and the sum of ``counts`` of each."""
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.bincount(inverse, weights=counts, minlength=len(unique)).astype(np.int64)


class LatticeCounts:
    """Counts of the stored reports per lattice pair, for the parameters of ``store``'s collection.

    ``applies``: the method is TraCS-C (otherwise nothing is counted).  A pair ``(i, j)``
    is kept as the key ``i·n₁ + j`` (``n₁`` values on the second axis), with its count,
    for the pairs that hold reports only (the lattice has up to 2²⁰ values per axis);
    the keys of new batches wait in a list until an estimate or 2²⁰ of them.  Each grid
    asked for (the last :attr:`GRIDS`) keeps its blocks (the counts per output bin: a
    new batch's reports are binned and added) and its estimate until the next batch;
    EM is run afresh on the blocks (a fit warm-started from the previous one stops
    elsewhere, and cells it had emptied stay empty).
    """

    PENDING = 1 << 20
    #: most grids whose fits are kept (the oldest asked for first is dropped)
    GRIDS = 4

    def __init__(self, store, parameters):
        self.store, self.parameters = store, parameters
        self.applies = parameters.method == "tracs-c" and parameters.perturber().epsilon is not None
        self._n1 = int(parameters.release["lattice"][1][2])
        self.keys, self.counts = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.total = 0
        self._pending, self._waiting = [], 0
        self._lock, self._fitting = threading.Lock(), threading.Lock()
        self._grids = {}  # grid -> its fit (_GridFit)

    def add(self, i: np.ndarray, j: np.ndarray) -> None:
        """Count the accepted reports of a committed batch (their lattice indices)."""
        if self.applies and len(i):
            keys = np.asarray(i, dtype=np.int64) * self._n1 + j
            with self._lock:
                self._pending.append(keys)
                self._waiting += len(keys)
                self.total += len(keys)
                for fit in list(self._grids.values()):
                    fit.pending.append(keys)
                    fit.waiting += len(keys)
                if self._waiting >= self.PENDING:
                    self._merge()

    def _merge(self) -> None:
        if self._pending:
            new = np.concatenate(self._pending)
            self.keys, self.counts = _merged(np.concatenate([self.keys, new]),
                                             np.concatenate([self.counts, np.ones(len(new), dtype=np.int64)]))
            self._pending, self._waiting = [], 0
        for grid in [g for g, fit in self._grids.items() if fit.waiting >= self.PENDING]:
            del self._grids[grid]  # asked for too long ago: fitted afresh next time

    def _sync(self) -> None:
        """Count again from the database when it holds other reports than those counted."""
        stored = self.store.count()
        with self._lock:
            if stored != self.total:  # at start, or rows written elsewhere: counted again from the database
                chunks = list(self.store.lattice_counts()) or [np.zeros((0, 3), dtype=np.int64)]
                rows = np.concatenate(chunks)
                self.keys, self.counts = _merged(rows[:, 0] * self._n1 + rows[:, 1], rows[:, 2])
                self.total, self._pending, self._waiting, self._grids = int(self.counts.sum()), [], 0, {}

    def _points(self, keys: np.ndarray) -> np.ndarray:
        (o0, h0, _), (o1, h1, _) = self.parameters.release["lattice"]
        ii, jj = np.divmod(keys, self._n1)
        return np.column_stack([o0 + ii * h0, o1 + jj * h1])

    def estimate_csv(self, grid: int) -> bytes:
        """The CSV ``tracs estimate --grid GRID`` writes for the export of the stored reports."""
        with self._fitting:
            self._sync()
            model = self.parameters.perturber()
            eps = float(model.epsilon)
            with self._lock:
                fit = self._grids.get(grid)
                if fit is None:
                    self._merge()
                    keys, counts, total = self.keys, self.counts, self.total
                    while len(self._grids) >= self.GRIDS:  # the public endpoint may ask for any grid
                        del self._grids[next(iter(self._grids))]
                    fit = self._grids[grid] = _GridFit(plan_of(model, grid))
                else:
                    keys = np.concatenate(fit.pending) if fit.pending else np.zeros(0, dtype=np.int64)
                    counts, total = np.ones(len(keys), dtype=np.int64), self.total
                fit.pending, fit.waiting = [], 0
            if fit.csv is not None and fit.total == total:
                return fit.csv
            if len(keys):
                new = fit.plan.blocks(self._points(keys), None, np.full(len(keys), eps), weights=counts)
                fit.blocks = new if fit.blocks is None else [_added(a, b) for a, b in zip(fit.blocks, new)]
            est = fit.plan.fit(fit.blocks, lambda: None)
            fit.total, fit.csv = total, est.to_table(self.parameters.crs).to_csv(index=False).encode()
            return fit.csv


def plan_of(model, grid: int):
    """The plan of ``tracs estimate --grid GRID``'s fit (its default options) for TraCS-C reports."""
    from ..estimate.grid_density import plan_density

    eps = float(model.epsilon)
    return plan_density(model, 0, eps, eps, grid=(grid, grid))


def _added(block, new):
    """The product block of the reports of ``block`` and of ``new`` (same matrices)."""
    out = ProductBlock(block.counts + new.counts, block.first, block.second)
    out.eps = block.eps
    return out


class _GridFit:
    """One grid's fit: its plan, its blocks, the reports they count and the CSV of their estimate."""

    def __init__(self, plan):
        self.plan, self.blocks, self.total, self.csv = plan, None, 0, None
        self.pending, self.waiting = [], 0
