"""Per-point denoising: the posterior mean of every true point given its report.

Post-processing of a release (it reads only the reports, the public perturber and
an estimate made from the reports): with the fitted density ``θ`` as the prior
and the perturber's report likelihood ``P(report | cell)``, the posterior of a
report's true cell is ``∝ θ_k · P(report | k)``, and the denoised point is the
posterior mean of the true point.

**TraCS-C** (the ``"axes"`` likelihood).  The likelihood is the product of the two
axes' exact lattice transition matrices of the estimator
(:func:`tracs.estimate.transition.transition_matrix`): a report is its output bin
``(i, j)`` and ``P((i, j) | cell (a, b)) = A[i, a]·B[j, b]``.  Each cell of the
estimate's grid (its fine grid, :attr:`Density.detail`, when it has one) is cut
into ``subcells²`` equal parts holding equal shares of its mass, so the mean
within a cell follows the likelihood rather than sitting at its centre.  For every
output bin the posterior mass and the two first moments are three matrix
products, ``Σ = A (θ Bᵀ)``, ``Σx = (A·x) (θ Bᵀ)``, ``Σy = A ((θ·y) Bᵀ)``;
a report looks up its bin's mean.  The cost does not grow with reports × cells.

**TraCS-D, Strawman** (the ``"directional"`` likelihood).  The runs of
:mod:`tracs.estimate._runs`, with ``subcells²`` public points per cell: the sums of
``θ``, ``θ·x`` and ``θ·y`` over a report's runs are prefix-sum differences, O(rows)
per report (:func:`tracs.estimate._runs.runs_moments`).  Reports equal to their
reference use their likelihood row per cell (:mod:`tracs.estimate._directional`)
and the cells' centres.

**Planar Laplace** (the ``"grid"`` likelihood).  The estimator's likelihood at the report
itself (:func:`tracs.estimate._emissions.laplace_rows`: the Laplace density inside the
region, integrated beyond the edge for a report clamped onto it) at the centres of
``subcells²`` equal parts of every cell; per point only (``trajectory=True`` is refused).

**Threads.**  ``workers`` threads (:func:`tracs.estimate._threads.run_chunks`; the kernels
release the GIL) share fixed chunks of work that do not depend on ``workers``: TraCS-C's
distinct per-point ε, the chunks of reports of the runs (TraCS-D / Strawman) and of
planar Laplace's rows, the smoother's chunks of whole trajectories and the POI
posterior's chunks.  Every chunk writes its own reports' points and sums over chunks
are added in chunk order, so the output is bit-identical for every number of workers.
"""

from __future__ import annotations

import threading

import numpy as np

from .._validation import as_batch
from ..trajectory_batch import batch_arrays
from ._directional import directional_blocks
from ..errors import InputError, InputTypeError
from ._emissions import split_edges
from ._runs import RunBlock
from ._threads import run_chunks
from .grid_density import (_axis_points, _check_workers, _epsilons, _subpoints, axis_mechanisms, check_parts,
                           check_perturber)
from ..region import Rectangle
from .result import Density
from .smoothing import smooth
from .transition import bin_index, output_grid, snap_edges, transition_matrix
from .poi_posterior import RULES, poi_posterior
from .revisits import REVISIT, check_revisit
from ._emissions import laplace_rows

__all__ = ["denoise", "smooth_trajectories", "how_denoised", "DEFAULT_SUBCELLS", "DENOISED", "SMOOTHED", "AT_POIS"]

#: parts per cell along each axis (within-cell mean)
DEFAULT_SUBCELLS = 2
#: planar Laplace: likelihood entries per chunk of reports (8 MB of rows, which stay in cache)
ROW_ENTRIES = 1 << 20
#: how a point was made (the ``denoised`` column of ``tracs denoise`` and :func:`tracs.dask.denoise`):
#: per point, per trajectory; with ``pois``, per ``rule``
DENOISED = "posterior mean"
SMOOTHED = "smoothed"
AT_POIS = {"mode": "posterior mode at a POI", "mean": "POI nearest the posterior mean"}


def how_denoised(trajectory: bool, pois, rule: str) -> str:
    """How :func:`denoise` made every point with these options (:data:`DENOISED`, :data:`SMOOTHED` or a
    value of :data:`AT_POIS`, ``" given the trajectory"`` added with ``trajectory``)."""
    if pois is None:
        return SMOOTHED if trajectory else DENOISED
    return AT_POIS[rule] + (" given the trajectory" if trajectory else "")


def denoise(reports, perturber, estimate: Density, *, offsets=None,
            subcells: int = DEFAULT_SUBCELLS, trajectory: bool = False, scale=None, jump=None,
            pois=None, rule: str = "mean", iterations: int = 0, revisit=REVISIT, workers: int = 1) -> np.ndarray:
    """The posterior mean of every report's true point (TraCS-C, TraCS-D, Strawman and planar Laplace reports).

    Parameters
    ----------
    reports : array_like, shape (N, 2), or tracs.Batch
        Released points, in the region's coordinates (a batch brings its offsets).
    perturber : TraCSC, TraCSD, Strawman or PlanarLaplace
        The public perturber that released them.
    estimate : Density
        The prior: a density fitted from the reports (:func:`tracs.estimate.grid_density`);
        its fine grid (``detail``) when it has one.
    offsets : array_like of int, optional
        Trajectory boundaries; needed for TraCS-D and the Strawman (a report's
        reference is the previous report of its trajectory) and with a
        per-trajectory budget (every report's ε follows its trajectory's length).
    subcells : int
        Equal parts of every cell along each axis (1: the posterior mean of the cell
        centres); default :data:`DEFAULT_SUBCELLS`.  TraCS-D / Strawman: the public
        points per cell and axis of their likelihood (``subpoints`` of
        :func:`tracs.estimate.grid_density`), at most 4.
    trajectory : bool
        Smooth every trajectory (:mod:`tracs.estimate.smoothing`): the posterior mean of
        each true point given all the reports of its trajectory, under a transition
        model of the steps fitted from the reports; needs ``offsets``.
    scale, jump : float, optional
        With ``trajectory``: the transition's kernel scale (region units, ``inf``
        allowed) and its share of fresh jumps in [0, 1]; by default both maximise
        the reports' marginal likelihood.
    pois : array_like, shape (P, 2), optional
        The public POIs the true points are among (the discrete setting): the
        posterior is over the POIs (:mod:`tracs.estimate.poi_posterior`; prior: the
        estimate's mass per cell shared by the cell's POIs; likelihood: the method's
        report law at each POI) and every denoised point is a POI.
    rule : {"mean", "mode"}
        With ``pois``: the POI nearest the posterior mean (the default: its error is the lower
        in 64 of the 72 cells of the denoised tables of ``docs/results.md``), or the posterior
        mode.
    iterations : int
        With ``pois``: EM passes over the POIs refining the prior (default 0).
    revisit : float or None
        With ``pois`` and ``trajectory``: the prior of a report's POI mixes the prior given its
        trajectory, weight ``revisit`` (in points, default :data:`tracs.estimate.revisits.REVISIT`),
        with the posteriors of the trajectory's other reports, weight 1 each: trajectories come
        back to the same POIs (:mod:`tracs.estimate.revisits`).  None: the prior given the
        trajectory alone.
    workers : int
        Threads over fixed chunks of the work (TraCS-C: its distinct per-point ε; TraCS-D /
        Strawman, planar Laplace, POIs: chunks of reports; ``trajectory``: chunks of whole
        trajectories); the output is bit-identical for every value.

    Returns
    -------
    numpy.ndarray, shape (N, 2)
        Denoised points, inside the region's bounding box.
    """
    workers = _check_workers(workers)
    reports, offsets = batch_arrays(reports, offsets)
    if pois is not None:
        return _on_pois(reports, perturber, estimate, offsets, pois, rule, iterations, trajectory, scale, jump,
                        revisit, workers)
    out = _denoise(reports, perturber, estimate, offsets, subcells, trajectory, scale, jump, workers)
    return out.points if trajectory else out


def _on_pois(reports, perturber, estimate, offsets, pois, rule, iterations, trajectory, scale, jump, revisit,
             workers):
    """``denoise(..., pois=...)``: the checks, then :func:`tracs.estimate.poi_posterior.poi_posterior`."""
    from ..poi_space import as_points
    if not trajectory and (scale is not None or jump is not None):
        raise InputError("scale and jump are parameters of trajectory=True")
    if trajectory and iterations:
        raise InputError("iterations refine the shared prior of the per-point posterior; trajectory=True "
                         "uses the prior of every point given its trajectory")
    if rule not in RULES:
        raise InputError(f"rule must be one of {', '.join(map(repr, RULES))}, got {rule!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)):
        raise InputTypeError(f"iterations must be an int, got {type(iterations).__name__}")
    if iterations < 0:
        raise InputError(f"iterations must be >= 0, got {iterations}")
    check_revisit(revisit)
    family = _family(perturber, estimate)
    pois = as_points(pois, "pois")
    if len(pois) == 0:
        raise InputError("pois is empty")
    perturber.region.validate_points(pois, "pois")
    pts, off, _ = as_batch(np.asarray(reports, dtype=np.float64),
                           np.array([0, len(reports)]) if offsets is None else offsets)
    if family == "directional" and offsets is None:
        raise InputError("TraCS-D and the Strawman need offsets: each report's reference "
                         "is the previous report of its trajectory")
    if len(pts) == 0:
        return np.empty((0, 2))
    perturber.region.validate_points(pts, "reports")
    if trajectory:
        _check_transition(offsets, scale, jump, family)
    index = poi_posterior(pts, off, perturber, family, pois, estimate, rule=rule, iterations=iterations,
                          trajectory=trajectory, scale=scale, jump=jump, revisit=revisit, workers=workers)
    return pois[index]


def smooth_trajectories(reports, perturber, estimate: Density, *, offsets=None, subcells: int = DEFAULT_SUBCELLS,
                        scale=None, jump=None, workers: int = 1):
    """``denoise(..., trajectory=True)`` with the fitted transition model (``workers`` as there).

    Returns
    -------
    tracs.estimate.smoothing.Smoothed
        The points, the transition's ``scale`` and ``jump`` and the marginal
        log-likelihood of every candidate.
    """
    workers = _check_workers(workers)
    reports, offsets = batch_arrays(reports, offsets)
    return _denoise(reports, perturber, estimate, offsets, subcells, True, scale, jump, workers)


def _denoise(reports, perturber, estimate, offsets, subcells, trajectory, scale, jump, workers):
    """The checks of :func:`denoise`, then the per-point or the per-trajectory means."""
    family = _family(perturber, estimate)
    s = check_parts(subcells, "subcells", 4 if family == "directional" else 8)
    pts = np.asarray(reports, dtype=np.float64)
    pts, off, _ = as_batch(pts, np.array([0, len(pts)]) if offsets is None else offsets)
    if len(pts) == 0 and not trajectory:
        return np.empty((0, 2))
    perturber.region.validate_points(pts, "reports")
    prior = estimate.detail if estimate.detail is not None else estimate
    if family == "directional" and offsets is None:
        raise InputError("TraCS-D and the Strawman need offsets: each report's reference "
                         "is the previous report of its trajectory")
    if trajectory:
        return _smoothed(pts, off, offsets, perturber, estimate, family, s, scale, jump, workers)
    if scale is not None or jump is not None:
        raise InputError("scale and jump are parameters of trajectory=True")
    if family == "directional":
        return _directional_means(pts, off, perturber, prior, s, workers)
    if family == "grid":
        return _laplace_means(pts, off, perturber, prior, s, workers)
    return _axes_means(pts, off if offsets is not None else None, perturber, prior, s, workers)


def _axes_means(pts, off, perturber, prior: Density, s: int, workers: int) -> np.ndarray:
    """TraCS-C: every output bin's posterior mean from the axes' transition matrices, one distinct
    per-point ε per chunk; each report looks its bin up."""
    xe, ye = (split_edges(np.asarray(e, dtype=np.float64), s) for e in prior.grid)
    theta = np.repeat(np.repeat(np.asarray(prior.probabilities, dtype=np.float64), s, axis=0), s, axis=1)
    cx, cy = 0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:])
    eps = _epsilons(perturber, off, len(pts))
    values, inverse = np.unique(eps, return_inverse=True)
    out = np.empty_like(pts)

    def group(g):
        mx, my = axis_mechanisms(perturber, float(values[g]))
        ox, oy = output_grid(xe, None), output_grid(ye, None)
        ox[0], ox[-1], oy[0], oy[-1] = -np.inf, np.inf, -np.inf, np.inf
        ox, oy = snap_edges(mx, ox), snap_edges(my, oy)
        ax, ay = transition_matrix(mx, xe, ox), transition_matrix(my, ye, oy)
        across = theta @ ay.T  # (cells x, output bins y)
        mass = ax @ across
        mean_x = (ax * cx) @ across
        mean_y = ax @ ((theta * cy) @ ay.T)
        sel = np.flatnonzero(inverse == g)
        i, j = bin_index(pts[sel, 0], ox), bin_index(pts[sel, 1], oy)
        z = mass[i, j]  # > 0: every column of a transition matrix is positive on every bin
        out[sel, 0] = mean_x[i, j] / z
        out[sel, 1] = mean_y[i, j] / z

    run_chunks(group, len(values), workers)
    return out


def _family(perturber, estimate) -> str:
    """The likelihood family of a supported perturber; the estimate must be a :class:`Density`."""
    family = check_perturber(perturber)
    if family == "grid" and not isinstance(perturber.region, Rectangle):
        raise InputTypeError("denoising planar Laplace reports needs a Rectangle region (clipping onto a "
                             "polygon has no closed-form preimage here)")
    if not isinstance(estimate, Density):
        raise InputTypeError(f"estimate must be a Density, got {type(estimate).__name__}")
    return family


def _check_transition(offsets, scale, jump, family) -> None:
    """The checks of ``trajectory=True``: the method, offsets, and the transition's parameters when given."""
    if family == "grid":
        raise InputError("trajectory=True supports TraCS-C, TraCS-D and Strawman reports; planar Laplace "
                         "reports are denoised per point")
    if offsets is None:
        raise InputError("trajectory=True needs offsets: the trajectories to smooth")
    if scale is not None and not (float(scale) > 0):
        raise InputError(f"scale must be > 0 (inf allowed), got {scale!r}")
    if jump is not None and not (0.0 <= float(jump) <= 1.0):
        raise InputError(f"jump must be in [0, 1], got {jump!r}")


def _smoothed(pts, off, offsets, perturber, estimate, family, parts, scale, jump, workers) -> np.ndarray:
    """``trajectory=True``: the checks of the transition's parameters, then
    :func:`tracs.estimate.smoothing.smooth`."""
    _check_transition(offsets, scale, jump, family)
    return smooth(pts, off, perturber, estimate, family, parts, scale=scale, jump=jump, workers=workers)


def _laplace_means(pts, off, perturber, prior: Density, parts: int, workers: int) -> np.ndarray:
    """Planar Laplace: the likelihood of every report at the centres of ``parts²`` equal parts of
    every cell (:func:`tracs.estimate._emissions.laplace_rows`), weighted by the cell's mass.

    Every thread keeps its own tables of the clamped reports and its own rows: a table covers
    the offsets of the chunk that made it (its polynomial pieces do not depend on how far it
    reaches), so each report's row is the same whichever chunk came first."""
    xe, ye = (split_edges(np.asarray(e, dtype=np.float64), parts) for e in prior.grid)
    theta = np.repeat(np.repeat(np.asarray(prior.probabilities, dtype=np.float64), parts, axis=0), parts, axis=1)
    centres = np.stack(np.meshgrid(0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:]), indexing="ij"),
                       axis=-1).reshape(-1, 2)
    eps = _epsilons(perturber, off, len(pts))
    out = np.empty_like(pts)
    step = max(1, ROW_ENTRIES // len(centres))  # reports per chunk
    own = threading.local()  # per thread: the clamped reports' tables, made once, and the rows

    def chunk(c):
        if not hasattr(own, "rows"):
            own.memo, own.rows = {}, np.empty((min(step, len(pts)), len(centres)))
        start = c * step
        n = min(step, len(pts) - start)
        weighted = laplace_rows(pts[start:start + n], perturber, eps[start:start + n], centres, own.memo,
                                own.rows[:n])
        weighted *= theta.ravel()
        out[start:start + n] = weighted @ centres / weighted.sum(axis=1, keepdims=True)

    run_chunks(chunk, -(-len(pts) // step), workers)
    return out


def _directional_means(pts, off, perturber, prior: Density, per_cell: int, workers: int) -> np.ndarray:
    """TraCS-D / Strawman: the runs of :mod:`tracs.estimate._runs` summed against ``θ``, ``θ·x``
    and ``θ·y`` (its fixed chunks of reports on ``workers`` threads); reports equal to their
    reference through their dense likelihood rows."""
    xe, ye = (np.asarray(e, dtype=np.float64) for e in prior.grid)
    theta = np.asarray(prior.probabilities, dtype=np.float64)
    eps = _epsilons(perturber, off, len(pts))
    blocks = directional_blocks(pts, off, perturber, eps, _axis_points(xe, per_cell), _axis_points(ye, per_cell),
                                per_cell, _subpoints(xe, ye, per_cell), workers=workers)
    out = np.empty_like(pts)
    centres = _subpoints(xe, ye, 1)[:, 0, :]  # (cells, 2)
    for block in blocks:
        if isinstance(block, RunBlock):
            out[block.rows] = block.posterior_means(theta)
        else:  # the reports equal to their reference: one likelihood row per cell
            weighted = block.likelihood * theta.ravel()
            out[block.rows] = (weighted @ centres) / weighted.sum(axis=1)[:, None]
    return out
