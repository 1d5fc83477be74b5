"""What a release says while it runs: notes and warnings one line each, and the reader's drops.

A release never drops, moves or leaves out a row without a line naming it.  Every
line goes to a ``say(line)`` callable: :func:`printer` prints it on standard error
after a prefix (``tracs perturb: ...``); a caller may collect the lines instead.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .._text import counted
from ..errors import InputError

__all__ = ["printer", "report_read"]

_SHOW = 5


@dataclass(frozen=True)
class _Printer:
    """Prints ``PREFIX: line`` on standard error; pickles (a release on Dask says its notes on the workers)."""

    prefix: str

    def __call__(self, line: str) -> None:
        print(f"{self.prefix}: {line}", file=sys.stderr)


def printer(prefix: str = "tracs"):
    """A ``say(line)`` that prints ``PREFIX: line`` on standard error (it pickles)."""
    return _Printer(prefix)


def _shown(values, whole: bool = False) -> str:
    """The first :data:`_SHOW` of ``values`` (as whole numbers with ``whole``), then ``...`` if there are more."""
    first = [int(v) if whole else v for v in values[:_SHOW]]
    return ", ".join(str(v) for v in first) + (", ..." if len(values) > _SHOW else "")


def report_read(report, *, say, strict: bool = False, quiet: bool = False, extra=(), others=(),
                strict_flag: str = "strict=True") -> None:
    """Say what the reader dropped (count and first lines per reason) and its notes.

    Always says a summary line; ``extra`` lists more ``(what, labels)`` pairs (rows
    clipped or dropped for the region); ``others`` names the input's columns and
    elements that are not written (``not released: speed, <ele>``), even when
    ``quiet``.  With ``strict`` any drop is an :class:`~tracs.errors.InputError` (its
    message names ``strict_flag``); ``quiet`` leaves out the notes (never the drops or
    the summary).
    """
    lines = []
    dropped = 0
    if report is not None:
        word = "line" if report.get("position", "line") == "line" else "row"
        for reason, where in report.dropped.items():
            dropped += len(where)
            lines.append(f"dropped {len(where):,} row(s): {report.describe_drop(reason)}: "
                         f"{word}{'s' if len(where) > 1 else ''} {_shown(where, True)}")
        untimed = report.get("untimed", [])
        if len(untimed):
            lines.append(f"kept {counted(len(untimed), 'point')} without a time in the file's order "
                         f"(written without a time): {word}{'s' if len(untimed) > 1 else ''} "
                         f"{_shown(untimed, True)}")
        lines.extend(f"note: {note}" for note in (() if quiet else report.notes))
        if not quiet and str(report.format).startswith("gowalla") and not any("timezone" in n for n in report.notes):
            lines.append("note: Gowalla times carry no timezone: they were read as UTC (the format's convention)")
    changed = sum(len(labels) for _, labels in extra)
    outside = ""
    for what, labels in extra:
        if labels:
            lines.append(f"{what} {len(labels):,} row(s) outside the region: {_shown(labels)}")
            outside += f", {what} {len(labels):,} outside the region"
    if others:
        lines.append("not released: " + ", ".join(str(o) for o in others))
    for line in lines:
        say(line)
    if report is not None:
        left = report.rows_kept - sum(len(labels) for what, labels in extra if what == "dropped")
        say(f"read {counted(report.rows_read, 'row')}: dropped {dropped:,} for bad values{outside}; {left:,} kept")
    if strict and (dropped or changed):
        raise InputError(f"{strict_flag}: {dropped:,} row(s) dropped for bad values and {changed:,} outside "
                         "the region (listed above); nothing was written")
