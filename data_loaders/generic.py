"""Any check-in table: CSV/TSV, Parquet, a vector file, any other format of the table of
:mod:`tracs.io.formats`, a DataFrame or a GeoDataFrame.

Column names are given for user, time, latitude and longitude (defaults: the
scikit-mobility names ``uid``, ``datetime``, ``lat``, ``lng``).  A GeoDataFrame
without latitude/longitude columns gives its point coordinates instead (converted
to WGS84 from its CRS).  Other columns are kept as they are.

Times: datetime columns, strings (ISO 8601, other common layouts, or
``time_format``) or numbers (Unix epoch), each user's read by that user's own
values.  Times without an offset are local to ``tz`` (default UTC); everything
is converted to UTC.
"""

from __future__ import annotations

import os
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from tracs.errors import InputError, InputTypeError, MissingExtraError
from tracs.io.checkins import RESERVED, build_checkins, check_duplicates_policy, check_strict
from tracs.io.columns import ALIASES, normalise
from tracs.io.formats import FORMATS, format_of
from tracs.io.checkin_files import read_checkins, user_codes
from tracs.io.delimited_text import check_path, read_table, sniff
from tracs.io.times import parse_times

__all__ = ["load_checkins"]

_AUTO = object()


def _kind(fmt) -> str | None:
    """How this loader reads a format of :data:`tracs.io.formats.FORMATS`: ``"parquet"``, ``"vector"``
    (geopandas), ``"text"`` (delimited text into pandas), or None: by the format's own reader,
    through :func:`tracs.io.checkin_files.read_checkins`."""
    for kind, key in (("parquet", "parquet"), ("vector", "geojson"), ("text", "csv")):
        if fmt.read == FORMATS[key].read:
            return kind
    return None


def _parse_time(values: pd.Series, uid: pd.Series, *, time_format, tz, ambiguous, notes) -> pd.Series:
    """Times of any supported kind -> tz-aware UTC series (NaT where unparsable), each user's
    read by the layout, day/month order and epoch unit of that user's own values.

    One implementation with the command line: :func:`tracs.io.times.parse_times`
    (explicit ``time_format``, ISO 8601, the Foursquare layout, other common
    layouts detected and noted, epoch numbers).
    """
    return pd.Series(parse_times(values, time_format=time_format, tz=tz, ambiguous=ambiguous, notes=notes,
                                 groups=user_codes(uid))).dt.tz_localize("UTC")


def _read_path(path: Path, kind: str, *, sep, encoding, text=()):
    """Read a file of ``kind`` (:func:`_kind`) into a frame; returns (frame, lines, bad_lines, blank_lines,
    notes, fmt, position).

    Columns named in ``text`` (ids) and, with them, any trajectory id column of a text
    file keep the file's text.
    """
    suffix = path.suffix.lower()
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq
            is_geo = b"geo" in (pq.read_schema(path).metadata or {})
        except ImportError as exc:
            raise MissingExtraError("reading Parquet needs pyarrow (pip install 'tracs[parquet]')") from exc
        except Exception as exc:
            raise InputError(f"{path} is not a readable Parquet file: {exc}") from exc
        frame = gpd.read_parquet(path) if is_geo else pd.read_parquet(path)
        return frame, None, None, None, [], "parquet", "row"
    if kind == "vector":
        try:
            frame = gpd.read_file(path)
        except Exception as exc:
            raise InputError(f"{path} is not a readable vector file: {exc}") from exc
        return frame, None, None, None, [], suffix.lstrip("."), "row"
    head = sniff(path, what="check-in table", delimiters=sep or "\t,;|", encoding=encoding)
    if text:  # trajectory ids are ids too: "01" and "1" are two trajectories
        text = (*text, *(f for f in head.fields if normalise(f) in ALIASES["traj"]))
    table = read_table(path, sep=head.sep, header=True, encoding=encoding, text=text)
    fmt = {"\t": "tsv", ",": "csv"}.get(head.sep, "delimited text")
    return table.frame, table.lines, table.bad_lines, table.blank_lines, table.notes, fmt, "line"


def _coordinates(frame, lat, lng, *, notes):
    """Latitude and longitude series, from the columns or from point geometry."""
    if lat in frame.columns and lng in frame.columns:
        return frame[lat], frame[lng], {lat, lng}
    if isinstance(frame, gpd.GeoDataFrame) and frame.geometry.name in frame.columns:
        geom = frame.geometry
        if geom.crs is None:
            raise InputError("the GeoDataFrame has no CRS: set it (e.g. .set_crs('EPSG:4326')) "
                             "so that its coordinates can be read as longitude/latitude")
        if not geom.crs.equals("EPSG:4326"):
            geom = geom.to_crs("EPSG:4326")
            notes.append(f"coordinates converted from {frame.crs.to_string()} to EPSG:4326")
        arr = geom.array
        kinds = shapely.get_type_id(np.asarray(arr))
        if not np.all((kinds == 0) | (kinds == -1)):  # points (or missing)
            raise InputError("the geometry column must hold points (one per check-in)")
        xy = np.full((len(arr), 2), np.nan)
        present = ~(shapely.is_missing(np.asarray(arr)) | shapely.is_empty(np.asarray(arr)))
        xy[present] = shapely.get_coordinates(np.asarray(arr)[present])
        return pd.Series(xy[:, 1]), pd.Series(xy[:, 0]), {frame.geometry.name}
    missing = [c for c in (lat, lng) if c not in frame.columns]
    raise InputError(f"missing column(s) {missing} for latitude/longitude; available: "
                     f"{list(frame.columns)} (pass lat=..., lng=... to name them)")


def load_checkins(path_or_frame, *, user: str = "uid", time: str = "datetime",
                  lat: str = "lat", lng: str = "lng", poi=_AUTO, strict: bool = False,
                  duplicates: str = "keep", time_format: str | None = None, tz: str = "UTC",
                  ambiguous: str = "earlier", sep: str | None = None, encoding: str | None = None,
                  id_type: str = "text"):
    """Load check-ins from any table, given the names of its columns.

    Parameters
    ----------
    path_or_frame : str, os.PathLike, pandas.DataFrame or geopandas.GeoDataFrame
        A delimited text file with a header (delimiter detected among tab, comma,
        semicolon and pipe unless ``sep`` is given), a Parquet/GeoParquet file
        (``.parquet``), a vector file (``.geojson``, ``.gpkg``, ...), a file of any other
        format of :data:`tracs.io.formats.FORMATS` (read by its reader through
        :func:`tracs.io.checkin_files.read_checkins`; ``poi`` unused), or a frame.
    user, time, lat, lng : str
        Column names for the user id, the time, latitude and longitude (degrees,
        WGS84).  For a GeoDataFrame without ``lat``/``lng`` columns the point
        geometry is used.
    poi : str or None, optional
        Column with the point-of-interest id.  Default: ``"poi_id"`` if present;
        ``None``: no POI ids.  An explicit name must exist.
    strict : bool, default False
        Raise :class:`~data_loaders.DroppedRowsError` instead of dropping any row.
    duplicates : {"keep", "drop_exact", "drop_user_time"}, default "keep"
        What to do with repeated rows (always listed in the report).
    time_format : str, optional
        A ``strptime`` format for string times, or an epoch unit (default: each
        user's layout or epoch unit told by that user's own values,
        :func:`tracs.io.times.parse_times`).
    tz : str, default "UTC"
        Timezone of times given without an offset.
    ambiguous : {"earlier", "later"}, default "earlier"
        A time ``tz`` repeats (clocks go back) is read as its earlier occurrence
        (``fold=0``) or its later one; a time ``tz`` skips is dropped as ``bad_time``.
    sep, encoding : str, optional
        Delimiter and encoding of a text file (default: detected; UTF-8 with a
        latin-1 fallback).
    id_type : {"text", "infer"}, default "text"
        User ids of a text file are kept exactly as written (``007``, ``7`` and
        `` 7`` are three users; an empty or blank id is missing); ``"infer"`` reads
        them as numbers when every id is one (``007`` becomes ``7``).  Frames and
        Parquet files keep their ids' type.

    Returns
    -------
    geopandas.GeoDataFrame
        WGS84 points with ``uid``, ``datetime`` (UTC), ``poi_id`` (when known), the
        other columns unchanged, ``geometry``; sorted by (uid, datetime), ties in
        input order; ``attrs["report"]`` a :class:`~data_loaders.LoadReport`
        (line numbers for files, 0-based row positions for frames and Parquet).

    Raises
    ------
    TypeError
        ``path_or_frame`` is neither a path nor a DataFrame.
    FileNotFoundError
        The file does not exist.
    ValueError
        Empty input, missing columns, an unreadable file, no valid row left, or a
        drop with ``strict=True``.
    """
    check_duplicates_policy(duplicates)
    strict = check_strict(strict)
    if id_type not in ("text", "infer"):
        raise InputError(f"id_type must be one of text, infer, got {id_type!r}")
    for name, value in (("user", user), ("time", time), ("lat", lat), ("lng", lng)):
        if not isinstance(value, str):
            raise InputTypeError(f"{name} must be a column name (str), got {type(value).__name__}")
    if isinstance(path_or_frame, pd.DataFrame):
        frame, source = path_or_frame, "<DataFrame>"
        lines = bad = blank = None
        notes, fmt, position = [], "dataframe", "row"
    elif isinstance(path_or_frame, (str, os.PathLike)):
        path = check_path(path_or_frame)
        kind = _kind(format_of(path))
        if kind is None:  # the default names are looked for among the aliases, as the command line does
            return read_checkins(path, user=None if user == "uid" else user, time=None if time == "datetime" else time,
                                 lat=None if lat == "lat" else lat, lon=None if lng == "lng" else lng,
                                 time_format=time_format, tz=tz, ambiguous=ambiguous, keep_columns=True,
                                 strict=strict, duplicates=duplicates, encoding=encoding, sep=sep, id_type=id_type)
        frame, lines, bad, blank, notes, fmt, position = _read_path(
            path, kind, sep=sep, encoding=encoding, text=(user,) if id_type == "text" else ())
        source = path.name
    else:
        raise InputTypeError("path_or_frame must be a path or a pandas/geopandas DataFrame, "
                             f"got {type(path_or_frame).__name__}")
    if len(frame) == 0:
        raise InputError(f"{source} has no check-in rows")
    missing = [c for c in (user, time) if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {missing} in {source}; available: {list(frame.columns)} "
                         "(pass user=..., time=... to name them)")
    notes = list(notes)
    lat_s, lng_s, used = _coordinates(frame, lat, lng, notes=notes)
    poi_name = ("poi_id" if "poi_id" in frame.columns else None) if poi is _AUTO else poi
    if poi_name is not None and poi_name not in frame.columns:
        raise InputError(f"missing POI column {poi_name!r} in {source}; available: {list(frame.columns)}")
    used |= {user, time} | ({poi_name} if poi_name else set())
    if isinstance(frame, gpd.GeoDataFrame) and frame._geometry_column_name in frame.columns:
        used.add(frame._geometry_column_name)
    extra = {c: frame[c] for c in frame.columns if c not in used and c not in RESERVED}
    clash = [c for c in frame.columns if c not in used and c in RESERVED]
    if clash:
        notes.append(f"column(s) {clash} not kept: the output uses those names for the "
                     "columns chosen by user=, time=, poi=")
    if lines is None:
        lines = np.arange(len(frame), dtype=np.int64)
    uid = frame[user].reset_index(drop=True)
    if pd.api.types.is_string_dtype(uid.dtype) or uid.dtype == object:
        uid = uid.astype("string")  # exactly as written; an empty or blank id is missing
        uid = uid.where(uid.str.strip() != "")
    return build_checkins(
        uid=uid, time=_parse_time(frame[time], uid, time_format=time_format, tz=tz, ambiguous=ambiguous,
                                  notes=notes),
        lat=lat_s, lng=lng_s, poi=frame[poi_name] if poi_name else None, extra=extra,
        lines=lines, bad_lines=bad, blank_lines=blank, notes=notes, source=source, fmt=fmt,
        duplicates=duplicates, strict=strict, position=position)
