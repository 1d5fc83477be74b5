"""The Strawman of the TraCS paper (section 4.1): k-RR over direction sectors.

Like TraCS-D, but the direction is reported through k-ary randomized response
over ``k`` equal sectors of ``[0, 2π)`` followed by a uniform angle inside the
reported sector (post-processing); the normalised distance goes through the
optimal classical mechanism as in TraCS-D.  ε-LDP per point by the same product
argument: the sector ratio is at most ``e^{ε_φ}``, the distance density ratio at
most ``e^{ε_r}``.  The lie is decided as ``u < (k − 1)/(e^{ε_φ} + k − 1)`` (see
:class:`tracs.mechanisms.KRR`), so lying stays possible at every ε.  A bearing
within 4 ulp of a sector edge belongs to the upper sector in both engines.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..mechanisms import KRR
from . import _kernels
from ._sequential import (DEFAULT_DIRECTION_SHARE, SequentialPerturber, sector_position_step,
                          wrap_step)

__all__ = ["Strawman"]


class Strawman(SequentialPerturber):
    """k-RR sectors + uniform angle for the direction, optimal mechanism for the distance.

    Parameters
    ----------
    region, epsilon, anchor, epsilon_per_trajectory, round_to
        As for :class:`TraCSD`.
    sectors : int
        Number of equal direction sectors ``k >= 2`` (paper: 6).
    direction_share : float in (0, 1)
        ``ε_φ / ε`` (default ``π/(π + 1)``, as TraCS-D).
    """

    _mode = _kernels.MODE_SECTORS
    uniforms_per_point = 5

    def __init__(self, region, epsilon=None, *, sectors=6, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None):
        if isinstance(sectors, bool) or not isinstance(sectors, numbers.Integral):
            raise TypeError(f"sectors must be an int, got {type(sectors).__name__}")
        if sectors < 2:
            raise ValueError(f"sectors must be >= 2, got {sectors}")
        if direction_share == "optimal":
            raise ValueError("the Strawman has no 'optimal' direction share; give a number")
        super().__init__(region, epsilon, direction_share=direction_share, anchor=anchor,
                         epsilon_per_trajectory=epsilon_per_trajectory, round_to=round_to)
        self.sectors = int(sectors)

    @property
    def _sectors(self) -> int:  # the kernel's sector count (0 in TraCS-D)
        return self.sectors

    def _direction_params(self, eps_dir):
        # the lie probability (k − 1)/(e^ε + k − 1): the rare branch's own threshold
        lie = np.array([KRR(epsilon=float(e), k=self.sectors).lie_threshold for e in eps_dir])
        return lie, np.zeros_like(lie)

    def _direction_step(self, phi, uni, rows):
        k = self.sectors
        w = 2 * np.pi / k
        j = np.minimum(sector_position_step(phi, w).astype(np.int64), k - 1)
        other = np.minimum((uni[:, 4] * (k - 1)).astype(np.int64), k - 2)
        j = np.where(uni[:, 0] < rows[:, 0], (j + 1 + other) % k, j)
        return wrap_step((j + uni[:, 1]) * w)

    def __repr__(self):
        return super().__repr__()[:-1] + f", sectors={self.sectors})"
