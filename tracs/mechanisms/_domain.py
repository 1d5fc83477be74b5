"""Input and output domains of one-dimensional mechanisms: intervals and circles.

A domain knows its bounds, how to validate inputs, how to measure the distance
between two of its points, and how to bring a sampled value back inside itself
(for floating-point error only; this is applied after sampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_float_array

__all__ = ["Interval", "Circle", "RealLine"]


@dataclass(frozen=True)
class Interval:
    """The closed interval ``[low, high]`` with the distance ``|a - b|``."""

    low: float
    high: float

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"interval bounds must be finite, got [{self.low}, {self.high}]")
        if not self.low < self.high:
            raise ValueError(f"need low < high, got low={self.low}, high={self.high}")

    @property
    def width(self) -> float:
        return self.high - self.low

    def distance(self, a, b) -> np.ndarray:
        """Absolute difference ``|a - b|``."""
        return np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))

    def contains(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return (x >= self.low) & (x <= self.high)

    def validate(self, x, name: str = "x") -> np.ndarray:
        """Return ``x`` as a float array; raise ``ValueError`` if any entry is NaN or outside."""
        arr = as_float_array(x, name)
        if arr.size and (arr.min() < self.low or arr.max() > self.high):
            outside = int(np.count_nonzero((arr < self.low) | (arr > self.high)))
            raise ValueError(
                f"{outside} value(s) of {name} lie outside the input domain "
                f"[{self.low}, {self.high}]"
            )
        return arr

    def clip(self, y: np.ndarray) -> np.ndarray:
        """Clamp in place to ``[low, high]`` (floating-point guard, after sampling)."""
        return np.clip(y, self.low, self.high, out=y)


@dataclass(frozen=True)
class RealLine:
    """The whole real line (output domain of unbounded additive-noise mechanisms)."""

    low: float = -math.inf
    high: float = math.inf

    def distance(self, a, b) -> np.ndarray:
        return np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))

    def contains(self, x) -> np.ndarray:
        return np.isfinite(np.asarray(x, dtype=float))

    def clip(self, y: np.ndarray) -> np.ndarray:
        return y


@dataclass(frozen=True)
class Circle:
    """The circle ``[0, period)`` with the circular distance ``min(|a-b|, period-|a-b|)``."""

    period: float = 2 * math.pi

    def __post_init__(self):
        if not (math.isfinite(self.period) and self.period > 0):
            raise ValueError(f"period must be finite and > 0, got {self.period}")

    @property
    def low(self) -> float:
        return 0.0

    @property
    def high(self) -> float:
        return self.period

    @property
    def width(self) -> float:
        return self.period

    def distance(self, a, b) -> np.ndarray:
        d = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) % self.period
        return np.minimum(d, self.period - d)

    def contains(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return (x >= 0.0) & (x < self.period)

    def validate(self, x, name: str = "x") -> np.ndarray:
        """Return ``x`` as a float array; raise ``ValueError`` outside ``[0, period)``.

        Use :meth:`wrap` first to bring arbitrary angles onto the circle.
        """
        arr = as_float_array(x, name)
        if arr.size and (arr.min() < 0.0 or arr.max() >= self.period):
            outside = int(np.count_nonzero((arr < 0.0) | (arr >= self.period)))
            raise ValueError(
                f"{outside} value(s) of {name} lie outside the circle [0, {self.period})"
            )
        return arr

    def wrap(self, y) -> np.ndarray:
        """Reduce angles to ``[0, period)``; never returns ``period`` itself.

        ``np.mod`` of a tiny negative number returns ``period`` exactly in
        floating point; such values are mapped to 0 (the same point).
        """
        y = np.mod(y, self.period)
        return np.where(y >= self.period, 0.0, y)

    def clip(self, y: np.ndarray) -> np.ndarray:
        return self.wrap(y)
