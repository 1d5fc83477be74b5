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

import numpy as np

__all__ = ["TimeFormatError", "parse_times", "CANDIDATE_FORMATS"]

#: layouts tried when the text is not ISO 8601: (month-first, day-first) pairs or single ones
_DATES = (("%m/%d/%Y", "%d/%m/%Y"), ("%m-%d-%Y", "%d-%m-%Y"), ("%m.%d.%Y", "%d.%m.%Y"),
          ("%m/%d/%y", "%d/%m/%y"), ("%Y/%m/%d", None), ("%Y.%m.%d", None), ("%Y%m%d", None))
_CLOCKS = (" %H:%M:%S", " %H:%M", " %I:%M:%S %p", " %I:%M %p", "T%H:%M:%S", "")
CANDIDATE_FORMATS = tuple((m + c, None if d is None else d + c) for m, d in _DATES for c in _CLOCKS)
_SAMPLE = 200


class TimeFormatError(ValueError):
    """The times could not be read; the message names what was tried and what to give."""


def _flag(flags, key, default):
    return (flags or {}).get(key, default)


def _to_utc_ns(series, tz: str, notes: list):
    """A pandas datetime series -> datetime64[ns] UTC numpy array."""
    import pandas as pd

    if isinstance(series.dtype, pd.DatetimeTZDtype):
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    else:
        if tz == "UTC":
            notes.append("times without a timezone were read as UTC")
        else:
            series = series.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT").dt.tz_convert("UTC") \
                .dt.tz_localize(None)
    return series.to_numpy(dtype="datetime64[ns]")


def _text_series(values):
    import pandas as pd

    s = pd.Series(values, copy=False).reset_index(drop=True)
    return s.astype("string").str.strip()


def _try_format(text, fmt):
    import pandas as pd

    try:
        return pd.to_datetime(text, format=fmt, errors="coerce")
    except ValueError:  # mixed UTC offsets
        return pd.to_datetime(text, format=fmt, errors="coerce", utc=True)


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
        No non-missing value could be read; the message lists the formats tried
        and suggests the option.
    TypeError
        Booleans.
    """
    import pandas as pd

    notes = [] if notes is None else notes
    fmt_flag = _flag(flags, "time_format", "time_format=")
    day_flag = _flag(flags, "dayfirst", "dayfirst=True")
    if hasattr(values, "to_pandas"):  # Arrow
        import pyarrow as pa

        if isinstance(values, pa.ChunkedArray) and values.num_chunks == 0:
            values = pa.array([], values.type)
        values = values.to_pandas()
    s = pd.Series(values, copy=False).reset_index(drop=True)
    if isinstance(s.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(s.dtype):
        return _to_utc_ns(s, tz, notes)
    if pd.api.types.is_bool_dtype(s.dtype):
        raise TypeError("the time column holds booleans, not times")
    if pd.api.types.is_numeric_dtype(s.dtype):
        notes.append("numeric times were read as Unix epoch seconds (UTC)")
        seconds = s.astype("float64")
        seconds[~np.isfinite(seconds)] = np.nan
        return _to_utc_ns(pd.to_datetime(seconds, unit="s", utc=True, errors="coerce"), tz, notes)
    text = _text_series(s)
    present = text.notna() & (text != "")
    if not present.any():
        return np.full(len(text), np.datetime64("NaT"), dtype="datetime64[ns]")
    first = text[present].iloc[0]
    if time_format is not None:
        parsed = _try_format(text, time_format)
        if parsed[present].isna().all():
            raise TimeFormatError(f"no time matches the format {time_format!r} given with {fmt_flag} "
                                  f"(e.g. {first!r}); check the pattern (strftime codes)")
        notes.append(f"times read with the format {time_format!r}")
        return _to_utc_ns(parsed, tz, notes)

    from data_loaders.foursquare import _TIME as FOURSQUARE, parse_foursquare_time

    if FOURSQUARE.match(first):
        notes.append("times read in the Foursquare layout ('Sat Dec 08 05:56:34 +0000 2012')")
        return _to_utc_ns(parse_foursquare_time(text), tz, notes)
    sample = text[present].iloc[:_SAMPLE]
    if _try_format(sample, "ISO8601").notna().any():
        return _to_utc_ns(_try_format(text, "ISO8601"), tz, notes)
    tried = ["ISO 8601"]
    for month_first, day_first in CANDIDATE_FORMATS:
        fits = [f for f in (month_first, day_first) if f is not None
                and _try_format(sample, f).notna().all()]
        tried.append(month_first)
        if not fits:
            continue
        if len(fits) == 2:
            chosen = day_first if dayfirst else month_first
            other = month_first if dayfirst else day_first
            parsed = _try_format(text, chosen)
            notes.append(f"times like {first!r} are not ISO 8601: read with {chosen!r} "
                         f"({'day' if dayfirst else 'month'} first); give {day_flag if not dayfirst else fmt_flag + repr(other)} "
                         f"for {'day' if not dayfirst else 'month'} first")
        else:
            chosen = fits[0]
            parsed = _try_format(text, chosen)
            notes.append(f"times like {first!r} are not ISO 8601: read with {chosen!r}")
        return _to_utc_ns(parsed, tz, notes)
    raise TimeFormatError(
        f"cannot read times like {first!r}: tried ISO 8601 and {len(tried) - 1} common layouts "
        f"(such as '%m/%d/%Y %H:%M'); give the layout with {fmt_flag} (strftime codes, e.g. "
        f"'%d.%m.%Y %H:%M'){' and ' + day_flag + ' for day-first dates' if not dayfirst else ''}")
