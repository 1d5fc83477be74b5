"""What a loader read, kept and dropped: the report stored in ``.attrs["report"]``.

Every loader returns a frame whose ``attrs["report"]`` is a :class:`LoadReport`.
Its invariant is ``rows_read == rows_kept + n_dropped``: a row that is not in the
frame is listed, by reason, with its line number.  ``strict=True`` turns any drop
into a :class:`DroppedRowsError`.
"""

from __future__ import annotations

import numpy as np

from .._text import counted
from ..errors import TracsError

__all__ = ["DROP_REASONS", "LoadReport", "DroppedRowsError"]

#: Why a row can be dropped, in the order the checks run (a row gets the first
#: reason that applies, so the counts add up to the number of dropped rows).
DROP_REASONS = {
    "bad_fields": "the line has more or fewer fields than the format (the parser skipped it)",
    "bad_user": "the user id is empty (or, for Foursquare and Gowalla, not an integer)",
    "bad_time": "the time is empty or cannot be parsed",
    "bad_coords": "latitude or longitude is empty, not a number, NaN or infinite",
    "out_of_range": "latitude outside [-90, 90] or longitude outside [-180, 180]",
    "duplicate": "a repeat of an earlier row, dropped on request (``duplicates=``)",
}

#: the columns (by role: user, time, lat, lon) each check reads
REASON_COLUMNS = {"bad_user": ("user",), "bad_time": ("time",), "bad_coords": ("lat", "lon"),
                  "out_of_range": ("lat", "lon")}

_SHOW_LINES = 5


def _show(lines) -> str:
    head = ", ".join(str(int(v)) for v in lines[:_SHOW_LINES])
    return head + (", ..." if len(lines) > _SHOW_LINES else "")


class LoadReport(dict):
    """What a loader read, what it kept and what it dropped, and why.

    A plain, JSON-serialisable ``dict`` (so that frames carrying it in
    ``attrs`` can still be written to Parquet), with read-only attribute access
    to its keys.  Treat it as immutable: copies of a frame share it.

    Keys / attributes
    -----------------
    source : str
        The file name, or ``"<DataFrame>"`` / ``"<synthetic>"``.
    format : str
        The format read, e.g. ``"foursquare-tsv"``, ``"gowalla-csv"``, ``"csv"``.
    rows_read : int
        Data records found (header and blank lines excluded).
    rows_kept : int
        Rows in the returned frame.
    dropped : dict of str to list of int
        For each reason of :data:`DROP_REASONS` that occurred, the line numbers
        (see ``position``) of the dropped rows, ascending.
    exact_duplicates : list of int
        Lines of rows identical (in every column read) to an earlier row, whether
        they were kept or dropped.
    repeated_times : list of int
        Lines of rows that repeat the (user, time) pair of an earlier row but differ
        in some other column (e.g. the venue), whether kept or dropped.
    duplicates : str
        The duplicate policy applied: ``"keep"``, ``"drop_exact"`` or
        ``"drop_user_time"``.
    blank_lines : list of int
        Lines with no values at all (not records: neither read nor dropped).
    position : str
        ``"line"``: 1-based physical line numbers of the file (the header is line 1),
        counting one record per line; ``"row"``: 0-based row positions of an input
        frame (or Parquet file).
    notes : list of str
        Anything else worth knowing (encoding fallback, naive times read as UTC, ...).
    columns : dict of str to str
        The file's column read for each role (``user``, ``time``, ``lat``, ``lon``),
        when the reader knows them: drop messages name them (:meth:`describe_drop`).
    untimed : list of int
        Lines (rows) of points kept without a time of their own (GPX points with
        no ``<time>``): their ``datetime`` is missing and they keep the file's
        order.

    The invariant ``rows_read == rows_kept + n_dropped`` always holds.
    """

    def __init__(self, *, source: str, format: str, rows_read: int, rows_kept: int,
                 dropped=None, exact_duplicates=(), repeated_times=(), duplicates: str = "keep",
                 blank_lines=(), position: str = "line", notes=(), untimed=(), columns=None):
        as_list = lambda a: [int(v) for v in np.asarray(a, dtype=np.int64)]  # noqa: E731
        super().__init__(
            source=str(source), format=str(format), rows_read=int(rows_read),
            rows_kept=int(rows_kept),
            dropped={str(k): as_list(v) for k, v in (dropped or {}).items()},
            exact_duplicates=as_list(exact_duplicates), repeated_times=as_list(repeated_times),
            duplicates=str(duplicates), blank_lines=as_list(blank_lines), position=str(position),
            notes=[str(n) for n in notes], untimed=as_list(untimed),
            columns={str(k): str(v) for k, v in (columns or {}).items() if v is not None})

    def __deepcopy__(self, memo):  # immutable by contract: pandas copies attrs on every operation
        return self

    def __reduce__(self):
        return (_rebuild_report, (dict(self),))

    source = property(lambda self: self["source"])
    format = property(lambda self: self["format"])
    rows_read = property(lambda self: self["rows_read"])
    rows_kept = property(lambda self: self["rows_kept"])
    dropped = property(lambda self: self["dropped"])
    exact_duplicates = property(lambda self: self["exact_duplicates"])
    repeated_times = property(lambda self: self["repeated_times"])
    duplicates = property(lambda self: self["duplicates"])
    blank_lines = property(lambda self: self["blank_lines"])
    position = property(lambda self: self["position"])
    notes = property(lambda self: self["notes"])
    untimed = property(lambda self: self.get("untimed", []))
    columns = property(lambda self: self.get("columns", {}))

    def describe_drop(self, reason: str) -> str:
        """The rule behind ``reason`` and the file's columns it read, e.g. ``"latitude outside
        [-90, 90] or longitude outside [-180, 180] in columns 'lat', 'lng'"`` (columns the
        reader did not name are left out)."""
        rule = DROP_REASONS.get(reason, reason.replace("_", " "))
        names = [self.columns[role] for role in REASON_COLUMNS.get(reason, ()) if role in self.columns]
        names = list(dict.fromkeys(names))  # a geometry column holds both coordinates
        if not names:
            return rule
        return f"{rule} in column{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)}"

    @property
    def n_dropped(self) -> int:
        """Total number of dropped rows (``rows_read - rows_kept``)."""
        return int(sum(len(v) for v in self.dropped.values()))

    def counts(self) -> dict:
        """Number of dropped rows per reason (only reasons that occurred)."""
        return {reason: len(lines) for reason, lines in self.dropped.items()}

    def summary(self) -> str:
        """A few human-readable lines."""
        word = "lines" if self.position == "line" else "rows"
        out = [f"{self.source} ({self.format}): read {self.rows_read:,} rows, "
               f"kept {self.rows_kept:,}, dropped {self.n_dropped:,}"]
        for reason, lines in self.dropped.items():
            out.append(f"  dropped {len(lines):,} {reason} ({self.describe_drop(reason)}): "
                       f"{word} {_show(lines)}")
        kept = "kept" if self.duplicates == "keep" else "see duplicates policy"
        if self.exact_duplicates:
            out.append(f"  {len(self.exact_duplicates):,} exact duplicate rows ({kept}): "
                       f"{word} {_show(self.exact_duplicates)}")
        if self.repeated_times:
            out.append(f"  {len(self.repeated_times):,} rows repeat a (user, time) pair "
                       f"with other values ({kept}): {word} {_show(self.repeated_times)}")
        if self.untimed:
            out.append(f"  {counted(len(self.untimed), 'point')} without a time (kept in the file's order, "
                       f"time left empty): {word} {_show(self.untimed)}")
        if self.blank_lines:
            out.append(f"  {len(self.blank_lines):,} blank lines ignored: {_show(self.blank_lines)}")
        out.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.summary()


def _rebuild_report(data: dict) -> LoadReport:
    return LoadReport(**data)


class DroppedRowsError(TracsError, ValueError):
    """Raised by a loader with ``strict=True`` when any row would be dropped.

    The full :class:`LoadReport` is in the ``report`` attribute.
    """

    def __init__(self, report: LoadReport):
        super().__init__("strict=True and rows would be dropped:\n" + report.summary())
        self.report = report
