"""Shared parameter validation for mechanisms on an interval or on a circle."""

from __future__ import annotations

from .._validation import check_finite
from ._domain import Circle, Interval

__all__ = ["check_interval", "IntervalInput", "CircleDomain"]


def check_interval(obj) -> None:
    """Validate and normalise the ``low``/``high`` fields of a frozen dataclass in place."""
    object.__setattr__(obj, "low", check_finite(obj.low, "low"))
    object.__setattr__(obj, "high", check_finite(obj.high, "high"))
    if not obj.low < obj.high:
        raise ValueError(f"need low < high, got low={obj.low}, high={obj.high}")


class IntervalInput:
    """Mixin: fields ``low < high`` (finite), input domain ``[low, high]``."""

    low: float
    high: float

    def _validate_parameters(self):
        check_interval(self)

    @property
    def input_domain(self) -> Interval:
        return Interval(self.low, self.high)


class CircleDomain:
    """Mixin: field ``period > 0`` (finite), input and output domain the circle ``[0, period)``."""

    period: float

    def _validate_parameters(self):
        period = check_finite(self.period, "period")
        if period <= 0:
            raise ValueError(f"period must be > 0, got {period}")
        object.__setattr__(self, "period", period)

    @property
    def input_domain(self) -> Circle:
        return Circle(self.period)

    @property
    def output_domain(self) -> Circle:
        return Circle(self.period)
