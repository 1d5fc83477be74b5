"""What the time reader says: the readings chosen, the values left unread, and wall
times a timezone skips or repeats.

:func:`describe` writes the notes of one call of :class:`tracs.io.times.TimeReader`
(one line when every group was read the same way, else one line naming the layouts
and how many groups took each); :func:`localise` places wall times in a timezone as
:mod:`zoneinfo` defines it: a time in a gap (clocks jump forward) does not exist and
is unread, with a note naming the jump; a time in an overlap (clocks go back) is
read as its earlier (``fold=0``) or later (``fold=1``) occurrence.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np

from .time_readings import EPOCH_FORMATS, EPOCH_NAMES, epoch_to_ns

__all__ = ["describe", "localise"]

_NAT = np.iinfo(np.int64).min
_UNITS = list(EPOCH_FORMATS)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _verb(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _label(reading, unit: int) -> str:
    if reading.kind == "epoch":
        return f"Unix epoch {EPOCH_NAMES[_UNITS[unit]]}"
    return reading.label()


def _one(reading, unit, first, tie, *, flags, dayfirst, forced):
    """The note of a column read one way (None for ISO 8601, which needs none)."""
    fmt_flag = flags.get("time_format", "time_format=")
    if reading.kind == "epoch":
        name = EPOCH_NAMES[_UNITS[unit]]
        if forced:
            return f"times read as Unix epoch {name} (UTC), as given with {fmt_flag} {forced}"
        example = epoch_to_ns(np.array([float(first)]), _UNITS[unit])[0] if _is_number(first) else _NAT
        shown = str(np.datetime64(int(example), "ns").astype("datetime64[s]")) if example != _NAT else "?"
        return (f"times read as Unix epoch {name} (UTC), told by their magnitude ({first} = {shown}); "
                f"{fmt_flag} {'|'.join(EPOCH_FORMATS)} forces a unit")
    if reading.kind == "foursquare":
        return "times read in the Foursquare layout ('Sat Dec 08 05:56:34 +0000 2012')"
    if reading.fmt == "ISO8601":
        return None
    if reading.fmt in ("%Y%m%d", "%Y%m%d%H%M%S") and str(first).isdigit():
        return f"times like {first!r} read with {reading.fmt!r} (give {fmt_flag} epoch-s to read them as Unix epoch seconds)"
    if tie:
        return f"times like {first!r} are not ISO 8601: read with {reading.fmt!r} ({_order(reading, flags, dayfirst)})"
    return f"times like {first!r} are not ISO 8601: read with {reading.fmt!r}"


def _order(reading, flags, dayfirst) -> str:
    """``day first; give … to read them month first`` for a reading tied with its other order."""
    day_flag = flags.get("dayfirst", "dayfirst=True")
    fmt_flag = flags.get("time_format", "time_format=")
    other = f"{fmt_flag} {reading.other!r}" if dayfirst else day_flag
    return (f"{'day' if dayfirst else 'month'} first; give {other} to read them "
            f"{'month' if dayfirst else 'day'} first")


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def describe(chosen, text, codes, present, ns, *, flags, dayfirst, forced, group_name) -> list:
    """The notes of one read (see the module docstring)."""
    has = chosen.reading >= 0
    if not has.any():
        return []
    epoch = np.array([r.kind == "epoch" for r in chosen.table])
    key = np.where(has, chosen.reading * 8 + np.where(epoch[np.maximum(chosen.reading, 0)],
                                                      np.maximum(chosen.unit, 0), 0), -1)
    row_key = key[codes]
    out = []
    keys = np.unique(key[has])
    shown = []
    for k in keys:
        first_row = int(np.argmax((row_key == k) & present))
        groups = int((key == k).sum())
        reading, unit = chosen.table[k // 8], int(k % 8)
        tie = bool(chosen.tie[(key == k)].any())
        shown.append((reading, unit, groups, str(text.iloc[first_row]), tie))
    if len(shown) == 1:
        reading, unit, _, first, tie = shown[0]
        note = _one(reading, unit, first, tie, flags=flags, dayfirst=dayfirst, forced=forced)
        out += [note] if note else []
    else:
        parts = [f"{_label(r, u)} for {_plural(g, group_name)} (e.g. {first!r})" for r, u, g, first, _ in shown]
        out.append(f"times: {len(shown)} layouts among {_plural(int(has.sum()), group_name)}: " + "; ".join(parts))
        for reading, _, _, first, tie in shown:
            if tie:
                ties = int((chosen.tie & (chosen.reading == chosen.table.index(reading))).sum())
                out.append(f"times of {_plural(ties, group_name)} like {first!r} read both ways: read with "
                           f"{reading.fmt!r} ({_order(reading, flags, dayfirst)})")
    out += _unread(chosen, text, codes, present, ns, epoch, group_name)
    return out


def _unread(chosen, text, codes, present, ns, epoch, group_name) -> list:
    """Notes on the values left unread by their group's reading."""
    unread = present & (ns == _NAT)
    if not unread.any():
        return []
    out = []
    reading = chosen.reading[codes]
    none = unread & (reading < 0)
    if none.any():
        n = int(none.sum())
        whose = f" of {_plural(len(np.unique(codes[none])), group_name)}" if group_name else ""
        out.append(f"{_plural(n, 'time')}{whose} {_verb(n, 'fits', 'fit')} no layout (dropped as bad_time), e.g. "
                   f"{text.iloc[int(np.argmax(none))]!r}")
    by_epoch = unread & (reading >= 0) & epoch[np.maximum(reading, 0)]
    if by_epoch.any():
        units = chosen.unit[codes]
        for u in np.unique(units[by_epoch]):
            n = int((by_epoch & (units == u)).sum())
            out.append(f"{n:,} time(s) of another magnitude than Unix epoch {EPOCH_NAMES[_UNITS[u]]} were not "
                       "read (dropped as bad_time)")
    rest = unread & (reading >= 0) & ~epoch[np.maximum(reading, 0)]
    if rest.any():
        n = int(rest.sum())
        others = f"{_verb(n, 'its', 'their')} {group_name}'s other times" if group_name else "the other times"
        out.append(f"{_plural(n, 'time')} not in the layout of {others} {_verb(n, 'was', 'were')} not read "
                   f"(dropped as bad_time), e.g. {text.iloc[int(np.argmax(rest))]!r}")
    return out


# ----------------------------------------------------------------------------- timezone


def localise(wall_ns: np.ndarray, tz, ambiguous: str, note, flags) -> np.ndarray:
    """Wall times (int64 ns) in ``tz`` -> UTC int64 ns; a time in a gap is the NaT integer.

    ``note`` receives one line for the gaps and one for the overlaps met, each with an
    example and the jump of the clocks.
    """
    import pandas as pd

    series = pd.Series(wall_ns.view("datetime64[ns]"))
    placed = series.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    out = _utc_ns(placed)
    odd = np.flatnonzero(out == _NAT)
    if not len(odd):
        return out
    earlier = _utc_ns(series.iloc[odd].dt.tz_localize(tz, ambiguous=np.ones(len(odd), bool), nonexistent="NaT"))
    later = _utc_ns(series.iloc[odd].dt.tz_localize(tz, ambiguous=np.zeros(len(odd), bool), nonexistent="NaT"))
    gap = earlier == _NAT
    out[odd] = earlier if ambiguous == "earlier" else later
    out[odd[gap]] = _NAT
    flag = flags.get("ambiguous", "ambiguous=")
    if gap.any():
        wall = pd.Timestamp(wall_ns[odd[gap][0]]).to_pydatetime()
        before, after = _jump(str(tz), wall)
        n = int(gap.sum())
        note(f"{_plural(n, 'time')} (e.g. {wall:%Y-%m-%d %H:%M:%S}) {_verb(n, 'does', 'do')} not exist in {tz}: "
             f"clocks jump "
             f"from {before:%H:%M} to {after:%H:%M} on {before:%Y-%m-%d}; dropped as bad_time")
    if (~gap).any():
        wall = pd.Timestamp(wall_ns[odd[~gap][0]]).to_pydatetime()
        before, after = _jump(str(tz), wall)
        other = "later" if ambiguous == "earlier" else "earlier"
        n = int((~gap).sum())
        note(f"{_plural(n, 'time')} (e.g. {wall:%Y-%m-%d %H:%M:%S}) {_verb(n, 'occurs', 'occur')} twice in {tz}: "
             f"clocks go "
             f"back from {before:%H:%M} to {after:%H:%M} on {before:%Y-%m-%d}; read as the {ambiguous} occurrence "
             f"({flag} {other} reads the {other})")
    return out


def _utc_ns(placed) -> np.ndarray:
    values = placed.dt.tz_convert("UTC").dt.tz_localize(None).dt.as_unit("ns")
    return values.to_numpy(dtype="datetime64[ns]").view(np.int64).copy()


def _jump(tz: str, wall: dt.datetime) -> tuple:
    """The wall clock just before and just after the change of offset around ``wall``
    (a time in a gap or an overlap of ``tz``)."""
    zone = zoneinfo.ZoneInfo(tz)
    first = wall.replace(tzinfo=zone, fold=0).utcoffset()
    second = wall.replace(tzinfo=zone, fold=1).utcoffset()
    low, high = wall - max(first, second), wall - min(first, second)  # UTC, around the change

    def offset(utc):
        return utc.replace(tzinfo=dt.timezone.utc).astimezone(zone).utcoffset()

    start = offset(low)
    while high - low > dt.timedelta(seconds=1):
        middle = low + (high - low) / 2
        low, high = (middle, high) if offset(middle) == start else (low, middle)
    change = high.replace(microsecond=0)
    return change + start, change + offset(change)
