"""The Strawman of the TraCS paper (section 4.1): k-RR over direction sectors.

Like TraCS-D, but the direction is reported through k-ary randomized response
over ``k`` equal sectors of ``[0, 2π)`` followed by a uniform lattice angle
inside the reported sector (post-processing: each sector holds the same number
of angle cells); the normalised distance goes through the optimal classical
mechanism's lattice as in TraCS-D.  ε-LDP per point by the same argument: the
sector ratio is at most ``e^{ε_φ}``, the distance ratio at most ``e^{ε_r}``.  The
lie is decided with probability exactly ``(k − 1)/(e^{ε_φ} + k − 1)`` (an exact
comparison), the other sector and the cell by exact uniform integers.  A
bearing within 4 ulp of a sector edge belongs to the upper sector.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..mechanisms.closed_forms import lie_probabilities
from ..errors import InputError, InputTypeError
from . import _kernels
from ._sequential import DEFAULT_DIRECTION_SHARE, SequentialPerturber

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
    resolution : float, optional
        As for :class:`TraCSD`; the angle lattice has ``sectors·round(1/(sectors·resolution))``
        cells, a whole number per sector.
    """

    _mode = _kernels.MODE_SECTORS

    def __init__(self, region, epsilon=None, *, sectors=6, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None, resolution=None):
        if isinstance(sectors, bool) or not isinstance(sectors, numbers.Integral):
            raise InputTypeError(f"sectors must be an int, got {type(sectors).__name__}")
        if sectors < 2:
            raise InputError(f"sectors must be >= 2, got {sectors}")
        if direction_share == "optimal":
            raise InputError("the Strawman has no 'optimal' direction share; give a number")
        self.sectors = int(sectors)
        super().__init__(region, epsilon, direction_share=direction_share, anchor=anchor,
                         epsilon_per_trajectory=epsilon_per_trajectory, round_to=round_to,
                         resolution=resolution)

    @property
    def _sectors(self) -> int:  # the kernel's sector count (0 in TraCS-D)
        return self.sectors

    def _angle_cells(self) -> int:
        return self.sectors * max(1, round(self._cells / self.sectors))

    def _angle_constants(self):
        n = self._angle_cells()
        return np.array([n, 2 * np.pi / n], dtype=np.float64)

    def _direction_params(self, eps_dir):
        # the lie probability (k − 1)/(e^ε + k − 1), compared exactly
        lie = lie_probabilities(np.ravel(eps_dir), self.sectors)
        return np.column_stack([lie, np.zeros_like(lie)])

    def __repr__(self):
        return super().__repr__()[:-1] + f", sectors={self.sectors})"
