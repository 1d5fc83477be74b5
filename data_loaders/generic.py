"""Any check-in table: CSV/TSV, Parquet, a vector file, any other format of the table of
:mod:`tracs.io.formats`, a DataFrame or a GeoDataFrame.

Files are read by the reader the format table chooses (:func:`tracs.io.records.read_records`
for tables of columns, :func:`tracs.io.checkin_files.read_checkins` for the layouts whose reader
names its columns' roles: GPX, KML, the trajectory data sets); this module only picks
the columns.

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

import geopandas as gpd
import pandas as pd

from tracs.errors import InputError, InputTypeError
from tracs.io.checkins import RESERVED, build_checkins, check_duplicates_policy, check_strict
from tracs.io.columns import ALIASES, normalise
from tracs.io.formats import format_of
from tracs.io.checkin_files import read_checkins, user_codes
from tracs.io.records import frame_records, own_columns, read_records
from tracs.io.delimited_text import check_path
from tracs.io.times import parse_times

__all__ = ["load_checkins"]

_AUTO = object()


def _parse_time(values: pd.Series, uid: pd.Series, *, time_format, tz, ambiguous, notes) -> pd.Series:
    """Times of any supported kind -> tz-aware UTC series (NaT where unparsable), each user's
    read by the layout, day/month order and epoch unit of that user's own values.

    One implementation with the command line: :func:`tracs.io.times.parse_times`
    (explicit ``time_format``, ISO 8601, the Foursquare layout, other common
    layouts detected and noted, epoch numbers).
    """
    return pd.Series(parse_times(values, time_format=time_format, tz=tz, ambiguous=ambiguous, notes=notes,
                                 groups=user_codes(uid))).dt.tz_localize("UTC")


def _read(records, user: str, id_type: str):
    """The frame of the records of a file or a frame and ``(lines, bad lines, blank lines, notes,
    format, position, lonlat)``; with ``id_type="text"`` the user column and any trajectory id column of a text file
    keep the file's text ("01" and "1" are two trajectories)."""
    raw = records.raw
    if raw.geometry is not None and raw.roles:
        hint = "" if records.format is None else " (tracs.io.read_checkins reads each line as a trajectory)"
        raise InputError(f"the geometry column must hold points (one per check-in): {records.source} holds "
                         f"lines{hint}")
    text = (user, *(f for f in records.names if normalise(f) in ALIASES["traj"])) if id_type == "text" else ()
    fmt = raw.fmt if records.text_file or records.format is None else records.format.key
    bad, blank = (raw.bad_lines, raw.blank_lines) if records.text_file else (None, None)
    return records.frame(text), (raw.lines, bad, blank, list(raw.notes), fmt, raw.position, raw.lonlat)


def _coordinates(frame, lat, lng, *, notes, lonlat=None):
    """Latitude and longitude series, from the columns or from point geometry (``lonlat``:
    WGS84, as the reader gives it)."""
    if lat in frame.columns and lng in frame.columns:
        if lonlat is not None:  # the geometry is not used
            notes[:] = [n for n in notes if not n.startswith("coordinates converted")]
        return frame[lat], frame[lng], {lat, lng}
    if lonlat is not None:
        return pd.Series(lonlat[:, 1]), pd.Series(lonlat[:, 0]), set()
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
        (``.parquet``), a vector file (``.geojson``, ``.gpkg``, ...), each read by the reader
        of :data:`tracs.io.formats.FORMATS`; a file of a format whose reader names its
        columns' roles (GPX, KML, a trajectory data set's layout) through
        :func:`tracs.io.checkin_files.read_checkins` (``poi`` unused); or a frame.
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
        frame = path_or_frame
        if isinstance(frame, gpd.GeoDataFrame) and lat in frame.columns and lng in frame.columns:
            frame = pd.DataFrame(frame.drop(columns=frame._geometry_column_name, errors="ignore"))  # not used
        elif isinstance(frame, gpd.GeoDataFrame) and frame._geometry_column_name in frame.columns \
                and frame.crs is None:
            raise InputError("the GeoDataFrame has no CRS: set it (e.g. .set_crs('EPSG:4326')) "
                             "so that its coordinates can be read as longitude/latitude")
        frame, (lines, bad, blank, notes, fmt, position, lonlat) = _read(frame_records(frame), user, id_type)
        source = "<DataFrame>"
    elif isinstance(path_or_frame, (str, os.PathLike)):
        path = check_path(path_or_frame)
        if not own_columns(format_of(path)):  # a layout: its reader names the columns' roles, the default
            # names are looked for among the aliases, as the command line does
            return read_checkins(path, user=None if user == "uid" else user, time=None if time == "datetime" else time,
                                 lat=None if lat == "lat" else lat, lon=None if lng == "lng" else lng,
                                 time_format=time_format, tz=tz, ambiguous=ambiguous, keep_columns=True,
                                 strict=strict, duplicates=duplicates, encoding=encoding, sep=sep, id_type=id_type)
        records = read_records(path, sep=sep, encoding=encoding)
        frame, (lines, bad, blank, notes, fmt, position, lonlat) = _read(records, user, id_type)
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
    lat_s, lng_s, used = _coordinates(frame, lat, lng, notes=notes, lonlat=lonlat)
    poi_name = ("poi_id" if "poi_id" in frame.columns else None) if poi is _AUTO else poi
    if poi_name is not None and poi_name not in frame.columns:
        raise InputError(f"missing POI column {poi_name!r} in {source}; available: {list(frame.columns)}")
    used |= {user, time} | ({poi_name} if poi_name else set())
    extra = {c: frame[c] for c in frame.columns if c not in used and c not in RESERVED}
    clash = [c for c in frame.columns if c not in used and c in RESERVED]
    if clash:
        notes.append(f"column(s) {clash} not kept: the output uses those names for the "
                     "columns chosen by user=, time=, poi=")
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
