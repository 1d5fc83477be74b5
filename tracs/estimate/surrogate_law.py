"""A stated surrogate law for releases without a tractable per-report likelihood (ATP, TP).

ATP's released point follows from two copies of the trajectory, an anchor region,
direction sectors reported with k-RR and a merge of the two copies' releases
(:class:`tracs.baselines.ATP`): its law given the true POI depends on the whole
trajectory and has no closed form per report.  Its release is denoised under a
**surrogate**, not ATP's law: the exponential mechanism over all POIs,

    ``P̃(y | x) ∝ exp(−ε̃ d(x, y) / (2D))``,

whose ``ε̃`` is chosen from the release itself, among the grid :data:`EPSILONS` (fixed
in advance), by its **held-out** marginal likelihood: the trajectories are split into two
folds (even and odd trajectory numbers; even and odd report numbers when one fold would
be empty), the POI frequencies ``π`` are fitted by EM under ``P̃`` on each fold
(:func:`tracs.estimate.frequencies`' fit) and score the other fold's reports,
``Σ_y n_y log Σ_x π_x P̃(y | x)``; the ``ε̃`` of the highest total is kept (ties: the
smallest); ``π`` is then fitted on every report under it, as for the exponential
mechanism (:func:`tracs.estimate.baseline_posterior`).  The in-sample marginal
likelihood cannot choose: it grows with ``ε̃`` up to the saturated fit (``P̃`` the
identity, ``π`` the reports' shares), whatever the release.  With a given prior, no
``π`` is fitted and the in-sample marginal likelihood under that prior chooses.  Values
above the largest budget the exponential mechanism accepts on the POI space are left
out.

The surrogate is post-processing of the release and public parameters (the POI space):
the guarantee is unchanged.  The denoised points are as good as the surrogate fits the
release, which nothing here guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..baselines import ExponentialMechanism
from ..errors import InputError
from . import expectation_maximisation as fitting
from .poi_frequencies import _channel_rows
from .poi_frequencies import _fit as _fit_frequencies

__all__ = ["EPSILONS", "SurrogateFit", "surrogate_channel", "surrogate_fit"]

#: the candidate ``ε̃`` of the surrogate, fixed in advance: ``2^k`` for ``k = −2 … 5`` (0.25 … 32)
EPSILONS = tuple(float(2.0 ** k) for k in range(-2, 6))


@dataclass(frozen=True)
class SurrogateFit:
    """The surrogate chosen for a release.

    Attributes
    ----------
    epsilon : float
        The chosen ``ε̃``.
    logliks : dict
        The score of every candidate ``ε̃``: the held-out marginal log-likelihood (the in-sample
        one under a given prior).
    """

    epsilon: float
    logliks: dict


def surrogate_channel(poi_space, epsilon: float) -> ExponentialMechanism:
    """The surrogate law at ``ε̃``: the exponential mechanism over all POIs of ``poi_space``."""
    return ExponentialMechanism(poi_space, float(epsilon))


def folds(n: int, off) -> np.ndarray:
    """The fold (0 or 1) of each of ``n`` reports: its trajectory's number modulo 2, or its own when a
    fold would be empty."""
    off = np.asarray(off)
    fold = np.repeat(np.arange(len(off) - 1) % 2, np.diff(off))
    return fold if 0 < fold.sum() < n else np.arange(n) % 2


def _loglik(rows, counts, pi) -> float:
    return float(np.sum(counts * np.log(np.maximum(rows @ pi, 1e-300))))


def _fit(rows, counts, iterations) -> np.ndarray:
    """``π`` fitted to the reports ``counts`` of the rows' POIs, as :func:`tracs.estimate.frequencies` fits it."""
    return _fit_frequencies([fitting.DenseBlock(rows, counts)], np.ones(rows.shape[1], dtype=bool),
                            fitting.DEFAULT_TOL, iterations).probabilities


def surrogate_fit(idx, poi_space, off=None, *, prior=None, iterations=None, epsilons=EPSILONS) -> SurrogateFit:
    """Choose ``ε̃`` by the held-out marginal likelihood of the released POIs ``idx``.

    Parameters
    ----------
    idx : numpy.ndarray of intp
        Released POI indices (validated).
    poi_space : POISpace
    off : numpy.ndarray, optional
        Trajectory offsets (the folds, :func:`folds`); default one trajectory.
    prior : numpy.ndarray, shape (P,), optional
        A normalised prior kept at every ``ε̃`` (no fit: the in-sample likelihood chooses).
    iterations : int, optional
        The most EM passes of each fit (the fit's safeguard by default).
    epsilons : sequence of float
        The candidates (default :data:`EPSILONS`).

    Returns
    -------
    SurrogateFit
    """
    n = len(idx)
    fold = folds(n, np.array([0, n]) if off is None else off)
    ys, inverse = np.unique(idx, return_inverse=True)
    counts = np.stack([np.bincount(inverse[fold == k], minlength=len(ys)) for k in (0, 1)]).astype(np.float64)
    m = len(poi_space)
    logliks, best = {}, None
    for eps in epsilons:
        try:
            channel = surrogate_channel(poi_space, eps)
        except InputError:  # above the largest budget its sampler accepts on this POI space: left out
            continue
        rows = _channel_rows(channel, ys)
        if prior is not None:
            logliks[eps] = _loglik(rows, counts.sum(axis=0), prior)
        elif counts[1].sum() > 0:
            logliks[eps] = sum(_loglik(rows, counts[k], _fit(rows, counts[1 - k], iterations)) for k in (0, 1))
        else:  # a single report: nothing to hold out
            logliks[eps] = _loglik(rows, counts[0], _fit(rows, counts[0], iterations))
        if best is None or logliks[eps] > logliks[best]:
            best = eps
    if best is None:
        raise InputError(f"no candidate surrogate epsilon is accepted on {m:,} POIs (the largest budget of "
                         "the exponential mechanism there is below them all)")
    return SurrogateFit(best, logliks)
