"""Density estimation from reports: seconds and peak memory against the targets.

Targets (one core): 10^6 TraCS-C reports on 64×64 in ≤ 5 s; 10^6 TraCS-D reports
on 32×32 in ≤ 60 s and ≤ 8 GB.  Reports come from uniform-mixture points in the
unit square (trajectories of 100 points).  Peak memory is the process's maximum
resident set size after each run (``resource.getrusage``; it never decreases, so
the TraCS-D figure, run last, is the peak of the whole section).  The reports of
the same run also give the EM passes and the ratio TraCS-D / TraCS-C.  ``CPU s`` is the
process's CPU time for the fit (``time.process_time``): on a shared machine it is
the better measure of the work done (one thread: it can only exceed the wall time
through library threads).
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

from tracs import Rectangle
from tracs.estimate import density
from tracs.perturbers import TraCSC, TraCSD

TARGETS = {"tracs-c": 5.0, "tracs-d": 60.0}


def _peak_gb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1 << 30) if sys.platform == "darwin" else kb / (1 << 20)


def _points(n, rng):
    c = np.where(rng.random(n)[:, None] < 0.5, [0.3, 0.3], [0.7, 0.6])
    return np.clip(c + rng.normal(0, 0.1, (n, 2)), 0.0, 1.0)


def run(quick: bool = False) -> None:
    n = 20_000 if quick else 1_000_000
    region = Rectangle(0.0, 0.0, 1.0, 1.0)
    rng = np.random.default_rng(0)
    pts = _points(n, rng)
    off = np.arange(0, n + 1, 100)
    print(f"\n## estimate ({n:,} reports, ε = 2 per point)")
    print(f"{'method':<10}{'grid':>8}{'seconds':>10}{'CPU s':>8}{'reports/s':>14}{'EM passes':>11}"
          f"{'peak GB':>9}{'target s':>10}")
    for name, pert, grid in (("tracs-c", TraCSC(region, 2.0), 64), ("tracs-d", TraCSD(region, 2.0), 32)):
        rep = pert.perturb_many(pts, off, rng=1)
        if name == "tracs-d":  # compile outside the timing
            density(rep[:200], pert, offsets=np.array([0, 200]), grid=grid)
        start, cpu = time.perf_counter(), time.process_time()
        est = density(rep, pert, offsets=off, grid=grid)
        sec, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"{name:<10}{grid:>5}²{'':>2}{sec:>10.2f}{cpu:>8.2f}{n / sec:>14,.0f}{est.iterations:>11}"
              f"{_peak_gb():>9.2f}{TARGETS[name]:>10.0f}")
