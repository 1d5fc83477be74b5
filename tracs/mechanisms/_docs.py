"""Shared docstring text: one description of the parameters that many mechanisms take.

A docstring names a shared entry by a line that holds only ``%(name)s``;
:func:`fill_doc` replaces that line by the entry, indented like the placeholder.
An entry is a string or a function of the class (to show its field defaults).
Nothing else in the docstring is touched, so ``%`` and braces elsewhere are safe.
"""

from __future__ import annotations

import math
import re

__all__ = ["fill_doc", "MECHANISM_PARAMETERS"]

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def _interval(cls) -> str:
    low, high = cls.low, cls.high  # the dataclass defaults
    return (f"low, high : float\n"
            f"    The public input interval, ``low < high`` (default ``[{low:g}, {high:g}]``).")


def _period(cls) -> str:
    default = "``2π``" if cls.period == 2 * math.pi else f"``{cls.period:g}``"
    return f"period : float\n    Circumference, {default} by default (angles in radians)."


_HEADER = "Parameters\n----------\n"
_EPSILON = "epsilon : float\n    Privacy parameter, ``> 0``."

#: the parameters sections of the one-dimensional mechanisms (more may follow the
#: placeholder line)
MECHANISM_PARAMETERS = {
    "epsilon_parameters": _HEADER + _EPSILON,
    "interval_parameters": lambda cls: _HEADER + _EPSILON + "\n" + _interval(cls),
    "circle_parameters": lambda cls: _HEADER + _EPSILON + "\n" + _period(cls),
}


def fill_doc(entries: dict):
    """Class decorator: replace the ``%(name)s`` lines of the docstring by ``entries[name]``.

    Apply it above ``@dataclass`` so that field defaults are known.  An unknown
    name raises ``KeyError`` at import time.
    """

    def decorate(cls):
        def replace(match):
            indent, name = match.groups()
            entry = entries[name]
            text = entry(cls) if callable(entry) else entry
            return "\n".join(indent + line if line else line for line in text.splitlines())

        if cls.__doc__:
            cls.__doc__ = _PLACEHOLDER.sub(replace, cls.__doc__)
        return cls

    return decorate
