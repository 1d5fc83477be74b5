"""TP's direction sectors, and the candidate set of a target point: inside every reported sector.

The sector of a point seen from a public origin is ``floor(bearing·k/2π)`` modulo
``k`` (:func:`sector_index`); a target point of TP is released among the POIs that
lie in every reported sector around its neighbours' released points (and, for ATP,
inside the anchor disc).  :class:`Sectors` is that candidate set as a predicate of
the exponential-mechanism sampler (:func:`tracs.baselines._exponential_sampler.sample_em`), which
also hands its tables to the compiled rejection pass.
"""

from __future__ import annotations

import math

import numpy as np

from ._exponential_kernels import candidate_mask

__all__ = ["sector_index", "in_sector", "Sectors", "TWO_PI"]

TWO_PI = 2.0 * math.pi


def _sector_floor(origins, points, k) -> np.ndarray:
    """``floor(bearing·k/2π)`` with the bearing from ``arctan2`` in ``(−π, π]`` (float).

    The sector index is this value modulo ``k``; :func:`sector_index` and
    :func:`in_sector` both derive from it, so they agree bit for bit.
    """
    origins = np.asarray(origins, dtype=np.float64)
    points = np.asarray(points, dtype=np.float64)
    turn = np.arctan2(points[..., 1] - origins[..., 1], points[..., 0] - origins[..., 0])
    return np.floor(turn * (np.asarray(k, dtype=np.float64) / TWO_PI))


def sector_index(origins, points, k) -> np.ndarray:
    """Index of the fixed sector of ``points`` seen from ``origins`` (broadcast).

    Sector ``j`` holds the bearings ``[2πj/k, 2π(j+1)/k)`` measured counter-clockwise
    from the x axis: a fixed partition of the directions around the (public) origin.
    A point equal to its origin has bearing 0 (sector 0).
    """
    floor = _sector_floor(origins, points, k)
    return np.where(floor < 0, floor + np.asarray(k), floor).astype(np.int64)


def in_sector(origins, points, k, sector) -> np.ndarray:
    """Whether ``sector_index(origins, points, k) == sector`` (broadcast, cheaper)."""
    floor = _sector_floor(origins, points, k)
    sector = np.asarray(sector, dtype=np.float64)
    return (floor == sector) | (floor == sector - np.asarray(k, dtype=np.float64))


class Sectors:
    """POIs inside an optional disc and inside every reported sector, one set per row.

    Parameters
    ----------
    points : numpy.ndarray, shape (|P|, 2)
    k : numpy.ndarray of int, shape (n,)
        Sectors of each row.
    reports : list of (has, origin, reported)
        Per neighbour: whether the row has it (bool, (n,)), its released point
        ((n, 2)) and the reported sector ((n,)); a row without the neighbour ignores it.
    disc : tracs.baselines._exponential_sampler.Disc, optional
        The anchor disc (ATP).
    """

    def __init__(self, points, k, reports, disc=None):
        self.points, self.k, self.reports, self.disc = points, np.asarray(k), list(reports), disc

    def __call__(self, local, cand):
        return candidate_mask(self.points, local, cand, *self.kernel_tables())

    def reference(self, local, cand):
        """The same test in NumPy (broadcast)."""
        near = self.points[cand]
        ok = True if self.disc is None else self.disc.reference(local, cand)
        for has, origin, reported in self.reports:
            inside = in_sector(origin[local, None, :], near, self.k[local, None], reported[local, None])
            ok = ok & (inside | ~has[local, None])
        return ok

    def kernel_tables(self):
        """``(disc, sectors, k)`` for the compiled rejection pass: the disc table (or None),
        ``(n, R, 4)`` rows of (has, origin x, origin y, reported sector) and ``k`` as floats."""
        n = len(self.k)
        table = np.zeros((n, len(self.reports), 4))
        for q, (has, origin, reported) in enumerate(self.reports):
            table[:, q, 0] = has
            table[:, q, 1:3] = origin
            table[:, q, 3] = reported
        disc = None if self.disc is None else self.disc.kernel_tables()[0]
        return disc, table, self.k.astype(np.float64)
