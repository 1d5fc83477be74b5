"""Shared parameter validation for mechanisms on an interval or on a circle."""

from __future__ import annotations

from .._validation import check_finite
from ..errors import InputError
from ._domain import Circle, Interval

__all__ = ["check_interval", "check_parameter", "IntervalInput", "CircleDomain"]


def check_interval(obj) -> None:
    """Validate and normalise the ``low``/``high`` fields of a frozen dataclass in place."""
    object.__setattr__(obj, "low", check_finite(obj.low, "low"))
    object.__setattr__(obj, "high", check_finite(obj.high, "high"))
    if not obj.low < obj.high:
        raise InputError(f"need low < high, got low={obj.low}, high={obj.high}")


def check_parameter(obj, name: str, valid, requirement: str, *, optional: bool = False) -> None:
    """Validate and normalise the float field ``name`` of a frozen dataclass in place.

    The value must be finite and satisfy ``valid(value)``; otherwise ``ValueError``
    says "``name`` must ``requirement``".  With ``optional=True`` a ``None`` is kept.
    """
    value = getattr(obj, name)
    if optional and value is None:
        return
    value = check_finite(value, name)
    if not valid(value):
        raise InputError(f"{name} must {requirement}, got {value}")
    object.__setattr__(obj, name, value)


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
        check_parameter(self, "period", lambda v: v > 0, "be > 0")

    @property
    def input_domain(self) -> Circle:
        return Circle(self.period)

    @property
    def output_domain(self) -> Circle:
        return Circle(self.period)
