"""Times of any common kind -> UTC, saying which format was used or tried.

:func:`parse_times` reads a column of times into ``datetime64[ns]`` UTC values
(``NaT`` where a value cannot be read; the loaders then drop that row as
``bad_time`` and list its line).  With ``groups=`` (one code per value, the
user of each row) every decision below is taken for each group from that
group's own values alone (:mod:`tracs.io.time_readings`), so one user's times
never change how another user's are read:

* timestamps (Arrow / pandas / numpy) are kept; without a timezone they are local
  to ``tz`` (default UTC; a zone name such as ``Europe/Lisbon`` or a constant
  offset such as ``+01:00``, :func:`check_timezone`).  A wall time the zone skips
  (clocks jump forward) does not exist: it is unreadable (``NaT``) and the notes
  say why; a wall time the zone repeats (clocks go back) is read as its earlier
  occurrence (``ambiguous="earlier"``, the default: ``fold=0`` of
  :mod:`zoneinfo`, summer time) or its later one (``"later"``, ``fold=1``);
* numbers, and text made only of digits, are Unix epoch times: seconds,
  milliseconds, microseconds or nanoseconds told by the magnitude of the median
  value of the group (below 10^11: seconds; below 10^14: milliseconds; below
  10^17: microseconds; above: nanoseconds), the notes naming the reading and an
  example; a value of another magnitude than the rest of its group is unreadable.
  ``time_format="epoch-s"`` (``"%s"``), ``"epoch-ms"``, ``"epoch-us"`` or
  ``"epoch-ns"`` forces the unit.  Text of exactly 8 or 14 digits that reads as
  ``%Y%m%d`` / ``%Y%m%d%H%M%S`` is read so (the note says how to force epoch
  seconds instead);
* other text is read with ``time_format`` (a ``strftime`` pattern) when given;
  otherwise each group takes the reading that reads the most of its values among
  the Foursquare layout (``Sat Dec 08 05:56:34 +0000 2012``), ISO 8601 and common
  layouts with slashes, dots or dashes (``01/02/2024 08:00``); when the month-first
  and the day-first reading read as many, ``dayfirst`` decides (month first by
  default, as in pandas and the US) and the notes say so.  A value its group's
  reading cannot read is unreadable, wherever it is; when no value at all can be
  read, :class:`TimeFormatError` names what was tried and the option to give.

Nothing here silently turns a whole column into missing values.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import numpy as np

from .time_notes import describe, localise
from ..errors import InputError, InputTypeError, TracsError
from .time_readings import (CANDIDATE_FORMATS, EPOCH_FORMATS, Chosen, epoch_of_groups, epoch_to_ns, epoch_unit,
                            group_units, read_grouped, readings)
from .time_shapes import stamps_ns, try_format

__all__ = ["AMBIGUOUS", "CANDIDATE_FORMATS", "EPOCH_FORMATS", "ISO_TIME", "TimeFormatError", "TimeReader",
           "check_timezone", "epoch_to_ns", "epoch_unit", "parse_times"]

#: an ISO 8601 date and time (``2010-10-19T23:55:27Z``, ``2010-09-01 17:25:27``): the Gowalla layout
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$")
#: how a wall time a timezone repeats is read: its first occurrence (``fold=0``) or its second
AMBIGUOUS = ("earlier", "later")
_EPOCH_ALIASES = {"%s": "epoch-s"}
_NAT = np.iinfo(np.int64).min


class TimeFormatError(TracsError, ValueError):
    """The times could not be read; the message names what was tried and what to give."""


def check_timezone(tz, flag: str = "tz="):
    """A zone pandas can localise to: ``"UTC"``, an IANA name (``"Europe/Lisbon"``) or a
    constant offset (``"+01:00"``, ``"-0330"``, ``"UTC+2"``; returned as a
    :class:`datetime.timezone`).  Anything else is a ``ValueError`` naming ``flag``."""
    if tz is None or tz == "UTC" or isinstance(tz, dt.tzinfo):
        return "UTC" if tz is None else tz
    text = str(tz).strip()
    match = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes >= 60:
            raise InputError(f"{flag} {tz}: an offset must be within ±18:00")
        delta = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InputError(f"{flag} {tz}: not a timezone; give a name such as Europe/Lisbon or Asia/Shanghai, "
                         "or a constant offset such as +01:00") from None
    return text


def _group_codes(groups, n: int):
    """Dense codes ``0 … G-1`` of ``groups`` (None: one group) and ``G``."""
    if groups is None:
        return np.zeros(n, dtype=np.int64), 1
    import pandas as pd

    groups = np.asarray(groups)
    if groups.ndim != 1 or len(groups) != n:
        raise InputError(f"groups= needs one code per value ({n:,}), got {groups.shape}")
    if groups.dtype.kind not in "iu":
        raise InputTypeError(f"groups= must be integer codes, got {groups.dtype}")
    codes, uniques = pd.factorize(groups)
    return codes.astype(np.int64), max(len(uniques), 1)


class TimeReader:
    """Reads a time column, or successive chunks of one, each group its own way
    (see :func:`parse_times`).

    Called with ``groups``, every group's reading is decided from that call's values of
    the group (give each group's values in one call).  Called without, the values are
    one group, and the first chunk holding a value decides how every later chunk is read,
    so a file read in batches gives the same times as read whole.
    """

    def __init__(self, *, time_format=None, dayfirst=False, tz="UTC", ambiguous="earlier", notes=None,
                 flags=None, group_name="user"):
        self.flags = flags or {}
        time_format = _EPOCH_ALIASES.get(time_format, time_format)
        if isinstance(time_format, str) and time_format.startswith("epoch") and time_format not in EPOCH_FORMATS:
            raise InputError(f"{self.flags.get('time_format', 'time_format=')} {time_format}: the epoch units are "
                             f"{', '.join(EPOCH_FORMATS)}")
        if ambiguous not in AMBIGUOUS:
            raise InputError(f"{self.flags.get('ambiguous', 'ambiguous=')} {ambiguous}: choose "
                             f"{' or '.join(AMBIGUOUS)}")
        self.time_format, self.dayfirst, self.ambiguous = time_format, bool(dayfirst), ambiguous
        self.tz = check_timezone(tz, self.flags.get("tz", "tz="))
        self.notes = [] if notes is None else notes
        self.group_name = group_name
        self._fixed = None
        self._groups_named = False
        self._said = set()

    def _note(self, text):
        if text not in self._said:
            self._said.add(text)
            self.notes.append(text)

    def __call__(self, values, groups=None) -> np.ndarray:
        """``values`` -> datetime64[ns] UTC; ``groups``: one integer code per value (None: one group)."""
        import pandas as pd

        if hasattr(values, "to_pandas"):  # Arrow
            import pyarrow as pa
            import pyarrow.compute as pc

            if isinstance(values, pa.ChunkedArray) and values.num_chunks == 0:
                values = pa.array([], values.type)
            if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                trimmed = pc.utf8_trim_whitespace(values).cast(pa.large_string())  # text stays in Arrow
                values = pd.Series(pd.arrays.ArrowStringArray(trimmed), copy=False)
            else:
                values = values.to_pandas()
        s = pd.Series(values, copy=False).reset_index(drop=True)
        codes, n_groups = _group_codes(groups, len(s))
        fixed = self._fixed if groups is None else None  # chunks without groups follow the first
        self._groups_named = groups is not None
        if isinstance(s.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(s.dtype):
            ns, naive = stamps_ns(s)
            return self._place(ns, np.full(len(ns), naive)).view("datetime64[ns]")
        if pd.api.types.is_bool_dtype(s.dtype):
            raise InputTypeError("the time column holds booleans, not times")
        if pd.api.types.is_numeric_dtype(s.dtype):
            ns, chosen = self._numbers(s, codes, n_groups, fixed)
        else:
            if not (isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"):
                s = s.astype("string[pyarrow]")
            ns, chosen = self._text(s.str.strip(), codes, n_groups, fixed)
        if groups is None and self._fixed is None and chosen is not None and (chosen.reading >= 0).any():
            self._fixed = chosen
        return ns.view("datetime64[ns]")

    def _epoch_table(self, unit) -> Chosen:
        """Every group read as epoch numbers in ``unit`` (an index of the units)."""
        table = readings(self.dayfirst)
        epoch = next(i for i, r in enumerate(table) if r.kind == "epoch")
        return Chosen(table, np.array([epoch]), np.array([unit]), np.zeros(1, bool))

    # ------------------------------------------------------------------ numbers

    def _numbers(self, s, codes, n_groups, fixed):
        import pandas as pd

        values = s.to_numpy(dtype=np.int64) if pd.api.types.is_integer_dtype(s.dtype) and not s.isna().any() \
            else s.to_numpy(dtype=np.float64, na_value=np.nan)
        present = np.isfinite(values) if values.dtype.kind == "f" else np.ones(len(values), bool)
        if self.time_format is not None and self.time_format not in EPOCH_FORMATS:
            raise TimeFormatError(f"the times are numbers (e.g. {s.iloc[0]}), not text in the layout "
                                  f"{self.time_format!r}: give {self.flags.get('time_format', 'time_format=')} "
                                  f"{' or '.join(EPOCH_FORMATS)} (Unix epoch), or none to detect the unit")
        if self.time_format is not None:
            units = np.full(n_groups, list(EPOCH_FORMATS).index(self.time_format))
        elif fixed is not None:
            units = np.full(n_groups, fixed.unit[0])
        else:
            units = group_units(values, codes, n_groups)
        ns = epoch_of_groups(values, codes, units, self.time_format)
        table = self._epoch_table(0)
        has = np.bincount(codes[present], minlength=n_groups) > 0
        chosen = Chosen(table.table, np.where(has, table.reading[0], -1), units, np.zeros(n_groups, bool))
        self._say(chosen, s, codes, present, ns)
        return ns, chosen

    # ------------------------------------------------------------------ text

    def _text(self, text, codes, n_groups, fixed):
        present = (text.notna() & (text != "")).to_numpy(dtype=bool, na_value=False)
        if self.time_format is not None and self.time_format not in EPOCH_FORMATS:
            ns, naive = self._given_format(text, present)
            return self._place(ns, naive), None
        if not present.any():
            return np.full(len(text), _NAT, dtype=np.int64), None
        deciding = fixed is None and self.time_format is None
        if self.time_format in EPOCH_FORMATS:
            fixed = self._epoch_table(list(EPOCH_FORMATS).index(self.time_format))
        ns, naive, chosen = read_grouped(text, present, codes, n_groups, dayfirst=self.dayfirst,
                                         forced_unit=self.time_format, fixed=fixed, notes=self.notes)
        if deciding and not (ns != _NAT).any():
            self._unreadable(text[present].iloc[0])
        self._say(chosen, text, codes, present, ns)
        return self._place(ns, naive), chosen

    def _given_format(self, text, present):
        fmt_flag = self.flags.get("time_format", "time_format=")
        mixed = []
        ns, naive = stamps_ns(try_format(text, self.time_format, mixed))
        if present.any() and not (ns != _NAT).any():
            raise TimeFormatError(f"no time matches the format {self.time_format!r} given with "
                                  f"{fmt_flag} (e.g. {text[present].iloc[0]!r}); check the pattern (strftime codes)")
        if present.any():
            self._note(f"times read with the format {self.time_format!r}")
        for note in mixed:
            self._note(note)
        return ns, np.full(len(ns), naive)

    def _unreadable(self, first):
        fmt_flag = self.flags.get("time_format", "time_format=")
        raise TimeFormatError(
            f"cannot read times like {first!r}: tried ISO 8601 and {len(CANDIDATE_FORMATS)} common layouts "
            f"(such as '%m/%d/%Y %H:%M' and '%d/%m/%Y %H:%M'); give the layout with {fmt_flag} "
            f"(strftime codes, e.g. '%d.%m.%Y %H:%M', or {'|'.join(EPOCH_FORMATS)} for Unix epoch numbers)")

    def _say(self, chosen, text, codes, present, ns):
        for note in describe(chosen, text, codes, present, ns, flags=self.flags, dayfirst=self.dayfirst,
                             forced=self.time_format, group_name=self.group_name if self._groups_named else None):
            self._note(note)

    # ------------------------------------------------------------------ timezone

    def _place(self, ns: np.ndarray, naive: np.ndarray) -> np.ndarray:
        """Wall times (``naive``) placed in the timezone and converted to UTC; ``ns`` in place."""
        wall = naive & (ns != _NAT)
        if wall.any():
            if self.tz == "UTC":
                self._note("times without a timezone were read as UTC")
            else:
                self._note(f"times without a timezone were read in {self.tz} and converted to UTC")
                rows = np.flatnonzero(wall)
                ns[rows] = localise(ns[rows], self.tz, self.ambiguous, self._note, self.flags)
        return ns


def parse_times(values, *, time_format: str | None = None, dayfirst: bool = False, tz: str = "UTC",
                ambiguous: str = "earlier", notes: list | None = None, flags: dict | None = None,
                groups=None) -> np.ndarray:
    """Read times into ``datetime64[ns]`` UTC (see the module docstring).

    Parameters
    ----------
    values : pyarrow.Array, pyarrow.ChunkedArray, pandas.Series or array-like
    time_format : str, optional
        ``strftime`` pattern of text times (e.g. ``"%d/%m/%Y %H:%M"``), or an epoch
        unit (``"epoch-s"``, ``"epoch-ms"``, ``"epoch-us"``, ``"epoch-ns"``).
    dayfirst : bool, default False
        Read day/month orders that read both ways day first.
    tz : str, default "UTC"
        Timezone of times written without one.
    ambiguous : {"earlier", "later"}, default "earlier"
        A wall time ``tz`` repeats (clocks go back) is read as its first occurrence
        (``fold=0``) or its second (``fold=1``).  A wall time ``tz`` skips is ``NaT``.
    notes : list, optional
        Receives one line per decision (format used, formats tried, timezone).
    flags : dict, optional
        Option names for messages: keys ``"time_format"``, ``"dayfirst"``, ``"tz"``,
        ``"ambiguous"``.
    groups : array-like of int, optional
        One code per value (the user of each row): the layout, the day/month order
        and the epoch unit are decided for each group from its own values alone.
        None: all values are one group.

    Returns
    -------
    numpy.ndarray of datetime64[ns]
        UTC, ``NaT`` where a value is missing or unreadable.

    Raises
    ------
    TimeFormatError
        No value could be read (the message lists what was tried and the option
        to give), or none matches the ``time_format`` given.
    TypeError
        Booleans, or ``groups`` that are not integers.
    ValueError
        An unknown epoch unit, ``ambiguous`` value or timezone, or ``groups`` of
        another length.
    """
    return TimeReader(time_format=time_format, dayfirst=dayfirst, tz=tz, ambiguous=ambiguous, notes=notes,
                      flags=flags)(values, groups)
