"""ATP's radius reports: one Square Wave release per trajectory, each under its own random key, in one pass.

Each trajectory ``t`` releases its radius with
``SquareWave(ε_t, 0, D).sample([r_t], rng=key_t)``, ``key_t`` a random key drawn
from the trajectory's own stream (:meth:`tracs.baselines._draws.RowDraws.seeds`), so
the release depends on nothing else in the batch.  Calling ``sample`` once per
trajectory costs a Python call each; :func:`square_wave_per_key` computes the same
releases, bit for bit, for all trajectories of one budget at once: element 0 of
stream 0 under each key, snapped and sampled by the mechanism's own compiled
steps (``tests/discrete`` compares it with the per-trajectory calls).
"""

from __future__ import annotations

import numba
import numpy as np

from ..mechanisms import _lattice_kernels as lk
from ..mechanisms.lattice import lattice_point, snap_indices
from ..random import stream_ids
from ..random.kernels import draw_u64

__all__ = ["square_wave_per_key"]


@numba.njit(cache=True, nogil=True)
def _first_words(kind, keys, stream, first, bits):  # pragma: no cover - compiled
    """First 53 bits and snapping bits of word 0 of element 0 of ``stream``, under each key."""
    for t in range(keys.shape[0]):
        a, b = lk.split_word(draw_u64(kind, keys[t], stream, 0, 0))
        first[t] = a
        bits[t] = b


@numba.njit(cache=True, nogil=True)
def _cells(first, lefts, A, B, G, h, count, p, q, W, kind, keys, stream):  # pragma: no cover - compiled
    """The piecewise-constant sampler's cell of element 0 under each key (ties from word 1 on)."""
    out = np.empty(first.shape[0], dtype=np.int64)
    for t in range(first.shape[0]):
        j = lk.piecewise_fast(first[t], A, B, G, h, count, p, q, lefts[t], W)
        if j < 0:
            j = lk.piecewise_cell(first[t], A, B, G, h, count, p, q, lefts[t], W, kind, keys[t], stream, 0, 1)
        out[t] = j
    return out


def square_wave_per_key(mech, values, kind: int, keys: np.ndarray) -> np.ndarray:
    """``mech.sample(values[t:t + 1], rng=RandomKey(kind, keys[t]))[0]`` for every ``t``.

    Parameters
    ----------
    mech : tracs.mechanisms.SquareWave
    values : numpy.ndarray, shape (T,)
        Inputs inside the mechanism's interval.
    kind : int
        The generator (:mod:`tracs.random`).
    keys : numpy.ndarray
        One key per row: ``(T, 2)`` uint64 (Philox) or ``(T, 8)`` uint32 (ChaCha20).

    Returns
    -------
    numpy.ndarray, shape (T,)
        Values of the mechanism's lattice.
    """
    values = np.asarray(values, dtype=np.float64)
    keys = np.ascontiguousarray(keys)
    stream = np.uint64(stream_ids(None, 1)[0])  # a one-element call's stream (position 0)
    first = np.empty(len(values), dtype=np.uint64)
    bits = np.empty(len(values), dtype=np.float64)
    if not len(values):
        return np.empty(0)
    kind = np.int64(kind)
    _first_words(kind, keys, stream, first, bits)
    k = snap_indices(mech._snap_t(values), mech._cells(), bits)
    A, B, G, h, count, p, q, W = mech._kernel_constants()
    cells = _cells(first, np.ascontiguousarray(mech._lattice_left(k), dtype=np.float64), A, B, G, h, count, p, q,
                   W, kind, keys, stream)
    lat = mech.lattice
    return lattice_point(lat.origin, lat.spacing, cells)
