"""Worker counts, chunks of whole trajectories, and an ordered thread pool.

The compiled kernels of tracs release the GIL (numba ``nogil=True``), and SciPy's
KD-tree queries and large NumPy operations do too, so threads of one process run
them on several cores without copying the data.  Work is cut into *contiguous*
chunks of whole trajectories and the results are put back in the input's order:
together with the per-trajectory keyed streams of :mod:`tracs.random`, the output
is bit for bit the same for any number of workers.
"""

from __future__ import annotations

import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError, InputTypeError
from ._account import timed_task

__all__ = ["resolve_workers", "trajectory_chunks", "point_chunks", "map_ordered", "CHUNKS_PER_WORKER",
           "MIN_CHUNK_POINTS"]

#: chunks per worker: a few, so that unequal chunks still keep every core busy
CHUNKS_PER_WORKER = 4
#: below this many points a chunk costs more in overhead than it saves
MIN_CHUNK_POINTS = 1 << 14


def resolve_workers(workers) -> int:
    """The number of threads for ``workers``: a positive int, or ``-1`` / ``None`` for all cores.

    Raises
    ------
    TypeError
        ``workers`` is not an integer (bools are refused).
    ValueError
        ``workers`` is 0 or below -1.
    """
    if workers is None or (isinstance(workers, numbers.Integral) and not isinstance(workers, bool)
                           and workers == -1):
        return max(1, os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise InputTypeError(f"workers must be a positive int, or -1 / None for all cores, "
                             f"got {type(workers).__name__}")
    if workers < 1:
        raise InputError(f"workers must be a positive int, or -1 / None for all cores, got {workers}")
    return int(workers)


def trajectory_chunks(offsets: np.ndarray, parts: int, min_points: int | None = None) -> list[tuple[int, int]]:
    """Cut trajectories ``0 … T-1`` into at most ``parts`` contiguous runs of similar point counts.

    Returns ``(t0, t1)`` pairs (trajectories ``t0 … t1-1``) covering every
    trajectory once, in order.  A trajectory is never split; a chunk holds at least
    ``min_points`` points (default :data:`MIN_CHUNK_POINTS`) unless the whole batch
    is smaller.
    """
    min_points = MIN_CHUNK_POINTS if min_points is None else min_points
    offsets = np.asarray(offsets, dtype=np.int64)
    n_traj = len(offsets) - 1
    total = int(offsets[-1])
    parts = max(1, min(int(parts), n_traj, max(1, total // max(1, min_points))))
    if parts == 1:
        return [(0, n_traj)]
    targets = np.arange(1, parts) * (total / parts)
    cuts = np.searchsorted(offsets, targets, side="left")
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_traj), [n_traj]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def point_chunks(n: int, parts: int, min_points: int | None = None) -> list[tuple[int, int]]:
    """Cut ``0 … n-1`` into at most ``parts`` contiguous ``(start, stop)`` ranges."""
    min_points = MIN_CHUNK_POINTS if min_points is None else min_points
    parts = max(1, min(int(parts), max(1, n // max(1, min_points))))
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def map_ordered(fn: Callable, items: Sequence, workers: int) -> list:
    """``[fn(item) for item in items]``, run on ``workers`` threads, results in order.

    The first exception raised by any call is re-raised (the others are discarded).
    Each call is a parallel task for :mod:`tracs.engine._account`.
    """
    fn = timed_task(fn)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items)),
                            thread_name_prefix="tracs-engine") as pool:
        return list(pool.map(fn, items))
