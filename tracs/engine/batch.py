"""Batch operations on all cores: perturbation, POI rounding and error metrics.

Each function cuts its input into contiguous chunks (whole trajectories for
perturbation and per-trajectory errors, plain ranges of points for rounding and
point errors), runs the library's own serial function on every chunk in a thread
pool (:mod:`tracs.engine._pool`) and concatenates the results in order.

Guarantee (bit-identity): the output equals the serial call's output bit for
bit, for any ``workers``.  For perturbation this rests on keyed randomness
(:mod:`tracs.random`): the streams of the whole batch are resolved once, from
``(seed, keys)``, and each chunk receives exactly its trajectories' streams, so
every trajectory draws the same numbers whichever chunk and thread runs it.
"""

from __future__ import annotations

import numpy as np

from .. import metrics
from .._validation import as_batch
from ..random import KeyedStreams, resolve_key
from ._keys import fast_stream_ids
from ._pool import map_ordered, point_chunks, resolve_workers, trajectory_chunks

__all__ = ["perturb_many", "round_points", "point_errors", "trajectory_errors", "average_error"]


def _flat_batch(coords, offsets):
    """``(flat, offsets, as_list)`` when the batch can be cut into chunks, else ``None``.

    Anything unusual (bad shapes, bad offsets, empty input) returns ``None`` so that
    the serial call raises its own, documented error.
    """
    try:
        if offsets is None:
            if not isinstance(coords, (list, tuple)) or not coords:
                return None
            parts = [np.asarray(part, dtype=np.float64) for part in coords]
            if any(p.ndim != 2 or p.shape[1] != 2 for p in parts):
                return None
            lengths = np.array([len(p) for p in parts], dtype=np.int64)
            return np.concatenate(parts), np.concatenate([[0], np.cumsum(lengths)]), True
        flat = np.asarray(coords, dtype=np.float64)
        off = np.asarray(offsets)
    except (TypeError, ValueError):
        return None
    if (flat.ndim != 2 or flat.shape[1] != 2 or off.ndim != 1 or off.size < 2
            or off.dtype == bool or not np.issubdtype(off.dtype, np.integer)):
        return None
    off = off.astype(np.int64)
    if off[0] != 0 or off[-1] != len(flat) or len(flat) == 0 or np.any(np.diff(off) < 0):
        return None
    return flat, off, False


def _keyed(perturber) -> bool:
    """Whether ``perturber.perturb_many`` draws from per-trajectory keyed streams (takes ``keys``)."""
    import inspect

    try:
        return "keys" in inspect.signature(perturber.perturb_many).parameters
    except (TypeError, ValueError):
        return False


def perturb_many(perturber, coords, offsets=None, *, rng=None, keys=None, workers=1,
                 return_indices=False, **kwargs):
    """``perturber.perturb_many`` on ``workers`` threads, bit-identical to one worker.

    Parameters
    ----------
    perturber : a tracs perturber or baseline
        Anything with ``perturb_many(coords, offsets, *, rng, keys, return_indices)``
        drawing from per-trajectory keyed streams.
    coords, offsets, rng, keys, return_indices, **kwargs
        As for the perturber's ``perturb_many``.
    workers : int, default 1
        Threads; ``-1`` or ``None`` for every core.

    Returns
    -------
    As ``perturber.perturb_many``.

    Notes
    -----
    An object whose ``perturb_many`` takes no ``keys`` (no per-trajectory keyed
    streams) runs on one worker: without such streams no split is bit-identical.
    A user's release depends only on ``(seed, key)`` and the user's own points
    (:mod:`tracs.random`), so splitting the batch changes nothing.  With
    ``rng=None`` the fresh OS seed is drawn once for the whole batch.  The streams
    are resolved once, before the batch is cut, with the compiled key hash of
    :mod:`tracs.engine._keys` (the same values as :func:`tracs.random.stream_ids`).
    """
    n_workers = resolve_workers(workers)
    if not _keyed(perturber):  # no per-trajectory streams: only one worker gives the same output
        if keys is not None:
            raise TypeError(f"{type(perturber).__name__}.perturb_many takes no keys")
        return perturber.perturb_many(coords, offsets, rng=rng, return_indices=return_indices, **kwargs)
    try:  # the one validation of the batch: its shape here, its values against the region below
        flat, off, as_list = as_batch(coords, offsets)
    except (TypeError, ValueError):
        flat = None
    if flat is None or len(flat) == 0:  # the serial call raises its own, documented error
        return perturber.perturb_many(coords, offsets, rng=rng, keys=keys,
                                      return_indices=return_indices, **kwargs)
    n_traj = len(off) - 1
    if isinstance(rng, KeyedStreams):
        if keys is not None:
            raise TypeError("give either keys or resolved KeyedStreams as rng, not both")
        if len(rng.streams) != n_traj:
            raise ValueError(f"rng holds {len(rng.streams)} streams for {n_traj} trajectories")
        streams = rng
    else:
        if keys is not None and (isinstance(keys, (str, bytes)) or not hasattr(keys, "__len__")):
            raise TypeError(f"keys must be a sequence of one key per trajectory, got {type(keys).__name__}")
        random_key = resolve_key(rng)
        streams = KeyedStreams(random_key.kind, random_key.key, fast_stream_ids(keys, n_traj, workers=n_workers))
    chunks = trajectory_chunks(off, n_workers * 4) if n_workers > 1 else [(0, n_traj)]

    direct = (not return_indices and not kwargs and hasattr(perturber, "_run_into")
              and getattr(perturber, "round_to", None) is None)
    if direct and getattr(perturber, "region", None) is not None:  # a baseline takes any point
        try:
            flat = perturber.region.validate_points(flat, "coords")  # what perturb_many checks
        except ValueError:  # let perturb_many raise its own message
            return perturber.perturb_many(coords, offsets, rng=rng, keys=keys)
    # a plain perturber or baseline writes each chunk's releases straight into the rows of one
    # output array, on the chunk's worker, from the validated batch: no per-chunk arrays or
    # checks, no serial concatenation
    out = np.empty_like(flat) if direct else None

    def run(chunk):
        t0, t1 = chunk
        a, b = off[t0], off[t1]
        sub = KeyedStreams(streams.kind, streams.key, streams.streams[t0:t1])
        local = off[t0:t1 + 1] - a
        if not direct:
            return perturber.perturb_many(flat[a:b], local, rng=sub, return_indices=return_indices, **kwargs)
        perturber._run_into(flat[a:b], local, sub, out[a:b])
        return None

    results = map_ordered(run, chunks, n_workers)
    indices = None
    if return_indices:
        out = np.concatenate([r[0] for r in results])
        indices = np.concatenate([np.asarray(r[1]) for r in results])
    elif not direct:
        out = np.concatenate(results)
    if as_list:
        out = np.split(out, off[1:-1])
        if indices is not None:
            indices = np.split(indices, off[1:-1])
    return (out, indices) if return_indices else out


def round_points(space, points, *, workers=1):
    """``space.round(points)`` (nearest POI) on ``workers`` threads: ``(coords, indices)``.

    The KD-tree query releases the GIL; chunks of points are rounded in parallel and
    concatenated in order, giving exactly the serial result (rounding is
    deterministic, and post-processing of the released points).
    """
    n_workers = resolve_workers(workers)
    arr = np.asarray(points) if n_workers > 1 else None
    if arr is None or arr.ndim != 2 or len(arr) == 0:
        return space.round(points)
    parts = map_ordered(lambda c: space.round(arr[c[0]:c[1]]), point_chunks(len(arr), n_workers * 2),
                        n_workers)
    return (np.concatenate([p[0] for p in parts]),
            np.concatenate([np.asarray(p[1]) for p in parts]))


def point_errors(true, perturbed, *, workers=1, normalize_by=None) -> np.ndarray:
    """:func:`tracs.metrics.point_errors` on ``workers`` threads (bit-identical)."""
    n_workers = resolve_workers(workers)
    if n_workers == 1 or not isinstance(true, np.ndarray) or true.ndim != 2:
        return metrics.point_errors(true, perturbed, normalize_by=normalize_by)
    a, b = metrics.point_pairs(true, perturbed)
    parts = map_ordered(lambda c: metrics.point_errors(a[c[0]:c[1]], b[c[0]:c[1]], normalize_by=normalize_by),
                        point_chunks(len(a), n_workers * 2), n_workers)
    return np.concatenate(parts)


def trajectory_errors(true, perturbed, offsets=None, *, workers=1, normalize_by=None) -> np.ndarray:
    """:func:`tracs.metrics.trajectory_errors` on ``workers`` threads (bit-identical).

    Each trajectory's mean is computed by the serial function on its own chunk.
    """
    n_workers = resolve_workers(workers)
    batch = _flat_batch(true, offsets) if n_workers > 1 and offsets is not None else None
    if batch is None:
        return metrics.trajectory_errors(true, perturbed, offsets, normalize_by=normalize_by)
    a, b = metrics.point_pairs(true, perturbed)
    off = batch[1]

    def run(chunk):
        t0, t1 = chunk
        lo, hi = off[t0], off[t1]
        return metrics.trajectory_errors(a[lo:hi], b[lo:hi], off[t0:t1 + 1] - lo, normalize_by=normalize_by)

    return np.concatenate(map_ordered(run, trajectory_chunks(off, n_workers * 2), n_workers))


def average_error(true, perturbed, offsets=None, *, workers=1, normalize_by=None) -> float:
    """:func:`tracs.metrics.average_error` on ``workers`` threads (bit-identical)."""
    if resolve_workers(workers) == 1:
        return metrics.average_error(true, perturbed, offsets, normalize_by=normalize_by)
    return float(np.mean(trajectory_errors(true, perturbed, offsets, workers=workers,
                                           normalize_by=normalize_by)))
