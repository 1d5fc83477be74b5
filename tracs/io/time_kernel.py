"""Compiled parser of the Foursquare UTC time layout, on the bytes of an Arrow string array.

One pass per row, the same checks and arithmetic as the NumPy parser of
:func:`tracs.io.foursquare_time.parse_foursquare_time` (so the same timestamps and
the same rows rejected): exactly 30 ASCII characters ``"Www Mmm dd hh:mm:ss +hhmm yyyy"``,
a three-letter weekday (not checked against the date), an English month
abbreviation, a real date of the years 1678–2261, hour < 24, minute, second and
offset minutes < 60; the numeric offset is applied.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import helper
from .._numba_cache import announce_compiles, key_on_sources

announce_compiles()  # a kernel compiled on its first use says so on stderr

__all__ = ["parse_fixed", "NAT"]

NAT = np.iinfo(np.int64).min
_MONTHS = np.array([[ord(c) for c in m] for m in "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()],
                   dtype=np.uint8)
_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
_DIGITS = np.array([8, 9, 11, 12, 14, 15, 17, 18, 21, 22, 23, 24, 26, 27, 28, 29], dtype=np.int64)
_FIXED = np.array([[3, 32], [7, 32], [10, 32], [13, 58], [16, 58], [19, 32], [25, 32]], dtype=np.int64)


@helper
def _days_from_civil(y, m, d):  # pragma: no cover - compiled
    """Days since 1970-01-01 of the proleptic Gregorian date ``y-m-d``."""
    if m <= 2:
        y -= 1
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@helper
def _two(data, start, a, b):  # pragma: no cover - compiled
    return np.int64(data[start + a] - 48) * 10 + np.int64(data[start + b] - 48)


@numba.njit(cache=True, nogil=True)
def _parse(offsets, data, valid, months, days, digit_cols, fixed, out):  # pragma: no cover - compiled
    for i in range(out.shape[0]):
        out[i] = NAT
        start = offsets[i]
        if not valid[i] or offsets[i + 1] - start != 30:
            continue
        ok = True
        for j in range(30):
            if data[start + j] >= 128:
                ok = False
        for j in range(digit_cols.shape[0]):
            c = data[start + digit_cols[j]]
            if c < 48 or c > 57:
                ok = False
        for j in range(3):
            c = data[start + j] | 0x20
            if c < 97 or c > 122:
                ok = False
        for j in range(fixed.shape[0]):
            if data[start + fixed[j, 0]] != fixed[j, 1]:
                ok = False
        sign_char = data[start + 20]
        if sign_char != 43 and sign_char != 45:
            ok = False
        if not ok:
            continue
        month = 0
        for m in range(12):
            if data[start + 4] == months[m, 0] and data[start + 5] == months[m, 1] and \
                    data[start + 6] == months[m, 2]:
                month = m + 1
        if month == 0:
            continue

        year = _two(data, start, 26, 27) * 100 + _two(data, start, 28, 29)
        day, hour = _two(data, start, 8, 9), _two(data, start, 11, 12)
        minute, second = _two(data, start, 14, 15), _two(data, start, 17, 18)
        off_h, off_m = _two(data, start, 21, 22), _two(data, start, 23, 24)
        if year < 1678 or year > 2261 or day < 1 or hour >= 24 or minute >= 60 or second >= 60 or off_m >= 60:
            continue
        limit = days[month - 1]
        if month == 2 and ((year % 4 == 0 and year % 100 != 0) or year % 400 == 0):
            limit = 29
        if day > limit:
            continue
        sign = -1 if sign_char == 45 else 1
        seconds = ((_days_from_civil(year, month, 1) + day - 1) * 86400 + hour * 3600 + minute * 60 + second
                   - sign * (off_h * 3600 + off_m * 60))
        out[i] = seconds * 1_000_000_000


def parse_fixed(arr) -> np.ndarray:
    """Nanoseconds since the epoch (``NAT`` where not a valid time) of an Arrow string array."""
    import pyarrow as pa

    arr = arr.cast(pa.large_binary())
    n = len(arr)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], np.int64)[arr.offset:arr.offset + n + 1]
    return parse_fixed_buffers(offsets, buffers[2], arr.is_valid().to_numpy(zero_copy_only=False), out)


def parse_fixed_buffers(offsets, data, valid, out=None) -> np.ndarray:
    """:func:`parse_fixed` of Arrow's buffers: ``offsets`` (int64, one more than the
    strings), ``data`` (their bytes, or None when all are empty) and ``valid``."""
    offsets = np.frombuffer(offsets, np.int64)
    data = np.frombuffer(data if data is not None else b"\0", np.uint8)
    offsets.flags.writeable = data.flags.writeable = False  # always read-only: one compiled parser
    valid = np.ascontiguousarray(valid, dtype=np.bool_)
    out = np.empty(len(offsets) - 1, dtype=np.int64) if out is None else out
    _parse(offsets, data, valid, _MONTHS, _DAYS, _DIGITS, _FIXED, out)
    return out


key_on_sources(globals())  # cached kernels follow every source they compile in
