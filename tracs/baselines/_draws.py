"""Keyed random draws for the discrete baselines: each point draws from its own user's stream.

A baseline's release of a trajectory must depend only on that trajectory, the public
parameters and the seed — not on which other trajectories are in the batch, their
order, or how many proposals their rejection samplers used.  So no sampler here reads
a shared generator: every random number is ``draw(kind, key, stream, index, draw)`` of
the counter-based generator of :mod:`tracs.random`, addressed by

* ``stream`` — the trajectory's stream (from the user's key),
* ``index`` — the point's position in its trajectory,
* ``draw`` — a draw number, ``site · 2^26 + j``: each sampling step of a method
  has its own ``site`` (a constant below 128: the generators count draws below
  2^33), and ``j < 2^22`` counts the draws of that step for that point (proposal
  ``j`` of a rejection sampler, say); ``j`` from 2^22 up is reserved for the rare
  redraws of exact integers and for fixed final draws.

Two different steps or points never share a number, and a point's numbers are the
same whatever else is in the batch.
"""

from __future__ import annotations

import numpy as np

from ..perturbers.keyed_draws import proposals, uniform_at, words_at
from ..random import KIND_CHACHA20, RandomKey, point_streams, resolve_streams
from ..errors import InputError

__all__ = ["PointDraws", "RowDraws", "SITE", "as_row_draws"]

#: draw numbers per site (the generators address draw numbers below 2^33: 128 sites)
SITE = 1 << 26
#: a redraw of an exact bounded integer (probability below |range| / 2^64) adds this
_REDRAW = 1 << 22


class PointDraws:
    """The keyed draws of every point of a validated batch.

    Parameters
    ----------
    streams : tracs.random.KeyedStreams
        One stream per trajectory.
    offsets : numpy.ndarray, shape (T + 1,)
    """

    def __init__(self, streams, offsets):
        self.kind = np.int64(streams.kind)
        self.key = streams.key  # uint64[2] (Philox) or uint32[8] (ChaCha20): the kernels dispatch on it
        stream, index = point_streams(streams, np.asarray(offsets, dtype=np.int64))
        self.stream = np.ascontiguousarray(stream, dtype=np.uint64)
        self.index = np.ascontiguousarray(index, dtype=np.uint64)

    def at(self, rows, site: int) -> "RowDraws":
        """Draws of the points ``rows`` (batch positions) for the sampling step ``site``."""
        if not 0 <= int(site) < 128:
            raise InputError(f"site must lie in 0 .. 127, got {site}")
        return RowDraws(self, np.asarray(rows, dtype=np.intp), np.uint64(site) * np.uint64(SITE))

    def _grid(self, rows, draws, kernel):
        rows, draws = np.broadcast_arrays(np.asarray(rows, dtype=np.intp), np.asarray(draws, dtype=np.uint64))
        flat = rows.ravel()
        out = kernel(self.kind, self.key, self.stream[flat], self.index[flat],
                     np.array(draws.ravel(), dtype=np.uint64))  # a writeable copy, never a broadcast view
        return out.reshape(rows.shape)

    def uniform(self, rows, draws) -> np.ndarray:
        """Uniforms in ``[0, 1)`` (multiples of ``2^-53``) of points ``rows`` at draw numbers ``draws`` (broadcast)."""
        return self._grid(rows, draws, uniform_at)

    def words(self, rows, draws) -> np.ndarray:
        """Uniform 64-bit integers (uint64), as :meth:`uniform`."""
        return self._grid(rows, draws, words_at)

    def integers(self, rows, draws, n) -> np.ndarray:
        """Exactly uniform integers in ``0 .. n − 1`` (``1 <= n < 2^32``, broadcast).

        ``w mod n`` of a 64-bit word ``w``, redrawn (at draw number ``draws + 2^22·r``)
        while ``w`` falls in the last incomplete block of ``n`` values: exact, and a
        redraw happens with probability below ``n / 2^64``.
        """
        rows, draws, n = np.broadcast_arrays(np.asarray(rows, dtype=np.intp),
                                             np.asarray(draws, dtype=np.uint64),
                                             np.asarray(n, dtype=np.uint64))
        if np.any(n < 1):
            raise InputError("integers() needs n >= 1")
        limit = (np.uint64(0xFFFFFFFFFFFFFFFF) // n) * n  # words below this are unbiased
        words = self.words(rows, draws)
        bad = words >= limit
        attempt = 0
        while bad.any():  # pragma: no cover - probability < n / 2^64 per value
            attempt += 1
            words[bad] = self.words(rows[bad], draws[bad] + np.uint64(attempt * _REDRAW))
            bad = words >= limit
        return (words % n).astype(np.int64)


class RowDraws:
    """The draws of one sampling step for a set of points: ``rows`` and the step's base draw number.

    Methods take ``local`` positions into ``rows`` and a per-point draw counter ``j``.
    """

    def __init__(self, source: PointDraws, rows: np.ndarray, base):
        self.source, self.rows, self.base = source, rows, np.uint64(base)

    def __len__(self) -> int:
        return self.rows.size

    def _draws(self, j):
        return self.base + np.asarray(j, dtype=np.uint64)

    def uniform(self, local, j) -> np.ndarray:
        """Uniforms of the points ``rows[local]`` at counters ``j`` (broadcast)."""
        return self.source.uniform(self.rows[np.asarray(local, dtype=np.intp)], self._draws(j))

    def integers(self, local, j, n) -> np.ndarray:
        """Exact uniform integers in ``0 .. n − 1`` (see :meth:`PointDraws.integers`)."""
        return self.source.integers(self.rows[np.asarray(local, dtype=np.intp)], self._draws(j), n)

    def proposals(self, local, first: int, m: int, n: int):
        """Proposals ``first … first + m − 1`` of points ``rows[local]``: for proposal ``j`` an
        exact uniform integer in ``0 … n − 1`` (draw ``2j``) and a uniform (draw ``2j + 1``).

        The same numbers as ``integers(local, 2j, n)`` and ``uniform(local, 2j + 1)``,
        computed in one compiled pass (both words come from one generator block).
        """
        src = self.source
        return proposals(src.kind, src.key, src.stream, src.index, self.rows[np.asarray(local, dtype=np.intp)],
                         int(self.base // np.uint64(2)) + int(first), m, n, _REDRAW)

    def subset(self, local) -> "RowDraws":
        """The same step restricted to ``rows[local]``."""
        return RowDraws(self.source, self.rows[np.asarray(local, dtype=np.intp)], self.base)

    def words(self, local, j) -> np.ndarray:
        """Uniform 64-bit words (uint64) of the points ``rows[local]`` at counters ``j``."""
        return self.source.words(self.rows[np.asarray(local, dtype=np.intp)], self._draws(j))

    def seeds(self, local):
        """A random key per point from its own draws: an ``rng`` for a 1-D mechanism's
        ``sample`` (:class:`tracs.random.RandomKey` of the same generator: Philox keyed by
        draw 0, ChaCha20 by draws 0–3, so a secure run stays secure)."""
        return [RandomKey(self.source.kind, np.ascontiguousarray(k)) for k in self.keys(local)]

    def keys(self, local) -> np.ndarray:
        """The keys of :meth:`seeds` as one array: ``(n, 2)`` uint64 (Philox) or ``(n, 8)`` uint32 (ChaCha20)."""
        local = np.asarray(local, dtype=np.intp)
        if self.source.kind == KIND_CHACHA20:
            words = np.stack([self.words(local, j) for j in range(4)], axis=1)  # 256 bits
            return np.ascontiguousarray(words.view(np.uint32).reshape(len(local), 8))
        word = self.words(local, 0)
        return np.column_stack([word & np.uint64(0xFFFFFFFF), word >> np.uint64(32)])


def as_row_draws(draws, n: int) -> RowDraws:
    """``draws`` if it is a :class:`RowDraws` of ``n`` rows; an rng gives each of ``n`` rows its own stream."""
    if isinstance(draws, RowDraws):
        if len(draws) != n:
            raise InputError(f"draws cover {len(draws)} rows, expected {n}")
        return draws
    streams = resolve_streams(draws, None, n)
    return PointDraws(streams, np.arange(n + 1)).at(np.arange(n), 0)
