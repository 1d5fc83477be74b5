"""The experiment runner: grids of methods × ε × repetitions with per-cell seeds, studies and timings."""

from __future__ import annotations

import math
import time
import zlib
from typing import Sequence

import numpy as np
import pandas as pd

from .._progress import progress_bar
from .._validation import check_epsilon
from ..metrics import trajectory_errors
from ..errors import InputError, InputTypeError
from ..engine import perturb_many
from ..trajectory_batch import Batch
from .experiment_data import Dataset, _check_count
from .choices import METHODS, MethodContext, parse_epsilons, parse_methods
from .denoised import check_denoise, denoised_columns
from .extra_metrics import EXTRA_METRICS, in_degrees, parse_metrics
from ..mechanisms import KRR, Circle, OptimalCircular


def _tag(value) -> int:
    """A stable 32-bit tag of a name or number (independent of PYTHONHASHSEED)."""
    return zlib.crc32(str(value).encode("utf-8"))


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputTypeError(f"seed must be a non-negative integer, got {type(seed).__name__}")
    if seed < 0:
        raise InputError(f"seed must be >= 0, got {seed}")
    return int(seed)


def cell_seed(seed: int, method: str, epsilon: float, repetition: int) -> np.random.SeedSequence:
    """The random stream of one grid cell; depends only on its own coordinates."""
    return np.random.SeedSequence(_check_seed(seed),
                                  spawn_key=(_tag(method), _tag(repr(float(epsilon))), int(repetition)))


def _stream(seed: int, purpose: str, repetition: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(_check_seed(seed), spawn_key=(_tag(purpose), int(repetition)))


# ----------------------------------------------------------------------------- grid

#: the range ``δ`` of the ``range_preservation`` metric: the paper's 0.1 degree on
#: check-in data (measured in degrees, see :attr:`Dataset.degree_scale`), 0.1 region

def _errors(true, pert, offsets, normalize_by=None) -> np.ndarray:
    return np.asarray(trajectory_errors(true, pert, offsets, normalize_by=normalize_by), dtype=np.float64)


def _run_method(spec, perturber, batch, ctx, rounding, rng):
    """The releases of one cell's :class:`tracs.Batch` through the engine (:func:`tracs.engine.perturb_many`,
    keyed as the registry entry ``spec`` says: the path of :func:`tracs.release.release_points`), rounded
    when asked."""
    out = perturb_many(perturber, batch, rng=rng, keyed=spec.keyed).coords
    if rounding:
        out = ctx.poi_space.round(out)[0]
    return np.asarray(out, dtype=np.float64)


def _warm_up(spec, ctx, coords, offsets, rounding) -> None:
    """Run a method once on one short trajectory so compile time is not timed."""
    length = int(min(offsets[1] - offsets[0], 3))
    _run_method(spec, spec.build(ctx, 1.0), Batch(coords[:length]), ctx, rounding, 0)


#: points of the timing sample behind a run-time estimate
ESTIMATE_SAMPLE_POINTS = 2_000


def _estimate_seconds(names, eps_values, repetitions, ctx, coords, offsets, round_to_pois) -> dict[str, float]:
    """Expected seconds of each method's cells, from one timed run on the first trajectories."""
    stop = int(np.searchsorted(offsets, min(ESTIMATE_SAMPLE_POINTS, int(offsets[-1])), side="right"))
    stop = max(stop, 2)
    sample_offsets = offsets[:stop]
    sample = coords[: sample_offsets[-1]]
    middle = float(np.median(eps_values))
    estimate = {}
    for name in names:
        spec = METHODS[name]
        rounding = bool(round_to_pois) and not spec.discrete
        _warm_up(spec, ctx, coords, offsets, rounding)
        start = time.perf_counter()
        _run_method(spec, spec.build(ctx, middle), Batch(sample, sample_offsets), ctx, rounding, 0)
        per_point = (time.perf_counter() - start) / max(int(sample_offsets[-1]), 1)
        estimate[name] = per_point * int(offsets[-1]) * len(eps_values) * repetitions
    return estimate


def run_grid(dataset: Dataset, methods, epsilons, *, repetitions: int = 1, seed: int = 0,
             anchor="center", round_to_pois: bool | None = None, metrics: Sequence[str] = (),
             progress: bool = False, on_estimate=None, units: str = "metres", denoise=None) -> pd.DataFrame:
    """Run every (method, ε, repetition) cell and return the tidy results.

    Parameters
    ----------
    dataset : Dataset
    methods : str or sequence of str
        Names from :data:`METHODS`.
    epsilons : str or sequence of float
        Privacy parameters **per point**, each > 0.
    repetitions : int
        Independent runs per (method, ε); fresh random trajectories each time on a
        continuous region, fresh perturbation noise always.
    seed : int
        Root seed (see the module notes: cells are independent of grid order).
    anchor : "center", "corner" or (x, y)
        TraCS-D's public first reference (the paper's code uses the corner).
    round_to_pois : bool, optional
        Round the outputs of continuous methods to the nearest POI (post-processing).
        Default: when the data set's POIs are venues or a POI file
        (:attr:`Dataset.round_by_default`; never the points of a trace).
    metrics : str or sequence of str
        Extra columns among :data:`EXTRA_METRICS` (comma-separated or a sequence):
        ``range_query_error``, ``hotspot_precision``, ``hotspot_ndcg`` (grid and
        rectangle forms, scored on the same random queries for every method) and the
        paper's appendix metrics ``range_preservation`` (per trajectory, the share of
        points released within :data:`RANGE_DELTA` = 0.1 of the true point, averaged
        over trajectories; on check-in data δ is 0.1 **degree**, measured by
        converting the metres along each axis with :attr:`Dataset.degree_scale`, on a
        continuous region 0.1 region units) and ``hotspot_count_error`` (hotspots:
        the top :data:`HOTSPOT_SHARE` = 20 % most visited distinct true locations of
        the repetition; per trajectory ``|#released − #true points on a hotspot|``,
        averaged; needs points of interest).  Each receives the trajectory offsets,
        so per-trajectory metrics average over trajectories, not points.
    progress : bool
        Allow a progress bar on standard error (:mod:`tracs._progress`: only on a
        terminal, after 2 s).
    units : "metres" or "degrees"
        Units of the ``ae`` column: the data's own (metres on check-in data, region
        units on a continuous region), or degrees — each axis's offset divided by
        the data's units per degree (:attr:`Dataset.degree_scale`, at the latitude of
        the data's centre) — to compare with tables published in degrees.
    on_estimate : callable, optional
        Called once before the grid runs with ``{method: expected seconds}``, measured
        by timing each method on the first ~2,000 points of the data (so a caller can
        say how long a run will take before it starts).
    denoise : {"point", "trajectory"}, optional
        Also the AE of the denoised release (:mod:`tracs.evaluation.denoised`):
        columns ``ae_denoised``, ``ae_denoised_mean`` (outputs rounded to POIs: the
        posterior mode and the POI nearest the posterior mean) and
        ``denoise_seconds``; ``NaN`` for methods not denoised.

    Returns
    -------
    pandas.DataFrame
        One row per cell, sorted by (method in the given order, ε, repetition), with
        columns ``dataset, method, label, epsilon, repetition, ae, ae_normalised,
        ae_traj_sd, units, n_points, n_trajectories, seconds, seconds_per_point`` and
        the extra metrics.  ``ae`` is the mean over trajectories of each
        trajectory's mean point error, in the data's units; ``ae_normalised`` the
        same in the paper's units.  ``seconds`` covers building the perturber,
        perturbing every trajectory and rounding.
    """
    names = parse_methods(methods)
    eps_values = parse_epsilons(epsilons)
    repetitions = _check_count(repetitions, "repetitions")
    seed = _check_seed(seed)
    metrics = parse_metrics(metrics)
    denoise = check_denoise(denoise)
    has_pois = dataset.pois is not None
    needs = [m for m in metrics if EXTRA_METRICS[m].needs_pois]
    if needs and not has_pois:
        raise InputError(f"metric {needs[0]!r} matches released points to locations exactly and needs "
                         f"points of interest, but data set {dataset.name!r} is a continuous region")
    if round_to_pois is None:
        round_to_pois = has_pois and dataset.round_by_default
    if (round_to_pois or any(METHODS[m].discrete for m in names)) and not has_pois:
        needs = [m for m in names if METHODS[m].discrete]
        what = f"method {needs[0]!r}" if needs else "rounding to POIs"
        raise InputError(f"{what} needs points of interest, but data set {dataset.name!r} is a "
                         "continuous region; use check-in data (tky, chi, synthetic or a file)")
    ctx = MethodContext(region=dataset.region, pois=dataset.pois, anchor=anchor)
    offsets = np.asarray(dataset.offsets, dtype=np.int64)
    n_points, n_traj = int(offsets[-1]), len(offsets) - 1

    if units not in ("metres", "degrees"):
        raise InputError(f"units must be 'metres' or 'degrees', got {units!r}")
    if units == "degrees" and dataset.degree_scale is None:
        raise InputError(f"data set {dataset.name!r} has no geographic reference (a continuous region): "
                         "errors in degrees need check-in data")
    degrees = units == "degrees"
    rows = []
    if on_estimate is not None:
        on_estimate(_estimate_seconds(names, eps_values, repetitions, ctx, dataset.draw(_stream(seed, "data", 0)),
                                      offsets, round_to_pois))
    total = len(names) * len(eps_values) * repetitions
    with progress_bar(total, desc=f"{dataset.name}", unit="run", enabled=progress) as bar:
        warmed = set(names) if on_estimate is not None else set()  # the estimate warmed them up
        for rep in range(repetitions):
            coords = dataset.draw(_stream(seed, "data", rep))
            batch = dataset.batch(coords)
            for name in names:
                spec = METHODS[name]
                rounding = bool(round_to_pois) and not spec.discrete
                if name not in warmed:
                    _warm_up(spec, ctx, coords, offsets, rounding)
                    warmed.add(name)
                for eps in eps_values:
                    bar.set_postfix_str(f"{name} ε={eps:g} rep={rep}", refresh=False)
                    rng = np.random.default_rng(cell_seed(seed, name, eps, rep))
                    start = time.perf_counter()
                    perturber = spec.build(ctx, eps)
                    raw = _run_method(spec, perturber, batch, ctx, False, rng)
                    out = np.asarray(ctx.poi_space.round(raw)[0], dtype=np.float64) if rounding else raw
                    seconds = time.perf_counter() - start
                    errors = (_errors(in_degrees(coords, dataset), in_degrees(out, dataset), offsets) if degrees
                              else _errors(coords, out, offsets))
                    errors_paper = (_errors(coords, out, offsets, dataset.paper_scale)
                                    if dataset.normalise else errors)
                    row = {
                        "dataset": dataset.name, "method": name, "label": spec.label,
                        "epsilon": eps, "repetition": rep,
                        "ae": float(errors.mean()), "ae_normalised": float(errors_paper.mean()),
                        "ae_traj_sd": float(errors.std(ddof=1)) if n_traj > 1 else 0.0,
                        "units": "degrees" if degrees else dataset.units,
                        "rounded": rounding,
                        "n_points": n_points, "n_trajectories": n_traj,
                        "seconds": seconds, "seconds_per_point": seconds / n_points,
                    }
                    if denoise is not None:
                        row.update(denoised_columns(
                            perturber, raw, coords, offsets, ctx.poi_space.points if rounding else None, denoise,
                            lambda p: (_errors(in_degrees(coords, dataset), in_degrees(p, dataset), offsets)
                                       if degrees else _errors(coords, p, offsets))))
                    for metric in metrics:
                        query_rng = np.random.default_rng(_stream(seed, "queries", rep))
                        spec_m = EXTRA_METRICS[metric]
                        extra = ({"perturber": None if rounding else perturber}
                                 if spec_m.needs_perturber else {})
                        row[metric] = spec_m.function(coords, out, offsets, dataset, query_rng, **extra)
                    rows.append(row)
                    bar.update(1)
    table = pd.DataFrame(rows)
    order = {name: i for i, name in enumerate(names)}
    table = table.sort_values(by=["method", "epsilon", "repetition"],
                              key=lambda s: s.map(order) if s.name == "method" else s, kind="stable")
    return table.reset_index(drop=True)


# ----------------------------------------------------------------------------- summaries


def direction_study(epsilons, *, sectors: Sequence[int] = (3, 6, 12), samples: int = 100_000,
                    repetitions: int = 5, seed: int = 0) -> pd.DataFrame:
    """Direction-only study: the optimal circular mechanism vs k-RR over sectors.

    True directions are uniform on ``[0, 2π)``.  ``circular`` perturbs them with
    :class:`tracs.mechanisms.OptimalCircular`; ``krr-k`` reports the direction's
    sector among ``k`` equal sectors with k-RR and then a uniform angle inside the
    reported sector (the Strawman's direction step).  Errors are circular distances
    ``min(|a − b|, 2π − |a − b|)`` in radians.

    Returns
    -------
    pandas.DataFrame
        Columns ``method, epsilon, repetition, error`` (mean circular distance over
        ``samples`` directions) and ``exact`` (the closed-form expected error, for the
        circular mechanism and for k-RR sectors with uniform inputs).
    """
    eps_values = parse_epsilons(epsilons)
    samples = _check_count(samples, "samples")
    repetitions = _check_count(repetitions, "repetitions")
    seed = _check_seed(seed)
    sectors = [_check_count(k, "sectors", 2) for k in sectors]
    period = 2 * math.pi
    circle = Circle(period)
    rows = []
    for eps in eps_values:
        circular = OptimalCircular(epsilon=eps, period=period)
        exact_circ = float(np.asarray(circular.expected_error(0.0)))
        for rep in range(repetitions):
            gen = np.random.default_rng(cell_seed(seed, "circular", eps, rep))
            phi = gen.uniform(0.0, period, samples)
            out = circular.sample(phi, rng=gen)
            rows.append({"method": "circular", "epsilon": eps, "repetition": rep,
                         "error": float(np.mean(circle.distance(phi, out))), "exact": exact_circ})
            for k in sectors:
                gen = np.random.default_rng(cell_seed(seed, f"krr-{k}", eps, rep))
                phi = gen.uniform(0.0, period, samples)
                width = period / k
                sector = np.minimum((phi // width).astype(np.int64), k - 1)
                reported = np.asarray(KRR(epsilon=eps, k=k).sample(sector, rng=gen), dtype=np.int64)
                out = (reported + gen.random(samples)) * width
                rows.append({"method": f"krr-{k}", "epsilon": eps, "repetition": rep,
                             "error": float(np.mean(circle.distance(phi, out))),
                             "exact": _krr_sector_error(eps, k)})
    return pd.DataFrame(rows)


def _krr_sector_error(epsilon: float, k: int) -> float:
    """Exact mean circular error of k-RR sectors + uniform angle, uniform true angles.

    Within the true sector both angles are uniform on an arc of width ``w = 2π/k``:
    mean distance ``w/3``.  For a sector ``j`` steps away the mean circular distance
    between two independent uniform points of the two arcs is computed by exact
    quadrature of the piecewise-linear distance (averaged over a fine midpoint grid).
    """
    period = 2 * math.pi
    w = period / k
    e = math.exp(epsilon)
    p_true = e / (e + k - 1)
    p_other = 1.0 / (e + k - 1)
    grid = (np.arange(400) + 0.5) / 400 * w  # midpoint rule: exact to ~1e-6 relative
    total = p_true * (w / 3.0)
    for j in range(1, k):
        d = np.abs(grid[:, None] - (grid[None, :] + j * w))
        d = np.minimum(d, period - d)
        total += p_other * float(d.mean())
    return total


def time_methods(dataset: Dataset, methods, epsilon: float = 4.0, *, repeat: int = 3, seed: int = 0,
                 anchor="center", round_to_pois: bool | None = None) -> pd.DataFrame:
    """Time per location of each method (the paper's Table 3), best of ``repeat`` runs.

    ``total_ms`` covers building the perturber, perturbing every trajectory and
    rounding to POIs; ``perturb_ms`` only the perturbation call (for TraCS without the
    rounding).  Both are milliseconds per location.  Timings on a shared machine are
    noisy: compare methods measured in the same run.
    """
    names = parse_methods(methods)
    epsilon = check_epsilon(epsilon)
    repeat = _check_count(repeat, "repeat")
    has_pois = dataset.pois is not None
    if round_to_pois is None:
        round_to_pois = has_pois and dataset.round_by_default
    ctx = MethodContext(region=dataset.region, pois=dataset.pois, anchor=anchor)
    batch = dataset.batch(dataset.draw(_stream(_check_seed(seed), "data", 0)))
    coords, offsets = batch.coords, batch.offsets
    n = int(offsets[-1])
    if round_to_pois or any(METHODS[m].discrete for m in names):
        ctx.poi_space  # noqa: B018 - build the shared KD-tree outside the timings
    rows = []
    for name in names:
        spec = METHODS[name]
        rounding = bool(round_to_pois) and not spec.discrete
        _warm_up(spec, ctx, coords, offsets, rounding)
        best_total = best_perturb = float("inf")
        for r in range(repeat):
            rng = np.random.default_rng(cell_seed(seed, name, epsilon, r))
            start = time.perf_counter()
            perturber = spec.build(ctx, epsilon)
            built = time.perf_counter()
            out = perturb_many(perturber, batch, rng=rng, keyed=spec.keyed).coords
            perturbed = time.perf_counter()
            if rounding:
                ctx.poi_space.round(out)
            end = time.perf_counter()
            best_total = min(best_total, end - start)
            best_perturb = min(best_perturb, perturbed - built)
        rows.append({"method": name, "label": spec.label, "epsilon": epsilon, "n_points": n,
                     "total_ms": best_total / n * 1e3, "perturb_ms": best_perturb / n * 1e3})
    return pd.DataFrame(rows)
