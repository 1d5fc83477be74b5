"""How text and numbers are read as times, decided for each group of values alone.

:func:`read_grouped` is the detection of :func:`tracs.io.times.parse_times` when
no format is given.  Every *reading* (a compact date, Unix epoch numbers, the
Foursquare layout, ISO 8601, one of the common layouts with slashes, dots or
dashes) is tried once on the rows it can fit, over the whole column; then each
group (each user) takes the reading that reads the most of its own values, ties
going to the earlier reading of :func:`readings` (month first before day first
unless ``dayfirst``).  The epoch unit of a group is told by the median magnitude
of that group's numbers.  So a user's times depend on that user's values only,
and a value no reading of its group can read is unreadable (``NaT``: its row is
dropped) wherever it is.

The work grows with the number of distinct layouts, never with the number of
groups: the common layouts are tried only on the rows whose *shape* (the text
with every digit replaced by ``d``) they can fit, told by one representative
of each shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .time_shapes import as_arrow, fits, parse_layout, shapes, stamps_ns, try_format

__all__ = ["CANDIDATE_FORMATS", "EPOCH_FORMATS", "Chosen", "Reading", "epoch_of_groups", "epoch_to_ns", "epoch_unit", "group_units",
           "read_grouped", "readings"]

_NAT = np.iinfo(np.int64).min
#: ``time_format`` values naming Unix epoch units -> nanoseconds per unit
EPOCH_FORMATS = {"epoch-s": 10**9, "epoch-ms": 10**6, "epoch-us": 10**3, "epoch-ns": 1}
EPOCH_NAMES = {"epoch-s": "seconds", "epoch-ms": "milliseconds", "epoch-us": "microseconds",
               "epoch-ns": "nanoseconds"}
#: upper bounds of the median magnitude of each unit, in order
_EPOCH_BANDS = ((1e11, "epoch-s"), (1e14, "epoch-ms"), (1e17, "epoch-us"), (np.inf, "epoch-ns"))
_SHAPE = re.compile(r"^[d/.\-: T]+(?: ?[AaPp][Mm])?$")  # shapes a common layout may fit

#: layouts tried when the text is not ISO 8601: (month-first, day-first) pairs or single ones
_DATES = (("%m/%d/%Y", "%d/%m/%Y"), ("%m-%d-%Y", "%d-%m-%Y"), ("%m.%d.%Y", "%d.%m.%Y"),
          ("%m/%d/%y", "%d/%m/%y"), ("%Y/%m/%d", None), ("%Y.%m.%d", None), ("%Y%m%d", None))
_CLOCKS = (" %H:%M:%S", " %H:%M", " %I:%M:%S %p", " %I:%M %p", "T%H:%M:%S", "")
CANDIDATE_FORMATS = tuple((m + c, None if d is None else d + c) for m, d in _DATES for c in _CLOCKS)
COMPACT = {8: "%Y%m%d", 14: "%Y%m%d%H%M%S"}
_COMPACT_LENGTH = {fmt: n for n, fmt in COMPACT.items()}


def epoch_unit(magnitude: float) -> str:
    """The epoch unit (``"epoch-s"`` …) whose range holds ``magnitude`` (below 10^11: seconds;
    below 10^14: milliseconds; below 10^17: microseconds; above: nanoseconds)."""
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


@dataclass(frozen=True)
class Reading:
    """One way of reading times: ``kind`` is ``"format"`` (a ``strftime`` pattern or
    ``"ISO8601"``), ``"epoch"`` (``fmt`` the unit, or None: told per group) or
    ``"foursquare"``."""

    kind: str
    fmt: str | None = None
    other: str | None = None  # the other day/month order of a pair

    def label(self) -> str:
        if self.kind == "epoch":
            return "Unix epoch numbers"
        if self.kind == "foursquare":
            return "the Foursquare layout"
        return "ISO 8601" if self.fmt == "ISO8601" else repr(self.fmt)


def readings(dayfirst: bool) -> list:
    """Every reading, in the order that breaks ties (compact dates before epoch numbers,
    then Foursquare, ISO 8601 and the common layouts, month first unless ``dayfirst``)."""
    out = [Reading("format", COMPACT[8]), Reading("format", COMPACT[14]), Reading("epoch"),
           Reading("foursquare"), Reading("format", "ISO8601")]
    for month_first, day_first in CANDIDATE_FORMATS:
        pair = (month_first, day_first) if day_first is None or not dayfirst else (day_first, month_first)
        for fmt, other in ((pair[0], pair[1]), (pair[1], pair[0])):
            if fmt is not None and all(r.fmt != fmt for r in out):
                out.append(Reading("format", fmt, other))
    return out


@dataclass
class Chosen:
    """What :func:`read_grouped` decided: the reading of each group (an index into
    ``table``, -1 for a group with nothing readable), the epoch unit of each group
    (an index into the epoch units, -1 when none) and whether each group's choice was
    a tie between the two day/month orders."""

    table: list
    reading: np.ndarray
    unit: np.ndarray
    tie: np.ndarray


def group_units(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """The epoch unit (index into :data:`tracs.io.times.EPOCH_FORMATS`) of each group, told
    by the median magnitude of its finite ``values`` (-1 for a group with none)."""
    import pandas as pd

    values = np.abs(values.astype(np.float64))
    finite = np.isfinite(values)
    units = np.full(n_groups, -1, dtype=np.int64)
    bounds = np.array([b for b, _ in _EPOCH_BANDS])
    if n_groups == 1:
        if finite.any():
            units[0] = np.searchsorted(bounds, np.median(values[finite]), side="right")
        return units
    median = pd.Series(values[finite]).groupby(groups[finite]).median()
    units[median.index.to_numpy()] = np.searchsorted(bounds, median.to_numpy(), side="right")
    return units


def epoch_of_groups(numbers, groups, units, forced):
    """Epoch numbers -> int64 ns (the NaT integer where unread), in the unit of each row's group
    (``units[groups]``, values of another magnitude unread) or in the ``forced`` unit."""
    names = list(EPOCH_FORMATS)
    out = np.full(len(numbers), _NAT, dtype=np.int64)
    row_unit = np.full(len(numbers), names.index(forced)) if forced else units[groups]
    for k in np.unique(row_unit[row_unit >= 0]):
        rows = np.flatnonzero(row_unit == k)
        out[rows] = epoch_to_ns(numbers[rows], names[k], check_band=not forced)
    return out


def _numbers(text) -> np.ndarray:
    """Numeric text -> int64 when every value is an integer (exact), else float64."""
    import pandas as pd
    import pyarrow as pa

    arr = pa.chunked_array(text.array._pa_array) if getattr(text.dtype, "storage", None) == "pyarrow" else None
    if arr is not None and arr.null_count == 0:
        try:
            return arr.cast(pa.int64()).to_numpy()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


_NUMBER = re.compile(r"^[+-]?d+(?:\.d*)?$")


def _classes(shape_list) -> np.ndarray:
    """The kind of each shape: 0 other text, 1 a number, 2 the Foursquare layout."""
    from .foursquare_time import FOURSQUARE_TIME

    foursquare = re.compile(FOURSQUARE_TIME.pattern.replace(r"\d", "d"))
    return np.array([1 if _NUMBER.match(s) else 2 if foursquare.match(s) else 0 for s in shape_list] + [0],
                    dtype=np.int64)


def _tries(text, present, table, groups, n_groups, *, only, units, forced_unit, notes):
    """Every reading of ``table`` (or only ``only``) tried on the rows whose shape it may
    fit: ``{index: (rows read, ns, naive)}`` and the epoch unit of each group (``units``
    when given, else told by each group's numbers)."""
    from .foursquare_time import parse_foursquare_time

    arr = as_arrow(text)
    codes, shape_list = shapes(arr)
    codes = np.where(present, codes, -1)
    kind = _classes(shape_list)[codes]  # -1 -> the appended 0, masked below
    number, fsq = present & (kind == 1), present & (kind == 2)
    other = present & (kind == 0)
    lengths = np.array([len(s) for s in shape_list] + [0])[codes]
    wanted = set(range(len(table))) if only is None else {only}
    out = {}

    def keep(i, where, ns, naive=False):
        ok = ns != _NAT
        out[i] = (where[ok], ns[ok], naive)

    for i, r in enumerate(table):
        if i not in wanted:
            continue
        if r.kind == "epoch" and number.any():
            where = np.flatnonzero(number)
            values = _numbers(text.iloc[where])
            if units is None and forced_unit is None:
                units = group_units(values, groups[where], n_groups)
            keep(i, where, epoch_of_groups(values, groups[where], units, forced_unit))
        elif r.kind == "foursquare" and fsq.any():
            where = np.flatnonzero(fsq)
            keep(i, where, *stamps_ns(parse_foursquare_time(text.iloc[where])))
        elif r.fmt in COMPACT.values():
            where = np.flatnonzero(number & (lengths == _COMPACT_LENGTH[r.fmt]))
            if len(where):
                keep(i, where, parse_layout(arr.take(where), codes[where], shape_list, r.fmt), True)
    if not other.any():
        return out, _units(units, n_groups)
    rest = other.copy()
    iso = next((i for i, r in enumerate(table) if r.fmt == "ISO8601"), None)
    fit = np.flatnonzero(fits(shape_list, "ISO8601"))
    if iso in wanted and len(fit):
        where = np.flatnonzero(other & np.isin(codes, fit))
        keep(iso, where, *stamps_ns(try_format(text.iloc[where], "ISO8601", notes)))
        rest[out[iso][0]] = False
    candidates = [j for j, s in enumerate(shape_list) if len(s) <= 40 and _SHAPE.match(s)]
    if not candidates or not rest.any():
        return out, _units(units, n_groups)
    for i, r in enumerate(table):
        if i not in wanted or r.kind != "format" or r.fmt in ("ISO8601", *COMPACT.values()):
            continue
        fit = [candidates[j] for j in np.flatnonzero(fits([shape_list[c] for c in candidates], r.fmt))]
        where = np.flatnonzero(rest & np.isin(codes, fit)) if fit else []
        if len(where):
            keep(i, where, parse_layout(arr.take(where), codes[where], shape_list, r.fmt), True)
    return out, _units(units, n_groups)


def _units(units, n_groups):
    return np.full(n_groups, -1, dtype=np.int64) if units is None else units


def read_grouped(text, present: np.ndarray, groups: np.ndarray, n_groups: int, *, dayfirst: bool,
                 forced_unit: str | None = None, fixed: Chosen | None = None, notes=None):
    """Read stripped text times (a pandas string Series), each group its own way.

    Returns ``(ns, naive, chosen)``: int64 nanoseconds (``_NAT`` where unread), a
    mask of the values that are wall times still to be placed in a timezone, and
    the :class:`Chosen` readings.  ``fixed`` reads every group as ``fixed`` decided
    for group 0 (the later chunks of a column read without groups).
    """
    table = fixed.table if fixed is not None else readings(dayfirst)
    only = None if fixed is None else int(fixed.reading[0])
    mixed = []
    units = None if fixed is None else np.full(n_groups, fixed.unit[0], dtype=np.int64)
    tried, units = _tries(text, present, table, groups, n_groups, only=only, units=units,
                          forced_unit=forced_unit, notes=mixed)
    counts = np.zeros((n_groups, len(table)), dtype=np.int64)
    for i, (where, _, _) in tried.items():
        counts[:, i] = np.bincount(groups[where], minlength=n_groups)
    if fixed is not None:
        choice = np.full(n_groups, only)
        best = counts[:, only]
    else:
        choice = counts.argmax(axis=1)
        best = counts[np.arange(n_groups), choice]
    choice = np.where(best > 0, choice, -1)
    pair = {r.fmt: j for j, r in enumerate(table)}
    other = np.array([pair.get(r.other, -1) for r in table])
    tie = np.zeros(n_groups, bool)
    has = choice >= 0
    alt = np.where(has, other[np.maximum(choice, 0)], -1)
    tie[has & (alt >= 0)] = counts[has & (alt >= 0), alt[has & (alt >= 0)]] == best[has & (alt >= 0)]
    ns = np.full(len(text), _NAT, dtype=np.int64)
    naive = np.zeros(len(text), bool)
    for i, (where, values, is_naive) in tried.items():
        mine = choice[groups[where]] == i
        ns[where[mine]] = values[mine]
        naive[where[mine]] = is_naive
    if notes is not None:
        for note in dict.fromkeys(mixed):
            notes.append(note)
    return ns, naive, Chosen(table, choice, units, tie)
