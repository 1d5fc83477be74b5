"""Denoising over a public set of POIs: the posterior of every report's true POI.

When the true points are POIs (check-in venues: the discrete setting), the posterior
of a report ``r``'s true point is over the POIs: ``P(p | r) ∝ π_p · P(r | p)``, with

* ``π`` the prior over the POIs: the fitted density's mass of every cell shared
  equally among the POIs inside it (:func:`prior_at_pois`), optionally refined by
  ``iterations`` EM passes over the POIs (each pass sets ``π`` to the mean posterior
  of the reports, which raises their likelihood);
* ``P(r | p)`` the method's report law at the POI itself (not a cell average):

  - **TraCS-C**: the exact lattice law of the two axes' mechanisms
    (:func:`tracs.estimate.grid_density.axis_mechanisms`).  A coordinate ``x`` is
    snapped to the input lattice point ``k`` or ``k + 1`` with the sampler's weights
    (:func:`tracs.mechanisms.lattice.snap_weights`); the law at ``k`` is the banded
    row of :mod:`tracs.mechanisms.band`, ``(1 − c)/m`` on ``m`` cells from the band's
    start and ``c/(N − m)`` elsewhere.  The report is its lattice index on each axis.
  - **TraCS-D, Strawman**: the point test of :mod:`tracs.estimate._coded` with the
    POIs as the points (the estimator's likelihood, one point per POI); reports equal
    to their reference use the likelihood of
    :func:`tracs.estimate._directional._special_likelihood`.

With ``trajectory=True`` the prior of a report's POI is given the other reports of its
trajectory (the smoothing's hidden Markov model), mixed by default with the posteriors of
the trajectory's other reports (the revisit prior, :mod:`tracs.estimate.revisits`; about
five arrays of a chunk's reports × POIs).

The denoised point is a POI: the posterior **mode** (``rule="mode"``) or the POI
nearest the posterior **mean** (``rule="mean"``).  Cost: one pass over reports × POIs
(numba), chunked so memory stays at a few arrays of ``CHUNK`` × POIs per worker; ``workers``
threads share the fixed chunks, and the EM passes add every report's posterior in report
order, so the result is the same for every number of workers.  Like every
denoiser this is post-processing of the release and its public parameters; a
report's denoised POI depends on the other reports only through ``π``.
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..mechanisms import lattice_kernels as lk
from . import _coded
from . import smoothing as sm
from ._smoothing_kernels import smoothed_marginals
from .grid_density import _epsilons, axis_mechanisms
from ..mechanisms.closed_forms import circular_half_widths, classical_half_widths
from ..perturbers import Strawman
from ._directional import _split, along_true, references
from ._directional import _special_likelihood
from ._emissions import laplace_rows
from .expectation_maximisation import one_blas_thread
from ._threads import run_chunks
from .revisits import REVISIT, revisit_priors

__all__ = ["prior_at_pois", "poi_posterior", "RULES", "CHUNK"]

#: the denoised POI: the posterior mode, or the POI nearest the posterior mean
RULES = ("mode", "mean")
#: reports per chunk of the likelihood rows (memory: CHUNK × POIs float64)
CHUNK = 2048


@numba.njit(cache=True, nogil=True)
def _axes_rows(jx, jy, sx, sy, lam_x, lam_y, mx, my, hx, lx, hy, ly, out):
    """TraCS-C likelihood of every report (lattice indices ``jx, jy``) at every POI.

    ``sx[p, 0..1]`` are the band starts of the POI's two snapped inputs on the x axis
    and ``lam_x[p]`` the weight of the second; ``hx``/``lx`` the in-band / off-band cell
    probabilities, ``mx`` the band width (likewise on y)."""
    n, P = out.shape
    for r in range(n):
        a, b = jx[r], jy[r]
        for p in range(P):
            s0, s1 = sx[p, 0], sx[p, 1]
            px = (1.0 - lam_x[p]) * (hx if s0 <= a < s0 + mx else lx) + lam_x[p] * (hx if s1 <= a < s1 + mx else lx)
            t0, t1 = sy[p, 0], sy[p, 1]
            py = (1.0 - lam_y[p]) * (hy if t0 <= b < t0 + my else ly) + lam_y[p] * (hy if t1 <= b < t1 + my else ly)
            out[r, p] = px * py


@numba.njit(cache=True, nogil=True)
def _posterior_stats(lik, prior, xs, ys, mode, mean, evidence):
    """Per report ``r``: the posterior's mode, its mean and ``Σ_p π_rp L_rp`` (the EM passes add the
    posteriors with :func:`_add_posterior`).

    ``prior`` is (n, P): one row per report (a broadcast row when the prior is shared)."""
    n, P = lik.shape
    for r in range(n):
        z = 0.0
        sx = 0.0
        sy = 0.0
        best = -1.0
        arg = 0
        for p in range(P):
            w = prior[r, p] * lik[r, p]
            z += w
            sx += w * xs[p]
            sy += w * ys[p]
            if w > best:
                best = w
                arg = p
        mode[r] = arg
        evidence[r] = z
        if z > 0.0:
            mean[r, 0] = sx / z
            mean[r, 1] = sy / z
        else:
            mean[r, 0] = xs[arg]
            mean[r, 1] = ys[arg]


@numba.njit(cache=True, nogil=True)
def _add_posterior(lik, prior, evidence, back):
    """Add every report's posterior ``π_rp L_rp / z_r`` to ``back``, in report order (``z_r``: the
    evidence of :func:`_posterior_stats`)."""
    n, P = lik.shape
    for r in range(n):
        z = evidence[r]
        if z > 0.0:
            for p in range(P):
                back[p] += prior[r, p] * lik[r, p] / z


def _axis_law(mechanism, coords):
    """Band starts (P, 2) of the two snapped inputs, the second's weight, ``m``, in-band and off-band mass."""
    n = mechanism._cells()
    t = mechanism._snap_t(np.clip(coords, mechanism.low, mechanism.high))
    i = np.clip(np.floor(t), 0.0, n - 1.0)
    lam = np.minimum(1.0, np.ceil(np.maximum(t - i, 0.0) * lk.SNAP_SCALE) / lk.SNAP_SCALE)
    k = i.astype(np.int64)
    starts = np.stack([mechanism._band_start(k), mechanism._band_start(np.minimum(k + 1, n))], axis=1)
    m, c = mechanism.band()
    count = mechanism._grid()[4]
    return starts, lam, int(m), (1.0 - c) / m, (c / (count - m) if count > m else 0.0)


class _AxesRows:
    """TraCS-C rows, one distinct per-point ε at a time."""

    def __init__(self, pts, off, perturber, pois):
        self.pts, self.pois, self.perturber = pts, pois, perturber
        self.eps = _epsilons(perturber, off, len(pts))

    def rows(self, sel):
        out = np.empty((len(sel), len(self.pois)))
        values, inverse = np.unique(self.eps[sel], return_inverse=True)
        for g, e in enumerate(values):
            part = np.flatnonzero(inverse == g)
            mx, my = axis_mechanisms(self.perturber, float(e))
            sx, lam_x, wx, hx, lx = _axis_law(mx, self.pois[:, 0])
            sy, lam_y, wy, hy, ly = _axis_law(my, self.pois[:, 1])
            jx, jy = mx.lattice.index(self.pts[sel[part], 0]), my.lattice.index(self.pts[sel[part], 1])
            block = np.empty((len(part), len(self.pois)))
            _axes_rows(jx, jy, sx, sy, lam_x, lam_y, wx, wy, hx, lx, hy, ly, block)
            out[part] = block
        return out


class _DirectionalRows:
    """TraCS-D / Strawman rows: the point test of :mod:`tracs.estimate._coded` at the POIs."""

    def __init__(self, pts, off, perturber, pois):
        eps = _epsilons(perturber, off, len(pts))
        self.pts, self.perturber, self.points = pts, perturber, np.ascontiguousarray(pois[:, None, :])
        self.refs = references(pts, off, perturber.anchor_point)
        self.eps_dir, self.eps_dist, self.inverse = _split(perturber, eps)
        self.half_r = classical_half_widths(self.eps_dist)[self.inverse]
        strawman = isinstance(perturber, Strawman)
        self.sectors = perturber.sectors if strawman else 1
        self.mode = _coded.MODE_SECTORS if strawman else _coded.MODE_ARC
        self.half_dir = (np.zeros(len(self.eps_dir)) if strawman
                         else circular_half_widths(self.eps_dir, 2 * np.pi))[self.inverse]
        self.cos_half = self.half_dir if strawman else np.cos(self.half_dir)
        normals, hb = perturber.region.halfplanes
        self.halfplanes = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (normals[:, 0], normals[:, 1], hb))
        self.table = _coded.code_table(self.eps_dir, self.eps_dist, 1)
        self.same = np.all(pts == self.refs, axis=1)

    def rows(self, sel):
        out = np.empty((len(sel), self.points.shape[0]))
        regular, special = np.flatnonzero(~self.same[sel]), np.flatnonzero(self.same[sel])
        if len(regular):
            r = sel[regular]
            codes = np.empty((len(r), self.points.shape[0]), dtype=_coded.code_dtype(1))
            _coded.code_reports(np.ascontiguousarray(self.pts[r]), np.ascontiguousarray(self.refs[r]), 0, len(r),
                                self.points, *self.halfplanes, self.mode, np.ascontiguousarray(self.cos_half[r]),
                                self.sectors, np.ascontiguousarray(self.half_r[r]), codes,
                                along_true(self.perturber))
            out[regular] = self.table[self.inverse[r][:, None], codes.astype(np.intp)]
        if len(special):
            s = sel[special]
            out[special] = _special_likelihood(self.refs[s], self.perturber, self.eps_dir[self.inverse[s]],
                                               self.eps_dist[self.inverse[s]], self.half_dir[s], self.half_r[s],
                                               self.points, self.perturber.region)
        return out


def _cells_of(grid, pois):
    """The flat cell index of every POI on ``grid`` and the number of POIs in that cell."""
    xe, ye = grid
    ix = np.clip(np.searchsorted(xe, pois[:, 0], side="right") - 1, 0, len(xe) - 2)
    iy = np.clip(np.searchsorted(ye, pois[:, 1], side="right") - 1, 0, len(ye) - 2)
    cell = ix * (len(ye) - 1) + iy
    return cell, np.bincount(cell, minlength=(len(xe) - 1) * (len(ye) - 1))[cell]


def prior_at_pois(estimate, pois: np.ndarray) -> np.ndarray:
    """The fitted density spread over the POIs: every cell's mass shared equally by its POIs.

    Cells without a POI lose their mass (the rest is renormalised).  The fine grid
    (``detail``) is used when the estimate has one.  A density with no mass on any
    POI's cell gives the uniform prior.
    """
    prior = estimate.detail if estimate.detail is not None else estimate
    cell, count = _cells_of(tuple(np.asarray(e, dtype=np.float64) for e in prior.grid), pois)
    weights = np.asarray(prior.probabilities, dtype=np.float64).ravel()[cell] / count
    total = weights.sum()
    return weights / total if total > 0 else np.full(len(pois), 1.0 / len(pois))


class _LaplaceRows:
    """Planar Laplace rows: :func:`tracs.estimate._emissions.laplace_rows` at the POIs."""

    def __init__(self, pts, off, perturber, pois):
        self.pts, self.pois, self.perturber = pts, pois, perturber
        self.eps = _epsilons(perturber, off, len(pts))

    def rows(self, sel):
        return laplace_rows(self.pts[sel], self.perturber, self.eps[sel], self.pois)


def _smoothed_priors(pts, off, perturber, estimate, family, pois, scale, jump, workers=1):
    """Chunks of whole trajectories ``[(offsets, rows)]``: a chunk's trajectory boundaries and the function
    giving its prior rows (n, P): the prior of every report's true POI given the *other* reports of its trajectory.

    The hidden Markov model of :mod:`tracs.estimate.smoothing` (cells of the fitted density,
    its transition, ``(scale, jump)`` fitted unless given): the smoothed marginal of a
    point's cell divided by its own report's emission is the predictive ``ρ_k`` of its cell
    given the rest of its trajectory; a POI gets ``ρ`` of its cell shared by the cell's POIs.
    """
    off = np.asarray(off, dtype=np.int64)
    off = off[np.concatenate([[True], np.diff(off) > 0])]
    if scale is None or jump is None:
        ll = sm._fit(pts, off, perturber, estimate, family, 1, [scale], [jump] if jump is not None else sm.JUMPS,
                     workers)
        scale, jump = max(ll, key=ll.get)
    prior = estimate.detail if estimate.detail is not None else estimate
    grid, theta, tables = sm._tables(pts, off, perturber, prior, family, 1)
    model = sm._Model(theta, grid, float(scale), float(jump))
    cell, count = _cells_of(grid, pois)

    def rows(i, j):
        lik, _, _ = tables.chunk(off[i], off[j], means=False)
        starts, lengths = off[i:j] - off[i], np.diff(off[i:j + 1])
        gamma = np.empty_like(lik)  # smoothed marginals α·β, normalised
        smoothed_marginals(lik, starts, lengths, model.theta, *model.arguments(), gamma)
        g = gamma / lik  # > 0: every emission is positive
        rho = g / g.sum(axis=(1, 2))[:, None, None]
        out = rho.reshape(len(rho), -1)[:, cell] / count
        return out / out.sum(axis=1, keepdims=True)

    return [(off[i:j + 1], lambda i=i, j=j: rows(i, j)) for i, j in sm.trajectory_ranges(off, theta.size)]


def poi_posterior(pts, off, perturber, family, pois, estimate, *, rule: str = "mean", iterations: int = 0,
                  trajectory: bool = False, scale=None, jump=None, revisit=REVISIT, workers: int = 1):
    """The denoised POI of every validated report (see :func:`tracs.estimate.denoise`).

    Parameters
    ----------
    pts : numpy.ndarray, shape (N, 2)
    off : numpy.ndarray
        Trajectory offsets (TraCS-D / Strawman references, per-trajectory budgets, smoothing).
    perturber, family
        The public perturber and its likelihood family (``"axes"``, ``"directional"`` or ``"grid"``:
        planar Laplace, whose likelihood is the estimator's at the report itself).
    pois : numpy.ndarray, shape (P, 2)
    estimate : Density
        The fitted density: the prior (:func:`prior_at_pois`).
    rule : {"mode", "mean"} or a tuple of them
        A tuple gives one array per rule, from the same pass.
    iterations : int
        EM passes refining the prior over the POIs before the posterior is taken.
    trajectory : bool
        The prior of a report's POI given the other reports of its trajectory
        (:func:`_smoothed_priors`); excludes ``iterations``.
    revisit : float or None
        With ``trajectory``: the weight ``α`` of that prior against the posteriors of the
        trajectory's other reports (:mod:`tracs.estimate.revisits`); None: that prior alone.
    workers : int
        Threads over the fixed chunks of reports (of whole trajectories with ``trajectory``).

    Returns
    -------
    numpy.ndarray of intp, shape (N,)
        The index of every report's denoised POI (a tuple of them for a tuple of rules).
    """
    rows = {"directional": _DirectionalRows, "axes": _AxesRows, "grid": _LaplaceRows}[family]
    source = rows(pts, off, perturber, pois)
    xs, ys = np.ascontiguousarray(pois[:, 0]), np.ascontiguousarray(pois[:, 1])
    mode, mean, evidence = np.empty(len(pts), dtype=np.int64), np.empty((len(pts), 2)), np.empty(len(pts))

    def stats(start, stop, prior_rows, keep=False, bounds=None):
        """One chunk's mode, mean and evidence (its rows if kept); ``bounds``: its trajectories, whose
        reports' priors then take the revisit prior."""
        lik = source.rows(np.arange(start, stop))
        if bounds is not None and revisit is not None:
            prior_rows = revisit_priors(lik, prior_rows, bounds - start, float(revisit))
        _posterior_stats(lik, prior_rows, xs, ys, mode[start:stop], mean[start:stop], evidence[start:stop])
        return lik if keep else None

    def given_trajectory(bounds, prior_rows):  # one chunk of whole trajectories
        stats(int(bounds[0]), int(bounds[-1]), prior_rows, bounds=bounds)

    if trajectory:
        with one_blas_thread():  # the smoothing's products are small: threaded BLAS only waits
            chunks = _smoothed_priors(pts, off, perturber, estimate, family, pois, scale, jump, workers)
            run_chunks(lambda c: given_trajectory(chunks[c][0], chunks[c][1]()), len(chunks), workers)
    else:
        prior = prior_at_pois(estimate, pois)
        bounds = [(a, min(a + CHUNK, len(pts))) for a in range(0, len(pts), CHUNK)]
        for it in range(iterations + 1):
            rows_of = lambda c: np.broadcast_to(prior, (bounds[c][1] - bounds[c][0], len(pois)))  # noqa: E731
            if it == iterations:  # the last pass: its posteriors refine nothing
                run_chunks(lambda c: stats(*bounds[c], rows_of(c)), len(bounds), workers)
                break
            back = np.zeros(len(pois))
            for w in range(0, len(bounds), workers):  # ``workers`` chunks' rows at a time, added in report order
                window = run_chunks(lambda k: stats(*bounds[w + k], rows_of(w + k), keep=True),
                                    min(workers, len(bounds) - w), workers)
                for c, lik in enumerate(window, start=w):
                    _add_posterior(lik, rows_of(c), evidence[bounds[c][0]:bounds[c][1]], back)
            prior = back / max(len(pts), 1)
    from scipy.spatial import cKDTree

    nearest = lambda: np.asarray(cKDTree(pois).query(mean, k=1, workers=1)[1], dtype=np.intp)  # noqa: E731
    pick = {"mode": lambda: mode.astype(np.intp), "mean": nearest}
    return tuple(pick[r]() for r in rule) if isinstance(rule, tuple) else pick[rule]()


key_on_sources(globals())
