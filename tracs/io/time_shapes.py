"""The shapes of text times, and layouts read once per distinct date and clock.

The *shape* of a text is the text with every ASCII digit written ``d``
(``"01/03/2024 08:00"`` -> ``"dd/dd/dddd dd:dd"``).  A file holds few distinct
shapes, so :func:`shapes` (one pass over Arrow's bytes, no regular expression)
lets every question about layouts be asked once per shape, not once per row:
:func:`fits` tells which shapes a layout can read, from one representative of each
(its digits written so that they form a valid date).

:func:`parse_layout` reads text with one of the common layouts of a date and a
clock: the date part and the clock part are each parsed once per distinct value
(a year of minute times holds at most 366 dates and 1,440 clocks) and added.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["RELATIVE", "fits", "parse_layout", "shapes", "try_format"]

_NAT = np.iinfo(np.int64).min
#: words pandas reads relative to the clock: never times of the data
RELATIVE = ("now", "today", "yesterday", "tomorrow")
_TO_SHAPE = np.arange(256, dtype=np.uint8)
_TO_SHAPE[ord("0"):ord("9") + 1] = ord("d")
_YEAR = re.compile(r"(?<!d)dddd(?!d)")
_DAY_ONE = np.datetime64("1900-01-01", "ns").astype(np.int64)


def try_format(text, fmt, notes=None):
    """``pd.to_datetime`` with ``fmt``; words pandas reads relative to the clock ("now",
    "today") are not times of the data and give NaT."""
    import pandas as pd

    text = text.where(~text.str.lower().isin(RELATIVE))
    try:
        return pd.to_datetime(text, format=fmt, errors="coerce")
    except ValueError:  # mixed UTC offsets
        if notes is not None:
            notes.append("times with mixed UTC offsets: converted to UTC, those without one read as UTC")
        return pd.to_datetime(text, format=fmt, errors="coerce", utc=True)


def stamps_ns(series) -> tuple:
    """A datetime Series -> (int64 nanoseconds, whether they are naive wall times)."""
    import pandas as pd

    naive = not isinstance(series.dtype, pd.DatetimeTZDtype)
    if not naive:
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    values = series.dt.as_unit("ns").to_numpy(dtype="datetime64[ns]").view(np.int64)
    return (values if values.flags.writeable else values.copy()), naive


def as_arrow(text):
    """A pandas string Series as one Arrow ``large_string`` array (no copy when Arrow holds it)."""
    import pyarrow as pa

    if getattr(text.dtype, "storage", None) == "pyarrow":
        arr = pa.chunked_array(text.array._pa_array)
    else:
        arr = pa.chunked_array([pa.array(text.astype(object).where(text.notna(), None).to_numpy(),
                                         type=pa.large_string())])
    arr = arr.cast(pa.large_string())
    return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)


def shapes(arr) -> tuple:
    """``(code of each row's shape, -1 where missing; the shapes)`` of an Arrow ``large_string`` array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    validity, offsets, data = arr.buffers()
    mapped = _TO_SHAPE[np.frombuffer(data, np.uint8)] if data is not None else np.zeros(0, np.uint8)
    shaped = pa.Array.from_buffers(pa.large_string(), len(arr), [validity, offsets, pa.py_buffer(mapped)],
                                   null_count=arr.null_count, offset=arr.offset)
    encoded = pc.dictionary_encode(shaped)
    codes = pc.fill_null(encoded.indices.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
    return codes, encoded.dictionary.to_pylist()


def representative(shape: str) -> str:
    """A text of ``shape`` whose numbers form a valid date and clock (the first four-digit
    run as the year 2011, every other digit 1)."""
    return _YEAR.sub("2011", shape, count=1).replace("d", "1")


def fits(shape_list, fmt: str) -> np.ndarray:
    """Which of ``shape_list`` the layout ``fmt`` can read (by one representative each)."""
    import pandas as pd

    if not len(shape_list):
        return np.zeros(0, bool)
    reps = pd.Series([representative(s) for s in shape_list], dtype="string[pyarrow]")
    return try_format(reps, fmt).notna().to_numpy()


def _split(fmt: str):
    """``(date layout, clock layout or None, separator)`` of a common layout."""
    if fmt == "%Y%m%d%H%M%S":
        return "%Y%m%d", "%H%M%S", 8
    for sep in (" ", "T"):
        if sep + "%" in fmt:
            date, clock = fmt.split(sep + "%", 1)
            return date, "%" + clock, sep
    return fmt, None, None


def _unique(arr, fmt: str) -> np.ndarray:
    """int64 ns of each value of ``arr`` parsed with ``fmt``, once per distinct value."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(arr)
    values = pd.Series(pd.arrays.ArrowStringArray(encoded.dictionary.cast(pa.large_string())), copy=False)
    parsed, _ = stamps_ns(try_format(values, fmt))
    codes = pc.fill_null(encoded.indices.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
    return np.where(codes >= 0, parsed[np.maximum(codes, 0)], _NAT) if len(parsed) else \
        np.full(len(codes), _NAT, dtype=np.int64)


def _cut(shape: str, sep: str):
    """Where the clock of ``shape`` starts: its first space (``sep=" "``) or ``T``."""
    found = re.search(r"\s" if sep == " " else "[Tt]", shape)
    return None if found is None else found.start()


def parse_layout(arr, codes: np.ndarray, shape_list, fmt: str) -> np.ndarray:
    """Text (an Arrow array of the rows, their shape codes) read with the common layout
    ``fmt``: int64 wall-time nanoseconds, the NaT integer where unread."""
    import pyarrow.compute as pc

    date_fmt, clock_fmt, sep = _split(fmt)
    if clock_fmt is None:
        return _unique(arr, date_fmt)
    out = np.full(len(arr), _NAT, dtype=np.int64)
    for code in np.unique(codes[codes >= 0]):
        shape = shape_list[code]
        cut = sep if isinstance(sep, int) else _cut(shape, sep)
        if cut is None:
            continue
        rows = np.flatnonzero(codes == code)
        part = arr.take(rows)
        date = _unique(pc.utf8_slice_codeunits(part, 0, cut), date_fmt)
        rest = pc.utf8_slice_codeunits(part, cut + (0 if isinstance(sep, int) else 1), 1 << 30)
        clock = _unique(pc.utf8_trim_whitespace(rest), clock_fmt)
        ok = (date != _NAT) & (clock != _NAT)
        out[rows[ok]] = date[ok] + (clock[ok] - _DAY_ONE)
    return out
