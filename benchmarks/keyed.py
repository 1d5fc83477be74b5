"""Cost of per-user keyed randomness: streams keyed by user ids against streams by position.

Workload: uniform points in ``[0, 2000] × [0, 10000]`` metres, ε = 4 per point,
trajectories of 100 points (10^6 points; 10^5 with ``--quick``); discrete methods on
2,000 uniform POIs, 5·10^4 points (5·10^3; TP and ATP, at ε = 1, a tenth of that),
trajectories of 20 points.  ``user keys`` is ``perturb_many(..., keys=ids)`` with one
string id per trajectory (what the command line does: every user's release
independent of the others); ``positions``
is ``perturb_many(...)`` without keys (streams by position in the call).  Both run
the same kernels, which draw every word on demand from the point's stream; the
ratio is the cost of deriving streams from user ids, measured in the same run (CPU
time of this process, best of 3).  ``keys/s``: user ids hashed into streams per second.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._timing import best_time
from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.poi_space import POISpace
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.perturbers._base import batch_streams
from tracs.region import Rectangle

EPSILON = 4.0


def run(quick: bool = False) -> None:
    n = 100_000 if quick else 1_000_000
    n_disc = 5_000 if quick else 50_000
    region = Rectangle(0.0, 0.0, 2000.0, 10000.0)
    rng = np.random.default_rng(0)
    pts = rng.uniform((0, 0), (2000, 10000), (n, 2))
    offsets = np.arange(0, n + 1, 100)
    pois = POISpace(rng.uniform((0, 0), (2000, 10000), (2000, 2)), region=region)
    disc = pois.points[rng.integers(0, len(pois), n_disc)]
    disc_offsets = np.arange(0, n_disc + 1, 20)
    clock = time.process_time
    users = [f"user-{t}" for t in range(len(offsets) - 1)]
    streams_s = best_time(lambda: batch_streams(1, users, len(users)), clock=clock)
    print(f"\n## keyed randomness (ε = {EPSILON:g}, CPU time, one core)")
    print(f"user ids hashed into streams: {len(users) / streams_s:,.0f} keys/s")
    header = f"{'method':<16} {'points':>10} {'user keys pts/s':>16} {'positions pts/s':>16} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    cases = [("TraCS-D", TraCSD(region, EPSILON), pts, offsets), ("TraCS-C", TraCSC(region, EPSILON), pts, offsets),
             ("Strawman", Strawman(region, EPSILON), pts, offsets),
             ("PlanarLaplace", PlanarLaplace(region, EPSILON), pts, offsets),
             ("EM", ExponentialMechanism(pois, EPSILON), disc, disc_offsets),
             ("NGram", NGram(pois, EPSILON), disc, disc_offsets), ("L-SRR", LSRR(pois, EPSILON), disc, disc_offsets),
             ("TP", TP(pois, 1.0), disc[: n_disc // 10], disc_offsets[: len(disc_offsets) // 10 + 1]),
             ("ATP", ATP(pois, 1.0), disc[: n_disc // 10], disc_offsets[: len(disc_offsets) // 10 + 1])]
    for name, method, coords, offs in cases:
        ids = [f"user-{t}" for t in range(len(offs) - 1)]
        method.perturb_many(coords[:100], offs[offs <= 100], rng=1)  # compile
        keyed = best_time(lambda: method.perturb_many(coords, offs, rng=1, keys=ids), clock=clock)
        positions = best_time(lambda: method.perturb_many(coords, offs, rng=1), clock=clock)
        m = int(offs[-1])
        print(f"{name:<16} {m:10,} {m / keyed:16,.0f} {m / positions:16,.0f} {keyed / positions:7.2f}")
