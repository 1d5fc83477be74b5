"""The one form every loader returns, built from parsed columns with a drop report.

``build_checkins`` takes the raw user, time (already parsed to UTC, ``NaT`` where
unparsable), latitude, longitude, optional POI id and extra columns, plus the
source line of each row, and returns a WGS84 GeoDataFrame:

* columns ``uid``, ``datetime`` (``datetime64[ns, UTC]``), ``poi_id`` (when known),
  the extra columns, ``source_line`` (the row's 1-based line in the file) or
  ``source_row`` (its 0-based position in an input frame), ``geometry`` (points,
  EPSG:4326), a fresh RangeIndex; sorting by the source column restores the input
  order;
* rows ordered by (uid, datetime) with a stable sort: rows with the same user and
  time keep their file order;
* ``attrs["report"]``: a :class:`~tracs.io.report.LoadReport`.

Checks, in order (a row gets the first reason that applies): bad user, bad
time, bad coordinates (empty, non-numeric, NaN, inf), coordinates out of range.

Duplicates: an *exact duplicate* is a row equal, in every column read, to an
earlier row; a *repeated time* is a row with the (user, time) pair of an earlier
row but other values (e.g. another venue).  Both are always listed in the report.
``duplicates="keep"`` (the default: nothing is lost) keeps them,
``"drop_exact"`` drops exact duplicates, ``"drop_user_time"`` drops every row
whose (user, time) pair occurred before (keeping the first in file order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import InputError, InputTypeError
from .report import DroppedRowsError, LoadReport

#: the column that records where each row came from, by kind of position
SOURCE_COLUMN = {"line": "source_line", "row": "source_row"}
#: every such column name, for code that reads a loader's output back
SOURCE_COLUMNS = tuple(SOURCE_COLUMN.values())

if TYPE_CHECKING:  # geopandas is imported only where a frame is built
    import geopandas as gpd

DUPLICATE_POLICIES = ("keep", "drop_exact", "drop_user_time")
RESERVED = ("uid", "datetime", "poi_id", "geometry")


def check_duplicates_policy(duplicates) -> str:
    if duplicates not in DUPLICATE_POLICIES:
        raise InputError(f"duplicates must be one of {DUPLICATE_POLICIES}, got {duplicates!r}")
    return duplicates


def check_strict(strict) -> bool:
    if not isinstance(strict, (bool, np.bool_)):
        raise InputTypeError(f"strict must be a bool, got {type(strict).__name__}")
    return bool(strict)


def to_number(values: pd.Series) -> np.ndarray:
    """Float64 array; anything that is not a finite number becomes NaN."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return np.full(len(values), np.nan)
    if not pd.api.types.is_numeric_dtype(values.dtype):
        values = pd.to_numeric(values.astype("string").str.strip(), errors="coerce")
    out = values.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.where(np.isfinite(out), out, np.nan)


def integer_ids(values: pd.Series, notes: list | None = None) -> pd.Series:
    """Ids that must be integers (Foursquare, Gowalla): anything else becomes missing.

    Integers written in their usual form come back as numbers (nullable ``Int64``);
    when some are written otherwise (``007``, ``+7``) every id is kept as its text
    (surrounding spaces removed), so that ``007`` and ``7`` stay two users (``notes``
    says so).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pd.api.types.is_integer_dtype(values.dtype):
        return values
    arr = _arrow_text(values)
    text = pc.utf8_trim_whitespace(arr)
    valid = pc.fill_null(pc.match_substring_regex(text, r"^[+-]?[0-9]+$"), False)
    canonical = pc.fill_null(pc.match_substring_regex(text, _CANONICAL_INT), False)
    if pc.all(pc.equal(valid, canonical)).as_py():
        numbers = pc.if_else(canonical, text, pa.scalar(None, pa.string())).cast(pa.int64())
        return pd.Series(numbers.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get), index=values.index)
    if notes is not None:
        odd = pc.unique(pc.filter(text, pc.and_(valid, pc.invert(canonical)))).to_pylist()[:3]
        notes.append(f"user ids kept as text, exactly as written: some integers have another form "
                     f"({', '.join(map(repr, odd))}), so that they stay distinct users")
    kept = pc.if_else(valid, text, pa.scalar(None, pa.string()))
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([kept]).cast(pa.large_string())
                                                if not isinstance(kept, pa.ChunkedArray) else
                                                kept.cast(pa.large_string())), index=values.index)


def _arrow_text(values: pd.Series):
    """A Series of text (object, pandas or Arrow strings) as an Arrow string array, without a
    Python string per row when it already holds text."""
    import pyarrow as pa

    if getattr(values.dtype, "storage", None) == "pyarrow":
        return pa.chunked_array(values.array._pa_array)
    try:
        arr = pa.array(values.to_numpy(dtype=object), from_pandas=True)
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return arr
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    return pa.array(values.astype("string").to_numpy(dtype=object, na_value=None), type=pa.string())


def user_order_keys(uid: pd.Series) -> np.ndarray:
    """Integer keys ordering users like a sort of their ids: numbers (and text ids that are
    all integers in their usual form, such as ``7`` and ``12``) by value, other text in
    code-point order (``007`` < ``12`` < ``7``).  Equal keys mean equal ids."""
    if isinstance(uid.dtype, np.dtype) and np.issubdtype(uid.dtype, np.signedinteger):
        return uid.to_numpy(dtype=np.int64)
    numbers = canonical_integers(uid)
    if numbers is not None:
        return numbers
    codes, _ = pd.factorize(uid, sort=True)
    return codes


_CANONICAL_INT = r"^(0|-?[1-9][0-9]{0,17})$"


def canonical_integers(uid: pd.Series) -> np.ndarray | None:
    """The int64 values of text ids when every one is an integer in its usual form, else None."""
    if not (pd.api.types.is_string_dtype(uid.dtype) or uid.dtype == object) or uid.isna().any():
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _arrow_text(uid)
    if len(arr) == 0 or not pc.all(pc.match_substring_regex(arr, _CANONICAL_INT)).as_py():
        return None
    return arr.cast(pa.int64()).to_numpy()


def _user_ids(uid: pd.Series) -> pd.Series:
    """Nullable integer ids (from a column with gaps, now dropped) to int64; others unchanged
    (text stays text, floats stay floats: ids keep the type they were written with)."""
    if isinstance(uid.dtype, pd.Int64Dtype) and not uid.isna().any():
        return pd.Series(uid.to_numpy(dtype=np.int64), name=uid.name)
    return uid


def check_rows(bad_user: np.ndarray, bad_time: np.ndarray, lat: np.ndarray, lng: np.ndarray,
               lines: np.ndarray, dropped: dict) -> np.ndarray:
    """The row checks of every loader, in order; returns the positions of the rows kept.

    A row gets the first reason that applies (bad user, bad time, bad coordinates,
    out of range); the lines of the rows dropped for each reason are added to
    ``dropped`` (reason -> lines).  ``lat`` / ``lng`` are float64 with NaN for
    anything that is not a finite number.
    """
    reason = np.zeros(len(lines), dtype=np.int8)
    checks = [
        ("bad_user", bad_user),
        ("bad_time", bad_time),
        ("bad_coords", np.isnan(lat) | np.isnan(lng)),
        ("out_of_range", (np.abs(lat) > 90.0) | (np.abs(lng) > 180.0)),
    ]
    for code, (name, mask) in enumerate(checks, start=1):
        hit = mask & (reason == 0)
        if hit.any():
            reason[hit] = code
            dropped[name] = lines[hit]
    return np.flatnonzero(reason == 0)


def make_report(*, source, fmt, rows, kept, dropped, exact, repeated, duplicates, blank_lines,
                position, notes, strict, untimed=(), column_names=None) -> LoadReport:
    """The :class:`LoadReport` of a loader; raises when nothing is left or, with ``strict``, anything dropped.

    ``rows`` counts the records parsed (lines skipped by the parser, ``dropped["bad_fields"]``, come on top).
    """
    empty = np.empty(0, np.int64)
    dropped = {k: np.sort(dropped[k]) for k in
               ("bad_fields", "bad_user", "bad_time", "bad_coords", "out_of_range", "duplicate")
               if k in dropped}
    report = LoadReport(
        source=source, format=fmt, rows_read=rows + len(dropped.get("bad_fields", empty)),
        rows_kept=kept, dropped=dropped, exact_duplicates=np.sort(exact),
        repeated_times=np.sort(repeated), duplicates=duplicates,
        blank_lines=np.asarray(blank_lines if blank_lines is not None else empty, dtype=np.int64),
        position=position, notes=tuple(notes), untimed=np.sort(np.asarray(untimed, dtype=np.int64)),
        columns=column_names,
    )
    if report.rows_read == 0:
        raise InputError(f"{source} has no check-in rows")
    if strict and report.n_dropped:
        raise DroppedRowsError(report)
    if report.rows_kept == 0:
        raise InputError(f"no valid check-in left in {source}:\n{report.summary()}")
    return report


def build_checkins(*, uid: pd.Series, time: pd.Series, lat: pd.Series, lng: pd.Series,
                   lines: np.ndarray, source: str, fmt: str, poi: pd.Series | None = None,
                   extra: dict | None = None, bad_lines=None, blank_lines=None, notes=(),
                   duplicates: str = "keep", strict: bool = False,
                   position: str = "line", untimed=None, column_names=None) -> gpd.GeoDataFrame:
    """Validate, order and report; see the module docstring.

    ``untimed`` (optional boolean mask over the rows) marks rows with no time of
    their own: ``time`` only orders them, their ``datetime`` is left missing,
    they are never counted as duplicates, and the report lists them.
    ``column_names`` (role -> the file's column) lets drop messages name the columns.
    """
    duplicates = check_duplicates_policy(duplicates)
    strict = check_strict(strict)
    extra = dict(extra or {})
    for name in extra:
        if name in RESERVED:
            raise InputError(f"an extra column is named {name!r}, which the output uses for "
                             "another meaning: rename it first")
    n = len(uid)
    lines = np.asarray(lines, dtype=np.int64)
    dropped = {}
    if bad_lines is not None and len(bad_lines):
        dropped["bad_fields"] = np.asarray(bad_lines, dtype=np.int64)

    time = pd.Series(time, copy=False).reset_index(drop=True)
    if not isinstance(time.dtype, pd.DatetimeTZDtype):
        raise TypeError("internal: time must be parsed to a tz-aware dtype")
    time = time.dt.tz_convert("UTC").astype("datetime64[ns, UTC]")
    lat_v = to_number(lat.reset_index(drop=True))
    lng_v = to_number(lng.reset_index(drop=True))
    uid = uid.reset_index(drop=True)

    keep = check_rows(uid.isna().to_numpy(), time.isna().to_numpy(), lat_v, lng_v, lines, dropped)

    untimed = np.zeros(n, bool) if untimed is None else np.asarray(untimed, dtype=bool)
    uid = _user_ids(uid.take(keep).reset_index(drop=True))
    t = time.take(keep).reset_index(drop=True)
    untimed = untimed[keep]
    lat_v, lng_v, lines_k = lat_v[keep], lng_v[keep], lines[keep]
    columns = {"uid": uid, "datetime": t}
    if poi is not None:
        columns["poi_id"] = poi.reset_index(drop=True).take(keep).reset_index(drop=True)
    for name, values in extra.items():
        columns[name] = pd.Series(values).reset_index(drop=True).take(keep).reset_index(drop=True)

    # stable (uid, time) order: np.lexsort is stable, so ties keep file order
    tkey = t.array.asi8 if len(t) else np.empty(0, np.int64)
    order = np.lexsort((tkey, user_order_keys(uid)))
    frame = pd.DataFrame({k: v.take(order).reset_index(drop=True) for k, v in columns.items()})
    lat_v, lng_v, lines_k, tkey = lat_v[order], lng_v[order], lines_k[order], tkey[order]
    untimed = untimed[order]

    # duplicates: after the stable sort a (user, time) group is contiguous, in file order
    ukey = user_order_keys(frame["uid"])
    same = np.zeros(len(frame), dtype=bool)
    if len(frame) > 1:
        same[1:] = (ukey[1:] == ukey[:-1]) & (tkey[1:] == tkey[:-1])
        same &= ~untimed & ~np.r_[False, untimed[:-1]]  # an ordering time is no time: never a repeat
    repeat = np.flatnonzero(same)
    exact_mask = np.zeros(len(frame), dtype=bool)
    if len(repeat):
        group = np.flatnonzero(same | np.r_[same[1:], False])  # every row of a repeated group
        sub = frame.iloc[group].assign(_lat=lat_v[group], _lng=lng_v[group])
        exact_mask[group[sub.duplicated(keep="first").to_numpy()]] = True
        exact_mask &= ~untimed
    exact = lines_k[exact_mask]
    repeated = lines_k[same & ~exact_mask]
    drop = {"drop_exact": exact_mask, "drop_user_time": same}.get(duplicates)
    if drop is not None and drop.any():
        dropped["duplicate"] = np.sort(lines_k[drop])
        frame, lat_v, lng_v = frame.loc[~drop].reset_index(drop=True), lat_v[~drop], lng_v[~drop]
        lines_k, untimed = lines_k[~drop], untimed[~drop]
    if untimed.any():
        frame.loc[untimed, "datetime"] = pd.NaT
    frame[SOURCE_COLUMN[position]] = lines_k

    report = make_report(source=source, fmt=fmt, rows=n, kept=len(frame), dropped=dropped,
                         exact=exact, repeated=repeated, duplicates=duplicates,
                         blank_lines=blank_lines, position=position, notes=notes, strict=strict,
                         untimed=lines_k[untimed], column_names=column_names)
    import geopandas as gpd  # here: the command line's array path reads through this module without it

    out = gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(lng_v, lat_v), crs="EPSG:4326")
    out.attrs["report"] = report
    return out
