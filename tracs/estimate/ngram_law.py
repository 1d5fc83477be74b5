"""N-gram's report law over the true POIs, without a (reports × POIs) matrix.

:class:`tracs.baselines.NGram` releases point ``i`` of a trajectory by the exponential
mechanism over the candidates ``C_p = {z : d(p, z) <= θ}`` of the previous *released* POI
``p`` (every POI for a trajectory's first point; an empty ``C_p`` falls back to every
POI), so a report ``y`` with previous release ``p`` has the law

    ``P(y | x, p) = [y ∈ C_p] · k(x, y) / Z_p(x)``,  ``k(x, z) = exp(−ε d(x, z) / (2D))``,
    ``Z_p(x) = Σ_{z ∈ C_p} k(x, z)``

(:meth:`tracs.baselines.NGram.probabilities`; its log-sum-exp shift cancels in the
ratio, and ``ε d / (2D) <= ε / 2`` keeps every ``k`` far above underflow).  Only the
normalisers depend on the previous release: for the ``V`` distinct previous releases
they are one matrix product, the kernel ``K`` (POIs × POIs) times the candidates'
indicators (POIs × ``V``, kept as bytes), computed a block of at most :data:`BLOCK`
entries of ``K`` (each once) and of the indicators at a time, and kept as their inverses
(``V`` × POIs, float64).  Memory: :func:`normaliser_bytes`, ``9·V·m`` bytes for ``m``
POIs and a few blocks, refused above a budget (:func:`tracs.estimate.memory.refuse_above`).

Every compiled pass then takes each distinct pair (report, previous release) once, its
likelihood row over the POIs built in place (a row of ``k`` once per distinct report,
never a (reports × POIs) matrix): the E-step and M-step of the POI frequencies
(``predict_and_back``, the interface of :mod:`tracs.estimate.expectation_maximisation`'s
blocks) and the posterior's mode and mean (:mod:`tracs.estimate.poi_posterior`'s
kernel), each ``O(pairs × m)``.

A baseline built with a budget per trajectory releases each trajectory at its own
per-point ε: :func:`ngram_laws` builds one law per distinct ε (its normalisers per
(previous release, ε)), all refused together above the budget.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..errors import InputError
from .epsilon_groups import epsilon_groups
from .memory import refuse_above
from .poi_posterior import _posterior_stats

__all__ = ["BLOCK", "NGramLaw", "ngram_laws", "release_laws", "normaliser_bytes"]

#: entries of one block of the kernel ``K`` (true POIs × POIs) and of the candidates' indicators
#: (POIs × previous releases) computed at once
BLOCK = 1 << 22


def normaliser_bytes(m: int, previous: int) -> int:
    """Bytes of the normalisers of ``previous`` distinct previous releases over ``m`` POIs (float64), of
    the candidates' indicators (one byte each) and of the arrays of one block alive beside them (at
    most five of ``max(BLOCK, m)`` float64 entries: a block of the kernel, of the indicators, their
    product and the indicators' distances): ``9·previous·m + 40·max(BLOCK, m)``."""
    return 9 * previous * m + 40 * max(BLOCK, m)


def previous_releases(idx: np.ndarray, off: np.ndarray) -> np.ndarray:
    """The previous released POI of every report, ``-1`` for the first point of a trajectory."""
    prev = np.full(len(idx), -1, dtype=np.intp)
    prev[1:] = idx[:-1]
    prev[off[:-1][np.diff(off) > 0]] = -1
    return prev


def _candidates(points, centres, theta2) -> np.ndarray:
    """Indicators (POIs × centres, float64) of ``C_p`` for the previous releases ``centres``
    (``-1``: every POI; an empty set falls back to every POI), the test of
    :meth:`tracs.baselines.NGram.candidates`."""
    first = centres < 0
    c = points[np.where(first, 0, centres)]
    dx = points[:, 0, None] - c[None, :, 0]
    dy = points[:, 1, None] - c[None, :, 1]
    dx *= dx
    dy *= dy
    dx += dy
    inside = (dx <= theta2) | first[None, :]
    inside |= ~inside.any(axis=0, keepdims=True)
    return inside.astype(np.float64)


def _kernel_rows(points, rows, scale) -> np.ndarray:
    """``k(x, z) = exp(−scale·d(x, z))`` for the true POIs ``rows`` and every POI ``z``."""
    dx = points[rows, 0, None] - points[:, 0]
    dy = points[rows, 1, None] - points[:, 1]
    dx *= dx
    dy *= dy
    dx += dy
    np.sqrt(dx, out=dx)
    dx *= -scale
    return np.exp(dx, out=dx)


def inverse_normalisers(points, centres, theta2, scale) -> np.ndarray:
    """``1 / Z_p(x)`` (len(centres) × POIs): ``Z = K @ indicators``, every block of ``K`` computed once
    (:data:`BLOCK` entries), the indicators kept as bytes and taken :data:`BLOCK` float64 entries at a time."""
    m, v = len(points), len(centres)
    step = max(1, BLOCK // m)
    inside = np.empty((m, v), dtype=bool)
    for ps in range(0, v, step):
        inside[:, ps:ps + step] = _candidates(points, centres[ps:ps + step], theta2)
    out = np.empty((v, m))
    for xs in range(0, m, step):
        rows = np.arange(xs, min(xs + step, m))
        kernel = _kernel_rows(points, rows, scale)
        for ps in range(0, v, step):
            out[ps:ps + step, rows] = (kernel @ inside[:, ps:ps + step].astype(np.float64)).T
    return np.divide(1.0, out, out=out)


@numba.njit(cache=True, nogil=True)
def _likelihood(xs, ys, scale, report, column, inverse, r, last, row, lik):  # pragma: no cover - compiled
    """``lik[x] = L_r(x) = k(report_r, x) · inverse[column_r, x]`` of pair ``r``; ``row`` holds
    ``k(last, ·)`` and is recomputed when the report changes.  Returns the report of ``row``."""
    y = report[r]
    if y != last:
        for x in range(xs.shape[0]):
            dx = xs[y] - xs[x]
            dy = ys[y] - ys[x]
            row[x] = np.exp(-scale * np.sqrt(dx * dx + dy * dy))
    v = column[r]
    for x in range(xs.shape[0]):
        lik[x] = row[x] * inverse[v, x]
    return y


@numba.njit(cache=True, nogil=True, fastmath=True)
def _predict_back(xs, ys, scale, report, column, weight, inverse, theta, back):  # pragma: no cover - compiled
    """``Σ_r w_r log d_r`` with ``d_r = Σ_x θ_x L_r(x)``, and ``back[x] += w_r L_r(x) / d_r``, over the
    pairs ``r`` (sorted by report: a row of ``k`` computed once per distinct report)."""
    m = xs.shape[0]
    row, lik = np.empty(m), np.empty(m)
    loglik, last = 0.0, -1
    for r in range(report.shape[0]):
        last = _likelihood(xs, ys, scale, report, column, inverse, r, last, row, lik)
        d = 0.0
        for x in range(m):
            d += theta[x] * lik[x]
        d = max(d, 1e-300)
        loglik += weight[r] * np.log(d)
        for x in range(m):
            back[x] += weight[r] / d * lik[x]
    return loglik


@numba.njit(cache=True, nogil=True)
def _posterior(xs, ys, scale, report, column, inverse, prior, mode, mean, evidence):  # pragma: no cover
    """Per pair: the posterior's mode and mean (:func:`tracs.estimate.poi_posterior._posterior_stats`)."""
    m = xs.shape[0]
    row, lik = np.empty(m), np.empty((1, m))
    last = -1
    for r in range(report.shape[0]):
        last = _likelihood(xs, ys, scale, report, column, inverse, r, last, row, lik[0])
        _posterior_stats(lik, prior, xs, ys, mode[r:r + 1], mean[r:r + 1], evidence[r:r + 1])


class NGramLaw:
    """The law of a validated N-gram release: its distinct (report, previous release) pairs and the
    inverse normalisers of their previous releases.

    Parameters
    ----------
    idx : numpy.ndarray of intp
        Released POI indices.
    off : numpy.ndarray
        Trajectory offsets.
    baseline : NGram
        The public baseline.
    memory : int or None
        Budget in bytes of the normalisers (:func:`normaliser_bytes`); ``None``: none.
    epsilon : float, optional
        The reports' per-point ε (default the baseline's: a baseline built per trajectory
        gives it for each group of reports, :func:`ngram_laws`).

    Attributes
    ----------
    weight : float
        The number of reports (the EM block's weight).
    inverse : numpy.ndarray of intp
        The pair of every report.
    """

    def __init__(self, idx, off, baseline, memory=None, epsilon=None):
        space = baseline.poi_space
        points = space.points
        m = len(points)
        prev = previous_releases(idx, off)
        centres, column = np.unique(prev, return_inverse=True)
        refuse_above(normaliser_bytes(m, len(centres)), memory,
                     f"N-gram's normalisers ({len(centres):,} previous releases × {m:,} POIs)")
        theta2 = baseline.theta * baseline.theta
        has = prev >= 0
        gap = points[idx[has]] - points[prev[has]]
        outside = np.flatnonzero(has)[gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] > theta2]
        if outside.size:  # P(y | x, p) = 0 for every x: C_p always holds p, so it is never empty
            raise InputError(f"report {outside[0]} lies farther than theta ({baseline.theta:g} m) from the previous "
                             "report of its trajectory: not a release of this N-gram")
        self.scale = float(baseline.epsilon if epsilon is None else epsilon) / (2.0 * space.diameter)
        self.xs, self.ys = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
        pairs, self.inverse, counts = np.unique(idx.astype(np.int64) * len(centres) + column, return_inverse=True,
                                                return_counts=True)
        self.report = np.ascontiguousarray(pairs // len(centres))
        self.column = np.ascontiguousarray(pairs % len(centres))
        self.weights = counts.astype(np.float64)
        self.weight = float(len(idx))
        self.inverse_z = inverse_normalisers(points, centres, theta2, self.scale)

    def predict_and_back(self, theta):
        """``(log-likelihood, back)``: one EM pass (:mod:`tracs.estimate.expectation_maximisation`)."""
        back = np.zeros(len(self.xs))
        loglik = _predict_back(self.xs, self.ys, self.scale, self.report, self.column, self.weights,
                               self.inverse_z, np.ascontiguousarray(theta, dtype=np.float64).ravel(), back)
        return float(loglik), back.reshape(np.shape(theta))

    def posterior(self, prior):
        """``(mode, mean)`` of every report's posterior under ``prior``: POI indices (N,), points (N, 2)."""
        n, m = len(self.report), len(self.xs)
        mode, mean, evidence = np.empty(n, dtype=np.int64), np.empty((n, 2)), np.empty(n)
        _posterior(self.xs, self.ys, self.scale, self.report, self.column, self.inverse_z,
                   np.ascontiguousarray(prior, dtype=np.float64).reshape(1, m), mode, mean, evidence)
        return mode[self.inverse], mean[self.inverse]


def ngram_laws(idx, off, baseline, groups, memory=None) -> list:
    """The law of every group of reports at one per-point ε (:func:`tracs.estimate.epsilon_groups.epsilon_groups`)
    of a baseline built per trajectory: one :class:`NGramLaw` each, whose normalisers are per (previous
    release, ε).  Memory: :func:`normaliser_bytes` of the sum over the groups of their distinct previous
    releases, every group's normalisers being alive together in the frequencies' fit; refused above
    ``memory`` before any is computed."""
    m = len(baseline.poi_space)
    prev = previous_releases(idx, off)
    count = sum(int(np.unique(prev[g.rows]).size) for g in groups)
    refuse_above(normaliser_bytes(m, count), memory,
                 f"N-gram's normalisers ({count:,} pairs of a previous release and a per-point epsilon × {m:,} POIs)")
    return [NGramLaw(idx[g.rows], g.offsets, baseline, None, g.epsilon) for g in groups]


def release_laws(idx, off, baseline, memory=None) -> tuple[list, list]:
    """``(laws, parts)`` of a validated N-gram release: one :class:`NGramLaw` at the per-point ε covering
    every report, or, for a baseline built per trajectory, one per group of reports at one per-point ε
    (:func:`ngram_laws`), each with the positions of the reports it covers."""
    if baseline.epsilon is not None:
        return [NGramLaw(idx, off, baseline, memory)], [slice(None)]
    groups = epsilon_groups(baseline, off)
    return ngram_laws(idx, off, baseline, groups, memory), [g.rows for g in groups]


key_on_sources(globals())
