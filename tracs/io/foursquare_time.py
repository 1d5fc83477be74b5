"""The Foursquare TSMC2014 time layout, ``Sat Dec 08 05:56:34 +0000 2012``, parsed vectorised.

:data:`FOURSQUARE_TIME` recognises the layout (the time reader of
:mod:`tracs.io.times` detects it with this pattern); :func:`parse_foursquare_time`
reads a column of such times in one compiled pass over Arrow's bytes
(:mod:`tracs.io.time_kernel`), or with NumPy for text not held by Arrow.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["FOURSQUARE_TIME", "parse_foursquare_time"]

FOURSQUARE_TIME = re.compile(r"^[A-Za-z]{3} [A-Za-z]{3} \d\d \d\d:\d\d:\d\d [+-]\d{4} \d{4}$")
_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
_WIDTH = 30  # len("Sat Dec 08 05:56:34 +0000 2012")


def _month_key(chars: np.ndarray) -> np.ndarray:
    """Three characters per row -> one integer key."""
    c = chars.astype(np.int64)
    return (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]


_MONTH_KEYS = _month_key(np.array([[ord(ch) for ch in m] for m in _MONTHS]))
_KEY_ORDER = np.argsort(_MONTH_KEYS)  # position among sorted keys -> month index
_SORTED_KEYS = _MONTH_KEYS[_KEY_ORDER]


def _fixed_width(s: pd.Series, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n, width)`` uint8 characters and a mask of the rows that are exactly
    ``width`` ASCII characters (other rows hold filler)."""
    n = len(s)
    arr = None
    if pd.api.types.is_string_dtype(s.dtype):
        try:  # zero-copy through Arrow when pandas holds the strings there
            import pyarrow as pa
            import pyarrow.compute as pc

            arr = pa.array(s.array)
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.combine_chunks()
            if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
                arr = None
        except Exception:  # no pyarrow, or values Arrow cannot hold as strings
            arr = None
    if arr is not None:
        arr = arr.cast(pa.large_binary())
        ok = pc.fill_null(pc.binary_length(arr), 0).to_numpy(zero_copy_only=False) == width
        filled = pc.if_else(pa.array(ok), arr, pa.scalar(b"0" * width, pa.large_binary()))
        _, offsets, data = filled.buffers()
        offsets = np.frombuffer(offsets, np.int64)[filled.offset:filled.offset + n + 1]
        if np.all(np.diff(offsets) == width):
            chars = np.frombuffer(data, np.uint8)[offsets[0]:offsets[0] + width * n].reshape(n, width)
            return chars, ok & np.all(chars < 128, axis=1)
    text = s.astype(object).where(s.notna(), "").to_numpy(dtype=object)
    codes = np.asarray(text, dtype=f"U{width + 1}").view(np.uint32).reshape(n, width + 1)
    ok = (codes[:, width] == 0) & (codes[:, width - 1] != 0) & np.all(codes < 128, axis=1)
    return np.where(ok[:, None], codes[:, :width], ord("0")).astype(np.uint8), ok


def parse_foursquare_time(values) -> pd.Series:
    """Parse ``"Sat Dec 08 05:56:34 +0000 2012"`` strings to UTC timestamps, vectorised.

    Parameters
    ----------
    values : array-like of str
        Missing values and anything not of exactly that layout give ``NaT``.

    Returns
    -------
    pandas.Series of ``datetime64[ns, UTC]``
        The numeric offset (``+0000`` in the data) is applied; the weekday must be
        three letters but is not checked against the date (as in
        ``datetime.strptime``).  Impossible dates (``Feb 30``, hour 24, ...) give
        ``NaT``.
    """
    s = pd.Series(values, copy=False).reset_index(drop=True)
    n = len(s)
    if n == 0:
        return pd.Series(pd.DatetimeIndex([], tz="UTC"), dtype="datetime64[ns, UTC]")
    arr = _arrow_strings(s)
    if arr is not None:  # one compiled pass over Arrow's bytes (same checks, same numbers)
        from .time_kernel import parse_fixed

        return pd.Series(parse_fixed(arr).view("datetime64[ns]")).dt.tz_localize("UTC")
    return _parse_numpy(s, n)


def _arrow_strings(s: pd.Series):
    """The Arrow string array holding ``s``, or None (not text, or not held by Arrow)."""
    if not (isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa

    arr = pa.array(s.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) else None


def _parse_numpy(s: pd.Series, n: int) -> pd.Series:
    """The NumPy parser (any text column; also the reference of the compiled one)."""
    chars, ok = _fixed_width(s, _WIDTH)
    digit_cols = [8, 9, 11, 12, 14, 15, 17, 18, 21, 22, 23, 24, 26, 27, 28, 29]
    digits = chars[:, digit_cols].astype(np.int16) - ord("0")  # small integers: less memory to touch
    ok &= np.all((digits >= 0) & (digits <= 9), axis=1)
    letters = chars[:, [0, 1, 2]] | 0x20  # lower case
    ok &= np.all((letters >= ord("a")) & (letters <= ord("z")), axis=1)
    for col, char in ((3, " "), (7, " "), (10, " "), (13, ":"), (16, ":"), (19, " "), (25, " ")):
        ok &= chars[:, col] == ord(char)
    ok &= (chars[:, 20] == ord("+")) | (chars[:, 20] == ord("-"))
    sign = np.where(chars[:, 20] == ord("-"), -1, 1)
    key = _month_key(chars[:, 4:7])
    pos = np.searchsorted(_SORTED_KEYS, key).clip(0, 11)
    ok &= _SORTED_KEYS[pos] == key
    month = _KEY_ORDER[pos] + 1

    def number(*cols):
        out = np.zeros(n, dtype=np.int32)  # at most four digits
        for c in cols:
            out = out * 10 + digits[:, digit_cols.index(c)]
        return out

    year, day = number(26, 27, 28, 29), number(8, 9)
    hour, minute, second = number(11, 12), number(14, 15), number(17, 18)
    off_h, off_m = number(21, 22), number(23, 24)
    ok &= (year >= 1678) & (year <= 2261)  # the datetime64[ns] range
    ok &= (day >= 1) & (hour < 24) & (minute < 60) & (second < 60) & (off_m < 60)
    year, month = np.where(ok, year, 1970), np.where(ok, month, 1)
    first = ((year - 1970) * 12 + month - 1).astype("datetime64[M]")
    days_in_month = ((first + 1).astype("datetime64[D]") - first.astype("datetime64[D]")).astype(np.int64)
    ok &= day <= days_in_month
    seconds = ((first.astype("datetime64[D]").astype(np.int64) + day - 1) * 86400
               + hour * 3600 + minute * 60 + second - sign * (off_h * 3600 + off_m * 60))
    stamps = (np.where(ok, seconds, 0) * 1_000_000_000).astype("datetime64[ns]")
    stamps[~ok] = np.datetime64("NaT")
    return pd.Series(stamps).dt.tz_localize("UTC")
