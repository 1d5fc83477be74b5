"""Wording shared by messages, reports and tables: one number format everywhere.

The rule, by kind of number (every table of the command line and of the
documentation follows it):

* **counts** (points, trajectories, draws, rows): whole, with thousands
  separators — :func:`whole`, ``29,114``;
* **measured values** (errors, bounds, times, rates, ratios): rounded to
  :data:`SIGNIFICANT` (3) significant digits, written in fixed point (never in
  exponent form) with thousands separators and without trailing zeros after the
  decimal point (a value never shows more digits than were measured); digits
  before the decimal point are never rounded away, so numbers from 100 up are
  whole — :func:`significant`, ``0.0438``, ``2.6``, ``34.9``, ``17,917``;
* **uncertainties** (the half-width after ``±``): :data:`UNCERTAIN` (2)
  significant digits by the same rule — :func:`plus_minus`, ``0.453 ± 0.0014``;
* **parameters** the user chose (ε, confidence, grid size): as given, in their
  shortest form — :func:`given`, ``0.5``, ``4``.
"""

from __future__ import annotations

import math

__all__ = ["SIGNIFICANT", "UNCERTAIN", "counted", "given", "plus_minus", "significant", "whole"]

#: significant digits of a measured value
SIGNIFICANT = 3
#: significant digits of an uncertainty (a confidence half-width)
UNCERTAIN = 2


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``"1 trajectory"``, ``"2,345 trajectories"``: the count with thousands separators and the right noun.

    ``plural`` defaults to ``singular + "s"``, or ``"…ies"`` for a noun ending in a consonant + ``y``.
    """
    if plural is None:
        plural = (singular[:-1] + "ies" if singular.endswith("y") and singular[-2:-1] not in "aeiou"
                  else singular + "s")
    return f"{whole(n)} {singular if int(n) == 1 else plural}"


def whole(n) -> str:
    """A count: ``29114`` -> ``"29,114"``."""
    return f"{int(n):,}"


def _decimals(x: float, digits: int) -> int:
    return max(0, digits - 1 - math.floor(math.log10(abs(x))))


def significant(x, digits: int = SIGNIFICANT) -> str:
    """A measured value with ``digits`` significant digits (see the module docstring).

    >>> [significant(v) for v in (0.40251, 0.5, 34.89, 17917.04, 0.000231, 0.9996, 0)]
    ['0.403', '0.5', '34.9', '17,917', '0.000231', '1', '0']
    """
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    decimals = _decimals(x, digits)
    rounded = round(x, decimals)
    if rounded != 0 and _decimals(rounded, digits) < decimals:  # 0.9996 rounds to 1.00, not 1.000
        decimals = _decimals(rounded, digits)
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def plus_minus(value, half_width) -> str:
    """``value ± half-width``: :data:`SIGNIFICANT` and :data:`UNCERTAIN` digits."""
    return f"{significant(value)} ± {significant(half_width, UNCERTAIN)}"


def given(x) -> str:
    """A parameter as the user wrote it, in its shortest form: ``0.5``, ``4``, ``1,000``."""
    x = float(x)
    return whole(x) if x.is_integer() and abs(x) < 1e15 else f"{x:g}"
