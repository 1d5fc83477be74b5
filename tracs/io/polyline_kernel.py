"""Compiled parser of Porto ``POLYLINE`` text (``[[lon,lat],...]``), on the bytes of an Arrow string array.

One pass over the bytes: each trip's pairs are written after the previous
trip's, and taken back when the trip turns out not to follow the grammar
(spaces allowed between tokens)::

    polyline = "[" [ pair { "," pair } ] "]"
    pair     = "[" number "," number "]"
    number   = [ "+" | "-" ] digits [ "." digits ]

A number is converted exactly as ``float(text)`` would (correctly rounded) when
its digits, without the point, are at most 15 (the mantissa is then an exact
double, as is the power of ten, so one division rounds once); any other number
(more digits, an exponent) marks its trip :data:`SLOW`, for the caller to read
with Arrow's cast.  Status per trip: :data:`OK`, :data:`EMPTY` (``[]``),
:data:`BAD` (not the grammar), :data:`SLOW`.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import helper
from .._numba_cache import announce_compiles, key_on_sources

announce_compiles()  # a kernel compiled on its first use says so on stderr

__all__ = ["BAD", "EMPTY", "OK", "SLOW", "parse_polylines"]

OK, EMPTY, BAD, SLOW = 0, 1, 2, 3
_POW10 = np.array([10.0 ** k for k in range(16)])


@helper
def _skip(data, i, end):  # pragma: no cover - compiled
    while i < end and data[i] == 32:
        i += 1
    return i


@helper
def _number(data, i, end, pow10):  # pragma: no cover - compiled
    """``(value, next index, status)`` of the number at ``i``."""
    sign = 1.0
    if i < end and (data[i] == 45 or data[i] == 43):
        if data[i] == 45:
            sign = -1.0
        i += 1
    mantissa = 0
    digits = 0
    decimals = 0
    start = i
    while i < end and 48 <= data[i] <= 57:
        mantissa = mantissa * 10 + (data[i] - 48)
        digits += 1
        i += 1
    if i == start:
        return 0.0, i, BAD
    if i < end and data[i] == 46:
        i += 1
        first = i
        while i < end and 48 <= data[i] <= 57:
            mantissa = mantissa * 10 + (data[i] - 48)
            digits += 1
            decimals += 1
            i += 1
        if i == first:
            return 0.0, i, BAD
    if i < end and (data[i] == 101 or data[i] == 69):
        return 0.0, i, SLOW
    if digits > 15:
        return 0.0, i, SLOW
    return sign * (mantissa / pow10[decimals]), i, OK


@numba.njit(cache=True, nogil=True)
def _scan(offsets, data, valid, out, pairs, status, pow10):  # pragma: no cover - compiled
    """Check every trip and write its pairs to ``out`` from the running cursor; returns the
    number of rows written."""
    cursor = 0
    for t in range(status.shape[0]):
        start, end = offsets[t], offsets[t + 1]
        if not valid[t]:
            status[t] = BAD
            continue
        i = _skip(data, start, end)
        state = OK
        n = 0
        if i >= end or data[i] != 91:
            state = BAD
        else:
            i = _skip(data, i + 1, end)
            if i < end and data[i] == 93:
                i += 1
                state = EMPTY
            else:
                while True:
                    if i >= end or data[i] != 91:
                        state = BAD
                        break
                    i = _skip(data, i + 1, end)
                    lon, i, s1 = _number(data, i, end, pow10)
                    i = _skip(data, i, end)
                    if s1 == BAD or i >= end or data[i] != 44:
                        state = BAD if s1 != SLOW else SLOW
                        break
                    i = _skip(data, i + 1, end)
                    lat, i, s2 = _number(data, i, end, pow10)
                    i = _skip(data, i, end)
                    if s2 == BAD or i >= end or data[i] != 93:
                        state = BAD if s2 != SLOW else SLOW
                        break
                    if s1 == SLOW or s2 == SLOW:
                        state = SLOW
                    out[cursor + n, 0] = lon
                    out[cursor + n, 1] = lat
                    n += 1
                    i = _skip(data, i + 1, end)
                    if i < end and data[i] == 44:
                        i = _skip(data, i + 1, end)
                        continue
                    if i < end and data[i] == 93:
                        i += 1
                        break
                    state = BAD
                    break
        if state == OK or state == EMPTY:
            if _skip(data, i, end) != end:
                state = BAD
        status[t] = state
        if state == OK:
            pairs[t] = n
            cursor += n
    return cursor


def parse_polylines(arr):
    """``(lonlat (P, 2), counts (T,), status (T,))`` of an Arrow string array of polylines.

    ``counts[t]`` pairs of trip ``t`` (0 unless its status is :data:`OK`) are rows
    ``sum(counts[:t]) …`` of ``lonlat``.
    """
    import pyarrow as pa

    arr = arr.cast(pa.large_binary())
    n = len(arr)
    status = np.zeros(n, dtype=np.int8)
    pairs = np.zeros(n, dtype=np.int64)
    if n == 0:
        return np.empty((0, 2)), pairs, status
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], np.int64)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(1, np.uint8)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    # a pair holds one comma and is followed by one or none: at most (commas + trips) / 2 pairs
    span = data[offsets[0]:offsets[-1]]
    out = np.empty(((int(np.count_nonzero(span == 44)) + n) // 2 + 1, 2))
    rows = _scan(offsets, data, valid, out, pairs, status, _POW10)
    return out[:rows], pairs, status


key_on_sources(globals())  # cached kernels follow every source they compile in
