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
indicators (POIs × ``V``), computed a block of at most :data:`BLOCK` entries of ``K``
and of the indicators at a time and kept as their inverses (``V`` × POIs, float64).
Memory: ``8·(V·m + 2·BLOCK)`` bytes for ``m`` POIs, refused above a budget
(:func:`tracs.estimate.memory.refuse_above`).

Every pass then takes each distinct pair (report, previous release) once, its likelihood
rows built compiled :data:`BLOCK` entries at a time (a row of ``k`` once per distinct
report): the E-step and M-step of the POI frequencies (``predict_and_back``, the
interface of :mod:`tracs.estimate.expectation_maximisation`'s blocks, on each chunk of
rows) and the posterior's mode and mean (:mod:`tracs.estimate.poi_posterior`'s
kernel), each ``O(pairs × m)``.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..errors import InputError
from . import expectation_maximisation as fitting
from .memory import refuse_above
from .poi_posterior import _posterior_stats

__all__ = ["BLOCK", "NGramLaw", "normaliser_bytes"]

#: entries of one block of the kernel ``K`` (true POIs × POIs) and of the candidates' indicators
#: (POIs × previous releases) computed at once
BLOCK = 1 << 22


def normaliser_bytes(m: int, previous: int) -> int:
    """Bytes of the normalisers of ``previous`` distinct previous releases over ``m`` POIs and of the
    arrays of one block alive beside them (at most five of ``max(BLOCK, m)`` float64 entries: a block of
    the kernel, of the indicators, their product and the indicators' distances; later a chunk of
    likelihood rows):
    ``8·(previous·m + 5·max(BLOCK, m))``."""
    return 8 * (previous * m + 5 * max(BLOCK, m))


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
    """``1 / Z_p(x)`` (len(centres) × POIs): ``Z = K @ indicators``, in blocks of :data:`BLOCK` entries."""
    m, v = len(points), len(centres)
    out = np.empty((v, m))
    xstep, pstep = max(1, BLOCK // m), max(1, BLOCK // m)
    for ps in range(0, v, pstep):
        ind = _candidates(points, centres[ps:ps + pstep], theta2)
        for xs in range(0, m, xstep):
            rows = np.arange(xs, min(xs + xstep, m))
            out[ps:ps + pstep, rows] = (_kernel_rows(points, rows, scale) @ ind).T
    return np.divide(1.0, out, out=out)


@numba.njit(cache=True, nogil=True)
def _rows(xs, ys, scale, report, column, inverse, start, out):  # pragma: no cover - compiled
    """``out[i, x] = L_r(x) = k(report_r, x) · inverse[column_r, x]`` for the pairs ``r = start + i``
    (sorted by report: a row of ``k`` computed once per distinct report)."""
    m = xs.shape[0]
    row = np.empty(m)
    last = -1
    for i in range(out.shape[0]):
        r = start + i
        if report[r] != last:
            last = report[r]
            for x in range(m):
                dx = xs[last] - xs[x]
                dy = ys[last] - ys[x]
                row[x] = np.exp(-scale * np.sqrt(dx * dx + dy * dy))
        v = column[r]
        for x in range(m):
            out[i, x] = row[x] * inverse[v, x]


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
        The public baseline (per-point ε).
    memory : int or None
        Budget in bytes of the normalisers (:func:`normaliser_bytes`); ``None``: none.

    Attributes
    ----------
    weight : float
        The number of reports (the EM block's weight).
    inverse : numpy.ndarray of intp
        The pair of every report.
    """

    def __init__(self, idx, off, baseline, memory=None):
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
        self.scale = float(baseline.epsilon) / (2.0 * space.diameter)
        self.xs, self.ys = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
        pairs, self.inverse, counts = np.unique(idx.astype(np.int64) * len(centres) + column, return_inverse=True,
                                                return_counts=True)
        self.report = np.ascontiguousarray(pairs // len(centres))
        self.column = np.ascontiguousarray(pairs % len(centres))
        self.weights = counts.astype(np.float64)
        self.weight = float(len(idx))
        self.inverse_z = inverse_normalisers(points, centres, theta2, self.scale)

    def chunks(self):
        """``(start, stop, rows)``: the likelihood rows of the pairs, :data:`BLOCK` entries at a time."""
        n, m = len(self.report), len(self.xs)
        step = max(1, BLOCK // m)
        for start in range(0, n, step):
            rows = np.empty((min(step, n - start), m))
            _rows(self.xs, self.ys, self.scale, self.report, self.column, self.inverse_z, start, rows)
            yield start, start + len(rows), rows

    def predict_and_back(self, theta):
        """``(log-likelihood, back)``: one EM pass (:mod:`tracs.estimate.expectation_maximisation`)."""
        loglik, back = 0.0, np.zeros(np.shape(theta))
        for start, stop, rows in self.chunks():
            ll, b = fitting.DenseBlock(rows, self.weights[start:stop]).predict_and_back(theta)
            loglik += ll
            back += b
        return loglik, back

    def posterior(self, prior):
        """``(mode, mean)`` of every report's posterior under ``prior``: POI indices (N,), points (N, 2)."""
        n, m = len(self.report), len(self.xs)
        mode, mean, evidence, back = np.empty(n, dtype=np.int64), np.empty((n, 2)), np.empty(n), np.zeros(m)
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        for start, stop, rows in self.chunks():
            _posterior_stats(rows, np.broadcast_to(prior, rows.shape), self.xs, self.ys, back, mode[start:stop],
                             mean[start:stop], evidence[start:stop])
        return mode[self.inverse], mean[self.inverse]


key_on_sources(globals())
