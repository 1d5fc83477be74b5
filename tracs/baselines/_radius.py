"""ATP's radius reports: one Square Wave release per trajectory, each under its own random key, in one pass.

Each trajectory ``t`` releases its radius with
``SquareWave(ε_t, 0, D).sample([r_t], rng=key_t)``, ``key_t`` a random key drawn
from the trajectory's own stream (:meth:`tracs.baselines._draws.RowDraws.seeds`), so
the release depends on nothing else in the batch.  Calling ``sample`` once per
trajectory costs a Python call each; :func:`square_wave_per_key` computes the same
releases, bit for bit, for all trajectories of one budget at once: element 0 of
stream 0 under each key, snapped and sampled by the mechanism's own compiled
banded steps (``tests/discrete`` compares it with the per-trajectory calls).
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ..mechanisms.band import EXT_WORD, INT_WORD, affine_band_index
from ..mechanisms.lattice_kernels import split_word
from ..mechanisms.lattice import lattice_point
from ..random import stream_ids
from ..random.kernels import draw_u64_pair

__all__ = ["square_wave_per_key"]


@numba.njit(cache=True, nogil=True)
def _cells(t, n, alpha, beta, m, count, c, kind, keys, stream):  # pragma: no cover - compiled
    """The banded sampler's cell of element 0 of ``stream`` under each key (as ``sample`` draws it)."""
    out = np.empty(t.shape[0], dtype=np.int64)
    for r in range(t.shape[0]):
        w0, w1 = draw_u64_pair(kind, keys[r], stream, 0, 0)
        first, bits = split_word(w0)
        out[r] = affine_band_index(t[r], n, alpha, beta, m, count, c, first, bits, w1, kind, keys[r], stream, 0,
                                   EXT_WORD, INT_WORD)
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
    if not len(values):
        return np.empty(0)
    m, c = mech.band()
    alpha, beta = mech._band_line()
    cells = _cells(mech._snap_t(values), mech._cells(), alpha, beta, m, mech._grid()[4], c, np.int64(kind), keys,
                   stream)
    lat = mech.lattice
    return lattice_point(lat.origin, lat.spacing, cells)


key_on_sources(globals())  # cached kernels follow every source they compile in
