"""Perturber throughput: points per second on one core, against a naive per-point loop.

Workloads: uniform points in ``[0, 2] × [0, 10]``, ε = 4 per point, many
trajectories of 100 points (10^7 points; 10^5 with ``--quick``), and TraCS-D on
a single trajectory of 10^6 points.  The naive loop perturbs one point at a
time with the library's public per-point calls (region geometry and the 1-D
mechanisms), the way straightforward code would; it runs on a small sample and
its rate is extrapolated.  ``peak B/pt`` is the peak of memory allocated during
the call (tracemalloc, which numpy reports to), divided by the number of points:
the caller's input is not counted, the returned array (16 B/pt) is.  ``cpu`` is
the rate in CPU time of the process (one call after a warm-up), which other
processes sharing the machine do not distort as they do the wall-clock rate.
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks._timing import Row, best_time, peak_bytes, print_table
from tracs.mechanisms import OptimalCircular, OptimalClassical
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.region import ConvexRegion, Rectangle

EPSILON = 4.0


def _points(region, n, seed=0):
    rng = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = region.bounds
    pts = rng.uniform((xmin, ymin), (xmax, ymax), (n, 2))
    inside = region.contains(pts)
    if not inside.all():  # a polygon: replace the points outside by its centre
        pts[~inside] = region.center
    return pts


def _naive_tracsd(region, pts, rng):
    """Per-point TraCS-D with the public per-point calls (the baseline to beat)."""
    share = math.pi / (math.pi + 1)
    circ = OptimalCircular(epsilon=share * EPSILON)
    lin = OptimalClassical(epsilon=(1 - share) * EPSILON)
    ref = np.array(region.center)
    out = np.empty_like(pts)
    for i in range(len(pts)):
        phi, u = region.direction_distance(ref[None], pts[i:i + 1])
        phi2 = circ.sample(phi, rng=rng)
        u2 = lin.sample(u, rng=rng)
        reach = u2 * region.exit_distance(ref[None], phi2)
        ref = region.clip(ref + reach[:, None] * np.column_stack([np.cos(phi2), np.sin(phi2)]))[0]
        out[i] = ref
    return out


def _naive_tracsc(region, pts, rng):
    xmin, ymin, xmax, ymax = region.bounds
    mx = OptimalClassical(epsilon=EPSILON / 2, low=xmin, high=xmax)
    my = OptimalClassical(epsilon=EPSILON / 2, low=ymin, high=ymax)
    out = np.empty_like(pts)
    for i in range(len(pts)):
        out[i, 0] = mx.sample(pts[i, 0], rng=rng)
        out[i, 1] = my.sample(pts[i, 1], rng=rng)
    return out


def _naive_laplace(region, pts, rng):
    scale = region.diameter / EPSILON
    out = np.empty_like(pts)
    for i in range(len(pts)):
        r = rng.gamma(2.0, scale)
        a = rng.uniform(0, 2 * math.pi)
        out[i] = region.clip(pts[i] + r * np.array([math.cos(a), math.sin(a)]))
    return out


def _peak_bytes_per_point(fn, n: int) -> float:
    return peak_bytes(fn) / n


def _naive_rate(naive, region, n_naive):
    if naive is None:
        return 0, 0.0
    pts = _points(region, n_naive, seed=1)
    rng = np.random.default_rng(2)
    start = time.perf_counter()
    naive(region, pts, rng)
    return n_naive, time.perf_counter() - start


def run(quick: bool = False) -> None:
    tall = Rectangle(0, 0, 2, 10)
    hexagon = ConvexRegion([(1 + math.cos(a), 5 + 5 * math.sin(a)) for a in np.arange(6) * math.pi / 3])
    n_many = 100_000 if quick else 10_000_000
    n_single = 100_000 if quick else 1_000_000
    n_naive = 300 if quick else 2_000
    repeat = 1 if quick else 3
    workloads = [
        # name, region, perturber, points, trajectory length, naive loop, extra call kwargs
        ("TraCS-C (many)", tall, TraCSC(tall, EPSILON), n_many, 100, _naive_tracsc, {}),
        ("TraCS-D (many)", tall, TraCSD(tall, EPSILON), n_many, 100, _naive_tracsd, {}),
        ("TraCS-D (single trajectory)", tall, TraCSD(tall, EPSILON), n_single, n_single, _naive_tracsd, {}),
        ("TraCS-D (many, hexagon)", hexagon, TraCSD(hexagon, EPSILON), n_many // 10, 100, None, {}),
        ("TraCS-D (many, optimal split)", tall, TraCSD(tall, EPSILON, direction_share="optimal"),
         n_many // 10, 100, None, {}),
        ("Strawman (many)", tall, Strawman(tall, EPSILON), n_many, 100, None, {}),
        ("PlanarLaplace (many)", tall, PlanarLaplace(tall, EPSILON), n_many, 100, _naive_laplace, {}),
    ]
    rows = []
    naive_cache = {}
    for name, region, perturber, n, length, naive, kwargs in workloads:
        pts = _points(region, n)
        offsets = np.arange(0, n + 1, length)
        perturber.perturb_many(pts[:1000], np.arange(0, 1001, min(length, 1000)), rng=0)  # compile
        call = lambda: perturber.perturb_many(pts, offsets, rng=0, **kwargs)  # noqa: E731
        seconds = best_time(call, repeat=repeat)
        cpu = best_time(call, repeat=1, clock=time.process_time)
        peak = _peak_bytes_per_point(call, n)
        key = naive.__name__ if naive else None
        if key not in naive_cache:
            naive_cache[key] = _naive_rate(naive, region, n_naive)
        naive_items, naive_seconds = naive_cache[key]
        rows.append(Row(name, n, seconds, naive_items, naive_seconds,
                        extra=f"cpu {n / cpu / 1e6:6.2f} M/s, peak {peak:5.1f} B/pt"))
        pts = offsets = None  # free the workload before the next one
    rows += _earlier_rows(tall, rows, n_many, repeat)
    print_table("perturbers (ε = 4 per point, one core)", rows, unit="points")


def _earlier_rows(region, rows, n, repeat):
    """The samplers before the lattice and keyed streams (raw doubles, numpy's generator), same
    workload: TraCS-C, TraCS-D, the Strawman and planar Laplace (``benchmarks/reference/continuous.py``)."""
    from benchmarks.reference.continuous import continuous_planar_laplace, continuous_sequential, continuous_tracsc

    pts, bbox, rng = _points(region, n), np.array(region.bounds, dtype=np.float64), np.random.default_rng(0)
    offsets = np.arange(0, n + 1, 100)
    share = TraCSD(region, EPSILON).direction_share
    samplers = (("TraCS-C (many)", lambda p: continuous_tracsc(p, bbox, EPSILON, rng)),
                ("TraCS-D (many)", lambda p: continuous_sequential(p, offsets[offsets <= len(p)], bbox, EPSILON,
                                                                   rng, share)),
                ("Strawman (many)", lambda p: continuous_sequential(p, offsets[offsets <= len(p)], bbox, EPSILON,
                                                                    rng, share, sectors=6)),
                ("PlanarLaplace (many)", lambda p: continuous_planar_laplace(p, bbox, EPSILON, rng)))
    out = []
    for name, fn in samplers:
        fn(pts[:1000])  # compile
        call = lambda: fn(pts)  # noqa: E731
        seconds = best_time(call, repeat=repeat)
        cpu = best_time(call, repeat=1, clock=time.process_time)
        now = next(row for row in rows if row.name == name)
        out.append(Row(f"  {name.split(' (')[0]}, continuous (before the lattice)", n, seconds,
                       extra=f"cpu {n / cpu / 1e6:6.2f} M/s; lattice rate / continuous rate = "
                             f"{seconds / now.seconds:.2f}×"))
    return out
