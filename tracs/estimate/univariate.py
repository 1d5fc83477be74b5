"""One-dimensional estimation: the distribution and the mean of the true values.

:func:`distribution` runs EM (optionally EMS, Li et al. SIGMOD 2020) with the
exact transition matrix of :mod:`tracs.estimate.transition`; :func:`mean` is
unbiased where the mechanism allows it (``E[Y | x]`` affine in ``x``: PM, PTT,
OGPM-U, Duchi, Laplace, Staircase, Square Wave after an affine correction),
the circular mean for circular mechanisms (``E[e^{iY} | x] = λ·e^{ix}`` with a
real, known ``λ``), and otherwise the mean of the EM distribution.  Standard
errors: the sample standard deviation over ``√n`` for the moment estimators;
a parametric bootstrap of the binned counts (fixed seed) for the EM ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_float_array
from ..errors import InputError, InputTypeError
from ..mechanisms import KRR, Circle, RealLine
from ._threads import run_chunks
from .edge_zones import check_edge_decay, edge_axes, place_edge_mass
from .expectation_maximisation import DEFAULT_TOL, run_em
from .transition import (bin_reports, check_bins, default_output_bins, input_edges, krr_matrix,
                         output_edges, transition_matrix)

__all__ = ["Distribution", "MeanEstimate", "distribution", "mean"]

#: bootstrap replicates for the standard errors of EM estimates
BOOTSTRAP = 20


@dataclass(frozen=True)
class Distribution:
    """An estimated distribution over equal cells of the input domain.

    Attributes
    ----------
    edges : numpy.ndarray, shape (bins + 1,)
        Cell edges (for ``KRR``: ``0, 1, …, k``; cell ``i`` is category ``i``).
    probabilities : numpy.ndarray, shape (bins,)
        Estimated mass of every cell (sums to 1).
    standard_errors : numpy.ndarray, shape (bins,)
        Bootstrap standard error of every cell's mass.
    iterations : int
        EM iterations of the fit on the reports.
    converged : bool
        Whether the stopping rule fired.
    """

    edges: np.ndarray
    probabilities: np.ndarray
    standard_errors: np.ndarray
    iterations: int
    converged: bool

    @property
    def centers(self) -> np.ndarray:
        return 0.5 * (self.edges[:-1] + self.edges[1:])

    def mean(self) -> float:
        """Mean of the estimated distribution (cell masses at cell centres)."""
        return float(self.probabilities @ self.centers)

    def cdf(self, y) -> np.ndarray:
        """Cdf of the estimate, uniform inside every cell."""
        y = np.asarray(y, dtype=np.float64)
        cum = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        return np.interp(y, self.edges, cum)


@dataclass(frozen=True)
class MeanEstimate:
    """An estimated mean with its standard error and the estimator used.

    ``method`` is ``"unbiased"`` (mean of the reports, affinely corrected where
    ``E[Y|x]`` is affine), ``"circular"`` (angle of the debiased mean resultant) or
    ``"em"`` (mean of the EM distribution).
    """

    value: float
    standard_error: float
    method: str


def _reports(reports, mechanism) -> np.ndarray:
    arr = as_float_array(reports, "reports").ravel()
    if arr.size == 0:
        raise InputError("reports is empty")
    if not np.all(np.isfinite(arr)):
        raise InputError("reports contains NaN or infinite values")
    dom = mechanism.output_domain
    if not isinstance(dom, RealLine) and hasattr(dom, "low"):
        span = dom.high - dom.low
        bad = (arr < dom.low - 1e-9 * span) | (arr > dom.high + 1e-9 * span)
        if np.any(bad):
            raise InputError(f"{int(bad.sum())} report(s) lie outside the output domain "
                             f"[{dom.low}, {dom.high}] of {type(mechanism).__name__}")
    return arr


def _check_mechanism(mechanism):
    if not hasattr(mechanism, "input_domain") or not hasattr(mechanism, "epsilon"):
        raise InputTypeError(f"mechanism must be a tracs mechanism, got {type(mechanism).__name__}")


def _model(reports, mechanism, bins, output_bins):
    """(input edges, counts per output bin, transition matrix)."""
    if isinstance(mechanism, KRR):
        counts = np.bincount(reports.astype(np.int64), minlength=mechanism.k).astype(np.float64)
        return np.arange(mechanism.k + 1, dtype=np.float64), counts, krr_matrix(mechanism)
    edges = input_edges(mechanism, bins)
    out = output_edges(mechanism, reports, output_bins)
    return edges, bin_reports(reports, out), transition_matrix(mechanism, edges, out)


def _fit(counts, matrix, smoothing, tol, max_iterations):
    block = _CountsBlock(counts, matrix)
    return run_em([block], np.ones(matrix.shape[1], dtype=bool), smoothing=smoothing, tol=tol,
                  max_iterations=max_iterations)


class _CountsBlock:
    def __init__(self, counts, matrix):
        self.counts, self.matrix = counts, matrix
        self.weight = float(counts.sum())
        self._nz = counts > 0

    def predict_and_back(self, theta):
        pred = self.matrix @ theta
        ratio = np.zeros_like(pred)
        np.divide(self.counts, pred, out=ratio, where=self._nz & (pred > 0))
        ll = float(np.sum(self.counts[self._nz] * np.log(np.maximum(pred[self._nz], 1e-300))))
        return ll, self.matrix.T @ ratio


def distribution(reports, mechanism, bins: int = 64, *, smoothing=None, output_bins=None,
                 tol: float = DEFAULT_TOL, max_iterations=None, bootstrap: int = BOOTSTRAP,
                 seed: int = 0, workers: int = 1, edge_decay: float = 0.0) -> Distribution:
    """Estimate the distribution of the true values from a mechanism's reports.

    Parameters
    ----------
    reports : array_like
        Outputs of ``mechanism`` (one per user).
    mechanism : a :mod:`tracs.mechanisms` mechanism
        The public mechanism that produced them (its ε and domain).
    bins : int
        Equal cells over the input domain (ignored for ``KRR``: one per category).
    smoothing : None or "ems"
        EMS smoothing (Li et al. 2020) after every M-step.
    output_bins : int, optional
        Bins of the reports (default four per cell, at least 64).
    tol, max_iterations
        Stopping rule of :func:`tracs.estimate.expectation_maximisation.run_em`.
    bootstrap : int
        Parametric bootstrap replicates for the standard errors (0: none).
    seed : int
        Seed of the bootstrap (the estimate itself is deterministic).
    workers : int
        Threads over the bootstrap replicates (their resamples are drawn first, in
        order): the result is bit-identical for every value.
    edge_decay : float
        How the mass of an *edge zone* is split: cells near an end of the domain
        whose report laws coincide (the optimal classical mechanism clamps its band
        there), so the reports fix only the zone's total
        (:mod:`tracs.estimate.edge_zones`).  ``κ > 0``: a density ``∝ exp(−κ·u)``
        across the zone, falling towards the end; ``0`` (default): EM's even split.
        The default differs from :func:`tracs.estimate.grid_density`'s (4): a value
        domain, unlike a region drawn around a city, often holds data up to its
        ends (clipped values).  The same split is applied to the bootstrap
        replicates.

    Returns
    -------
    Distribution
    """
    _check_mechanism(mechanism)
    bins = check_bins(bins)
    arr = _reports(reports, mechanism)
    nout = default_output_bins(bins) if output_bins is None else check_bins(output_bins, "output_bins")
    edge_decay = check_edge_decay(edge_decay)
    edges, counts, matrix = _model(arr, mechanism, bins, nout)
    fit = _fit(counts, matrix, smoothing, tol, max_iterations)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)):
        raise InputTypeError(f"workers must be an int, got {type(workers).__name__}")
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    reps = _bootstrap(counts, matrix, smoothing, tol, max_iterations, bootstrap, seed, int(workers))
    theta = fit.theta
    if edge_decay and not isinstance(mechanism, KRR):
        axes = edge_axes([[matrix]], edge_decay)
        theta = place_edge_mass(theta, axes)
        reps = np.array([place_edge_mass(r, axes) for r in reps]).reshape(reps.shape)
    se = np.std(reps, axis=0, ddof=1) if len(reps) > 1 else np.zeros_like(theta)
    return Distribution(edges, theta, se, fit.iterations, fit.converged)


def _bootstrap(counts, matrix, smoothing, tol, max_iterations, replicates, seed,
               workers: int = 1) -> np.ndarray:
    """EM fits on multinomial resamples of the binned counts, shape (replicates, bins)."""
    rng = np.random.default_rng(seed)
    n = int(counts.sum())
    samples = [rng.multinomial(n, counts / n).astype(np.float64) for _ in range(int(replicates))]
    reps = run_chunks(lambda i: _fit(samples[i], matrix, smoothing, tol, max_iterations).theta,
                      len(samples), workers)
    return np.array(reps).reshape(len(reps), matrix.shape[1])


def _conditional_mean(mechanism, x: np.ndarray) -> np.ndarray:
    """``E[Y | x]`` from the cdf: ``high − ∫ cdf`` over a bounded output (fine trapezoid)."""
    dom = mechanism.output_domain
    if isinstance(dom, RealLine):
        return x.astype(np.float64)  # symmetric additive noise
    if not hasattr(dom, "low"):
        raise InputTypeError(f"{type(mechanism).__name__} has no numeric output")
    if hasattr(mechanism, "outputs"):  # Duchi
        lo, hi = mechanism.outputs
        return lo * mechanism.pmf(np.full(x.shape, lo), x) + hi * mechanism.pmf(np.full(x.shape, hi), x)
    y = np.linspace(dom.low, dom.high, 20001)
    cdf = mechanism.cdf(y[:, None], x[None, :])
    return dom.high - np.trapezoid(cdf, y, axis=0)


def _affine(mechanism):
    """``(slope, intercept)`` when ``E[Y|x]`` is affine in ``x`` (to 1e-6 of the width), else None."""
    dom = mechanism.input_domain
    x = np.linspace(dom.low, dom.high, 9)
    m = _conditional_mean(mechanism, x)
    slope, intercept = np.polyfit(x, m, 1)
    scale = max(abs(dom.high - dom.low), 1e-300)
    if np.max(np.abs(slope * x + intercept - m)) <= 1e-6 * scale and abs(slope) > 1e-9:
        return float(slope), float(intercept)
    return None


def _resultant_factor(mechanism) -> float:
    """``λ = E[cos(Y − x)]`` of a circular mechanism (independent of ``x``)."""
    period = mechanism.output_domain.period
    y = np.linspace(0.0, period, 40001)
    cdf = mechanism.cdf(y, np.zeros_like(y))
    w = 2 * np.pi / period
    # E[cos(wY)] = 1 + w ∫ sin(wy) F(y) dy  (integration by parts over [0, period])
    return float(1.0 + w * np.trapezoid(np.sin(w * y) * cdf, y))


def mean(reports, mechanism, *, bins: int = 256, smoothing=None) -> MeanEstimate:
    """Estimate the mean of the true values from a mechanism's reports.

    Unbiased where ``E[Y | x]`` is affine in ``x`` (the estimate is the reports'
    mean mapped back through the affine map; standard error ``s/(|slope|·√n)``);
    for circular mechanisms, the circular mean ``arg(mean(e^{iY}) / λ)`` (scaled
    to the period) with a delta-method standard error; otherwise the mean of the
    EM distribution on ``bins`` cells with a bootstrap standard error.

    Parameters
    ----------
    reports : array_like
    mechanism : a continuous mechanism or ``Duchi`` (``KRR`` has no mean)
    bins, smoothing
        Used by the EM fallback only.

    Returns
    -------
    MeanEstimate
    """
    _check_mechanism(mechanism)
    if isinstance(mechanism, KRR):
        raise InputTypeError("KRR reports categories, which have no mean; use distribution()")
    arr = _reports(reports, mechanism)
    n = arr.size
    if isinstance(mechanism.output_domain, Circle):
        period = mechanism.output_domain.period
        w = 2 * np.pi / period
        lam = _resultant_factor(mechanism)
        c, s = np.cos(w * arr).mean() / lam, np.sin(w * arr).mean() / lam
        angle = float(np.mod(np.arctan2(s, c), 2 * np.pi))
        # delta method: the component perpendicular to the mean direction
        perp = (-np.sin(angle) * np.cos(w * arr) + np.cos(angle) * np.sin(w * arr)) / lam
        resultant = max(np.hypot(c, s), 1e-300)
        se = float(perp.std(ddof=1) / (resultant * np.sqrt(n))) / w if n > 1 else np.inf
        return MeanEstimate(angle / w, se, "circular")
    affine = _affine(mechanism)
    if affine is not None:
        slope, intercept = affine
        value = (arr.mean() - intercept) / slope
        se = float(arr.std(ddof=1) / (abs(slope) * np.sqrt(n))) if n > 1 else np.inf
        return MeanEstimate(float(value), se, "unbiased")
    bins = check_bins(bins)
    edges, counts, matrix = _model(arr, mechanism, bins, default_output_bins(bins))
    centers = 0.5 * (edges[:-1] + edges[1:])
    fit = _fit(counts, matrix, smoothing, DEFAULT_TOL, None)
    reps = _bootstrap(counts, matrix, smoothing, DEFAULT_TOL, None, BOOTSTRAP, 0) @ centers
    return MeanEstimate(float(fit.theta @ centers), float(np.std(reps, ddof=1)), "em")
