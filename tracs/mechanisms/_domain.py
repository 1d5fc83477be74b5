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
from ..errors import InputError, InputTypeError

__all__ = ["Interval", "Circle", "RealLine", "Categories"]


@dataclass(frozen=True)
class Interval:
    """The closed interval ``[low, high]`` with the distance ``|a - b|``."""

    low: float
    high: float

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise InputError(f"interval bounds must be finite, got [{self.low}, {self.high}]")
        if not self.low < self.high:
            raise InputError(f"need low < high, got low={self.low}, high={self.high}")

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
            raise InputError(
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
            raise InputError(f"period must be finite and > 0, got {self.period}")

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
            raise InputError(
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


@dataclass(frozen=True)
class Categories:
    """The finite set ``{0, 1, …, k-1}`` with the 0/1 (discrete) distance."""

    k: int

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 2:
            raise InputError(f"need an integer k >= 2, got {self.k!r}")

    @property
    def low(self) -> int:
        return 0

    @property
    def high(self) -> int:
        return self.k - 1

    def distance(self, a, b) -> np.ndarray:
        """``0`` where ``a == b``, else ``1``."""
        return (np.asarray(a) != np.asarray(b)).astype(np.float64)

    def contains(self, x) -> np.ndarray:
        x = np.asarray(x)
        return (x >= 0) & (x < self.k) & (x == np.floor(x))

    def validate(self, x, name: str = "x") -> np.ndarray:
        """Return ``x`` as an int64 array; raise for non-integers, NaN or values outside ``0..k-1``.

        Integer arrays are accepted as they are; float arrays only when every
        entry is a whole number.
        """
        arr = np.asarray(x)
        if arr.dtype.kind in "iu":
            out = arr.astype(np.int64, copy=False)
        elif arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)):
                raise InputError(f"{name} contains NaN or infinite value(s)")
            if not np.all(arr == np.floor(arr)):
                raise InputError(f"{name} must hold whole numbers (category indices)")
            out = arr.astype(np.int64)
        else:
            raise InputTypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
        if out.size and (out.min() < 0 or out.max() >= self.k):
            outside = int(np.count_nonzero((out < 0) | (out >= self.k)))
            raise InputError(f"{outside} value(s) of {name} lie outside 0..{self.k - 1}")
        return out
