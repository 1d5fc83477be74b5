"""Synthetic trajectories from reports: a grid mobility model fitted by the collector.

:func:`fit_mobility_model` fits, from the reports of every user, a first-order
Markov model of movement on a ``G × G`` grid over the public region:

* **start distribution** — where trajectories begin (cell probabilities of the
  first point of every trajectory);
* **transition matrix** — ``P(next cell | cell)`` of consecutive points;
* **length distribution** — the number of points per trajectory.

For **TraCS-C** and **planar Laplace** the start distribution and the joint
distribution of consecutive cells are deconvolved by EM with the reports' exact
likelihood.  Both release every point independently of the others, so a pair of
consecutive reports with output keys ``(k, l)`` has probability
``Σ_{a,b} L[k, a] π[a, b] L[l, b]``, where ``L[k, a] = P(key k | cell a)`` are the
likelihood rows the density estimator uses: for TraCS-C the exact per-axis lattice
matrices of :mod:`tracs.estimate.transition` (``L = A ⊗ B``, two output bins per cell
and axis), for planar Laplace the rows of :func:`tracs.estimate._laplace.laplace_blocks`
(binned reports, edges and corners integrated).  EM
(:func:`tracs.estimate.expectation_maximisation.run_em`, SQUAREM-accelerated) fits
the marginal of all points, the start distribution from the first reports, and
``π`` over the ``(Gx·Gy)²`` cell pairs, started from the marginal's product with
itself; the transition matrix is ``π`` normalised by rows.  For **TraCS-D** and the
**Strawman** each report's law depends on the previous report, which is public: the
likelihood of a trajectory's reports is a product of one factor per true point, so the same
pair EM runs with one likelihood row per report (its exact likelihood per cell given the
previous report, as the density estimator and the smoothing use:
:class:`tracs.estimate._emissions.DirectionalTables`) and the pairs in a
:class:`~tracs.estimate.expectation_maximisation.PairBlock`.  ``binned=True`` bins the reports
as they are instead (the cell of each first report and of each consecutive pair): no
deconvolution, so the model carries the mechanism's noise; :func:`binned_mobility_model`
is that model for the reports of any method in a public region (a discrete baseline's
released or denoised POIs too).
The length distribution is exact for every method: a release holds one report per
true point.

The model is a **population model**: it depends on all users' reports (and the
public parameters), never on a true point.  Fitting it is post-processing of the
releases and costs no privacy.  :func:`synthesize` samples from it; its output
depends on the seed only through ``rng``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_batch, as_generator
from ..trajectory_batch import batch_arrays
from ..errors import InputError, InputTypeError
from ..mechanisms import OptimalClassical
from . import expectation_maximisation as fitting
from .grid_density import _check_grid, _epsilons, check_perturber
from ._emissions import DirectionalTables
from ._laplace import laplace_blocks, laplace_keys
from ._sampling_kernel import alias_tables, sample_trajectories
from .smoothing import trajectory_ranges
from .transition import bin_index, output_grid, snap_edges, transition_matrix

__all__ = ["MobilityModel", "Synthetic", "fit_mobility_model", "binned_mobility_model", "synthesize"]

#: largest grid side: the model holds a ``(G²)²`` transition matrix, and a fit by EM up to ``(2G)⁴``
#: pairs of output keys (G = 24: 2.7 MB and 42 MB)
MAX_GRID = 24
#: public points per cell and axis of TraCS-D's and the Strawman's likelihood rows (16 per cell)
DIRECTIONAL_POINTS = 4


@dataclass(frozen=True)
class MobilityModel:
    """A first-order Markov model of trajectories on a grid (:func:`fit_mobility_model`).

    Attributes
    ----------
    xe, ye : numpy.ndarray
        Cell edges along x and y, in the region's coordinates (metres of its CRS).
    start : numpy.ndarray, shape (C,)
        Probability that a trajectory starts in each cell, ``C = Gx·Gy``, cell
        ``ix·Gy + iy``.
    transition : numpy.ndarray, shape (C, C)
        ``transition[a, b] = P(next cell b | cell a)``; every row sums to 1.
    lengths : numpy.ndarray
        ``lengths[n]``: probability that a trajectory has ``n`` points (``lengths[0] = 0``).
    crs : str or None
        The region's CRS (from the release's sidecar), for WGS84 output.
    method : str
        ``"em"`` (deconvolved) or ``"binned"`` (reports binned as they are).
    iterations : int
        EM passes of the pair fit (0 when binned).
    """

    xe: np.ndarray
    ye: np.ndarray
    start: np.ndarray
    transition: np.ndarray
    lengths: np.ndarray
    crs: object = None
    method: str = "em"
    iterations: int = 0

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.xe) - 1, len(self.ye) - 1


@dataclass(frozen=True)
class Synthetic:
    """Synthetic trajectories: ``coords`` (N, 2) in the model's CRS, ``offsets`` (T+1,), ``cells`` (N,)."""

    coords: np.ndarray
    offsets: np.ndarray
    cells: np.ndarray
    crs: object = None

    def lonlat(self) -> np.ndarray:
        """The points in WGS84 ``(lon, lat)``; needs the model's CRS."""
        if self.crs is None:
            raise InputError("the model has no CRS: give crs= to fit_mobility_model for WGS84 output")
        import pyproj

        to_wgs84 = pyproj.Transformer.from_crs(self.crs, 4326, always_xy=True)
        lon, lat = to_wgs84.transform(self.coords[:, 0], self.coords[:, 1])
        return np.column_stack([lon, lat])


def _axis_kernels(perturber, eps: float, xe, ye):
    """``(ox, oy, A, B)``: TraCS-C's output bin edges (2 per cell, on lattice boundaries) and exact
    per-axis matrices at per-point budget ``eps`` (as the density estimator builds them)."""
    xmin, ymin, xmax, ymax = perturber.region.bounds
    res = getattr(perturber, "resolution", None)
    share = float(perturber.shares(np.array([eps]))[0])
    mx = OptimalClassical(epsilon=share * eps, low=xmin, high=xmax, resolution=res)
    my = OptimalClassical(epsilon=eps - share * eps, low=ymin, high=ymax, resolution=res)
    ox, oy = output_grid(xe, None), output_grid(ye, None)
    ox[0], ox[-1], oy[0], oy[-1] = -np.inf, np.inf, -np.inf, np.inf
    ox, oy = snap_edges(mx, ox), snap_edges(my, oy)
    return ox, oy, transition_matrix(mx, xe, ox), transition_matrix(my, ye, oy)


def _report_rows(family, perturber, pts, eps, xe, ye):
    """Per distinct per-point ε: ``(mask of its reports, likelihood rows (K, C) of their distinct
    output keys, the row of each of its reports)``; a row holds ``P(key | cell)`` up to a factor of
    its own (TraCS-C: ``A ⊗ B`` on two output bins per cell and axis; planar Laplace: the density
    estimator's rows, :func:`tracs.estimate._laplace.laplace_blocks`)."""
    for e in np.unique(eps):
        mine = eps == e
        if family == "axes":
            ox, oy, a, b = _axis_kernels(perturber, float(e), xe, ye)
            keys = bin_index(pts[mine, 0], ox) * (len(oy) - 1) + bin_index(pts[mine, 1], oy)
            distinct, row = np.unique(keys, return_inverse=True)
            rows = np.kron(a, b)[distinct]
        else:
            keys = laplace_keys(pts[mine], perturber, xe, ye, None)
            distinct, row = np.unique(keys, return_inverse=True)
            stats = [(float(e), distinct, np.ones(len(distinct), dtype=np.int64))]
            rows = laplace_blocks(stats, perturber, xe, ye, None)[0].likelihood
        yield mine, np.ascontiguousarray(rows, dtype=np.float64), row.ravel()


def _cells(pts, xe, ye) -> np.ndarray:
    """Cell ``ix·Gy + iy`` of every point (points on the far edges in the last cells)."""
    ix = np.clip(np.searchsorted(xe, pts[:, 0], side="right") - 1, 0, len(xe) - 2)
    iy = np.clip(np.searchsorted(ye, pts[:, 1], side="right") - 1, 0, len(ye) - 2)
    return ix * (len(ye) - 1) + iy


def _pair_rows(off) -> np.ndarray:
    """Rows that have a next point in their trajectory."""
    n = int(off[-1])
    last = np.zeros(n, dtype=bool)
    lengths = np.diff(off)
    last[off[1:][lengths > 0] - 1] = True
    return np.flatnonzero(~last)


def _rows_to_transition(joint: np.ndarray) -> np.ndarray:
    """Rows of a joint pair distribution normalised; a row of no mass gets the distribution of all
    next cells."""
    rows = joint.sum(axis=1, keepdims=True)
    fallback = joint.sum(axis=0)
    fallback = fallback / fallback.sum()
    return np.where(rows > 0, joint / np.where(rows > 0, rows, 1.0), fallback[None, :])


def _keyed_blocks(family, perturber, pts, eps, xe, ye, first, pairs):
    """TraCS-C / planar Laplace: the EM blocks (marginal, start, pairs) of the reports counted by
    output key, one block each per distinct per-point ε."""
    is_first = np.zeros(len(pts), dtype=bool)
    is_first[first] = True
    marginal, starts, pair_blocks = [], [], []
    row_of = np.empty(len(pts), dtype=np.int64)
    for mine, rows, row in _report_rows(family, perturber, pts, eps, xe, ye):
        k = len(rows)
        row_of[mine] = row
        marginal.append(fitting.DenseBlock(rows, np.bincount(row, minlength=k).astype(np.float64)))
        starts.append(fitting.DenseBlock(rows, np.bincount(row[is_first[mine]], minlength=k).astype(np.float64)))
        p = pairs[mine[pairs]]  # both points of a pair belong to one trajectory: one ε
        counts = np.bincount(row_of[p] * k + row_of[p + 1], minlength=k * k).reshape(k, k)
        pair_blocks.append(fitting.ProductBlock(counts, rows, rows))
    return marginal, starts, pair_blocks


def _directional_rows(pts, off, perturber, xe, ye) -> np.ndarray:
    """TraCS-D / Strawman: every report's exact likelihood per cell given its reference (the previous
    report of its trajectory, or the public anchor), ``(N, C)``, each row up to a factor of its own:
    the mean over :data:`DIRECTIONAL_POINTS`² public points of every cell
    (:class:`tracs.estimate._emissions.DirectionalTables`, as smoothing uses), one chunk of whole
    trajectories at a time.  Every row is scaled to a largest entry of 1 and kept in single
    precision (the pair fit's products run twice as fast)."""
    tables = DirectionalTables(pts, off, perturber, (xe, ye), DIRECTIONAL_POINTS)
    out = np.empty((len(pts), (len(xe) - 1) * (len(ye) - 1)), dtype=np.float32)
    for i, j in trajectory_ranges(off, out.shape[1]):
        lik = tables.chunk(off[i], off[j])[0].reshape(off[j] - off[i], -1)
        out[off[i]:off[j]] = lik / np.maximum(lik.max(axis=1, keepdims=True), 1e-300)
    return out


def fit_mobility_model(reports, perturber, *, offsets=None, grid=16, crs=None, iterations: int = 25,
                       tol: float = 1e-6, binned: bool = False) -> MobilityModel:
    """Fit a grid mobility model (start, transitions, lengths) to the reports of all users.

    Parameters
    ----------
    reports : array_like, shape (N, 2), or tracs.Batch
        Released points in the region's coordinates, in trajectory order (a batch
        brings its offsets).
    perturber : a registered perturber with a density estimator
        The public perturber that released them (``tracs.estimate.read_sidecar`` and
        ``perturber_from_sidecar`` rebuild it from a release's sidecar).
    offsets : array_like of int, shape (T+1,)
        Trajectory boundaries (required unless ``reports`` is a batch).
    grid : int or (int, int)
        Cells along x and y over the region's bounding box, each side at most
        :data:`MAX_GRID` (the model holds a ``(Gx·Gy)²`` transition matrix, a fit by EM
        up to ``(2Gx·2Gy)²`` pairs of output keys).
    crs : optional
        The region's CRS, kept on the model for WGS84 output.
    iterations : int
        Cap on the EM passes of every fit (marginal, start, pairs).  The pair fit has
        ``(Gx·Gy)²`` unknowns, started from the deconvolved marginal's product with
        itself; its later passes fit the reports' noise, so the default (25) stops
        early (``docs/synthesis.md`` has the sweep).
    tol : float
        EM stopping tolerance (log-likelihood gain per pair).
    binned : bool
        Bin the reports as they are (the cell of every first report gives the start, the cells
        of consecutive reports the transitions) instead of fitting the model with their exact
        likelihood: fast, but the reports' noise stays in the model.

    Returns
    -------
    MobilityModel
        ``method="em"`` (deconvolved with the reports' exact likelihood) or ``"binned"``.
    """
    reports, offsets = batch_arrays(reports, offsets)
    family = check_perturber(perturber)
    gx, gy = _model_grid(grid)
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise InputError(f"iterations must be an int >= 1, got {iterations!r}")
    if not (isinstance(tol, (int, float, np.floating)) and np.isfinite(tol) and tol > 0):
        raise InputError(f"tol must be a finite number > 0, got {tol!r}")
    if not isinstance(binned, (bool, np.bool_)):
        raise InputTypeError(f"binned must be a bool, got {type(binned).__name__}")
    pts, off, xe, ye, length_pmf = _model_frame(reports, offsets, perturber.region, gx, gy)
    if binned:
        return _binned(pts, off, xe, ye, length_pmf, crs)
    first, pairs = off[:-1], _pair_rows(off)
    c = gx * gy
    eps = _epsilons(perturber, off, len(pts))
    if family == "directional":
        rows = _directional_rows(pts, off, perturber, xe, ye)
        marginal, starts = [fitting.DenseBlock(rows)], [fitting.DenseBlock(rows[first])]
        pair_blocks = [fitting.PairBlock(rows[pairs], rows[pairs + 1])]
    else:
        marginal, starts, pair_blocks = _keyed_blocks(family, perturber, pts, eps, xe, ye, first, pairs)
    support = np.ones((gx, gy), dtype=bool)
    # the pass budget was chosen with SQUAREM's own extrapolation length: not capped
    options = dict(tol=fitting.DEFAULT_TOL, max_iterations=iterations, step_cap=False)
    theta = fitting.run_em(marginal, support, **options).theta
    start = fitting.run_em(starts, support, initial=theta + 1e-12, **options).theta.ravel()
    if sum(b.weight for b in pair_blocks) == 0:  # every trajectory has one point
        joint, passes = np.diag(start), 0
    else:
        initial = np.multiply.outer(theta.ravel(), theta.ravel()) + 1e-12
        fit = fitting.run_em(pair_blocks, np.ones((c, c), dtype=bool), tol=tol, max_iterations=iterations,
                             initial=initial, step_cap=False)
        joint, passes = fit.theta, fit.iterations
    return MobilityModel(xe, ye, start, _rows_to_transition(joint), length_pmf, crs, "em", int(passes))


def binned_mobility_model(reports, region, *, offsets=None, grid=16, crs=None) -> MobilityModel:
    """A grid mobility model of reports binned as they are, from any release in ``region``.

    The cell of every first report gives the start distribution, the cells of consecutive
    reports the transitions (``fit_mobility_model(..., binned=True)`` of a perturber's
    reports): no likelihood is used, so this takes the reports of any method, a discrete
    baseline's released POIs (or their denoised POIs) too; the reports' noise stays in the
    model.

    Parameters
    ----------
    reports : array_like, shape (N, 2), or tracs.Batch
        Released points in the region's coordinates, in trajectory order.
    region : tracs.Rectangle or tracs.ConvexRegion
        The public region of the release; the grid covers its bounding box.
    offsets : array_like of int, shape (T+1,)
        Trajectory boundaries (required unless ``reports`` is a batch).
    grid : int or (int, int)
        Cells along x and y, each side at most :data:`MAX_GRID`.
    crs : optional
        The region's CRS, kept on the model for WGS84 output.

    Returns
    -------
    MobilityModel
        ``method="binned"``.
    """
    reports, offsets = batch_arrays(reports, offsets)
    gx, gy = _model_grid(grid)
    return _binned(*_model_frame(reports, offsets, region, gx, gy), crs)


def _model_grid(grid) -> tuple[int, int]:
    gx, gy = _check_grid(grid)
    if max(gx, gy) > MAX_GRID:
        raise InputError(f"a mobility model holds a (G^2)^2 transition matrix: grid sides up to {MAX_GRID}, "
                         f"got {(gx, gy)}")
    return gx, gy


def _model_frame(reports, offsets, region, gx: int, gy: int):
    """The checked reports, their non-empty trajectories' offsets, the cell edges over ``region``'s
    bounding box and the length distribution."""
    pts, off, _ = as_batch(reports, offsets)
    lengths = np.diff(off)
    off = off[np.r_[True, lengths > 0]]  # empty trajectories hold no report
    if len(pts) == 0:
        raise InputError("reports is empty")
    region.validate_points(pts, "reports")
    xmin, ymin, xmax, ymax = region.bounds
    xe, ye = np.linspace(xmin, xmax, gx + 1), np.linspace(ymin, ymax, gy + 1)
    length_pmf = np.bincount(np.diff(off)).astype(np.float64)
    return pts, off, xe, ye, length_pmf / length_pmf.sum()


def _binned(pts, off, xe, ye, length_pmf, crs) -> MobilityModel:
    """The model of the reports binned as they are: start and transitions counted by cell."""
    c = (len(xe) - 1) * (len(ye) - 1)
    first, pairs = off[:-1], _pair_rows(off)
    cells = _cells(pts, xe, ye)
    start = np.bincount(cells[first], minlength=c) / len(first)
    joint = np.bincount(cells[pairs] * c + cells[pairs + 1], minlength=c * c).reshape(c, c).astype(float)
    if not len(pairs):
        joint = np.diag(start)
    return MobilityModel(xe, ye, start, _rows_to_transition(joint), length_pmf, crs, "binned", 0)


def _alias_tables(transition: np.ndarray):
    """Walker's alias tables of every row of ``transition``, flat: ``(prob (C·C,), alias (C·C,))``.

    Row ``a``, column ``k`` is drawn with probability ``1/C``, then kept when a uniform is
    below ``prob[a·C + k]``, else replaced by ``alias[a·C + k]``.  Built by Marsaglia's square
    histogram (:func:`tracs.estimate._sampling_kernel.alias_tables`): ``C − 1`` times, the smallest
    open entry of each row (scaled by ``C``: at most 1) is closed and topped up from the row's largest.
    """
    rows, c = transition.shape
    q = transition / transition.sum(axis=1, keepdims=True) * c
    prob, alias = np.ones_like(q), np.tile(np.arange(c, dtype=np.int64), (rows, 1))
    alias_tables(q, prob, alias)
    return np.clip(prob, 0.0, 1.0).ravel(), alias.ravel()


def _steps(model: MobilityModel, n: int, gen):
    """Every trajectory's length and the uniforms of its steps: ``(offsets, order, running, step_start, u,
    first cells)``.

    The uniforms ``u`` are in step-major order: the trajectories sorted longest first
    (``order``), so those still running at step ``t`` (``running[t]`` of them) are a
    prefix and the step's uniforms are ``u[step_start[t]:step_start[t] + running[t]]``;
    the first cells (by sorted position) are drawn from ``model.start`` by inverse cdf
    with the uniforms of step 0 (:mod:`tracs.estimate._sampling_kernel`).
    """
    length_cdf = np.cumsum(model.lengths)
    lengths = np.searchsorted(length_cdf, gen.random(n) * length_cdf[-1], side="right")
    lengths = np.minimum(lengths, len(length_cdf) - 1)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    order = np.argsort(-lengths, kind="stable").astype(np.int64)
    running = np.searchsorted(-lengths[order], -np.arange(1, int(lengths.max(initial=0)) + 1), side="right")
    step_start = np.r_[0, np.cumsum(running)].astype(np.int64)
    u = gen.random(int(offsets[-1]))
    start_cdf = np.cumsum(model.start)
    first = int(running[0]) if len(running) else 0  # every trajectory with a point
    c = model.shape[0] * model.shape[1]
    first_cells = np.minimum(np.searchsorted(start_cdf, u[:first] * start_cdf[-1], side="right"), c - 1)
    return offsets, order, running.astype(np.int64), step_start, u, first_cells.astype(np.int64)


def synthesize(model: MobilityModel, n: int, *, rng=None) -> Synthetic:
    """Sample ``n`` trajectories from a mobility model.

    Every trajectory draws its length from ``model.lengths``, its first cell from
    ``model.start`` and every next cell from the row of the current one; each cell
    becomes a point uniform within it (metres of the region's CRS;
    :meth:`Synthetic.lonlat` for WGS84).  One compiled pass over the trajectories
    (:mod:`tracs.estimate._sampling_kernel`), each next cell drawn in constant time
    from the rows' alias tables (:func:`_alias_tables`).

    Parameters
    ----------
    model : MobilityModel
    n : int
        Number of trajectories (>= 1).
    rng : None, int, SeedSequence or Generator
        The only source of randomness of the output.

    Returns
    -------
    Synthetic
    """
    if not isinstance(model, MobilityModel):
        raise InputTypeError(f"model must be a MobilityModel, got {type(model).__name__}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise InputTypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise InputError(f"n must be >= 1, got {n}")
    gen = as_generator(rng)
    offsets, order, running, step_start, u, first_cells = _steps(model, n, gen)
    prob, alias = _alias_tables(model.transition)
    total = int(offsets[-1])
    w = gen.random((total, 2))
    cells, coords = np.empty(total, dtype=np.int64), np.empty((total, 2))
    xe, ye = (np.asarray(e, dtype=np.float64) for e in (model.xe, model.ye))
    sample_trajectories(u, first_cells, order, running, step_start, offsets, prob, alias, xe, ye, w, cells, coords)
    return Synthetic(coords, offsets, cells, model.crs)
