"""Foursquare TSMC2014 check-ins (Tokyo, New York).

Two forms are read, detected from the first line:

* the original ``dataset_TSMC2014_TKY.txt`` / ``..._NYC.txt``: tab-separated, no
  header, eight fields per line: user id, venue id, venue category id, venue
  category name, latitude, longitude, timezone offset (minutes), UTC time;
* the same columns as CSV (or TSV) with a header, such as ``User ID, Venue ID,
  Venue Category, Venue Name, Latitude, Longitude, Timezone, UTC Time``.  In that
  header "Venue Category" holds the category *id* and "Venue Name" the category
  *name* (the original data has no venue names); columns are matched by name, in
  any order.

The UTC time looks like ``Sat Dec 08 05:56:34 +0000 2012``; it is parsed
vectorised with that fixed layout (weekday ignored, numeric offset applied).
Source: D. Yang, D. Zhang, V. W. Zheng, Z. Yu, "Modeling User Activity Preference
by Leveraging User Spatial Temporal Characteristics in LBSNs", IEEE TSMC 2015.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._checkins import integer_ids, load_known_format

__all__ = ["load_foursquare", "parse_foursquare_time"]

_COLUMNS = ("user", "venue", "category_id", "category", "lat", "lng", "offset", "time")
_ALIASES = {
    "userid": "user", "user": "user", "uid": "user",
    "venueid": "venue", "venue": "venue",
    "venuecategoryid": "category_id", "venuecategory": "category_id", "categoryid": "category_id",
    "venuecategoryname": "category", "venuename": "category", "categoryname": "category",
    "category": "category",
    "latitude": "lat", "lat": "lat",
    "longitude": "lng", "lng": "lng", "lon": "lng", "long": "lng",
    "timezone": "offset", "timezoneoffset": "offset", "timezoneoffsetinminutes": "offset",
    "utcoffset": "offset", "offset": "offset",
    "utctime": "time", "utctimestamp": "time", "time": "time", "timestamp": "time",
}
_TIME = re.compile(r"^[A-Za-z]{3} [A-Za-z]{3} \d\d \d\d:\d\d:\d\d [+-]\d{4} \d{4}$")
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
        from ._time_kernel import parse_fixed

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


def _offsets(values: pd.Series) -> pd.Series:
    """Timezone offsets in minutes: int64, nullable Int64 when some are missing."""
    offset = pd.to_numeric(values, errors="coerce").astype("float64")
    offset[~np.isfinite(offset)] = np.nan
    if not (offset.dropna() % 1 == 0).all():
        return offset
    return offset.astype("Int64") if offset.isna().any() else offset.astype(np.int64)


def _columns(raw: pd.DataFrame, notes: list) -> dict:
    """Raw Foursquare columns -> the columns of the loaded frame."""
    time = parse_foursquare_time(raw["time"])
    offset = _offsets(raw["offset"])
    if offset.isna().any():
        notes.append(f"{int(offset.isna().sum())} rows have no valid timezone offset: "
                     "their local_time and utc_offset are missing")
    local = (time + pd.to_timedelta(offset.astype("float64"), unit="min")).dt.tz_localize(None)
    return dict(uid=integer_ids(raw["user"], notes), time=time, lat=raw["lat"], lng=raw["lng"],
                poi=raw["venue"], extra={"category": raw["category"],
                                         "category_id": raw["category_id"],
                                         "local_time": local, "utc_offset": offset})


def load_foursquare(path, *, strict: bool = False, duplicates: str = "keep",
                    encoding: str | None = None):
    """Load Foursquare TSMC2014 check-ins (original TSV or CSV with header).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    strict : bool, default False
        Raise :class:`~data_loaders.DroppedRowsError` instead of dropping any row.
    duplicates : {"keep", "drop_exact", "drop_user_time"}, default "keep"
        What to do with repeated rows (always listed in the report).
    encoding : str, optional
        Default: UTF-8 with a latin-1 fallback for bytes that are not UTF-8 (the
        original files are latin-1); an explicit encoding is used strictly.

    Returns
    -------
    geopandas.GeoDataFrame
        WGS84 points with columns ``uid`` (int; the text of every id, as written, when
        some id is written otherwise than as a plain integer, e.g. ``007``), ``datetime`` (UTC), ``poi_id``
        (venue id, str), ``category``, ``category_id``, ``local_time`` (naive local
        wall-clock time: UTC plus the offset), ``utc_offset`` (minutes),
        ``geometry``; sorted by (uid, datetime), ties in file order;
        ``attrs["report"]`` a :class:`~data_loaders.LoadReport`.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        Empty file, not a Foursquare file (field count or header), undecodable with
        an explicit encoding, no valid row left, or a drop with ``strict=True``.
    """
    return load_known_format(
        path, name="foursquare", parse=_columns, duplicates=duplicates, strict=strict,
        encoding=encoding, what="Foursquare TSMC2014", columns=_COLUMNS, aliases=_ALIASES,
        time_field=7, time_pattern=_TIME, text=("user", "venue", "category_id", "category", "time"),
        describe="user, venue, category id, category, latitude, longitude, timezone offset, "
                 "UTC time",
        hints={5: " (it looks like Gowalla: use load_gowalla)"})
