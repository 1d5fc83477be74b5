"""The collector's estimate of TraCS-C reports, kept up to date batch by batch.

TraCS-C's likelihood depends on the reports only through how many fall in each
output bin (a report is binned by its lattice value), so each grid asked for keeps
those counts — its sufficient statistics, a few thousand numbers — and adds each
committed batch's accepted reports to them.  They are built from the database
once per grid, in chunks of lattice indices (:meth:`Store.lattice_pairs`: the
reports are never all in memory), and again when the database holds reports this
process did not count (a PostgreSQL database other collector processes write to).

Two fits of the counts are served, each labelled (:class:`ServedEstimate`):

* **exact** — a fit afresh: ``tracs estimate``'s fit of the export of the counted
  reports with the same options (:func:`tracs.estimate.grid_density.plan_density`:
  EM from the uniform start, at ε ≥ 2 with the smoothing weight chosen on held-out
  reports).  It equals ``tracs estimate`` of the export within 1e-6 of its largest
  value.  A grid's first fit is exact, and so is every fit asked for with
  ``exact=True`` (made in the request when the kept one is older than the counts).
* **warm** — after further batches, EM started from the previous estimate with the
  same smoothing weight and stopping rule: tens of passes instead of hundreds, so
  the estimate follows the reports batch by batch.  EM on these grids stops before
  it converges (the stopping rule fires on a slow path), so a warm-started fit stops
  elsewhere than a fit from the uniform start: it is a provisional estimate.

A background thread makes the exact fit of every kept grid whose counts moved, on a
copy of the counts (requests are not held up), once no batch came for
:attr:`LatticeCounts.QUIET` seconds or the reports grew by :attr:`LatticeCounts.REFIT`
since the last exact fit; it then replaces the warm one.  Once reports stop
arriving, the served estimate is exact again within that delay plus one fit.
Other methods are estimated from the export (:func:`tracs.cli.serve.estimate_csv`),
always exact.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
from ..estimate import expectation_maximisation as fitting
from ..estimate.expectation_maximisation import ProductBlock


__all__ = ["LatticeCounts", "ServedEstimate"]


@dataclasses.dataclass(frozen=True)
class ServedEstimate:
    """An estimate as the collector serves it.

    Attributes
    ----------
    csv : bytes
        The CSV ``tracs estimate --grid G -o est.csv`` writes (its columns).
    reports : int
        How many reports the fit covers (the first ``reports`` stored, in commit order).
    exact : bool
        ``True``: a fit afresh, equal within 1e-6 of its largest value to ``tracs estimate``
        of the export of those reports.  ``False``: warm-started from the previous estimate
        (provisional; the exact fit follows, see the module docstring).
    """

    csv: bytes
    reports: int
    exact: bool


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
    #: seconds without a committed batch after which the kept grids are fitted afresh (exact)
    QUIET = 1.0
    #: a kept grid is also fitted afresh, in the background, once its reports have grown by this
    #: share since its last exact fit, even while batches keep coming
    REFIT = 0.1

    def __init__(self, store, parameters):
        self.store, self.parameters = store, parameters
        self.applies = parameters.method == "tracs-c" and parameters.perturber().epsilon is not None
        self._lock, self._fitting = threading.Lock(), threading.Lock()
        self._grids = {}  # grid -> its fit (_GridFit)
        self._last_batch = time.monotonic()
        self._worker = None  # the background thread of the exact fits, while it has work

    def add(self, i: np.ndarray, j: np.ndarray) -> None:
        """Count the accepted reports of a committed batch (their lattice indices)."""
        if self.applies and len(i):
            pairs = np.column_stack([i, j]).astype(np.int64, copy=False)
            with self._lock:
                self._last_batch = time.monotonic()
                for grid, fit in list(self._grids.items()):
                    fit.pending.append(pairs)
                    fit.waiting += len(pairs)
                    if fit.waiting >= self.PENDING:  # asked for too long ago: built again next time
                        del self._grids[grid]
                self._wake()

    def estimate(self, grid: int, *, exact: bool = False) -> ServedEstimate:
        """The estimate on ``grid`` × ``grid`` cells of every report counted so far.

        ``exact=False``: the kept fit when no report came since, else a warm-started one
        (fast).  ``exact=True``: the fit afresh of every report counted (``tracs estimate``
        of the export), made now unless the background already made it.
        """
        with self._fitting:
            fit = self._counted(grid)
            served = fit.exact_fit(self.parameters.crs) if exact else fit.current(self.parameters.crs)
        with self._lock:
            self._wake()
        return served

    def estimate_csv(self, grid: int, *, exact: bool = False) -> bytes:
        """The CSV of :meth:`estimate` (``tracs estimate``'s columns)."""
        return self.estimate(grid, exact=exact).csv

    def _counted(self, grid: int):
        """The fit of ``grid`` with every committed batch counted (call with ``_fitting`` held)."""
        fit, chunks = self._fit_of(grid)
        if chunks is not None:
            for pairs in chunks:
                fit.count(pairs)
        self._fold(fit)
        return fit

    def _fold(self, fit) -> None:
        with self._lock:
            pending, fit.pending, fit.waiting = fit.pending, [], 0
        for pairs in pending:
            fit.count(pairs)

    def _wake(self) -> None:
        """Start the background thread of the exact fits if a kept grid needs one (``_lock`` held)."""
        if self._worker is None and any(f.stale() for f in self._grids.values()):
            self._worker = threading.Thread(target=self._background, name="tracs-exact-fits", daemon=True)
            self._worker.start()

    def _background(self) -> None:
        """Fit afresh each kept grid whose counts moved, once due; end when none is left."""
        while True:
            with self._lock:
                stale = [fit for fit in self._grids.values() if fit.stale()]
                if not stale:
                    self._worker = None
                    return
                wait = self.QUIET - (time.monotonic() - self._last_batch)
            due = [fit for fit in stale if wait <= 0 or fit.grown(self.REFIT)]
            if not due:
                time.sleep(min(max(wait, 0.01), 1.0))  # looked at again at least every second
                continue
            for fit in due:
                with self._fitting:
                    self._fold(fit)
                    counts, counted = fit.counts.copy(), fit.counted
                made = fit.fit_afresh(counts, self.parameters.crs)  # on a copy: requests go on meanwhile
                with self._fitting:
                    fit.install(made, counted)

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


@dataclasses.dataclass(frozen=True)
class _Fitted:
    """One fit's outcome: the cell probabilities (the next warm start), the smoothing weight it
    used and its CSV."""

    theta: np.ndarray
    weight: float | None
    csv: bytes


class _GridFit:
    """One grid's fit: its plan, the reports counted per output bin, and the kept fits — the last
    exact one and the one served (exact or warm) — with the counts each covers."""

    def __init__(self, parameters, grid: int):
        from ..estimate.grid_density import axis_mechanisms
        from ..estimate.transition import output_grid, snap_edges

        model = parameters.perturber()
        self.eps = float(model.epsilon)
        self.plan = plan_of(model, grid)
        #: the plan chooses the smoothing weight on held-out reports (ε ≥ 2): each fit afresh does again
        self.held_out = isinstance(self.plan.smoothing, str) and self.plan.smoothing == "cv"
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
        self.exact, self.exact_at = None, -1  # the last exact fit (_Fitted) and the reports it covers
        self.served, self.served_at = None, -1  # the fit served (exact or warm) and the reports it covers

    def count(self, pairs: np.ndarray) -> None:
        """Add the reports of lattice indices ``pairs`` (rows ``(i, j)``) to the counts per output bin."""
        from ..estimate.transition import bin_index

        points = self._origin + pairs * self._step
        key = bin_index(points[:, 0], self.edges[0]) * self.counts.shape[1] + bin_index(points[:, 1], self.edges[1])
        self.counts += np.bincount(key, minlength=self.counts.size).reshape(self.counts.shape)
        self.counted += len(pairs)

    def stale(self) -> bool:
        """Reports were counted (or wait to be) since the last exact fit."""
        return self.exact_at != self.counted + self.waiting

    def grown(self, share: float) -> bool:
        """The reports grew by ``share`` since the last exact fit."""
        return self.counted + self.waiting >= (1 + share) * max(self.exact_at, 0)

    @property
    def theta(self):
        """The cell probabilities of the fit served (``None`` before the first)."""
        return None if self.served is None else self.served.theta

    def current(self, crs) -> ServedEstimate:
        """The served fit, made again when reports came since: warm-started from the served one,
        exact when there is none yet."""
        if self.served is None:
            return self.exact_fit(crs)
        if self.served_at != self.counted:  # the first fit is exact: ``self.exact`` is set
            self.served = self._fit(self.counts, crs, self.exact.weight, start=self.served.theta)
            self.served_at = self.counted
        return ServedEstimate(self.served.csv, self.served_at, self.served_at == self.exact_at)

    def exact_fit(self, crs) -> ServedEstimate:
        """The fit afresh of every counted report (kept, or made now)."""
        if self.exact_at != self.counted:
            self.install(self.fit_afresh(self.counts, crs), self.counted)
        return ServedEstimate(self.exact.csv, self.exact_at, True)

    def install(self, made: _Fitted, counted: int) -> None:
        """Keep ``made``, the exact fit of the first ``counted`` reports; it is served unless the
        served fit covers more reports."""
        if counted > self.exact_at:
            self.exact, self.exact_at = made, counted
        if counted >= self.served_at:
            self.served, self.served_at = made, counted

    def fit_afresh(self, counts: np.ndarray, crs) -> _Fitted:
        """``tracs estimate``'s fit of ``counts``: from the uniform start, the smoothing weight
        chosen again on held-out reports when its plan says so."""
        weight, plan = None, self.plan
        if self.held_out:
            weight = fitting.choose_smoothing([self._block(counts)], plan.support(), tol=plan.tol,
                                              max_iterations=plan.iterations, accelerate=plan.accelerate) or None
        return self._fit(counts, crs, weight, start=None)

    def _block(self, counts):
        block = ProductBlock(counts, self.first, self.second)
        block.eps = self.eps
        return block

    def _fit(self, counts, crs, weight, *, start) -> _Fitted:
        plan = dataclasses.replace(self.plan, smoothing=weight) if self.held_out else self.plan
        est = plan.fit([self._block(counts)], lambda: None, initial=start)
        return _Fitted((est.detail or est).probabilities, weight, est.to_table(crs).to_csv(index=False).encode())
