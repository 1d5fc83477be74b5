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
from .ngram_law import NGramLaw

__all__ = ["Frequencies", "frequencies", "BLOCK"]

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
        The public baseline (POI space, per-point ε): ExponentialMechanism,
        NGram, or LSRR with fixed groups.
    offsets : array_like of int, optional
        Trajectory boundaries; required for N-gram (previous releases are public
        and shape the candidate set).
    tol, iterations
        Stopping rule and safeguard of EM.
    memory : int, str or None
        N-gram: budget of its normalisers, in bytes or as ``"2GB"``
        (:func:`tracs.estimate.ngram_law.normaliser_bytes`; refused above it with
        :class:`~tracs.errors.MemoryLimitError`); ``None``: no budget.

    Returns
    -------
    Frequencies
    """
    reports, offsets = batch_arrays(reports, offsets)
    _check_baseline(baseline)
    if baseline.epsilon is None:
        raise InputError("frequencies need a per-point epsilon (the baseline was built per trajectory)")
    memory = check_memory_budget(memory)
    idx, off = _indices(reports, baseline, offsets)
    m = len(baseline.poi_space)
    support = np.ones(m, dtype=bool)
    if isinstance(baseline, NGram):
        check_offsets(offsets)
        block = NGramLaw(idx, off, baseline, memory)
    else:
        counts = np.bincount(idx, minlength=m).astype(np.float64)
        keep = np.flatnonzero(counts > 0)
        block = fitting.DenseBlock(_channel_rows(baseline, keep), counts[keep])
    return _fit(block, support, tol, iterations)


def _fit(block, support, tol, iterations) -> Frequencies:
    fit = fitting.run_em([block], support, tol=tol, max_iterations=iterations)
    return Frequencies(fit.theta, fit.iterations, fit.converged)


def _channel_rows(baseline, reported) -> np.ndarray:
    """``L[j, x] = P(reported[j] | x)`` of a baseline with one law for every report (EM, L-SRR), built a
    block of true POIs at a time (memory: the rows and one block of :data:`BLOCK` entries)."""
    m = len(baseline.poi_space)
    rows = np.empty((len(reported), m))
    step = max(1, BLOCK // m)
    for start in range(0, m, step):
        xs = np.arange(start, min(start + step, m))
        rows[:, xs] = np.asarray(baseline.probabilities(xs))[:, reported].T
    return rows


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
