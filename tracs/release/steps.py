"""The points of a :class:`tracs.trajectory_batch.Batch` released through the engine, in chunks of whole users.

A releaser that draws from keyed streams (as its registry entry says:
:func:`tracs.methods.keyed`) gets each user's stream from the user's id (the batch's
keys, :meth:`tracs.Batch.stream_keys`; :func:`user_keys` is that rule), so a user's draws
do not depend on the chunk: the batch goes in chunks of whole users (:func:`chunks`,
bounded temporary memory, a progress step per chunk), each chunk's arrays and keys through
:func:`tracs.engine.perturb_many` — what ``perturb_many(releaser, batch)`` releases in one
call.  Any other releaser gets the whole batch at once, drawing from one generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import perturb_many, round_points
from ..errors import InputTypeError
from ..methods import keyed as takes_keys
from ..random import resolve_key
from ..trajectory_batch import Batch
from ..trajectory_batch import stream_keys as user_keys

__all__ = ["release_points", "Released", "chunks", "user_keys", "CHUNK_POINTS"]

#: points per chunk (whole users; a longer user is one chunk)
CHUNK_POINTS = 1 << 18


def chunks(offsets: np.ndarray, user_start: np.ndarray, size: int = CHUNK_POINTS):
    """``(first, last)`` trajectory ranges of about ``size`` points, cut only where a user starts.

    ``user_start[t]`` is true when trajectory ``t`` is its user's first: a user's
    trajectories stay in one chunk, so keyed streams (the k-th trajectory of a key
    gets the k-th stream) are the same as in one batch.
    """
    starts = np.flatnonzero(user_start)
    cuts = np.searchsorted(offsets[starts], np.arange(0, offsets[-1], size), side="right") - 1
    bounds = np.unique(np.r_[starts[np.clip(cuts, 0, None)], len(offsets) - 1])
    return list(zip(bounds[:-1], bounds[1:]))


@dataclass(frozen=True)
class Released:
    """The releases of a batch: ``coords`` (metres, the input's order), and the ε spent by each
    point (``epsilon_point``) and by its trajectory (``epsilon_trajectory``)."""

    coords: np.ndarray
    epsilon_point: np.ndarray
    epsilon_trajectory: np.ndarray


def release_points(releaser, batch: Batch, *, rng=None, seed=None, workers=1, round_to=None, progress=None,
                   chunk_points: int | None = None) -> Released:
    """Release every trajectory of a batch through :func:`tracs.engine.perturb_many`.

    Parameters
    ----------
    releaser : tracs.Releaser or any object with ``perturb_many``
        Built from public parameters only (:meth:`tracs.methods.Method.build`).
    batch : tracs.trajectory_batch.Batch
        The points in metres, grouped by user (a user's trajectories one after the
        other); its keys, the user ids, key the streams of a keyed releaser (a batch
        without keys is refused for one).
    rng : seed, "secure" or tracs.random.Secure
        The generator of a keyed releaser (resolved once for the whole batch).
    seed : int, optional
        The seed of the one generator of a releaser without keyed streams.
    workers : int or None
        Threads of the engine; the releases are the same for any number.
    round_to : POISpace, optional
        Round the releases to the nearest POI (post-processing), on ``workers`` threads.
    progress : callable, optional
        Called with the number of points released after each chunk.
    chunk_points : int, optional
        Points per chunk (default :data:`CHUNK_POINTS`).
    """
    if not isinstance(batch, Batch):
        raise InputTypeError(f"batch must be a tracs.Batch, got {type(batch).__name__}")
    coords, offsets = batch.coords, batch.offsets
    keyed = takes_keys(releaser)
    keys = batch.stream_keys() if keyed else None
    random = resolve_key(rng) if keyed else np.random.default_rng(seed)
    released = np.empty_like(coords)
    lengths = np.diff(offsets)
    eps_point = np.repeat(releaser.epsilon_per_point(lengths), lengths)
    size = CHUNK_POINTS if chunk_points is None else chunk_points
    pieces = chunks(offsets, batch.first_of_key(), size) if keyed else [(0, len(offsets) - 1)]
    for first, last in pieces:
        a, b = offsets[first], offsets[last]
        extra = {"keys": keys[first:last]} if keyed else {}
        out = perturb_many(releaser, coords[a:b], offsets[first:last + 1] - a, rng=random, workers=workers,
                           keyed=keyed, **extra)
        if round_to is not None:
            out = round_points(round_to, out, workers=workers)[0]
        released[a:b] = out
        if progress is not None:
            progress(b - a)
    eps_traj = np.repeat(np.add.reduceat(eps_point, offsets[:-1]), lengths)
    return Released(released, eps_point, eps_traj)
