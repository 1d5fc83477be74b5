"""Wording shared by messages and reports: one number format everywhere."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``"1 trajectory"``, ``"2,345 trajectories"``: the count with thousands separators and the right noun.

    ``plural`` defaults to ``singular + "s"``, or ``"…ies"`` for a noun ending in a consonant + ``y``.
    """
    if plural is None:
        plural = (singular[:-1] + "ies" if singular.endswith("y") and singular[-2:-1] not in "aeiou"
                  else singular + "s")
    return f"{int(n):,} {singular if int(n) == 1 else plural}"
