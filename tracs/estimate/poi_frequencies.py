"""POI frequencies from the discrete baselines' reports (EM, N-gram, L-SRR).

The reports are POI indices.  For the exponential mechanism and L-SRR every
report has the same channel ``P(y | x)`` (the baselines' exact
``probabilities``), so the counts per POI go through EM with the rows of the
``m × m`` matrix of the reported POIs.  N-gram's candidate set depends on the
previous *released* POI (public), so each report has its own likelihood
``P(y_r | x, previous_r)``: its EM passes run compiled over the distinct (report,
previous release) pairs with the normalisers of every previous release computed once
(:mod:`tracs.estimate.ngram_law`), never a (reports × POIs) matrix.  The stopping rule
is that of :mod:`tracs.estimate.expectation_maximisation`.

A baseline built with a budget per trajectory releases each report at its trajectory's
per-point ε (public: the budget over the trajectory's length), so the reports are grouped
by ε (:mod:`tracs.estimate.epsilon_groups`; ``offsets`` required) and every group is one
block of the same fit, under the law at its ε: EM and L-SRR the rows of the distinct
reported POIs of the group (memory: :func:`channel_bytes` of the distinct (report, ε)
pairs), N-gram the normalisers per (previous release, ε)
(:func:`tracs.estimate.ngram_law.ngram_laws`); both refused above ``memory=``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..baselines import NGram
from .._validation import as_batch, check_memory_budget
from ..trajectory_batch import batch_arrays
from . import expectation_maximisation as fitting
from ..errors import InputError, InputTypeError
from ..methods import BASELINE, method_of, view
from .epsilon_groups import check_per_trajectory_offsets, epsilon_groups
from .memory import refuse_above
from .ngram_law import release_laws

__all__ = ["Frequencies", "frequencies", "BLOCK", "channel_bytes"]

#: entries (true POIs × POIs) of the baseline's law computed at once
BLOCK = 1 << 22


@dataclass(frozen=True)
class Frequencies:
    """Estimated share of true points at every POI (sums to 1), in the POI space's order."""

    probabilities: np.ndarray
    iterations: int
    converged: bool


def _indices(reports, baseline, offsets):
    arr = np.asarray(reports)
    if arr.ndim == 2:  # coordinates of released POIs: map them back to their indices
        pts, off, _ = as_batch(arr, offsets if offsets is not None else np.array([0, len(arr)]))
        coords, idx = baseline.poi_space.round(pts)
        if not np.allclose(coords, pts, rtol=0, atol=1e-6 * baseline.poi_space.diameter):
            raise InputError("reports must be released POIs of the baseline's POI space")
        return np.asarray(idx, dtype=np.intp), off
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InputTypeError("reports must be POI indices (1-D ints) or released POI coordinates (n, 2)")
    if arr.size == 0:
        raise InputError("reports is empty")
    if arr.min() < 0 or arr.max() >= len(baseline.poi_space):
        raise InputError(f"POI indices must lie in 0 … {len(baseline.poi_space) - 1}")
    off = np.array([0, len(arr)]) if offsets is None else as_batch(np.zeros((len(arr), 2)), offsets)[1]
    return arr.astype(np.intp), off


def frequencies(reports, baseline, *, offsets=None, tol: float = fitting.DEFAULT_TOL,
                iterations=None, memory=None) -> Frequencies:
    """Estimate POI frequencies of the true points from a discrete baseline's reports.

    Parameters
    ----------
    reports : array_like or tracs.Batch
        Released POI indices (N,), or released POI coordinates (N, 2) (a batch brings
        its offsets).
    baseline : a registered baseline whose entry names the ``"frequencies"`` estimator
        The public baseline (POI space, budget per point or per trajectory):
        ExponentialMechanism, NGram, or LSRR with fixed groups.
    offsets : array_like of int, optional
        Trajectory boundaries; required for N-gram (previous releases are public
        and shape the candidate set) and for a baseline built with a budget per
        trajectory (each report's per-point ε follows from its trajectory's length).
    tol, iterations
        Stopping rule and safeguard of EM.
    memory : int, str or None
        Budget in bytes or as ``"2GB"`` of N-gram's normalisers
        (:func:`tracs.estimate.ngram_law.normaliser_bytes`) and, for EM and L-SRR built
        per trajectory, of the law's rows (:func:`channel_bytes`); refused above it with
        :class:`~tracs.errors.MemoryLimitError`; ``None``: no budget.

    Returns
    -------
    Frequencies
    """
    reports, offsets = batch_arrays(reports, offsets)
    _check_baseline(baseline)
    check_per_trajectory_offsets(baseline, offsets)
    memory = check_memory_budget(memory)
    idx, off = _indices(reports, baseline, offsets)
    m = len(baseline.poi_space)
    support = np.ones(m, dtype=bool)
    if isinstance(baseline, NGram):
        check_offsets(offsets)
        blocks = release_laws(idx, off, baseline, memory)[0]
    elif baseline.epsilon is None:
        blocks = GroupedRows(idx, baseline, off, memory).blocks
    else:
        counts = np.bincount(idx, minlength=m).astype(np.float64)
        keep = np.flatnonzero(counts > 0)
        blocks = [fitting.DenseBlock(_channel_rows(baseline, keep), counts[keep])]
    return _fit(blocks, support, tol, iterations)


def _fit(blocks, support, tol, iterations) -> Frequencies:
    fit = fitting.run_em(blocks, support, tol=tol, max_iterations=iterations)
    return Frequencies(fit.theta, fit.iterations, fit.converged)


def _channel_rows(baseline, reported, epsilon=None, out=None) -> np.ndarray:
    """``L[j, x] = P(reported[j] | x)`` of a baseline with one law for every report (EM, L-SRR) at
    ``epsilon`` (default the baseline's per-point ε), built a block of true POIs at a time (memory: the
    rows and one block of :data:`BLOCK` entries), into ``out`` when given."""
    m = len(baseline.poi_space)
    rows = np.empty((len(reported), m)) if out is None else out
    step = max(1, BLOCK // m)
    for start in range(0, m, step):
        xs = np.arange(start, min(start + step, m))
        rows[:, xs] = np.asarray(baseline.probabilities(xs, epsilon=epsilon))[:, reported].T
    return rows


def channel_bytes(m: int, rows: int) -> int:
    """Bytes of ``rows`` likelihood rows over ``m`` POIs (float64) and of one block of the law being built
    beside them (at most four arrays of ``b = max(min(BLOCK, m²), m)`` float64 entries,
    :func:`_channel_rows`' block of true POIs): ``8·rows·m + 32·b``."""
    return 8 * rows * m + 32 * max(min(BLOCK, m * m), m)


class GroupedRows:
    """The law's rows of the reports of EM or L-SRR built with a budget per trajectory: for every group
    of reports at one per-point ε (:func:`tracs.estimate.epsilon_groups.epsilon_groups`), one row per
    distinct reported POI of the group, at that ε.

    Parameters
    ----------
    idx : numpy.ndarray of intp
        Released POI indices (validated).
    baseline : ExponentialMechanism or LSRR
        The public baseline, built per trajectory.
    off : numpy.ndarray
        Trajectory offsets (validated).
    memory : int or None
        Budget in bytes (:func:`channel_bytes` of the distinct (report, ε) pairs); refused above it
        before any row is computed.

    Attributes
    ----------
    rows : numpy.ndarray, shape (pairs, P)
        ``P(y | x)`` of every distinct (report ``y``, ε) pair, the pairs of a group contiguous.
    inverse : numpy.ndarray of intp
        The pair of every report.
    blocks : list of DenseBlock
        One block of the frequencies' fit per group (views of ``rows``, weighted by the counts).
    """

    def __init__(self, idx, baseline, off, memory=None):
        m = len(baseline.poi_space)
        groups = epsilon_groups(baseline, off)
        distinct = [np.unique(idx[g.rows], return_inverse=True, return_counts=True) for g in groups]
        pairs = sum(len(ys) for ys, _, _ in distinct)
        refuse_above(channel_bytes(m, pairs), memory,
                     f"the law's rows ({pairs:,} pairs of a reported POI and a per-point epsilon × {m:,} POIs)")
        self.rows = np.empty((pairs, m))
        self.inverse = np.empty(len(idx), dtype=np.intp)
        self.blocks = []
        start = 0
        for g, (ys, inverse, counts) in zip(groups, distinct):
            stop = start + len(ys)
            _channel_rows(baseline, ys, g.epsilon, out=self.rows[start:stop])
            self.inverse[g.rows] = start + inverse
            self.blocks.append(fitting.DenseBlock(self.rows[start:stop], counts.astype(np.float64)))
            start = stop


def _check_baseline(baseline) -> None:
    """``TypeError`` unless ``baseline``'s registry entry names the ``"frequencies"`` estimator
    (EM, N-gram and L-SRR with fixed groups; L-SRR with threshold groups is not ε-LDP)."""
    method = method_of(baseline)
    if method is None or method.estimator != "frequencies":
        choices = ", ".join(m.name for m in view(BASELINE).values() if m.estimator == "frequencies")
        what = "not a registered method" if method is None else f"the method {method.name!r}"
        raise InputTypeError(f"baseline must be a registered baseline with the frequencies estimator ({choices}); "
                             f"{type(baseline).__name__} is {what} without it")


def check_offsets(offsets) -> None:
    """N-gram's reports need their trajectories: each report's candidates follow the previous report."""
    if offsets is None:
        raise InputError("N-gram needs offsets: each report's candidates follow the previous report")
