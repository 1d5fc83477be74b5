"""Peer piecewise-constant mechanisms: Square Wave, the Piecewise Mechanism and PTT (type I).

Each has two density levels ``p`` and ``p·e^{-ε}`` (ratio exactly ``e^ε``:
ε-LDP) on an enlarged output interval, and reuses the exact sampler, pdf, cdf and
closed-form errors of :class:`~tracs.mechanisms.PiecewiseConstantMechanism`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._base import PiecewiseConstantMechanism
from ._domain import Interval
from ._numeric import exp_tail, logistic
from .discrete import _check_interval

__all__ = ["SquareWave", "PiecewiseMechanism", "PTT", "square_wave_b"]


def square_wave_b(epsilon: float) -> float:
    """Half-width ``b`` of the Square Wave's high-density window on the unit interval.

    ``b = (ε e^ε − e^ε + 1)/(2 e^ε (e^ε − 1 − ε))``, written as
    ``T(−ε)/(2 T(ε))`` with ``T(t) = e^t − 1 − t``: no cancellation for tiny ε
    (``b → 1/2``) and no overflow for large ε (``b ≈ (ε − 1)e^{-ε}/2``).
    """
    if epsilon > 1.0:
        # divide both T's by e^ε
        top = exp_tail(-epsilon, 2) * math.exp(-epsilon)
        bottom = 1.0 - (1.0 + epsilon) * math.exp(-epsilon)
        return top / (2.0 * bottom)
    return exp_tail(-epsilon, 2) / (2.0 * exp_tail(epsilon, 2))


class _IntervalInput:
    """Mixin: input domain ``[low, high]`` validated at construction."""

    low: float
    high: float

    def _validate_parameters(self):
        _check_interval(self)

    @property
    def input_domain(self) -> Interval:
        return Interval(self.low, self.high)

    @property
    def output_domain(self) -> Interval:
        return Interval(*self._support())


@dataclass(frozen=True, kw_only=True, repr=False)
class SquareWave(_IntervalInput, PiecewiseConstantMechanism):
    """Square Wave mechanism (SW) from ``[low, high]`` (default ``[0, 1]``) to an enlarged interval.

    On the unit interval the output lies in ``[−b, 1 + b]`` with ``b`` from
    :func:`square_wave_b`; the density is ``p = e^ε/(2b e^ε + 1)`` on
    ``[x − b, x + b)`` and ``q = 1/(2b e^ε + 1) = p·e^{-ε}`` elsewhere.  Other
    intervals are scaled linearly (widths multiply by ``high − low``).
    Guarantee: density ratio at most ``e^ε`` between any two inputs (ε-LDP).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    low, high : float
        The public input interval, ``low < high``.

    References
    ----------
    Li et al., "Estimating numerical distributions under local differential
    privacy", SIGMOD 2020; spec ``MECHANISMS.md`` §4.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0

    @property
    def b(self) -> float:
        """Half-width of the high-density window on the unit interval."""
        return square_wave_b(self.epsilon)

    def _support(self):
        w = (self.high - self.low) * self.b
        return self.low - w, self.high + w

    def _densities(self):
        # p = e^ε/(2b e^ε + 1) = 1/(2b + e^{-ε});  q = p·e^{-ε}
        p = 1.0 / ((2.0 * self.b + math.exp(-self.epsilon)) * (self.high - self.low))
        return p, p * math.exp(-self.epsilon)

    def _central_width(self):
        return 2.0 * self.b * (self.high - self.low)

    def _central_mass(self):
        # 2b·p = 2b/(2b + e^{-ε}) = logistic(ε + log(2b))
        return logistic(self.epsilon + math.log(2.0 * self.b))

    def _central_left(self, x):
        return x - self.b * (self.high - self.low)
