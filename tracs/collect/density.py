"""The collector's estimate of TraCS-C reports, kept up to date batch by batch.

TraCS-C's likelihood depends on the reports only through how many fall on each
value of the public lattice (a report is binned by its lattice value), so the
counts of reports per lattice pair ``(i, j)`` are its sufficient statistics.
:class:`LatticeCounts` adds each committed batch's accepted reports to them and
rebuilds them from the database with one ``GROUP BY`` when the stored count
differs from its own (at start, after a rolled-back batch, or when another
collector process writes to the same PostgreSQL database) — the reports are never
loaded.  An estimate is the fit ``tracs estimate`` makes of the export of those
reports, with the same options (:func:`tracs.estimate.planar.plan_density`), on the
blocks of the counts; it is kept until the next batch.  Other methods are estimated
from the export (:func:`tracs.collect.export.estimate_csv`).
"""

from __future__ import annotations

import threading

import numpy as np

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
    the keys of new batches wait in a list until an estimate or 2²⁰ of them."""

    PENDING = 1 << 20

    def __init__(self, store, parameters):
        self.store, self.parameters = store, parameters
        self.applies = parameters.method == "tracs-c" and parameters.perturber().epsilon is not None
        self._n1 = int(parameters.release["lattice"][1][2])
        self.keys, self.counts = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.total = 0
        self._pending, self._waiting = [], 0
        self._lock = threading.Lock()
        self._cache = {}  # grid -> (total, CSV bytes)

    def add(self, i: np.ndarray, j: np.ndarray) -> None:
        """Count the accepted reports of a committed batch (their lattice indices)."""
        if self.applies and len(i):
            with self._lock:
                self._pending.append(np.asarray(i, dtype=np.int64) * self._n1 + j)
                self._waiting += len(i)
                self.total += len(i)
                if self._waiting >= self.PENDING:
                    self._merge()

    def _merge(self) -> None:
        if self._pending:
            new = np.concatenate(self._pending)
            self.keys, self.counts = _merged(np.concatenate([self.keys, new]),
                                             np.concatenate([self.counts, np.ones(len(new), dtype=np.int64)]))
            self._pending, self._waiting = [], 0

    def _current(self) -> tuple[np.ndarray, np.ndarray, int]:
        stored = self.store.count()
        with self._lock:
            if stored != self.total:  # at start, or rows written elsewhere: counted again from the database
                chunks = list(self.store.lattice_counts()) or [np.zeros((0, 3), dtype=np.int64)]
                rows = np.concatenate(chunks)
                self.keys, self.counts = _merged(rows[:, 0] * self._n1 + rows[:, 1], rows[:, 2])
                self.total, self._pending, self._waiting = int(self.counts.sum()), [], 0
            self._merge()
            return self.keys, self.counts, self.total

    def estimate_csv(self, grid: int) -> bytes:
        """The CSV ``tracs estimate --grid GRID`` writes for the export of the stored reports."""
        keys, counts, total = self._current()
        cached = self._cache.get(grid)
        if cached is not None and cached[0] == total:
            return cached[1]
        from ..estimate.planar import plan_density

        model = self.parameters.perturber()
        (o0, h0, _), (o1, h1, _) = self.parameters.release["lattice"]
        ii, jj = np.divmod(keys, self._n1)
        points = np.column_stack([o0 + ii * h0, o1 + jj * h1])
        eps = float(model.epsilon)
        plan = plan_density(model, total, eps, eps, grid=(grid, grid))
        est = plan.fit(plan.blocks(points, None, np.full(len(points), eps), weights=counts), lambda: None)
        data = est.to_table(self.parameters.crs).to_csv(index=False).encode()
        self._cache[grid] = (total, data)
        return data
