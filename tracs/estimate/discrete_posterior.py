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

* **EM, L-SRR**: a report's posterior depends only on its own reported POI and ``π``,
  so it is computed once per distinct reported POI: one row of the law over the true
  POIs each (the rows of :func:`tracs.estimate.frequencies`' fit, built a block of
  true POIs at a time; memory: distinct reports × POIs).
* **N-gram**: exact.  Its law ``P(y | x, p)`` depends on the previous *released* POI
  ``p`` too (its candidate set), so it needs the trajectories (``offsets``); the
  normalisers of every distinct previous release are computed once and the posterior
  of every distinct (report, previous release) pair runs compiled
  (:mod:`tracs.estimate.ngram_law`; memory: previous releases × POIs, ``memory=``).
* **ATP, TP**: a **surrogate**, not their law (which has no tractable per-report
  form): the exponential mechanism over all POIs at an ``ε̃`` chosen from the release
  by its held-out marginal likelihood (two folds of trajectories), with ``π`` fitted
  under it (:mod:`tracs.estimate.surrogate_law`).  ``offsets`` are optional: they only
  shape the folds.

``revisit=α`` (EM, L-SRR, ATP / TP; ``offsets`` required) takes every report's prior given
its trajectory's other reports instead: the revisit prior of :mod:`tracs.estimate.revisits`
with ``π`` as every report's base prior, over chunks of whole trajectories (memory: a
chunk's reports × POIs, at most :data:`REVISIT_ENTRIES` entries unless one trajectory is
longer).  Off by default; ``tracs evaluate --denoise trajectory`` and the denoised tables of
``docs/results.md`` use it at its default weight.

A baseline built with a budget per trajectory (EM, L-SRR, N-gram) releases each report at
its trajectory's per-point ε, public from the trajectory's length (``offsets`` required):
the reports are grouped by ε (:mod:`tracs.estimate.epsilon_groups`), each group is a block
of the frequencies' fit under the law at its ε, and each report's posterior is taken under
its group's law (EM, L-SRR: one row per distinct (report, ε) pair, weighted in place,
memory :func:`tracs.estimate.poi_frequencies.channel_bytes`, refused above ``memory=``; N-gram: normalisers per (previous release, ε)).  ATP's and TP's surrogate does
not depend on their budget, so theirs are denoised as above whatever the budget.

Denoising is post-processing of the release and its public parameters: the guarantee
is unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .._validation import check_memory_budget
from ..baselines import TP, NGram
from ..errors import InputError
from . import expectation_maximisation as fitting
from .epsilon_groups import check_per_trajectory_offsets
from .ngram_law import release_laws
from .revisits import check_revisit, revisit_priors
from .smoothing import trajectory_ranges
from .poi_frequencies import GroupedRows, _channel_rows, _check_baseline, _fit, _indices, check_offsets
from .poi_posterior import RULES
from .surrogate_law import surrogate_channel, surrogate_fit

__all__ = ["baseline_posterior", "REVISIT_ENTRIES"]

#: the most reports × POIs entries of a chunk of whole trajectories with ``revisit``
REVISIT_ENTRIES = 1 << 22


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


def _check_surrogate(value, baseline):
    if value is None:
        return None
    if not isinstance(baseline, TP):
        raise InputError("surrogate_epsilon is ATP's and TP's (their releases are denoised under a surrogate law)")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value <= 0:
        raise InputError(f"surrogate_epsilon must be a positive number, got {value!r}")
    return float(value)


def _picked(rules, mode, means, points, tuple_asked):
    """The POIs of the asked rules: ``mode()`` (indices) and the POIs nearest ``means()``."""
    out = {"mode": mode}
    if "mean" in rules:
        out["mean"] = lambda: np.asarray(cKDTree(points).query(means(), k=1, workers=1)[1], dtype=np.intp)
    picked = tuple(out[r]().astype(np.intp) for r in rules)
    return picked if tuple_asked else picked[0]


def baseline_posterior(reports, baseline, *, offsets=None, prior=None, rule="mean", iterations=None,
                       memory=None, surrogate_epsilon=None, revisit=None):
    """The denoised POI of every report of the exponential mechanism, L-SRR (fixed groups), N-gram
    or ATP / TP (under a surrogate law).

    Parameters
    ----------
    reports : array_like
        Released POI indices (N,), or released POI coordinates (N, 2).
    baseline : ExponentialMechanism, LSRR, NGram, ATP or TP
        The public baseline that released them (a budget per point or per trajectory).
    offsets : array_like of int, optional
        Trajectory boundaries: required for N-gram (each report's candidates follow the
        previous report of its trajectory) and for EM, L-SRR and N-gram built with a
        budget per trajectory (each report's per-point ε follows from its trajectory's
        length); ATP / TP: the folds of the surrogate's choice; otherwise only checked
        (every report is denoised alone).
    prior : array_like, shape (P,), optional
        Weights of the true POIs (normalised here); default the POI frequencies
        estimated from the reports (:func:`tracs.estimate.frequencies`; ATP / TP: fitted
        under the surrogate).
    rule : {"mean", "mode"} or a tuple of them
        The POI nearest the posterior mean (the default), or the posterior mode (unstable
        under the baselines' flat laws: it settles on the busiest venues); a tuple gives
        one array per rule from the same pass.
    iterations : int, optional
        Without ``prior``: the most EM passes of the frequencies (their safeguard by
        default; ATP / TP: of each candidate's fit).
    memory : int, str or None
        Budget in bytes or as ``"2GB"`` of N-gram's normalisers
        (:func:`tracs.estimate.ngram_law.normaliser_bytes`) and, for EM and L-SRR built
        per trajectory, of the law's rows
        (:func:`tracs.estimate.poi_frequencies.channel_bytes`); above it
        :class:`~tracs.errors.MemoryLimitError`; ``None``: no budget.
    surrogate_epsilon : float, optional
        ATP / TP: the surrogate's ``ε̃`` (default chosen from the release,
        :func:`tracs.estimate.surrogate_law.surrogate_fit`).
    revisit : float, optional
        EM, L-SRR, ATP / TP: the prior of every report given the other reports of its
        trajectory (``offsets`` required), ``π`` weighted ``revisit`` points against their
        posteriors (:mod:`tracs.estimate.revisits`); default None: every report alone.

    Returns
    -------
    numpy.ndarray of intp, shape (N,)
        The index of every report's denoised POI (a tuple of them for a tuple of rules).
    """
    surrogate = isinstance(baseline, TP)
    if not surrogate:
        _check_baseline(baseline)
        check_per_trajectory_offsets(baseline, offsets)
    rules = _check_rule(rule)
    surrogate_epsilon = _check_surrogate(surrogate_epsilon, baseline)
    check_revisit(revisit)
    if revisit is not None and (offsets is None or isinstance(baseline, NGram)):
        raise InputError("revisit needs offsets (the trajectories) and a baseline of one law per report: EM, "
                         "L-SRR, ATP or TP" + (", not N-gram" if isinstance(baseline, NGram) else ""))
    memory = check_memory_budget(memory)
    if isinstance(baseline, NGram):
        check_offsets(offsets)
    idx, off = _indices(reports, baseline, offsets)
    m = len(baseline.poi_space)
    points = baseline.poi_space.points
    if prior is not None:
        prior = _check_prior(prior, m)
    if isinstance(baseline, NGram):
        mode, mean = _ngram_posterior(idx, off, baseline, memory, prior, iterations)
        return _picked(rules, lambda: mode, lambda: mean, points, isinstance(rule, tuple))
    if not surrogate and baseline.epsilon is None:  # per trajectory: one row per (report, ε) pair
        grouped = GroupedRows(idx, baseline, off, memory)
        rows, inverse, blocks = grouped.rows, grouped.inverse, grouped.blocks
    else:
        ys, inverse, counts = np.unique(idx, return_inverse=True, return_counts=True)
        channel = baseline
        if surrogate:  # the exponential mechanism at ε̃ (given, or chosen from the release), π fitted below
            if surrogate_epsilon is None:
                surrogate_epsilon = surrogate_fit(idx, baseline.poi_space, off, prior=prior,
                                                  iterations=iterations).epsilon
            channel = surrogate_channel(baseline.poi_space, surrogate_epsilon)
        rows = _channel_rows(channel, ys)  # [distinct report y, true POI x]: P(y | x)
        blocks = None if prior is not None else [fitting.DenseBlock(rows, counts.astype(np.float64))]
    if prior is None:  # frequencies(reports, baseline, offsets=offsets, iterations=iterations), from the same rows
        prior = _fit(blocks, np.ones(m, dtype=bool), fitting.DEFAULT_TOL, iterations).probabilities
    if revisit is not None:
        mode, mean = _revisited(rows, inverse, prior, off, float(revisit), points)
        return _picked(rules, lambda: mode, lambda: mean, points, isinstance(rule, tuple))
    w = np.multiply(rows, prior, out=rows)  # the rows are not needed after: weighted in place
    return _picked(rules, lambda: np.argmax(w, axis=1)[inverse],
                   lambda: ((w @ points) / w.sum(axis=1)[:, None])[inverse], points, isinstance(rule, tuple))


def _revisited(rows, inverse, prior, off, alpha, points):
    """``(mode, mean)`` of every report under the revisit prior, ``rows[inverse[i]]`` its law, chunks
    of whole trajectories of at most :data:`REVISIT_ENTRIES` entries (or one trajectory)."""
    n, m = len(inverse), rows.shape[1]
    off = np.asarray(off, dtype=np.int64)
    mode, mean = np.empty(n, dtype=np.intp), np.empty((n, 2))
    for i, j in trajectory_ranges(off, m, REVISIT_ENTRIES):
        a, b = int(off[i]), int(off[j])
        if b > a:
            lik = rows[inverse[a:b]]
            base = np.broadcast_to(prior, lik.shape)
            w = revisit_priors(lik, base, off[i:j + 1] - a, alpha) * lik
            mode[a:b] = np.argmax(w, axis=1)
            mean[a:b] = (w @ points) / w.sum(axis=1)[:, None]
    return mode, mean


def _ngram_posterior(idx, off, baseline, memory, prior, iterations):
    """``(mode, mean)`` of every N-gram report: under its law at the per-point ε, or at its trajectory's
    per-point ε for a baseline built per trajectory (one law per ε, one fit of ``π`` over them all)."""
    m = len(baseline.poi_space)
    laws, parts = release_laws(idx, off, baseline, memory)
    pi = _fit(laws, np.ones(m, dtype=bool), fitting.DEFAULT_TOL, iterations).probabilities if prior is None else prior
    mode, mean = np.empty(len(idx), dtype=np.int64), np.empty((len(idx), 2))
    for part, law in zip(parts, laws):
        mode[part], mean[part] = law.posterior(pi)
    return mode, mean
