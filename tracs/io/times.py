"""Times of any common kind -> UTC, saying which format was used or tried.

:func:`parse_times` reads a column of times into ``datetime64[ns]`` UTC values
(``NaT`` where a value cannot be read; the loaders then drop that row as
``bad_time`` and list its line):

* timestamps (Arrow / pandas / numpy) are kept; without a timezone they are local
  to ``tz`` (default UTC);
* numbers are Unix epoch seconds;
* text is read with ``time_format`` (a ``strftime`` pattern) when given;
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

__all__ = ["TimeFormatError", "TimeReader", "parse_times", "CANDIDATE_FORMATS", "ISO_TIME"]

#: an ISO 8601 date and time (``2010-10-19T23:55:27Z``, ``2010-09-01 17:25:27``): the Gowalla layout
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$")

#: layouts tried when the text is not ISO 8601: (month-first, day-first) pairs or single ones
_DATES = (("%m/%d/%Y", "%d/%m/%Y"), ("%m-%d-%Y", "%d-%m-%Y"), ("%m.%d.%Y", "%d.%m.%Y"),
          ("%m/%d/%y", "%d/%m/%y"), ("%Y/%m/%d", None), ("%Y.%m.%d", None), ("%Y%m%d", None))
_CLOCKS = (" %H:%M:%S", " %H:%M", " %I:%M:%S %p", " %I:%M %p", "T%H:%M:%S", "")
CANDIDATE_FORMATS = tuple((m + c, None if d is None else d + c) for m, d in _DATES for c in _CLOCKS)
_SAMPLE = 200


class TimeFormatError(ValueError):
    """The times could not be read; the message names what was tried and what to give."""


def _text_series(values):
    import pandas as pd

    s = pd.Series(values, copy=False).reset_index(drop=True)
    return s.astype("string").str.strip()


_RELATIVE = ("now", "today", "yesterday", "tomorrow")


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
        self.time_format, self.dayfirst, self.tz = time_format, bool(dayfirst), tz
        self.notes = [] if notes is None else notes
        self.flags = flags or {}
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
            self._note("numeric times were read as Unix epoch seconds (UTC)")
            seconds = s.astype("float64")
            seconds[~np.isfinite(seconds)] = np.nan
            return self._utc(pd.to_datetime(seconds, unit="s", utc=True, errors="coerce"))
        return self._text(_text_series(s))

    def _text(self, text):
        """Stripped text (a pandas string Series) -> datetime64[ns] UTC."""
        present = (text.notna() & (text != "")).to_numpy(dtype=bool, na_value=False)
        if self._how is None:
            if not present.any():
                return np.full(len(text), np.datetime64("NaT"), dtype="datetime64[ns]")
            self._how = self._choose(text[present])
        kind, fmt = self._how
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
        sample = present.iloc[:_SAMPLE]
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
            "(strftime codes, e.g. '%d.%m.%Y %H:%M')")


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
