"""Two-dimensional density estimation from the reports of a trajectory perturber.

:func:`density` fits the cell probabilities of the true points on a grid over the
public region by EM (:mod:`tracs.estimate.expectation_maximisation`), with the exact likelihood of
each perturber's reports:

* **TraCS-C**: product kernel.  Reports are binned on a fine output grid and the
  transition of every axis is the exact matrix of the optimal classical
  mechanism from its cdf (:mod:`tracs.estimate.transition`).  The reports fix
  only the total mass of each edge zone (cells whose report laws coincide);
  ``edge_decay`` splits it (:mod:`tracs.estimate.edge_zones`).
* **TraCS-D / Strawman**: per-report likelihood through the report's reference
  point (the previous report of the trajectory, or the public anchor): the
  closed-form direction and distance densities (the Jacobian depends on the
  report only and cancels).  Their high-density sets are a cone and a ring around
  the reference, which meet every row of cells in runs of columns: a report is
  six column indices per row (:mod:`tracs.estimate._runs`), kept or recomputed per
  chunk within the ``memory`` budget, never one value per cell.  A report equal
  to its reference on the boundary (the ray left at once) gets the probability of
  the outward directions instead.
* **Planar Laplace** (clipped): reports binned (:mod:`tracs.estimate._laplace`).

The estimator reads only the reports, their trajectory offsets and the public
perturber (region, ε, split, anchor): never the true points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._progress import progress_lines
from .._validation import check_memory_budget
from ..trajectory_batch import batch_arrays
from ..errors import InputError, InputTypeError
from ..mechanisms import OptimalClassical
from ..methods import PERTURBER, method_of, view
from .._validation import as_batch
from . import expectation_maximisation as fitting
from . import holdout
from .edge_zones import DEFAULT_EDGE_DECAY, check_edge_decay, edge_axes, place_edge_mass
from .estimators import DENSITY, Estimator, estimators, get_estimator
from .result import Density
from .transition import bin_index, output_grid, snap_edges, transition_matrix

__all__ = ["density"]


def _check_grid(grid) -> tuple[int, int]:
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        grid = (grid, grid)
    try:
        gx, gy = grid
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"grid must be an int or a pair of ints, got {grid!r}") from exc
    for g in (gx, gy):
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
            raise InputTypeError(f"grid must be an int or a pair of ints, got {grid!r}")
        if g < 2:
            raise InputError(f"grid sizes must be >= 2, got {grid!r}")
    return int(gx), int(gy)


def _epsilons(perturber, offsets, n) -> np.ndarray:
    """Per-report ε (from the public budget and the trajectory lengths)."""
    if perturber.epsilon is not None:
        return np.full(n, float(perturber.epsilon))
    if offsets is None:
        raise InputError("with a per-trajectory budget the estimator needs offsets")
    lengths = np.diff(offsets)
    return np.repeat(perturber.epsilon_per_point(lengths), lengths)


def _axis_points(edges, per_axis: int) -> np.ndarray:
    """``per_axis`` evenly spread public coordinates of every cell along one axis, in order."""
    t = (np.arange(per_axis) + 0.5) / per_axis
    return (edges[:-1, None] + np.diff(edges)[:, None] * t).ravel()


def _subpoints(xe, ye, per_axis: int) -> np.ndarray:
    """``per_axis²`` evenly spread public points of every cell: (K, S, 2), cells in (i, j) order."""
    t = (np.arange(per_axis) + 0.5) / per_axis
    px = xe[:-1, None] + np.diff(xe)[:, None] * t  # (Gx, m)
    py = ye[:-1, None] + np.diff(ye)[:, None] * t  # (Gy, m)
    gx, gy, m = len(px), len(py), per_axis
    x = np.broadcast_to(px[:, None, :, None], (gx, gy, m, m))
    y = np.broadcast_to(py[None, :, None, :], (gx, gy, m, m))
    return np.ascontiguousarray(np.stack([x, y], axis=-1).reshape(gx * gy, m * m, 2))


#: ``stop="auto"``: TraCS-D fits below this per-point ε get a held-out pass budget
AUTO_CV_EPSILON = 2.0

#: ``refine="auto"``: the per-point ε from which EM runs on a grid twice as fine per axis
AUTO_REFINE_EPSILON = 4.0

#: ``smoothing="auto"``: the per-point ε from which TraCS-C fits choose their EMS weight on
#: held-out reports (``"cv"``) and run on a grid twice as fine per axis
AUTO_SMOOTHING_EPSILON = 2.0


def _family(perturber) -> str:
    """Which likelihood ``perturber``'s reports have, from its entry in the registry of methods:
    the name of a density estimator (:mod:`tracs.estimate.estimators`), e.g. ``"axes"``
    (TraCS-C), ``"directional"`` (TraCS-D, Strawman) or ``"grid"`` (planar Laplace)."""
    method = method_of(perturber)
    family = None if method is None else method.estimator
    if family is not None:
        get_estimator(family)  # a name no estimator has: ValueError naming the registered ones
    density_names = [name for name, est in estimators().items() if est.target == DENSITY]
    if family not in density_names:
        choices = ", ".join(m.name for m in view(PERTURBER).values() if m.estimator in density_names)
        what = "not a registered method" if method is None else f"the method {method.name!r}"
        raise InputTypeError(f"perturber must be a registered perturber with a density estimator ({choices}); "
                             f"{type(perturber).__name__} is {what} without one")
    return family


def _auto_smoothing(smoothing, estimator: Estimator, eps):
    """``"auto"`` -> ``"cv"`` for an estimator with ``held_out_smoothing`` (TraCS-C's per-axis
    reports) when every report's ε is at least 2, else ``None``."""
    if isinstance(smoothing, str) and smoothing == "auto":
        held_out = estimator.held_out_smoothing and float(np.min(eps)) >= AUTO_SMOOTHING_EPSILON
        return "cv" if held_out else None
    return smoothing


def _check_refine(refine, eps, smoothed: bool = False) -> int:
    """The refinement factor: an int in 1..8, or ``"auto"``.

    ``"auto"`` is 2 when every report's ε is at least :data:`AUTO_REFINE_EPSILON`,
    or at least :data:`AUTO_SMOOTHING_EPSILON` when ``smoothed`` (a TraCS-C fit whose
    EMS weight is chosen on held-out reports), else 1.
    """
    if isinstance(refine, str):
        if refine != "auto":
            raise InputError(f"refine must be an int in 1..8 or 'auto', got {refine!r}")
        low = float(np.min(eps))
        return 2 if low >= AUTO_REFINE_EPSILON or (smoothed and low >= AUTO_SMOOTHING_EPSILON) else 1
    if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)):
        raise InputTypeError(f"refine must be an int in 1..8 or 'auto', got {type(refine).__name__}")
    if not 1 <= refine <= 8:
        raise InputError(f"refine must be an int in 1..8 or 'auto', got {refine}")
    return int(refine)


def density(reports, perturber, *, offsets=None, grid=(32, 32), iterations=None, smoothing="auto",
            tol: float = fitting.DEFAULT_TOL, subpoints: int = 1, output_bins=None, refine="auto",
            accelerate: bool = True, stop="auto", workers: int = 1,
            edge_decay: float = DEFAULT_EDGE_DECAY, memory=None) -> Density:
    """Estimate the density of the true points from a perturber's reports.

    Parameters
    ----------
    reports : array_like, shape (N, 2), or tracs.Batch
        Released points, in the region's coordinates, in trajectory order (a batch
        brings its offsets).
    perturber : a registered perturber with a density estimator
        The public perturber that released them (region, ε, split, anchor):
        TraCSC, TraCSD, Strawman, PlanarLaplace, or any perturber whose entry in
        :mod:`tracs.methods` names the ``"axes"``, ``"directional"`` or ``"grid"``
        likelihood.
        Perturbers that round to points of interest are refused: their
        references are not public.
    offsets : array_like of int, shape (T+1,), optional
        Trajectory boundaries, as in ``perturb_many``.  Required for TraCS-D and
        the Strawman (each report's reference is the previous report) and with a
        per-trajectory budget.
    grid : int or (int, int)
        Cells along x and y over the region's bounding box.
    iterations : int, optional
        Upper bound on EM iterations; the stopping rule (log-likelihood change per
        report below ``tol``) normally ends the iteration first.
    smoothing : "auto", None, "ems", "cv" or float in (0, 1]
        EMS smoothing (Li et al., SIGMOD 2020) after every M-step; a number ``λ``
        blends it in, ``θ <- (1 − λ)θ + λ·smooth(θ)``; ``"cv"`` (TraCS-C and
        planar Laplace) picks ``λ`` among :data:`tracs.estimate.expectation_maximisation.CV_WEIGHTS`
        (all positive) by the log-likelihood of held-out reports
        (:func:`tracs.estimate.expectation_maximisation.choose_smoothing`, 12 more fits).  ``"auto"``:
        ``"cv"`` for TraCS-C when every report's ε is at least
        :data:`AUTO_SMOOTHING_EPSILON` (2), else ``None`` (plain EM).  There the
        finer grid of ``refine="auto"`` follows: unsmoothed, a grid twice as fine
        gains nothing at ε = 2 (four times the unknowns, more noise fitted), while
        the held-out weight damps that noise and the fine cells place box edges
        more closely; below ε = 2 the held-out likelihood is too flat to choose
        well (``docs/estimation.md``).
    tol : float
        Stopping tolerance (see :mod:`tracs.estimate.expectation_maximisation`).
    subpoints : int
        TraCS-D / Strawman: each cell is represented by ``subpoints²`` public
        points (1: its centre).
    output_bins : int, optional
        TraCS-C / planar Laplace: bins of the reports per axis (default 2 per cell
        of the grid EM runs on).
    refine : int or "auto"
        EM runs on a grid ``refine`` times finer per axis; the result holds the
        cell sums on ``grid`` and the fine estimate as :attr:`Density.detail`, which
        answers range queries.  ``"auto"``: 2 when every report's ε is at least
        :data:`AUTO_REFINE_EPSILON` (4) — at large ε the reports resolve more
        than the grid — or, for a TraCS-C fit with ``smoothing="cv"`` (the
        default there from ε = 2), at least :data:`AUTO_SMOOTHING_EPSILON` (2);
        else 1 (``docs/estimation.md``).
    accelerate : bool
        SQUAREM acceleration of EM (same fixed points, fewer passes).
    stop : {"auto", "rule", "cv"}
        How EM stops.  ``"rule"``: the log-likelihood stopping rule (and
        ``iterations``).  ``"cv"`` (TraCS-D / Strawman, with at least 6
        trajectories): at most the number of passes whose fits best predict
        held-out trajectories (:func:`tracs.estimate.holdout.choose_passes`,
        3 folds: about three more fits), then the rule.  ``"auto"``: ``"cv"``
        for TraCS-D when every report's ε is below :data:`AUTO_CV_EPSILON` (2),
        else ``"rule"`` — at small ε the likelihood is flat and EM's late passes
        fit the reports' noise (``docs/estimation.md``).
    workers : int
        Threads over chunks of reports (TraCS-D / Strawman runs and EM passes);
        the result is bit-identical for every value (partial sums are combined
        in chunk order).
    memory : int, str or None
        Budget of the estimator's own working memory, in bytes or as ``"2GB"``
        (:func:`tracs._validation.check_memory_budget`).  TraCS-D / Strawman keep every
        report's runs (``6 × rows`` bytes; :mod:`tracs.estimate._runs`) when they fit,
        else recompute them per chunk on every pass (slower, memory
        ``O(reports + rows × chunk)``); a grid that cannot fit even then is refused
        up front with a ``MemoryError`` naming the budget.  ``None``: no budget
        (runs kept up to 2 GB).  Peak memory never grows with reports × cells.
    edge_decay : float
        TraCS-C: how the mass of an *edge zone* is split among its cells.  Near
        each end of an axis the optimal classical mechanism clamps its band, so
        every cell there has the same report distribution and the reports fix
        only the zone's total (:mod:`tracs.estimate.edge_zones`).  The split
        follows a density ``∝ exp(−κ·u)`` across the zone (``u`` = 0 at its inner
        boundary, 1 at the region's edge): the region is a public box drawn
        around the data, which thin out towards its rim.  ``0`` splits uniformly
        (plain EM's split).  The likelihood is the same for every value.
        Default :data:`tracs.estimate.edge_zones.DEFAULT_EDGE_DECAY` (4: the
        density falls by e⁻⁴ across a zone); ``docs/estimation.md`` has the sweep.

    Returns
    -------
    Density
    """
    reports, offsets = batch_arrays(reports, offsets)
    family = check_perturber(perturber)
    _check_grid(grid)
    if not isinstance(stop, str) or stop not in ("auto", "rule", "cv"):
        raise InputError(f"stop must be 'auto', 'rule' or 'cv', got {stop!r}")
    if offsets is None:
        pts = np.asarray(reports, dtype=np.float64) if not isinstance(reports, list) else reports
        if get_estimator(family).trajectories and not isinstance(reports, list):
            raise InputError("TraCS-D and the Strawman need offsets: each report's reference "
                             "is the previous report of its trajectory")
        if isinstance(pts, list):
            pts, off, _ = as_batch(pts)
        else:
            pts, off, _ = as_batch(pts, np.array([0, len(pts)]))
            off = None
    else:
        pts, off, _ = as_batch(reports, offsets)
    if len(pts) == 0:
        raise InputError("reports is empty")
    perturber.region.validate_points(pts, "reports")
    eps = _epsilons(perturber, off, len(pts))
    plan = plan_density(perturber, len(pts), float(np.min(eps)), float(np.max(eps)), grid=grid,
                        iterations=iterations, smoothing=smoothing, tol=tol, subpoints=subpoints,
                        output_bins=output_bins, refine=refine, accelerate=accelerate, stop=stop,
                        workers=workers, edge_decay=edge_decay, memory=memory)
    if off is None and plan.estimator.trajectories:
        off = np.array([0, len(pts)])
    blocks = plan.blocks(pts, off, eps)
    return plan.fit(blocks, lambda: holdout.trajectory_folds(off))


@dataclass
class DensityPlan:
    """Every choice of a :func:`density` fit that precedes the reports' blocks.

    :meth:`blocks` turns reports into likelihood blocks (one estimator per
    perturber); :meth:`fit` runs EM over blocks from anywhere (in process, or
    held by the partitions of a Dask frame: :func:`tracs.dask.estimate`).
    """

    perturber: object
    family: str
    xe: np.ndarray
    ye: np.ndarray
    refine: int
    smoothing: object
    stop: str
    tol: float
    iterations: int | None
    accelerate: bool
    edge_decay: float
    subpoints: int
    output_bins: int | None
    workers: int
    memory: int | None

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.xe) - 1, len(self.ye) - 1

    @property
    def estimator(self) -> Estimator:
        """The registered estimator of the reports (:mod:`tracs.estimate.estimators`)."""
        return get_estimator(self.family)

    def blocks(self, pts, off, eps, weights=None) -> list:
        """Likelihood blocks of reports ``pts`` (trajectory ``off``, per-report ``eps``).

        ``weights`` (a ``weighted`` estimator: TraCS-C): the number of reports at each point
        of ``pts``, so that counts of reports per lattice value give the blocks of the reports."""
        if weights is not None and not self.estimator.weighted:
            raise InputError("weights are counts of TraCS-C reports per lattice value")
        return self.estimator.call("blocks", self, pts, off, eps, weights)

    def counts(self, pts, eps):
        """The reports' sufficient statistics (planar Laplace: counts of distinct keys)."""
        return self.estimator.call("counts", self, pts, eps)

    def blocks_from_counts(self, parts) -> list:
        """The blocks of the reports whose :meth:`counts` are ``parts``."""
        return self.estimator.call("from_counts", self, parts)

    def support(self) -> np.ndarray:
        """Cells that may hold mass (the estimator's ``support``; default every cell)."""
        if self.estimator.support is None:
            return np.ones(self.shape, dtype=bool)
        return self.estimator.call("support", self)

    def fit(self, blocks, folds, initial=None) -> Density:
        """EM over ``blocks``; ``folds()`` gives every report's trajectory fold when ``stop`` is ``"cv"``;
        ``initial``: the final fit's start on the grid of :attr:`shape` (default uniform)."""
        support, smoothing, iterations = self.support(), self.smoothing, self.iterations
        options = {"tol": self.tol, "accelerate": self.accelerate, "lines": progress_lines("estimate")}
        if isinstance(smoothing, str) and smoothing == "cv":
            weight = fitting.choose_smoothing(blocks, support, max_iterations=iterations, **options)
            smoothing = weight or None
        if self.stop == "cv":
            fold = folds()
            if fold is not None:
                budget = holdout.choose_passes(blocks, support, fold, smoothing=smoothing,
                                                max_iterations=iterations, **options)
                if budget is not None:
                    iterations = budget if iterations is None else min(iterations, budget)
        options["lines"].stage = "final fit"
        fit = fitting.run_em(blocks, support, smoothing=smoothing, max_iterations=iterations, initial=initial,
                             **options)
        theta = fit.theta
        if self.edge_decay and all(isinstance(b, fitting.ProductBlock) for b in blocks):
            axes = edge_axes([[b.first for b in blocks], [b.second for b in blocks]], self.edge_decay)
            theta = place_edge_mass(theta, axes)
        method = "em" if smoothing is None else ("ems" if smoothing == "ems" else f"ems λ={smoothing:g}")
        fine = Density(theta, (self.xe, self.ye), fit.iterations, fit.converged, method)
        r = self.refine
        if r == 1:
            return fine
        gx, gy = self.shape
        coarse_p = theta.reshape(gx // r, r, gy // r, r).sum(axis=(1, 3))
        return Density(coarse_p, (self.xe[::r], self.ye[::r]), fit.iterations, fit.converged, method,
                       detail=fine)


def check_perturber(perturber) -> str:
    """The likelihood family of a perturber :func:`density` can estimate from (its registry
    entry's estimator, a density estimator of :mod:`tracs.estimate.estimators`); ``TypeError`` /
    ``ValueError`` otherwise."""
    family = _family(perturber)
    if perturber.round_to is not None:
        raise InputError("reports rounded to points of interest are not supported: their "
                         "references (the continuous releases) are not public")
    return family


def plan_density(perturber, n_reports: int, eps_low: float, eps_high: float, *, grid=(32, 32),
                 iterations=None, smoothing="auto", tol=fitting.DEFAULT_TOL, subpoints=1,
                 output_bins=None, refine="auto", accelerate=True, stop="auto", workers=1,
                 edge_decay=DEFAULT_EDGE_DECAY, memory=None) -> DensityPlan:
    """The choices of :func:`density` (same arguments) from the reports' count and ε range."""
    family = check_perturber(perturber)
    estimator = get_estimator(family)
    gx, gy = _check_grid(grid)
    edge_decay = check_edge_decay(edge_decay)
    if not isinstance(stop, str) or stop not in ("auto", "rule", "cv"):
        raise InputError(f"stop must be 'auto', 'rule' or 'cv', got {stop!r}")
    if stop == "cv" and not estimator.trajectories:
        raise InputError("stop='cv' holds out trajectories of TraCS-D or Strawman reports")
    workers = _check_workers(workers)
    memory = check_memory_budget(memory)
    eps = np.array([eps_low, eps_high])
    smoothing = _auto_smoothing(smoothing, estimator, eps)
    smoothed = estimator.held_out_smoothing and isinstance(smoothing, str) and smoothing == "cv"
    r = _check_refine(refine, eps, smoothed)
    gx, gy = gx * r, gy * r
    xmin, ymin, xmax, ymax = perturber.region.bounds
    xe, ye = np.linspace(xmin, xmax, gx + 1), np.linspace(ymin, ymax, gy + 1)
    if stop == "auto":
        stop = "rule" if estimator.auto_stop is None else estimator.call("auto_stop", perturber, eps_high)
    sub = check_parts(subpoints, "subpoints", 4) if estimator.trajectories else 1
    return DensityPlan(perturber, family, xe, ye, r, smoothing, stop, tol, iterations, accelerate, edge_decay,
                       sub, output_bins, workers, memory)


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)):
        raise InputTypeError(f"workers must be an int, got {type(workers).__name__}")
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    return int(workers)


def check_parts(value, name: str, high: int) -> int:
    """``value`` as an int in ``1..high`` (parts of a cell per axis), named ``name`` in the errors."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputTypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 1 <= value <= high:
        raise InputError(f"{name} must lie in 1..{high}, got {value}")
    return int(value)


def axis_mechanisms(perturber, epsilon):
    """TraCS-C's two per-axis mechanisms at per-point budget ``epsilon``: the optimal classical
    mechanism on each side of the rectangle, with the perturber's split and resolution."""
    xmin, ymin, xmax, ymax = perturber.region.bounds
    res = getattr(perturber, "resolution", None)
    share = float(perturber.shares(np.array([epsilon]))[0])
    return (OptimalClassical(epsilon=share * epsilon, low=xmin, high=xmax, resolution=res),
            OptimalClassical(epsilon=epsilon - share * epsilon, low=ymin, high=ymax, resolution=res))


def _tracsc_blocks(pts, perturber, eps, xe, ye, output_bins, weights=None):
    """One product block per distinct per-point ε (exact per-axis lattice matrices).

    Each axis is the optimal classical mechanism on its side of the rectangle, with
    the perturber's resolution: its public lattice is the perturber's axis lattice.
    The output bins are snapped to boundaries between lattice cells, so a report is
    binned by its lattice value and the matrices are sums of exact lattice rows.
    """
    blocks = []
    values, inverse = np.unique(eps, return_inverse=True)
    for g, e in enumerate(values):
        mx, my = axis_mechanisms(perturber, e)
        ox, oy = output_grid(xe, output_bins), output_grid(ye, output_bins)
        ox[0], ox[-1], oy[0], oy[-1] = -np.inf, np.inf, -np.inf, np.inf
        ox, oy = snap_edges(mx, ox), snap_edges(my, oy)
        ax = transition_matrix(mx, xe, ox)
        ay = transition_matrix(my, ye, oy)
        sel = inverse == g
        p = pts if len(values) == 1 else pts[sel]
        w = weights if weights is None or len(values) == 1 else weights[sel]
        nx, ny = len(ox) - 1, len(oy) - 1
        key = bin_index(p[:, 0], ox) * ny + bin_index(p[:, 1], oy)
        counts = np.bincount(key, weights=w, minlength=nx * ny).reshape(nx, ny).astype(np.float64)
        blocks.append(fitting.ProductBlock(counts, ax, ay))
        blocks[-1].eps = float(e)
    return blocks
