"""Scaling over cores: the same batch on 1, 2, 4, … up to ``os.cpu_count()`` workers.

``python -m benchmarks scaling [--quick]``.  Workloads (10^7 points, 10^5 with
``--quick``; uniform points in a 20 km × 10 km box, ε = 4 per point, 10^5 users
with one trajectory of 100 points each, keyed by user id):

* TraCS-C and TraCS-D: :func:`tracs.engine.perturb_many`;
* rounding: :func:`tracs.engine.round_points`, 10^6 points (10^5) to 10^4 POIs;
* error: :func:`tracs.engine.average_error` of 10^7 released points;
* pipeline: TraCS-D, then rounding to 10^4 POIs, then the average error.

Every figure is the best of 3 wall-clock runs (1 with ``--quick``) and every
output is checked to be bit-identical to the 1-worker output.  ``peak MB`` is the
peak of memory allocated during one call (tracemalloc; compiled kernels'
scratch is not traced).

The *serial fraction* ``f`` is estimated from the measured speed-up ``S(p)`` at the
largest ``p`` by the Karp–Flatt metric ``f = (1/S − 1/p) / (1 − 1/p)``, and also
measured directly as the share of the 1-worker time spent in the engine's serial
step (resolving every user's stream from its key, :mod:`tracs.engine._keys`).
Amdahl's law ``S(p) = 1 / (f + (1 − f)/p)`` then predicts 8 and 16 cores.  On a
machine shared with other jobs the measured speed-up (and hence ``f``) is a
lower bound: compare the load average printed with the table.  ``cpu s`` is the
CPU time of one call (all threads), which other jobs do not inflate; the
*free-core estimate* is ``cpu(1) / (s + (cpu(p) − s)/p)`` with ``s`` the CPU time
of the serial step: the speed-up the same work would reach if ``p`` cores were
free (an estimate, labelled as such, not a measurement).
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks._record import RESULTS, record
from benchmarks._timing import best_time, peak_bytes
from tracs import engine
from tracs.poi_space import POISpace
from tracs.perturbers import TraCSC, TraCSD
from tracs.engine._keys import fast_stream_ids
from tracs.region import Rectangle

EPSILON = 4.0
REGION = Rectangle(0.0, 0.0, 20_000.0, 10_000.0)
#: filled by :func:`run` for the docs: workload -> {"rates": {p: rate}, ...}
TABLE: dict[str, dict] = {}


def worker_counts(cores: int | None = None) -> list[int]:
    """1, 2, 4, … up to ``cores`` (and ``cores`` itself)."""
    cores = cores or os.cpu_count() or 1
    counts, p = [], 1
    while p < cores:
        counts.append(p)
        p *= 2
    return counts + [cores]


def amdahl(f: float, p: int) -> float:
    """Amdahl's speed-up on ``p`` cores for a serial fraction ``f``."""
    return 1.0 / (f + (1.0 - f) / p)


def karp_flatt(speedup: float, p: int) -> float:
    """The serial fraction implied by a measured speed-up on ``p`` cores."""
    return (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p)


def _peak_mb(fn) -> float:
    return peak_bytes(fn) / 1e6


def _workloads(n: int, n_round: int):
    rng = np.random.default_rng(0)
    pts = rng.uniform((0, 0), (20_000, 10_000), (n, 2))
    offsets = np.arange(0, n + 1, 100, dtype=np.int64)
    users = np.arange(len(offsets) - 1) + 1_000_000  # user ids
    pois = POISpace(rng.uniform((0, 0), (20_000, 10_000), (10_000, 2)), region=REGION)
    queries = pts[:n_round]
    tracsc, tracsd = TraCSC(REGION, EPSILON), TraCSD(REGION, EPSILON)
    released = tracsc.perturb_many(pts, offsets, rng=1, keys=users)

    def pipeline(w):
        out = engine.perturb_many(tracsd, pts, offsets, rng=1, keys=users, workers=w)
        rounded, _ = engine.round_points(pois, out, workers=w)
        return engine.average_error(pts, rounded, offsets, workers=w)

    return {
        "TraCS-C": (n, "points", lambda w: engine.perturb_many(tracsc, pts, offsets, rng=1, keys=users,
                                                               workers=w)),
        "TraCS-D": (n, "points", lambda w: engine.perturb_many(tracsd, pts, offsets, rng=1, keys=users,
                                                               workers=w)),
        "rounding (10^4 POIs)": (len(queries), "points", lambda w: engine.round_points(pois, queries,
                                                                                     workers=w)),
        "average error": (n, "points", lambda w: engine.average_error(pts, released, offsets, workers=w)),
        "pipeline (TraCS-D + rounding + error)": (n, "points", pipeline),
    }, (users, len(offsets) - 1)


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(a, b))


def run(quick: bool = False) -> None:
    n = 100_000 if quick else 10_000_000
    n_round = 100_000 if quick else 1_000_000
    repeat = 1 if quick else 3
    counts = worker_counts()
    workloads, (users, n_traj) = _workloads(n, n_round)
    fast_stream_ids(users, n_traj)  # compile
    start = time.process_time()
    fast_stream_ids(users, n_traj)  # on one thread: the serial fraction's upper bound
    serial_seconds = time.process_time() - start
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n## scaling over cores ({n:,} points, {n_traj:,} users; workers {counts}; "
          f"load average {load:.2f} at start)")
    header = (f"{'workload':<38} {'workers':>7} {'items/s':>14} {'speed-up':>9} {'vs prev':>8} "
              f"{'peak MB':>8} {'cpu s':>7} {'free-core est.':>14}  same as 1 worker")
    print(header)
    print("-" * len(header))
    for name, (items, unit, call) in workloads.items():
        call(1)  # compile and warm up
        reference = call(1)
        rates, peaks, cpu, estimate = {}, {}, {}, {}
        for w in counts:
            seconds = best_time(lambda: call(w), repeat=repeat)
            rates[w] = items / seconds
            peaks[w] = _peak_mb(lambda: call(w))
            cpu[w] = best_time(lambda: call(w), repeat=1, clock=time.process_time)
            # if w cores were free: the serial step, then the rest of the CPU time spread over w cores
            serial = min(serial_seconds, cpu[1]) if name.startswith(("TraCS", "pipeline")) else 0.0
            estimate[w] = cpu[1] / (serial + max(cpu[w] - serial, 0.0) / w)
            same = _same(call(w), reference) if w > 1 else True
            speedup = rates[w] / rates[1]
            prev = record(f"scaling / {name} / {w} workers", rates[w], f"{unit}/s")
            print(f"{name:<38} {w:>7} {rates[w]:14,.0f} {speedup:9.2f} {prev:>8} {peaks[w]:8.0f} "
                  f"{cpu[w]:7.2f} {estimate[w]:13.2f}x  {'yes' if same else 'NO'}")
            if not same:
                raise AssertionError(f"{name}: {w} workers differ from 1 worker")
        top = counts[-1]
        entry = {"rates": rates, "peak_mb": peaks, "items": items, "unit": unit, "cpu": cpu,
                 "estimate": estimate}
        if top > 1:
            f = min(1.0, max(0.0, karp_flatt(rates[top] / rates[1], top)))
            entry.update(serial_fraction=f, predicted={8: amdahl(f, 8), 16: amdahl(f, 16)})
            print(f"{'':<38} serial fraction {f:.3f} (Karp-Flatt at {top} workers) -> "
                  f"predicted {amdahl(f, 8):.1f}x at 8 cores, {amdahl(f, 16):.1f}x at 16")
        TABLE[name] = entry
    share = serial_seconds / TABLE["TraCS-C"]["cpu"][1]
    TABLE["_serial"] = {"stream_seconds": serial_seconds, "share_of_tracsc": share, "load": load,
                        "counts": counts}
    print(f"serial step (resolving {n_traj:,} users' streams from their keys): {serial_seconds:.3f} s CPU = "
          f"{share:.1%} of TraCS-C's 1-worker CPU time -> Amdahl bound {amdahl(share, 8):.1f}x at 8 cores, "
          f"{amdahl(share, 16):.1f}x at 16")
    RESULTS["scaling / serial step seconds"] = {"value": serial_seconds, "unit": "s"}
