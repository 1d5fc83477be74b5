"""Times of any common kind -> UTC, saying which format was used or tried.

:func:`parse_times` reads a column of times into ``datetime64[ns]`` UTC values
(``NaT`` where a value cannot be read; the loaders then drop that row as
``bad_time`` and list its line):

* timestamps (Arrow / pandas / numpy) are kept; without a timezone they are local
  to ``tz`` (default UTC; a zone name such as ``Europe/Lisbon`` or a constant
  offset such as ``+01:00``, :func:`check_timezone`);
* numbers, and text made only of digits, are Unix epoch times: seconds,
  milliseconds, microseconds or nanoseconds told by the magnitude of the median
  value (below 10^11: seconds; below 10^14: milliseconds; below 10^17:
  microseconds; above: nanoseconds), the notes naming the reading and an example;
  a value of another magnitude than the rest is unreadable (``NaT``).
  ``time_format="epoch-s"`` (``"%s"``), ``"epoch-ms"``, ``"epoch-us"`` or
  ``"epoch-ns"`` forces the unit.  Text of exactly 8 or 14 digits that reads as
  ``%Y%m%d`` / ``%Y%m%d%H%M%S`` is read so (the note says how to force epoch
  seconds instead);
* other text is read with ``time_format`` (a ``strftime`` pattern) when given;
  otherwise the Foursquare layout (``Sat Dec 08 05:56:34 +0000 2012``) when the
  first value has it, else ISO 8601.  When no value reads as ISO 8601, common
  layouts with slashes, dots or dashes (``01/02/2024 08:00``) are tried: one that
  reads every value is used and named in the notes; when both the month-first and
  the day-first reading fit, ``dayfirst`` decides (month first by default, as in
  pandas and the US) and the notes say so; when nothing fits, :class:`TimeFormatError`
  names what was tried and the option to give.

Nothing here silently turns a whole column into missing values.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["CANDIDATE_FORMATS", "EPOCH_FORMATS", "ISO_TIME", "TimeFormatError", "TimeReader", "check_timezone",
           "parse_times"]

#: an ISO 8601 date and time (``2010-10-19T23:55:27Z``, ``2010-09-01 17:25:27``): the Gowalla layout
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$")

#: layouts tried when the text is not ISO 8601: (month-first, day-first) pairs or single ones
_DATES = (("%m/%d/%Y", "%d/%m/%Y"), ("%m-%d-%Y", "%d-%m-%Y"), ("%m.%d.%Y", "%d.%m.%Y"),
          ("%m/%d/%y", "%d/%m/%y"), ("%Y/%m/%d", None), ("%Y.%m.%d", None), ("%Y%m%d", None))
_CLOCKS = (" %H:%M:%S", " %H:%M", " %I:%M:%S %p", " %I:%M %p", "T%H:%M:%S", "")
CANDIDATE_FORMATS = tuple((m + c, None if d is None else d + c) for m, d in _DATES for c in _CLOCKS)
_SAMPLE = 200
#: ``time_format`` values naming Unix epoch units -> nanoseconds per unit
EPOCH_FORMATS = {"epoch-s": 10**9, "epoch-ms": 10**6, "epoch-us": 10**3, "epoch-ns": 1}
_EPOCH_ALIASES = {"%s": "epoch-s"}
_EPOCH_NAMES = {"epoch-s": "seconds", "epoch-ms": "milliseconds", "epoch-us": "microseconds",
                "epoch-ns": "nanoseconds"}
#: upper bounds of the median magnitude of each unit, in order
_EPOCH_BANDS = ((1e11, "epoch-s"), (1e14, "epoch-ms"), (1e17, "epoch-us"), (np.inf, "epoch-ns"))
_NAT = np.iinfo(np.int64).min


class TimeFormatError(ValueError):
    """The times could not be read; the message names what was tried and what to give."""


def check_timezone(tz, flag: str = "tz="):
    """A zone pandas can localise to: ``"UTC"``, an IANA name (``"Europe/Lisbon"``) or a
    constant offset (``"+01:00"``, ``"-0330"``, ``"UTC+2"``; returned as a
    :class:`datetime.timezone`).  Anything else is a ``ValueError`` naming ``flag``."""
    import datetime as dt
    import re

    if tz is None or tz == "UTC" or isinstance(tz, dt.tzinfo):
        return "UTC" if tz is None else tz
    text = str(tz).strip()
    match = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes >= 60:
            raise ValueError(f"{flag} {tz}: an offset must be within ±18:00")
        delta = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-delta if sign == "-" else delta)
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{flag} {tz}: not a timezone; give a name such as Europe/Lisbon or Asia/Shanghai, "
                         "or a constant offset such as +01:00") from None
    return text


def epoch_unit(magnitude: float) -> str:
    """The epoch unit (``"epoch-s"`` …) whose range holds ``magnitude`` (see the module docstring)."""
    return next(unit for bound, unit in _EPOCH_BANDS if magnitude < bound)


def epoch_to_ns(values, unit: str, *, check_band: bool = False) -> np.ndarray:
    """Epoch numbers (int64 or float64) in ``unit`` -> int64 nanoseconds (the NaT integer where
    not finite, out of range, or with ``check_band`` of another magnitude than ``unit``)."""
    factor = EPOCH_FORMATS[unit]
    values = np.asarray(values)
    out = np.full(len(values), _NAT, dtype=np.int64)
    limit = np.iinfo(np.int64).max // factor
    if values.dtype.kind in "iu":
        ok = np.abs(values) <= limit
        magnitude = np.abs(values).astype(np.float64)
        if check_band:
            ok &= _in_band(magnitude, unit)
        out[ok] = values[ok].astype(np.int64) * factor
        return out
    values = values.astype(np.float64)
    ok = np.isfinite(values) & (np.abs(values) < limit)
    if check_band:
        ok &= _in_band(np.abs(np.where(ok, values, 0.0)), unit)
    whole = ok & (values == np.round(values)) & (np.abs(values) < 2.0**53)
    out[whole] = values[whole].astype(np.int64) * factor
    part = ok & ~whole
    seconds = np.floor(values[part])  # whole units exactly, the fraction rounded to the nanosecond
    out[part] = seconds.astype(np.int64) * factor + np.round((values[part] - seconds) * factor).astype(np.int64)
    return out


def _in_band(magnitude: np.ndarray, unit: str) -> np.ndarray:
    bounds = [0.0] + [b for b, _ in _EPOCH_BANDS]
    k = [u for _, u in _EPOCH_BANDS].index(unit)
    low = bounds[k] if k else -1.0
    return (magnitude >= low) & (magnitude < bounds[k + 1])


def _text_series(values):
    import pandas as pd

    s = pd.Series(values, copy=False).reset_index(drop=True)
    return s.astype("string").str.strip()


_RELATIVE = ("now", "today", "yesterday", "tomorrow")
_NUMBER = r"[+-]?\d+(?:\.\d*)?"
_COMPACT = {8: "%Y%m%d", 14: "%Y%m%d%H%M%S"}


def _compact_layout(sample):
    """``"%Y%m%d"`` / ``"%Y%m%d%H%M%S"`` when every value has exactly 8 / 14 digits and reads so."""
    lengths = sample.str.len().unique()
    if len(lengths) != 1 or int(lengths[0]) not in _COMPACT:
        return None
    fmt = _COMPACT[int(lengths[0])]
    return fmt if _try_format(sample, fmt).notna().all() else None


def _epoch_numbers(text) -> np.ndarray:
    """Text -> int64 when every value is an integer (exact, through Arrow), else float64 (NaN where
    not a number)."""
    import pandas as pd
    import pyarrow as pa

    if isinstance(text.dtype, pd.StringDtype) and text.dtype.storage == "pyarrow" and not text.isna().any():
        try:
            return pa.chunked_array(text.array._pa_array).cast(pa.int64()).to_numpy()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _try_format(text, fmt, notes=None):
    """``pd.to_datetime`` with ``fmt``; words pandas reads relative to the clock ("now",
    "today") are not times of the data and give NaT."""
    import pandas as pd

    text = text.where(~text.str.lower().isin(_RELATIVE))
    try:
        return pd.to_datetime(text, format=fmt, errors="coerce")
    except ValueError:  # mixed UTC offsets
        if notes is not None:
            notes.append("times with mixed UTC offsets: converted to UTC, those without one read as UTC")
        return pd.to_datetime(text, format=fmt, errors="coerce", utc=True)


class TimeReader:
    """Reads successive chunks of one time column the same way (see :func:`parse_times`).

    The first chunk holding a value decides how text is read (the given format, the
    Foursquare layout, ISO 8601 or a detected layout); every later chunk is read
    the same way, so a file read in batches gives the same times as read whole.
    """

    def __init__(self, *, time_format=None, dayfirst=False, tz="UTC", notes=None, flags=None):
        self.flags = flags or {}
        time_format = _EPOCH_ALIASES.get(time_format, time_format)
        if isinstance(time_format, str) and time_format.startswith("epoch") and time_format not in EPOCH_FORMATS:
            raise ValueError(f"{self.flags.get('time_format', 'time_format=')} {time_format}: the epoch units are "
                             f"{', '.join(EPOCH_FORMATS)}")
        self.time_format, self.dayfirst = time_format, bool(dayfirst)
        self.tz = check_timezone(tz, self.flags.get("tz", "tz="))
        self.notes = [] if notes is None else notes
        self._how = None
        self._said = set()

    def _note(self, text):
        if text not in self._said:
            self._said.add(text)
            self.notes.append(text)

    def _utc(self, series):
        import pandas as pd

        if isinstance(series.dtype, pd.DatetimeTZDtype):  # epoch integers are UTC whatever the zone
            stamps = series.dt.as_unit("ns").array
            values = stamps.asi8.view("datetime64[ns]").copy()
            values[np.asarray(stamps.isna())] = np.datetime64("NaT")
            return values
        if self.tz == "UTC":
            if series.notna().any():
                self._note("times without a timezone were read as UTC")
        else:
            if series.notna().any():
                self._note(f"times without a timezone were read in {self.tz} and converted to UTC")
            series = series.dt.tz_localize(self.tz, ambiguous="NaT", nonexistent="NaT") \
                .dt.tz_convert("UTC").dt.tz_localize(None)
        return series.to_numpy(dtype="datetime64[ns]")

    def __call__(self, values) -> np.ndarray:
        import pandas as pd

        text = None
        if hasattr(values, "to_pandas"):  # Arrow
            import pyarrow as pa
            import pyarrow.compute as pc

            if isinstance(values, pa.ChunkedArray) and values.num_chunks == 0:
                values = pa.array([], values.type)
            if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                trimmed = pc.utf8_trim_whitespace(values).cast(pa.large_string())  # text stays in Arrow
                text = pd.Series(pd.arrays.ArrowStringArray(trimmed), copy=False)
            else:
                values = values.to_pandas()
        if text is not None:
            return self._text(text)
        s = pd.Series(values, copy=False).reset_index(drop=True)
        if isinstance(s.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(s.dtype):
            return self._utc(s)
        if pd.api.types.is_bool_dtype(s.dtype):
            raise TypeError("the time column holds booleans, not times")
        if pd.api.types.is_numeric_dtype(s.dtype):
            values = s.to_numpy(dtype=np.int64) if pd.api.types.is_integer_dtype(s.dtype) and not s.isna().any() \
                else s.to_numpy(dtype=np.float64, na_value=np.nan)
            if self._how is None:
                present = values[np.isfinite(values)] if values.dtype.kind == "f" else values
                if len(present) == 0:
                    return np.full(len(values), np.datetime64("NaT"), dtype="datetime64[ns]")
                self._how = self._choose_epoch(present, str(s.iloc[0]))
            if self._how[0] != "epoch":
                return self._text(_text_series(s))
            return self._epoch(values)
        return self._text(_text_series(s))

    def _choose_epoch(self, present: np.ndarray, first: str):
        """How to read epoch numbers: the unit given, else the one of the median magnitude."""
        if self.time_format in EPOCH_FORMATS:
            self._note(f"times read as Unix epoch {_EPOCH_NAMES[self.time_format]} (UTC), as given with "
                       f"{self.flags.get('time_format', 'time_format=')} {self.time_format}")
            return ("epoch", self.time_format, False)
        if self.time_format is not None:
            raise TimeFormatError(f"the times are numbers (e.g. {first}), not text in the layout "
                                  f"{self.time_format!r}: give {self.flags.get('time_format', 'time_format=')} "
                                  f"{' or '.join(EPOCH_FORMATS)} (Unix epoch), or none to detect the unit")
        unit = epoch_unit(float(np.median(np.abs(present.astype(np.float64)))))
        example = epoch_to_ns(present[:1], unit)[0]
        shown = str(np.datetime64(int(example), "ns").astype("datetime64[s]")) if example != _NAT else "?"
        self._note(f"times read as Unix epoch {_EPOCH_NAMES[unit]} (UTC), told by their magnitude ({first} = "
                   f"{shown}); {self.flags.get('time_format', 'time_format=')} "
                   f"{'|'.join(EPOCH_FORMATS)} forces a unit")
        return ("epoch", unit, True)

    def _epoch(self, values: np.ndarray) -> np.ndarray:
        _, unit, check = self._how
        ns = epoch_to_ns(values, unit, check_band=check)
        if check:
            finite = np.isfinite(values) if values.dtype.kind == "f" else np.ones(len(values), bool)
            odd = int((finite & (ns == _NAT)).sum())
            if odd:
                self._note(f"{odd:,} time(s) of another magnitude than Unix epoch {_EPOCH_NAMES[unit]} "
                           "were not read (dropped as bad_time)")
        return ns.view("datetime64[ns]")

    def _text(self, text):
        """Stripped text (a pandas string Series) -> datetime64[ns] UTC."""
        present = (text.notna() & (text != "")).to_numpy(dtype=bool, na_value=False)
        if self._how is None:
            if not present.any():
                return np.full(len(text), np.datetime64("NaT"), dtype="datetime64[ns]")
            self._how = self._choose(text[present])
        kind, fmt = self._how[:2]
        if kind == "epoch":
            return self._epoch(_epoch_numbers(text))
        if kind == "foursquare":
            from .foursquare_time import parse_foursquare_time

            return self._utc(parse_foursquare_time(text))
        mixed = []
        parsed = _try_format(text, fmt, mixed)
        for note in mixed:
            self._note(note)
        return self._utc(parsed)

    def _choose(self, present):
        """How to read text times, from the non-missing values of the first chunk."""
        fmt_flag = self.flags.get("time_format", "time_format=")
        day_flag = self.flags.get("dayfirst", "dayfirst=True")
        first = present.iloc[0]
        sample = present.iloc[:_SAMPLE]
        if self.time_format in EPOCH_FORMATS or (self.time_format is None and sample.str.fullmatch(_NUMBER).all()):
            if self.time_format is None:
                compact = _compact_layout(sample)
                if compact is not None:
                    self._note(f"times like {first!r} read with {compact!r} (give {fmt_flag} epoch-s to read "
                               "them as Unix epoch seconds)")
                    return ("format", compact)
            numbers = _epoch_numbers(present)
            return self._choose_epoch(numbers[np.isfinite(numbers)] if numbers.dtype.kind == "f" else numbers,
                                      first)
        if self.time_format is not None:
            if _try_format(present, self.time_format).isna().all():
                raise TimeFormatError(f"no time matches the format {self.time_format!r} given with "
                                      f"{fmt_flag} (e.g. {first!r}); check the pattern (strftime codes)")
            self._note(f"times read with the format {self.time_format!r}")
            return ("format", self.time_format)
        from .foursquare_time import FOURSQUARE_TIME as FOURSQUARE

        if FOURSQUARE.match(first):
            self._note("times read in the Foursquare layout ('Sat Dec 08 05:56:34 +0000 2012')")
            return ("foursquare", None)
        if _try_format(sample, "ISO8601").notna().any():
            return ("format", "ISO8601")
        for month_first, day_first in CANDIDATE_FORMATS:
            fits = [f for f in (month_first, day_first)
                    if f is not None and _try_format(sample, f).notna().all()]
            if len(fits) == 2:
                chosen = day_first if self.dayfirst else month_first
                other = f"{fmt_flag} {month_first!r}" if self.dayfirst else day_flag
                self._note(f"times like {first!r} are not ISO 8601: read with {chosen!r} "
                           f"({'day' if self.dayfirst else 'month'} first; give {other} to read them "
                           f"{'month' if self.dayfirst else 'day'} first)")
                return ("format", chosen)
            if fits:
                self._note(f"times like {first!r} are not ISO 8601: read with {fits[0]!r}")
                return ("format", fits[0])
        raise TimeFormatError(
            f"cannot read times like {first!r}: tried ISO 8601 and {len(CANDIDATE_FORMATS)} common layouts "
            f"(such as '%m/%d/%Y %H:%M' and '%d/%m/%Y %H:%M'); give the layout with {fmt_flag} "
            f"(strftime codes, e.g. '%d.%m.%Y %H:%M', or {'|'.join(EPOCH_FORMATS)} for Unix epoch numbers)")


def parse_times(values, *, time_format: str | None = None, dayfirst: bool = False, tz: str = "UTC",
                notes: list | None = None, flags: dict | None = None) -> np.ndarray:
    """Read times into ``datetime64[ns]`` UTC (see the module docstring).

    Parameters
    ----------
    values : pyarrow.Array, pyarrow.ChunkedArray, pandas.Series or array-like
    time_format : str, optional
        ``strftime`` pattern of text times (e.g. ``"%d/%m/%Y %H:%M"``).
    dayfirst : bool, default False
        Read ambiguous day/month orders day first.
    tz : str, default "UTC"
        Timezone of times written without one.
    notes : list, optional
        Receives one line per decision (format used, formats tried, timezone).
    flags : dict, optional
        Option names for messages: keys ``"time_format"``, ``"dayfirst"``.

    Returns
    -------
    numpy.ndarray of datetime64[ns]
        UTC, ``NaT`` where a value is missing or unreadable.

    Raises
    ------
    TimeFormatError
        No value of the first chunk could be read; the message lists what was
        tried and the option to give.
    TypeError
        Booleans.
    """
    return TimeReader(time_format=time_format, dayfirst=dayfirst, tz=tz, notes=notes, flags=flags)(values)
