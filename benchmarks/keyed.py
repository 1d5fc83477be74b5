"""Cost of per-user keyed randomness: keyed streams against NumPy's generator, same kernels.

Workload: uniform points in ``[0, 2000] × [0, 10000]`` metres, ε = 4 per point,
trajectories of 100 points, one user id (a string) per trajectory; 10^6 points
(10^5 with ``--quick``).  For each continuous perturber, ``keyed`` is
``perturb_many(..., keys=user_ids)`` (streams hashed from the ids, Philox draws per
point) and ``numpy`` runs the very same kernels fed by ``numpy.random.Generator``
blocks (the shared-generator randomness this replaced, which is not per-user
independent).  ``ratio`` = keyed time / numpy time, measured in the same run (CPU
time of this process, best of 3).  ``keys/s``: user ids hashed into streams per second.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from benchmarks._timing import best_time
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.perturbers._base import CHUNK, batch_streams
from tracs.region import Rectangle

EPSILON = 4.0


class _NumpyBlocks:
    """The kernels' uniforms from one shared NumPy generator (the reference to compare with)."""

    def __init__(self, width: int, seed: int = 0):
        self.width, self.rng = width, np.random.default_rng(seed)

    def block(self, start, stop, buffer=None):
        return self.rng.random((stop - start, self.width))


def _peak(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def run(quick: bool = False) -> None:
    n = 100_000 if quick else 1_000_000
    length = 100
    region = Rectangle(0.0, 0.0, 2000.0, 10000.0)
    pts = np.random.default_rng(0).uniform((0, 0), (2000, 10000), (n, 2))
    offsets = np.arange(0, n + 1, length)
    users = [f"user-{t}" for t in range(len(offsets) - 1)]
    clock = time.process_time
    streams_s = best_time(lambda: batch_streams(1, users, len(users)), clock=clock)
    print(f"\n## keyed randomness ({n:,} points, {len(users):,} users, ε = {EPSILON:g}, CPU time, one core)")
    print(f"user ids hashed into streams: {len(users) / streams_s:,.0f} keys/s")
    header = f"{'perturber':<16} {'keyed pts/s':>14} {'numpy pts/s':>14} {'ratio':>7} {'keyed peak B/pt':>16}"
    print(header)
    print("-" * len(header))
    for name, perturber in (("TraCS-D", TraCSD(region, EPSILON)), ("TraCS-C", TraCSC(region, EPSILON)),
                            ("Strawman", Strawman(region, EPSILON)),
                            ("PlanarLaplace", PlanarLaplace(region, EPSILON))):
        perturber.perturb_many(pts[:1000], offsets[:11], rng=1, keys=users[:10])  # compile
        keyed = best_time(lambda: perturber.perturb_many(pts, offsets, rng=1, keys=users), clock=clock)
        numpy_fed = best_time(lambda: perturber._run(pts, offsets, _NumpyBlocks(perturber.uniforms_per_point)),
                              clock=clock)
        peak = _peak(lambda: perturber.perturb_many(pts, offsets, rng=1, keys=users)) / n
        print(f"{name:<16} {n / keyed:14,.0f} {n / numpy_fed:14,.0f} {keyed / numpy_fed:7.2f} {peak:16.1f}")
    print(f"(uniforms are made {CHUNK:,} points at a time; the numpy column skips validation and "
          "stream hashing, so the ratio bounds the whole cost of keying)")
