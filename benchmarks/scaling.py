"""Scaling over cores: the same batch on 1, 2, 4, … up to ``os.cpu_count()`` workers.

``python -m benchmarks scaling [--quick]``.  Workloads (10^7 points, 10^5 with
``--quick``; uniform points in a 20 km × 10 km box, ε = 4 per point, 10^5 users
with one trajectory of 100 points each, keyed by user id):

* TraCS-C and TraCS-D: :func:`tracs.engine.perturb_many`; TraCS-C once more with text
  user ids (``"u0000000"``, …) instead of integers;
* rounding: :func:`tracs.engine.round_points`, 10^6 points (10^5) to 10^4 POIs;
* error: :func:`tracs.engine.average_error` of 10^7 released points;
* pipeline: TraCS-D, then rounding to 10^4 POIs, then the average error.

Every figure is the best of 3 wall-clock runs (1 with ``--quick``) and every
output is checked to be bit-identical to the 1-worker output.  ``peak MB`` is the
peak of memory allocated during one call (tracemalloc; compiled kernels'
scratch is not traced).

The *serial share* of a workload is measured directly: one 1-worker call runs
under :func:`tracs.engine._account.account`, which times on its own every step the
engine runs on the calling thread alone (each named: shape checks, the keys'
canonical bytes, the mean over trajectories, …) and every parallel task; the rest
of the call's CPU time (Python between the steps) is the step ``glue``.  Each
serial step's share of the 1-worker CPU time is printed, and a line flags any step
above :data:`SERIAL_LIMIT` (2 %).  The *serial fraction* ``f`` is also estimated
from the measured speed-up ``S(p)`` at the largest ``p`` by the Karp–Flatt metric
``f = (1/S − 1/p) / (1 − 1/p)``; Amdahl's law ``S(p) = 1 / (f + (1 − f)/p)`` then
predicts 8 and 16 cores.  On a machine shared with other jobs the measured
speed-up is a lower bound (and ``f`` an upper bound): compare the load average
printed with the table.  ``cpu s`` is the CPU time of one call (all threads), which
other jobs do not inflate; the *free-core estimate* is ``cpu(1) / (s + (cpu(p) −
s)/p)`` with ``s`` the measured serial CPU time: the speed-up the same work would
reach if ``p`` cores were free (an estimate, labelled as such, not a measurement).
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
from tracs.engine._account import PARALLEL, account
from tracs.region import Rectangle

EPSILON = 4.0
REGION = Rectangle(0.0, 0.0, 20_000.0, 10_000.0)
#: the largest share of the 1-worker CPU time any one serial step may take
SERIAL_LIMIT = 0.02
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
    names = [f"u{k:07d}" for k in range(len(offsets) - 1)]  # text ids, as a CSV column gives them
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
        "TraCS-C, text user ids": (n, "points", lambda w: engine.perturb_many(tracsc, pts, offsets, rng=1,
                                                                             keys=names, workers=w)),
        "TraCS-D": (n, "points", lambda w: engine.perturb_many(tracsd, pts, offsets, rng=1, keys=users,
                                                               workers=w)),
        "rounding (10^4 POIs)": (len(queries), "points", lambda w: engine.round_points(pois, queries,
                                                                                     workers=w)),
        "average error": (n, "points", lambda w: engine.average_error(pts, released, offsets, workers=w)),
        "pipeline (TraCS-D + rounding + error)": (n, "points", pipeline),
    }, (users, len(offsets) - 1)


def serial_steps(call) -> tuple[float, dict[str, float]]:
    """``(cpu seconds, {serial step: cpu seconds})`` of one 1-worker ``call(1)``.

    The steps are those the engine marks as serial, plus ``glue``: the call's CPU
    time outside every marked step and parallel task.
    """
    with account() as record:
        start = time.process_time()
        call(1)
        total = time.process_time() - start
    steps = {name: seconds for name, seconds in record.items() if name != PARALLEL}
    steps["glue"] = max(0.0, total - record.get(PARALLEL, 0.0) - sum(steps.values()))
    return total, steps


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
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n## scaling over cores ({n:,} points, {n_traj:,} users; workers {counts}; "
          f"load average {load:.2f} at start)")
    header = (f"{'workload':<38} {'workers':>7} {'items/s':>14} {'speed-up':>9} {'vs prev':>8} "
              f"{'peak MB':>8} {'cpu s':>7} {'free-core est.':>14}  same as 1 worker")
    print(header)
    print("-" * len(header))
    flagged = []
    for name, (items, unit, call) in workloads.items():
        call(1)  # compile and warm up
        reference = call(1)
        total, steps = min((serial_steps(call) for _ in range(repeat)), key=lambda r: r[0])
        serial = sum(steps.values())
        rates, peaks, cpu, estimate = {}, {}, {}, {}
        for w in counts:
            seconds = best_time(lambda: call(w), repeat=repeat)
            rates[w] = items / seconds
            peaks[w] = _peak_mb(lambda: call(w))
            cpu[w] = best_time(lambda: call(w), repeat=1, clock=time.process_time)
            # if w cores were free: the serial steps, then the rest of the CPU time spread over w cores
            estimate[w] = cpu[1] / (min(serial, cpu[1]) + max(cpu[w] - serial, 0.0) / w)
            same = _same(call(w), reference) if w > 1 else True
            speedup = rates[w] / rates[1]
            prev = record(f"scaling / {name} / {w} workers", rates[w], f"{unit}/s")
            print(f"{name:<38} {w:>7} {rates[w]:14,.0f} {speedup:9.2f} {prev:>8} {peaks[w]:8.0f} "
                  f"{cpu[w]:7.2f} {estimate[w]:13.2f}x  {'yes' if same else 'NO'}")
            if not same:
                raise AssertionError(f"{name}: {w} workers differ from 1 worker")
        shares = {step: seconds / total for step, seconds in steps.items()}
        top = counts[-1]
        entry = {"rates": rates, "peak_mb": peaks, "items": items, "unit": unit, "cpu": cpu,
                 "estimate": estimate, "serial_share": serial / total, "serial_steps": shares}
        detail = ", ".join(f"{step} {share:.2%}" for step, share in sorted(shares.items(), key=lambda kv: -kv[1]))
        print(f"{'':<38} serial share of the 1-worker CPU time {serial / total:.2%} ({detail}) -> Amdahl "
              f"{amdahl(serial / total, 16):.1f}x at 16 cores")
        if top > 1:
            f = min(1.0, max(0.0, karp_flatt(rates[top] / rates[1], top)))
            entry.update(serial_fraction=f, predicted={8: amdahl(f, 8), 16: amdahl(f, 16)})
            print(f"{'':<38} serial fraction {f:.3f} (Karp-Flatt at {top} workers, wall clock) -> "
                  f"predicted {amdahl(f, 8):.1f}x at 8 cores, {amdahl(f, 16):.1f}x at 16")
        flagged += [(name, step, share) for step, share in shares.items() if share > SERIAL_LIMIT]
        RESULTS[f"scaling / {name} / serial share"] = {"value": serial / total, "unit": ""}
        TABLE[name] = entry
    TABLE["_serial"] = {"load": load, "counts": counts, "flagged": flagged, "points": n, "users": n_traj}
    if flagged:
        for name, step, share in flagged:
            print(f"SERIAL STEP ABOVE {SERIAL_LIMIT:.0%}: {name}: {step} takes {share:.2%} of the 1-worker CPU time")
    else:
        print(f"no serial step above {SERIAL_LIMIT:.0%} of its workload's 1-worker CPU time")
