"""Units of work behind the tables of docs/results.md, each a pure function of its arguments and the seed.

A *unit* is a hashable tuple ``(kind, *arguments)``; :func:`run_unit` computes it
from nothing but those arguments and the root seed, so any table cell can be
recomputed on its own (the per-cell seeds of :func:`tracs.evaluation.cell_seed` and
the keyed per-user streams of the perturbers make a cell independent of what else
runs).  Kinds:

``grid``       one (data set, method, ε) cell of :func:`tracs.evaluation.run_grid`
``total``      one cell with a budget per trajectory (``epsilon_per_trajectory=``)
``direction``  one ε of :func:`tracs.evaluation.direction_study` (all four schemes)
``loss``       L-SRR thresholds: exact worst-case loss, or the median group sizes
``data``       counts of a data set (users, points, venues, hotspots)
``lengths``    trajectory lengths of a data set spec
``denoised``   one grid cell with ``denoise=`` (:mod:`tracs.evaluation.denoised`): the AE raw
               (rounded to the venues) and of the denoised release (posterior mode over the
               venues, and the venue nearest the posterior mean)
``denoised-continuous``  one grid cell of a continuous space (not rounded) with ``denoise=``:
               the AE raw and of the posterior mean, and their ratio
``time``       :func:`tracs.evaluation.time_methods` (not reproducible: wall-clock)

Data sets are named by tuples too (see :func:`dataset`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from functools import lru_cache

import numpy as np

from tracs.estimate.expectation_maximisation import one_blas_thread

#: Figure 5's trajectory: nine points along y = 1 in S = [0, 2) × [0, 10)
LINE = [(0.2 * (i + 1), 1.0) for i in range(9)]


def _tag(value) -> int:
    import zlib

    return zlib.crc32(str(value).encode("utf-8"))


# ----------------------------------------------------------------------------- data sets


@lru_cache(maxsize=None)
def _checkins(name: str):
    from tracs.evaluation import load_dataset

    return load_dataset(name)


@lru_cache(maxsize=None)
def dataset(spec: tuple, seed: int):
    """The :class:`tracs.evaluation.Dataset` named by ``spec``.

    ``("region", name, trajectories, points)``: random uniform trajectories on a paper region;
    ``("checkins", name, start, stop[, min_points])``: trajectories ``start:stop`` of a
    check-in data set (``stop`` None: to the end) among those of at least ``min_points``
    points (default 1), over the whole set's public region and venues;
    ``("line", runs)``: Figure 5's trajectory, ``runs`` times (one key per copy);
    ``("lattice", g, points)``: a trajectory of ``points`` uniform points of the
    ``(g + 1) × (g + 1)`` grid of the unit square (drawn from ``seed``), the grid as POIs.
    """
    from tracs.evaluation import Dataset, continuous_dataset
    from tracs.region import Rectangle

    kind = spec[0]
    if kind == "region":
        return continuous_dataset(spec[1], trajectories=spec[2], points=spec[3])
    if kind == "checkins":
        full = _checkins(spec[1])
        start, stop = spec[2], spec[3]
        min_points = spec[4] if len(spec) > 4 else 1
        if start == 0 and stop is None and min_points <= 1:
            return full
        offsets = np.asarray(full.offsets)
        chosen = np.flatnonzero(np.diff(offsets) >= min_points)[start:stop]
        rows = np.concatenate([np.arange(offsets[t], offsets[t + 1]) for t in chosen])
        lengths = np.diff(offsets)[chosen]
        keys = None if full.keys is None else full.keys[chosen]
        return dataclasses.replace(full, coords=full.coords[rows], keys=keys, trajectories=None,
                                   offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    if kind == "line":
        runs = spec[1]
        coords = np.tile(np.asarray(LINE, dtype=np.float64), (runs, 1))
        offsets = np.arange(runs + 1, dtype=np.int64) * len(LINE)
        return Dataset(name="line", region=Rectangle(0.0, 0.0, 2.0, 10.0), offsets=offsets, coords=coords,
                       units="region units", normalise=False, keys=np.arange(runs))
    if kind == "lattice":
        g, points = spec[1], spec[2]
        axis = np.linspace(0.0, 1.0, g + 1)
        pois = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
        gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_tag("lattice-trajectory"), g)))
        coords = np.round(gen.random((points, 2)) * g) / g
        return Dataset(name=f"grid-{g}", region=Rectangle(0.0, 0.0, 1.0, 1.0),
                       offsets=np.array([0, points], dtype=np.int64), coords=coords, units="unit square",
                       pois=pois, normalise=False, keys=np.arange(1))
    raise ValueError(f"unknown data set spec {spec!r}")


# ----------------------------------------------------------------------------- kinds


def _grid(seed, spec, method, eps, reps, anchor, rounding, metrics, units):
    from tracs.evaluation import run_grid, summarise

    ds = dataset(spec, seed)
    runs = run_grid(ds, [method], [eps], repetitions=reps, seed=seed, anchor=anchor,
                    round_to_pois=rounding, metrics=list(metrics), units=units)
    row = summarise(runs).iloc[0]
    out = {"mean": float(row["ae_mean"]), "half": float(row["ae_ci_high"] - row["ae_ci_low"]) / 2,
           "normalised": float(row["ae_mean_normalised"]), "runs": runs["ae"].tolist(),
           "label": str(row["label"])}
    for metric in metrics:
        out[metric] = float(row[metric])
    return out


def _denoised(seed, spec, method, eps, reps, how):
    from tracs.evaluation import run_grid, summarise

    runs = run_grid(dataset(spec, seed), [method], [eps], repetitions=reps, seed=seed, denoise=how)
    row = summarise(runs).iloc[0]
    out = {}
    for key, column, mean in (("raw", "ae", "ae_mean"), ("mode", "ae_denoised", "ae_denoised"),
                              ("mean", "ae_denoised_mean", "ae_denoised_mean")):
        out[key] = {"mean": float(row[mean]), "half": float(row[f"{column}_ci_high"] - row[f"{column}_ci_low"]) / 2,
                    "runs": runs[column].tolist()}
    out["seconds"] = float(runs["denoise_seconds"].sum())
    return out


def _build_total(method, ctx, total):
    from tracs import baselines
    from tracs.perturbers import TraCSC, TraCSD

    if method == "tracs-d":
        return TraCSD(ctx.region, anchor=ctx.anchor, epsilon_per_trajectory=total)
    if method == "tracs-c":
        return TraCSC(ctx.region, epsilon_per_trajectory=total)
    cls, options = {"atp": ("ATP", {}), "ngram": ("NGram", {}), "lsrr": ("LSRR", {}),
                    "lsrr-thresholds": ("LSRR", {"grouping": "thresholds"})}[method]
    return getattr(baselines, cls)(ctx.poi_space, epsilon_per_trajectory=total, **options)


def _total(seed, spec, method, total, reps, anchor):
    """AE in degrees with ``total`` ε per trajectory, split evenly over its points; rounded to the venues."""
    from tracs.evaluation import MethodContext, cell_seed, confidence_interval
    from tracs.evaluation.extra_metrics import in_degrees
    from tracs.metrics import trajectory_errors

    ds = dataset(spec, seed)
    ctx = MethodContext(region=ds.region, pois=ds.pois, anchor=anchor)
    coords, offsets = ds.coords, np.asarray(ds.offsets)
    values = []
    for rep in range(reps):
        rng = np.random.default_rng(cell_seed(seed, f"{method}/per-trajectory", total, rep))
        try:
            perturber = _build_total(method, ctx, total)
            out = perturber.perturb_many(coords, offsets, rng=rng, keys=ds.keys)
        except ValueError as exc:  # a budget its sampler cannot realise faithfully: refused, said so
            return {"error": str(exc)}
        if method.startswith("tracs"):
            out = ctx.poi_space.round(out)[0]
        errors = trajectory_errors(in_degrees(coords, ds), in_degrees(np.asarray(out, dtype=np.float64), ds),
                                   offsets)
        values.append(float(np.mean(errors)))
    mean, low, high = confidence_interval(values)
    return {"mean": mean, "half": (high - low) / 2, "runs": values}


def _direction(seed, eps, samples, reps):
    from tracs.evaluation import confidence_interval, direction_study

    runs = direction_study([eps], samples=samples, repetitions=reps, seed=seed)
    out = {}
    for method, group in runs.groupby("method", sort=False):
        mean, low, high = confidence_interval(group["error"])
        out[method] = {"mean": mean, "half": (high - low) / 2, "exact": float(group["exact"].iloc[0]),
                       "runs": group["error"].tolist()}
    return out


@lru_cache(maxsize=None)
def _thresholds_model(name: str):
    from tracs.evaluation import METHODS, MethodContext

    data = _checkins(name)
    return METHODS["lsrr-thresholds"].build(MethodContext(region=data.region, pois=data.pois), 2.0)


def _loss(seed, name, what, eps=None):
    model = _thresholds_model(name)
    if what == "nominal":
        return {"value": float(model.privacy_loss(eps))}
    if what == "paper":  # the authors' code puts ε where e^ε belongs: the mechanism at ln ε
        return {"value": float(model.privacy_loss(math.log(eps)))}
    if what == "sizes":
        return {"median": np.median(model.group_sizes(), axis=0).astype(int).tolist()}
    raise ValueError(what)


def _data(seed, name):
    from tracs.evaluation import HOTSPOT_SHARE
    from tracs.query_metrics import hotspot_locations

    ds = _checkins(name)
    lengths = np.diff(np.asarray(ds.offsets))
    width = ds.region.xmax - ds.region.xmin
    height = ds.region.ymax - ds.region.ymin
    return {"users": int(ds.n_trajectories), "points": int(ds.n_points), "venues": int(len(ds.pois)),
            "hotspots": int(len(hotspot_locations(ds.coords, HOTSPOT_SHARE))),
            "mean_length": float(lengths.mean()), "max_length": int(lengths.max()),
            "region_km": (width / 1e3, height / 1e3)}


def _lengths(seed, spec):
    """Trajectory lengths of a data set: mean, and the mean of 1/n (the mean share of a point)."""
    lengths = np.diff(np.asarray(dataset(spec, seed).offsets)).astype(np.float64)
    return {"trajectories": len(lengths), "mean": float(lengths.mean()), "mean_inverse": float(np.mean(1 / lengths))}


def _time(seed, name, methods, eps, repeat, stop):
    from tracs.evaluation import time_methods

    ds = dataset(("checkins", name, 0, stop), seed)
    table = time_methods(ds, list(methods), eps, repeat=repeat, seed=seed)
    return {row.method: {"total": float(row.total_ms), "perturb": float(row.perturb_ms)}
            for row in table.itertuples()}


KINDS = {"grid": _grid, "denoised": _denoised, "total": _total, "direction": _direction, "loss": _loss, "data": _data,
         "lengths": _lengths, "time": _time}
#: kinds whose values are wall-clock measurements: never compared by a test
NOT_REPRODUCIBLE = {"time"}


def run_unit(unit: tuple, seed: int):
    """Compute one unit; the result depends only on ``unit`` and ``seed``."""
    return KINDS[unit[0]](seed, *unit[1:])


def _spec_name(spec: tuple) -> str:
    return {"line": "figure-5 line", "lattice": f"grid {spec[1]}"}.get(spec[0], str(spec[1]))


def describe(unit: tuple) -> str:
    kind, *args = unit
    if kind in ("grid", "denoised", "denoised-continuous"):
        spec, method, eps = args[:3]
        return f"{_spec_name(spec)} {method} ε={eps:g}" + (f" denoised ({args[-1]}) ×{args[3]}" if kind != "grid" else "")
    if kind == "total":
        return f"{_spec_name(args[0])} {args[1]} ε_total={args[2]:g}"
    return " ".join(str(a) for a in unit if not isinstance(a, tuple))


#: relative cost of denoising one point of a release, per method (measured on CHI and TKY, ε = 1 … 10):
#: TraCS-C's grid and smoothing cost most; TraCS-D's reports equal to their reference and planar
#: Laplace's fit can cost far more
DENOISE_COST = {"tracs-d": 4.0, "planar-laplace": 10.0, "tracs-c": 3.0, "strawman": 1.0, "ngram": 2.0, "atp": 2.0}


def cost(unit: tuple, seed: int) -> float:
    """A rough relative cost of a unit (points × repetitions, times a method's factor when denoised), to
    start the costliest first; 0 for the kinds that take seconds."""
    kind = unit[0]
    if kind not in ("grid", "denoised", "denoised-continuous"):
        return 0.0
    spec, method, _, reps = unit[1:5]
    points = spec[2] * spec[3] if spec[0] == "region" else int(np.asarray(dataset(spec, seed).offsets)[-1])
    factor = DENOISE_COST.get(method, 1.0) if kind != "grid" else 0.01
    return factor * points * reps


_blas_limit = None


def worker_blas() -> None:
    """A worker process's BLAS on one thread from its start: the workers share the cores (threaded
    BLAS in each only waits), and the sums' order is that of a run with one worker."""
    global _blas_limit
    _blas_limit = one_blas_thread()


def timed(unit: tuple, seed: int):
    start = time.perf_counter()
    value = run_unit(unit, seed)
    return unit, value, time.perf_counter() - start


def _denoised_continuous(seed, spec, method, eps, reps, anchor, units, how):
    """AE of the raw release (not rounded) and of its posterior mean (``run_grid(..., denoise=how)``),
    each ``{"mean", "half", "runs"}``, and ``ratio``: the mean denoised AE over the mean raw AE."""
    from tracs.evaluation import confidence_interval, run_grid

    runs = run_grid(dataset(spec, seed), [method], [eps], repetitions=reps, seed=seed, anchor=anchor,
                    round_to_pois=False, units=units, denoise=how)
    out = {}
    for key, column in (("raw", "ae"), ("denoised", "ae_denoised")):
        mean, low, high = confidence_interval(runs[column])
        out[key] = {"mean": mean, "half": (high - low) / 2, "runs": runs[column].tolist()}
    out["ratio"] = out["denoised"]["mean"] / out["raw"]["mean"]
    out["seconds"] = float(runs["denoise_seconds"].sum())
    return out


KINDS["denoised-continuous"] = _denoised_continuous
