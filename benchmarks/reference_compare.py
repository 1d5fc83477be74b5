"""tracs against the reference implementation's per-point structure, and against DP libraries.

``python -m benchmarks reference [--quick]``.  In the same run:

* TraCS-D, TraCS-C and POI rounding of :mod:`benchmarks.reference` (one Python
  iteration per point, NumPy / ``math`` scalar calls and ``random.uniform`` inside,
  as in the authors' published code) on 2,000 points (500 with ``--quick``),
  against tracs on 10^6 points (10^5) in trajectories of 100, on one worker and
  on every core.  Region 20 km × 10 km, ε = 4 per point, 10^4 uniform POIs.
* One-dimensional Laplace and staircase noise: ``tracs.mechanisms`` against the
  same mechanisms in OpenDP (exact, vectorised measurement) and diffprivlib
  (``randomise`` per value), where those libraries import.  They are optional
  (``pip install opendp diffprivlib``); a row says why it is missing.  The
  libraries' samplers give different guarantees from tracs' (OpenDP samples
  exactly on the floating-point grid, for example): the figures compare speed,
  not equivalence.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks._record import record
from benchmarks._timing import best_time
from benchmarks.reference import round_loop, tracs_c_loop, tracs_d_loop
from tracs import engine
from tracs.poi_space import POISpace
from tracs.mechanisms import Laplace, Staircase
from tracs.perturbers import TraCSC, TraCSD
from tracs.region import Rectangle

EPSILON = 4.0
REGION = Rectangle(0.0, 0.0, 20_000.0, 10_000.0)
#: filled by :func:`run`: name -> dict of rates and ratios, for the docs
TABLE: dict[str, dict] = {}


def _loop_rate(fn, n) -> float:
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def _row(name, rate, ref_rate, ref_label, note=""):
    ratio = rate / ref_rate if ref_rate else float("nan")
    prev = record(f"reference / {name}", rate, "items/s")
    TABLE[name] = {"rate": rate, "reference_rate": ref_rate, "ratio": ratio, "reference": ref_label,
                   "note": note}
    ref_text = f"{ref_rate:14,.0f}" if ref_rate else f"{'-':>14}"
    ratio_text = f"{ratio:9,.0f}x" if ref_rate else f"{'-':>10}"
    print(f"{name:<34} {rate:14,.0f} {ref_text} {ratio_text} {prev:>8}  {ref_label}{note}")


def _library_rows(quick: bool) -> None:
    n = 100_000 if quick else 1_000_000
    x = np.full(n, 0.5)
    lap, stair = Laplace(epsilon=1.0), Staircase(epsilon=1.0)
    lap_rate = n / best_time(lambda: lap.sample(x, rng=0))
    stair_rate = n / best_time(lambda: stair.sample(x, rng=0))
    m = 20_000 if quick else 100_000
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
        meas = space >> dp.m.then_laplace(scale=1.0)
        values = [0.5] * m
        _row("Laplace (tracs vs OpenDP)", lap_rate, _loop_rate(lambda: meas(values), m),
             f"OpenDP {dp.__name__.split('.')[0]} vectorised then_laplace")
    except Exception as exc:  # optional library: say why it is absent
        _row("Laplace (tracs vs OpenDP)", lap_rate, 0.0, f"OpenDP unavailable: {type(exc).__name__}: {exc}"[:90])
    try:
        from diffprivlib.mechanisms import Laplace as DPLaplace
        from diffprivlib.mechanisms import Staircase as DPStaircase

        k = 5_000 if quick else 20_000
        dl = DPLaplace(epsilon=1.0, sensitivity=1.0)
        ds = DPStaircase(epsilon=1.0, sensitivity=1.0)
        _row("Laplace (tracs vs diffprivlib)", lap_rate,
             _loop_rate(lambda: [dl.randomise(0.5) for _ in range(k)], k), "diffprivlib randomise per value")
        _row("staircase (tracs vs diffprivlib)", stair_rate,
             _loop_rate(lambda: [ds.randomise(0.5) for _ in range(k)], k), "diffprivlib randomise per value")
    except Exception as exc:
        reason = f"diffprivlib unavailable: {type(exc).__name__}: {exc}"[:90]
        _row("Laplace (tracs vs diffprivlib)", lap_rate, 0.0, reason)
        _row("staircase (tracs vs diffprivlib)", stair_rate, 0.0, reason)


def run(quick: bool = False) -> None:
    n = 100_000 if quick else 1_000_000
    n_ref = 500 if quick else 2_000
    repeat = 1 if quick else 3
    rng = np.random.default_rng(0)
    pts = rng.uniform((0, 0), (20_000, 10_000), (n, 2))
    offsets = np.arange(0, n + 1, 100, dtype=np.int64)
    keys = np.arange(len(offsets) - 1)
    pois = POISpace(rng.uniform((0, 0), (20_000, 10_000), (10_000, 2)), region=REGION)
    bounds = REGION.bounds
    sample = pts[:n_ref]
    cores = os.cpu_count() or 1
    print("\n## reference implementation structure (per-point Python loop) and DP libraries, same run")
    header = (f"{'name':<34} {'tracs items/s':>14} {'reference/s':>14} {'ratio':>10} {'vs prev':>8}  "
              "reference")
    print(header)
    print("-" * len(header))
    tracsd, tracsc = TraCSD(REGION, EPSILON), TraCSC(REGION, EPSILON)
    ref_d = _loop_rate(lambda: [tracs_d_loop(sample[i:i + 100], EPSILON, bounds)
                                for i in range(0, n_ref, 100)], n_ref)
    ref_c = _loop_rate(lambda: [tracs_c_loop(sample[i:i + 100], EPSILON, bounds)
                                for i in range(0, n_ref, 100)], n_ref)
    ref_r = _loop_rate(lambda: round_loop(sample, pois.points), n_ref)
    label = f"benchmarks.reference, {n_ref:,} points"
    for workers in sorted({1, cores}):
        suffix = "1 worker" if workers == 1 else f"{workers} workers"
        rate_d = n / best_time(lambda: engine.perturb_many(tracsd, pts, offsets, rng=1, keys=keys,
                                                           workers=workers), repeat=repeat)
        rate_c = n / best_time(lambda: engine.perturb_many(tracsc, pts, offsets, rng=1, keys=keys,
                                                           workers=workers), repeat=repeat)
        rate_r = n / best_time(lambda: engine.round_points(pois, pts, workers=workers), repeat=repeat)
        _row(f"TraCS-D, {suffix}", rate_d, ref_d, label)
        _row(f"TraCS-C, {suffix}", rate_c, ref_c, label)
        _row(f"rounding to 10^4 POIs, {suffix}", rate_r, ref_r, label)
    _library_rows(quick)
