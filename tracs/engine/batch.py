"""Batch operations on all cores: perturbation, POI rounding and error metrics.

Each function cuts its input into contiguous chunks (whole trajectories for
perturbation and per-trajectory errors, plain ranges of points for rounding and
point errors), runs the library's own serial function on every chunk in a thread
pool (:mod:`tracs.engine._pool`), each chunk checking its own points and writing
its rows of one output.  The few steps left on one thread (shape checks, the
keys' canonical bytes, the mean over trajectories) are named for
:mod:`tracs.engine._account`.

Guarantee (bit-identity): the output equals the serial call's output bit for
bit, for any ``workers``.  For perturbation this rests on keyed randomness
(:mod:`tracs.random`): the streams of the whole batch are resolved once, from
``(seed, keys)``, and each chunk receives exactly its trajectories' streams, so
every trajectory draws the same numbers whichever chunk and thread runs it.
"""

from __future__ import annotations


import inspect

import numpy as np

from .. import metrics
from .._validation import as_batch
from ..errors import InputError, InputTypeError
from ..random import KeyedStreams, resolve_key
from ..trajectory_batch import Batch
from ._account import serial_step
from .stream_keys import fast_stream_ids
from ._pool import map_ordered, point_chunks, resolve_workers, trajectory_chunks

__all__ = ["perturb_many", "round_points", "point_errors", "trajectory_errors", "average_error"]


def takes_keys(releaser) -> bool:
    """Whether ``releaser`` draws each trajectory from its own keyed stream (``perturb_many`` takes ``keys``).

    A :class:`Releaser` (or any object) says so by its class attribute ``keyed``; an
    object without one is asked whether its ``perturb_many`` has a ``keys`` parameter.
    """
    flag = getattr(type(releaser), "keyed", None)
    if isinstance(flag, bool):
        return flag
    try:
        return "keys" in inspect.signature(releaser.perturb_many).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def perturb_many(perturber, coords, offsets=None, *, rng=None, keys=None, workers=1,
                 return_indices=False, keyed=None, **kwargs):
    """``perturber.perturb_many`` on ``workers`` threads, bit-identical to one worker.

    Parameters
    ----------
    perturber : a tracs perturber or baseline
        Anything with ``perturb_many(coords, offsets, *, rng, keys, return_indices)``
        drawing from per-trajectory keyed streams.
    coords : array_like, shape (N, 2), a list of (n_i, 2) arrays, or a tracs.Batch
        The points; a :class:`tracs.Batch` brings its own offsets and, for a keyed
        ``perturber``, its trajectories' stream keys (:meth:`tracs.Batch.stream_keys`, the
        keys :func:`tracs.release.release_points` gives the same seed; positions when the
        batch has no keys), and comes back as a Batch (below).
    offsets, rng, keys, return_indices, **kwargs
        As for the perturber's ``perturb_many``.
    workers : int, default 1
        Threads; ``-1`` or ``None`` for every core.
    keyed : bool, optional
        Whether ``perturber`` draws from per-trajectory keyed streams, as the registry of
        methods says it (:func:`tracs.methods.keyed`, asked by the callers above this
        layer); None: :func:`takes_keys`.

    Returns
    -------
    As ``perturber.perturb_many``; for a Batch, the batch at the released coordinates (same
    offsets, keys, columns, CRS and ``attrs``: :meth:`tracs.Batch.with_coords`).

    Notes
    -----
    An object that draws from no per-trajectory keyed streams
    (:func:`tracs.releaser.takes_keys`) runs on one worker: without such streams no
    split is bit-identical.  A releaser's chunks are released by its public
    :meth:`tracs.releaser.Releaser.release_into`.
    A user's release depends only on ``(seed, key)`` and the user's own points
    (:mod:`tracs.random`), so splitting the batch changes nothing.  With
    ``rng=None`` the fresh OS seed is drawn once for the whole batch.  The streams
    are resolved once, before the batch is cut, with the compiled key hash of
    :mod:`tracs.engine.stream_keys` (the same values as :func:`tracs.random.stream_ids`).
    """
    keyed = takes_keys(perturber) if keyed is None else keyed
    if isinstance(coords, Batch):
        return _perturb_batch(perturber, coords, offsets, rng=rng, keys=keys, workers=workers,
                              return_indices=return_indices, keyed=keyed, **kwargs)
    n_workers = resolve_workers(workers)
    if not keyed:  # no per-trajectory streams: only one worker gives the same output
        if keys is not None:
            raise InputTypeError(f"{type(perturber).__name__}.perturb_many takes no keys")
        if return_indices:  # asked only when wanted: a plain perturb_many(coords, offsets, *, rng) is enough
            kwargs["return_indices"] = True
        return perturber.perturb_many(coords, offsets, rng=rng, **kwargs)
    try:  # the batch's shape here; its values (finite, inside the region) chunk by chunk below
        with serial_step("perturb: batch shape"):
            flat, off, as_list = as_batch(coords, offsets, finite=False)
    except (TypeError, ValueError):
        flat = None
    if flat is None or len(flat) == 0:  # the serial call raises its own, documented error
        return perturber.perturb_many(coords, offsets, rng=rng, keys=keys,
                                      return_indices=return_indices, **kwargs)
    n_traj = len(off) - 1
    if isinstance(rng, KeyedStreams):
        if keys is not None:
            raise InputTypeError("give either keys or resolved KeyedStreams as rng, not both")
        if len(rng.streams) != n_traj:
            raise InputError(f"rng holds {len(rng.streams)} streams for {n_traj} trajectories")
        streams = rng
    else:
        if keys is not None and (isinstance(keys, (str, bytes)) or not hasattr(keys, "__len__")):
            raise InputTypeError(f"keys must be a sequence of one key per trajectory, got {type(keys).__name__}")
        random_key = resolve_key(rng)
        streams = KeyedStreams(random_key.kind, random_key.key, fast_stream_ids(keys, n_traj, workers=n_workers))
    chunks = trajectory_chunks(off, n_workers * 4) if n_workers > 1 else [(0, n_traj)]

    direct = (not return_indices and not kwargs and callable(getattr(perturber, "release_into", None))
              and getattr(perturber, "round_to", None) is None)
    region = getattr(perturber, "region", None)  # a baseline without one takes any finite point
    # a plain perturber or baseline writes each chunk's releases straight into the rows of one
    # output array, on the chunk's worker, from the batch checked there: no per-chunk arrays,
    # no serial pass over the points, no serial concatenation
    out = np.empty_like(flat) if direct else None

    def run(chunk):
        t0, t1 = chunk
        a, b = off[t0], off[t1]
        if not _valid_points(flat[a:b], region):
            return _INVALID
        sub = KeyedStreams(streams.kind, streams.key, streams.streams[t0:t1])
        local = off[t0:t1 + 1] - a
        if not direct:
            return perturber.perturb_many(flat[a:b], local, rng=sub, return_indices=return_indices, **kwargs)
        perturber.release_into(flat[a:b], local, sub, out[a:b])
        return None

    results = map_ordered(run, chunks, n_workers)
    if any(r is _INVALID for r in results):  # the serial call raises its own message, counting the whole batch
        return perturber.perturb_many(coords, offsets, rng=rng, keys=keys, return_indices=return_indices,
                                      **kwargs)
    with serial_step("perturb: concatenate"):
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


def _perturb_batch(perturber, batch: Batch, offsets, *, keys, keyed: bool, return_indices: bool, **kwargs):
    """:func:`perturb_many` of a :class:`Batch`: its arrays and stream keys released, the batch
    at the released coordinates returned (with the indices when asked)."""
    coords, offsets, _ = as_batch(batch, offsets)  # refuses offsets beside the batch's own
    if keyed and batch.keys is not None:
        if keys is not None:
            raise InputTypeError("give keys or a tracs.Batch with keys (the users' ids), not both")
        keys = batch.stream_keys()
    out = perturb_many(perturber, coords, offsets, keys=keys, keyed=keyed,
                       return_indices=return_indices, **kwargs)
    if return_indices:
        return batch.with_coords(out[0]), out[1]
    return batch.with_coords(out)


#: a chunk holding a point that is not finite or lies outside the region
_INVALID = object()


def _valid_points(points, region) -> bool:
    """Whether every point is finite (and inside ``region`` when it is not ``None``)."""
    if region is None:
        return bool(np.isfinite(points).all())
    try:
        region.validate_points(points, "coords")  # what the perturber's perturb_many checks
    except ValueError:
        return False
    return True


def round_points(space, points, *, workers=1):
    """``space.round(points)`` (nearest POI) on ``workers`` threads: ``(coords, indices)``.

    The KD-tree query releases the GIL; chunks of points are rounded in parallel,
    each writing its rows of the two outputs on its own thread, giving exactly the
    serial result (rounding is deterministic, and post-processing of the released
    points).
    """
    n_workers = resolve_workers(workers)
    try:
        arr = np.asarray(points)
    except (TypeError, ValueError):  # space.round raises its own message
        arr = None
    chunks = point_chunks(len(arr), n_workers * 2) if arr is not None and arr.ndim == 2 and len(arr) else []
    if len(chunks) <= 1:  # one task: the KD-tree query itself
        return map_ordered(lambda _: space.round(points), [None], 1)[0]
    coords, indices = np.empty((len(arr), 2)), np.empty(len(arr), dtype=np.intp)

    def run(chunk):
        a, b = chunk
        coords[a:b], indices[a:b] = space.round(arr[a:b])

    if not _all_ran(run, chunks, n_workers):
        return space.round(points)  # raises its own message, counting the whole input
    return coords, indices


def point_errors(true, perturbed, *, workers=1, normalize_by=None) -> np.ndarray:
    """:func:`tracs.metrics.point_errors` on ``workers`` threads (bit-identical)."""
    n_workers = resolve_workers(workers)
    pair = _pair_shapes(true, perturbed) if n_workers > 1 else None
    if pair is None:
        return metrics.point_errors(true, perturbed, normalize_by=normalize_by)
    a, b = pair
    out = np.empty(len(a))

    def run(chunk):
        lo, hi = chunk
        out[lo:hi] = metrics.point_errors(a[lo:hi], b[lo:hi], normalize_by=normalize_by)

    if not _all_ran(run, point_chunks(len(a), n_workers * 2), n_workers):
        return metrics.point_errors(true, perturbed, normalize_by=normalize_by)
    return out


def trajectory_errors(true, perturbed, offsets=None, *, workers=1, normalize_by=None) -> np.ndarray:
    """:func:`tracs.metrics.trajectory_errors` on ``workers`` threads (bit-identical).

    Each trajectory's mean is computed by the serial function on its own chunk of
    whole trajectories (each chunk checks its own points), written into the
    trajectory's row of the output on the chunk's thread.  Chunks hold about
    :data:`ERROR_CHUNK_POINTS` points, so that the intermediate arrays stay in cache,
    even on one worker.
    """
    n_workers = resolve_workers(workers)
    with serial_step("error: shapes"):
        pair = _pair_shapes(true, perturbed) if offsets is not None else None
        off = _offsets(offsets, len(pair[0])) if pair is not None else None
    if off is None:
        return metrics.trajectory_errors(true, perturbed, offsets, normalize_by=normalize_by)
    a, b = pair
    out = np.empty(len(off) - 1)

    def run(chunk):
        t0, t1 = chunk
        lo, hi = off[t0], off[t1]
        out[t0:t1] = metrics.trajectory_errors(a[lo:hi], b[lo:hi], off[t0:t1 + 1] - lo, normalize_by=normalize_by)

    chunks = trajectory_chunks(off, max(n_workers * 2, len(a) // ERROR_CHUNK_POINTS), min_points=1)
    if not _all_ran(run, chunks, n_workers):  # the serial call raises its own message
        return metrics.trajectory_errors(true, perturbed, offsets, normalize_by=normalize_by)
    return out


def average_error(true, perturbed, offsets=None, *, workers=1, normalize_by=None) -> float:
    """:func:`tracs.metrics.average_error` on ``workers`` threads (bit-identical).

    The per-trajectory errors are computed in parallel (:func:`trajectory_errors`);
    their mean is taken in one call over all of them, in trajectory order, exactly
    as the serial function does: a serial step of one addition per trajectory.
    """
    errors = trajectory_errors(true, perturbed, offsets, workers=workers, normalize_by=normalize_by)
    with serial_step("error: mean over trajectories"):
        return float(np.mean(errors))


#: points per chunk of the error functions: their temporaries (a few arrays of this many doubles) stay in cache
ERROR_CHUNK_POINTS = 1 << 16


def _pair_shapes(true, perturbed):
    """``(true, perturbed)`` as two real arrays of one ``(N, 2)`` shape, ``N`` ≥ 1, or ``None``.

    Only shapes and kinds are checked here (no pass over the values): the chunks
    check their own values, and anything unusual goes to the serial function.
    """
    if not isinstance(true, np.ndarray) or not isinstance(perturbed, np.ndarray):
        return None
    if (true.ndim != 2 or true.shape[1] != 2 or true.shape != perturbed.shape or len(true) == 0
            or true.dtype.kind not in "iuf" or perturbed.dtype.kind not in "iuf"):
        return None
    return true, perturbed


def _offsets(offsets, n: int):
    """Valid trajectory offsets (integers from 0 to ``n``, no empty trajectory) as int64, or ``None``."""
    try:
        off = np.asarray(offsets)
    except (TypeError, ValueError):
        return None
    if (off.ndim != 1 or off.size < 2 or off.dtype == bool or not np.issubdtype(off.dtype, np.integer)
            or off[0] != 0 or off[-1] != n):
        return None
    off = off.astype(np.int64)
    return off if np.all(np.diff(off) > 0) else None


def _all_ran(run, chunks, workers: int) -> bool:
    """``run`` on every chunk; ``False`` if any chunk raised ``TypeError`` or ``ValueError``."""
    def guarded(chunk):
        try:
            run(chunk)
        except (TypeError, ValueError):
            return False
        return True

    return all(map_ordered(guarded, chunks, workers))
