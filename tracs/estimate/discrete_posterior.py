"""Denoising a discrete baseline's release: the posterior of every report's true POI.

The exponential mechanism (EM) and L-SRR release a POI ``y`` from the true POI ``x``
under one exact law ``P(y | x)`` for every report (the baselines' ``probabilities``,
at the per-point ε).  With a prior ``π`` over the POIs — by default the POI
frequencies estimated from the same reports
(:func:`tracs.estimate.poi_frequencies.frequencies`) — the posterior of a report
``y``'s true POI is ``P(x | y) ∝ π_x · P(y | x)``.  The denoised point is a POI: the
posterior **mode** (``rule="mode"``, the lowest index among ties) or the POI nearest
the posterior **mean** (``rule="mean"``), as for the perturbers' reports
(:mod:`tracs.estimate.poi_posterior`).

A report's posterior depends only on its own reported POI and ``π``, so the
posterior is computed once per distinct reported POI: one row of the law over the
true POIs each (the rows of :func:`tracs.estimate.frequencies`' fit, built a block
of true POIs at a time; memory: distinct reports × POIs).

N-gram's law depends on the previous *released* POI as well (its candidate set), so
every report would need its own row over the POIs with a normaliser per previous
release and true POI; it is not denoised here.  Denoising is post-processing of the
release and its public parameters: the guarantee is unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..baselines import NGram
from ..errors import InputError, InputTypeError
from . import expectation_maximisation as fitting
from .poi_frequencies import _channel_rows, _check_baseline, _fit, _indices
from .poi_posterior import RULES

__all__ = ["baseline_posterior"]


def _check_prior(prior, m: int) -> np.ndarray:
    arr = np.asarray(prior, dtype=np.float64)
    if arr.shape != (m,):
        raise InputError(f"prior must have one weight per POI ({m}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.sum() <= 0:
        raise InputError("prior must be finite, non-negative and not all zero")
    return arr / arr.sum()


def _check_rule(rule) -> tuple:
    rules = rule if isinstance(rule, tuple) else (rule,)
    bad = [r for r in rules if r not in RULES]
    if bad or not rules:
        raise InputError(f"rule must be one of {', '.join(map(repr, RULES))} or a tuple of them, got {rule!r}")
    return rules


def baseline_posterior(reports, baseline, *, offsets=None, prior=None, rule="mode", iterations=None):
    """The denoised POI of every report of the exponential mechanism or L-SRR (fixed groups).

    Parameters
    ----------
    reports : array_like
        Released POI indices (N,), or released POI coordinates (N, 2).
    baseline : ExponentialMechanism or LSRR
        The public baseline that released them, with a per-point ε.
    offsets : array_like of int, optional
        Trajectory boundaries (only to check them; every report is denoised alone).
    prior : array_like, shape (P,), optional
        Weights of the true POIs (normalised here); default the POI frequencies
        estimated from the reports (:func:`tracs.estimate.frequencies`).
    rule : {"mode", "mean"} or a tuple of them
        The posterior mode, or the POI nearest the posterior mean; a tuple gives one
        array per rule from the same pass.
    iterations : int, optional
        Without ``prior``: the most EM passes of the frequencies (their safeguard by default).

    Returns
    -------
    numpy.ndarray of intp, shape (N,)
        The index of every report's denoised POI (a tuple of them for a tuple of rules).
    """
    _check_baseline(baseline)
    if isinstance(baseline, NGram):
        raise InputTypeError("N-gram's report law depends on the previous release: "
                             "baseline_posterior takes the exponential mechanism or L-SRR")
    if baseline.epsilon is None:
        raise InputError("the posterior needs a per-point epsilon (the baseline was built per trajectory)")
    rules = _check_rule(rule)
    idx, _ = _indices(reports, baseline, offsets)
    m = len(baseline.poi_space)
    points = baseline.poi_space.points
    ys, inverse, counts = np.unique(idx, return_inverse=True, return_counts=True)
    rows = _channel_rows(baseline, ys)  # [distinct report y, true POI x]: P(y | x)
    if prior is None:  # frequencies(reports, baseline, iterations=iterations), from the same rows
        block = fitting.DenseBlock(rows, counts.astype(np.float64))
        pi = _fit(block, np.ones(m, dtype=bool), fitting.DEFAULT_TOL, iterations).probabilities
    else:
        pi = _check_prior(prior, m)
    w = rows * pi
    out = {"mode": lambda: np.argmax(w, axis=1)[inverse]}
    if "mean" in rules:
        mean = (w @ points) / w.sum(axis=1)[:, None]
        nearest = np.asarray(cKDTree(points).query(mean, k=1, workers=1)[1], dtype=np.intp)
        out["mean"] = lambda: nearest[inverse]
    picked = tuple(out[r]().astype(np.intp) for r in rules)
    return picked if isinstance(rule, tuple) else picked[0]
