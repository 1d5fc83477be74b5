"""Read check-ins from CSV / TSV / Parquet / GeoParquet / GeoJSON / GPX with any column names.

:func:`read_checkins` is the one entry point: it finds the container
(:func:`~tracs.io.formats.container_of`), reads only the columns it needs with
Arrow (CSV/TSV through ``pyarrow.csv`` on all cores, Parquet through
``pyarrow.parquet``; no row-wise Python), finds the user / time / coordinate /
trajectory columns (:func:`~tracs.io.columns.resolve_columns`), reads the times
(:func:`~tracs.io.times.parse_times`) and hands the columns to
``data_loaders``' validation (``build_checkins``), so every loader drops and
reports rows the same way: the result is the loaders' WGS84 GeoDataFrame with
``attrs["report"]`` (rows read / kept / dropped with line numbers, notes on the
formats and columns used).

Line numbers of text files are 1-based physical lines (header = line 1), one
record per line; lines with a wrong number of fields are dropped as
``bad_fields`` with their line; lines with no value in any column read are
listed as blank lines.  Parquet, GeoJSON and GPX rows are numbered from 0 in file
order (``source_row``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .columns import ALIASES, API_FLAGS, MissingColumnsError, normalise, resolve_columns
from .containers import (TextParseError, _float_column, _read_parquet, _read_text, _read_text_pandas,
                         _read_vector)
from .formats import binary_at, container_of, unsupported
from .layouts import TRACK_FORMATS  # the public trajectory data sets, read by their own readers

__all__ = ["INPUT_FORMATS", "PROFILES", "read_checkins", "read_columns"]

#: input formats: role -> aliases replacing the generic ones, and the headerless column names
PROFILES = {
    "checkins": {},
    "foursquare": {"user": ("userid", "user", "uid"), "time": ("utctime", "utctimestamp", "time", "timestamp"),
                   "poi": ("venueid", "venue")},
    "gowalla": {"user": ("userid", "user", "uid"), "time": ("timestamp", "checkintime", "time", "utctime"),
                "poi": ("locationid", "location", "spotid")},
}
_HEADERLESS = {"foursquare": ("user", "venue", "category_id", "category", "lat", "lng", "offset", "time"),
               "gowalla": ("user", "time", "lat", "lng", "location")}
INPUT_FORMATS = ("auto", "checkins", "foursquare", "gowalla", *TRACK_FORMATS)
#: how text user ids are read: exactly as written, or as integers when all of them are
ID_TYPES = ("text", "infer")


def _track_reader(module: str, name: str):
    def read(path):
        from importlib import import_module

        return getattr(import_module(f"tracs.io.{module}"), name)(path)
    return read


#: the reader of each public trajectory data set (imported on first use)
_TRACK_READERS = {"geolife": _track_reader("geolife", "read_geolife"),
                  "tdrive": _track_reader("tdrive", "read_tdrive"),
                  "porto": _track_reader("porto", "read_porto")}


def _names(table) -> list:
    return list(table.column_names) if hasattr(table, "column_names") else [str(c) for c in table.columns]


# ----------------------------------------------------------------------------- columns -> check-ins


def _profile_of(path: Path, kind: str, names) -> str:
    from .columns import normalise

    keys = {normalise(n) for n in names}
    if {"venueid", "utctime"} <= keys:
        return "foursquare"
    if {"userid", "locationid"} <= keys:
        return "gowalla"
    return "checkins"


def _column(table, name):
    """A column as a pandas Series without Python objects for text (Arrow-backed strings)."""
    import pandas as pd
    import pyarrow as pa

    if not hasattr(table, "column_names"):
        return table[name].reset_index(drop=True)
    col = table.column(name)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return pd.Series(pd.arrays.ArrowStringArray(col.cast(pa.large_string())), copy=False)
    return col.to_pandas()


def _numbers(series):
    """Text -> float64 through Arrow when every value is a number (fast), else pandas."""
    import pandas as pd
    import pyarrow as pa

    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow":
        try:
            arr = pa.chunked_array(series.array._pa_array).cast(pa.float64())
            return pd.Series(arr.to_numpy(), copy=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return series


def _user_ids(series, id_type: str = "text"):
    """User ids exactly as written: text stays text (``007`` and ``7`` are two users, `` 7`` a
    third), typed columns (Parquet, GeoJSON) keep their type; an empty or blank id is missing.

    ``id_type="infer"`` reads text ids that are all integers as int64 (``007`` becomes ``7``),
    as pandas' inference would: only when the user asks for it.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow":
        arr = pa.chunked_array(series.array._pa_array)
        if id_type == "infer":
            trimmed = pc.utf8_trim_whitespace(arr)
            if trimmed.null_count == 0:
                try:
                    return pd.Series(trimmed.cast(pa.int64()).to_numpy(), copy=False)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    pass
        blank = pc.equal(pc.utf8_trim_whitespace(arr), "")
        arr = pc.if_else(blank, pa.scalar(None, arr.type), arr)
        return pd.Series(pd.arrays.ArrowStringArray(arr), copy=False)
    if pd.api.types.is_string_dtype(series.dtype) or series.dtype == object:
        text = series.astype("string")
        return text.where(text.str.strip() != "")
    return series


def read_columns(path, *, user=None, time=None, lat=None, lon=None, traj=None, input_format="auto",
                 time_format=None, dayfirst=False, tz="UTC", keep_columns=False, encoding=None, sep=None,
                 flags=None, with_poi=True, id_type="text") -> dict:
    """Read the columns of a check-in file: the keyword arguments of ``data_loaders``' ``build_checkins``.

    See :func:`read_checkins` for the parameters.  ``uid``, ``time`` (UTC),
    ``lat``, ``lng``, ``poi`` are pandas Series (text in Arrow memory, no Python
    objects), ``extra`` a dict of Series (the trajectory column under its name,
    and with ``keep_columns`` every other column), plus ``lines``, ``bad_lines``,
    ``blank_lines``, ``notes``, ``source``, ``fmt``, ``position``, ``untimed``
    (a mask of the rows with no time of their own, whose ``time`` only orders
    them, or None) and ``traj`` (the trajectory column's name or None).
    ``with_poi=False`` leaves the venue column unread (``poi`` is then None): the
    command line never writes it.
    """
    from data_loaders._checkins import _RESERVED
    from data_loaders._io import check_path, sniff

    if input_format not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {input_format!r}; choose from {', '.join(INPUT_FORMATS)}")
    if id_type not in ID_TYPES:
        raise ValueError(f"id_type must be one of {', '.join(ID_TYPES)}, got {id_type!r}")
    track = track_format(path, input_format)
    path = Path(path) if track is not None else check_path(path)
    flags = API_FLAGS if flags is None else flags
    kind = "track" if track is not None else container_of(path)
    time, clock = _split_time(time, flags)
    given = {"user": user, "time": time, "lat": lat, "lon": lon, "traj": traj}
    profile = None if input_format == "auto" else input_format

    from .times import TimeReader

    time_notes = []
    times = TimeReader(time_format=time_format, dayfirst=dayfirst, tz=tz, notes=time_notes, flags=flags)

    def needed(names, need_coords=True):
        nonlocal profile, planned
        profile = profile or _profile_of(path, kind, names)
        planned = resolve_columns(names, **given, need_time=False, need_coords=need_coords, flags=flags,
                                  source=path.name, aliases=PROFILES[profile])
        poi = _find_poi(names, profile) if with_poi else None
        if keep_columns:
            return list(names)
        clock_col = [_clock_column(names, clock, flags, path.name)] if clock else []
        return [*planned.used(), *clock_col, *([poi] if poi and poi not in planned.used() else [])]

    def converters():
        import pyarrow as pa

        def utc(column):
            return pa.array(times(column)).cast(pa.timestamp("ns", tz="UTC"))

        out = {planned.time: utc} if planned.time is not None and clock is None else {}
        if planned.lat is not None and planned.lon is not None:
            out[planned.lat] = out[planned.lon] = _float_column
        return out

    planned = None

    if kind == "track":  # a public trajectory data set: its reader knows the columns
        raw = _TRACK_READERS[track](path)
        unused = [flags.get(r, r) for r, v in given.items() if v is not None] + \
            ([flags.get("time_format", "time_format=")] if time_format is not None else [])
        if unused:
            raw.notes.append(f"not used: {', '.join(unused)} (the {track} layout is fixed)")
        if tz not in (None, "UTC") and raw.table.column("datetime").type.tz is not None:
            raw.notes.append(f"the timezone {tz} is not used: {track} times are UTC")
        given, clock, profile = dict(raw.roles), None, "checkins"
    elif kind == "text":
        try:
            head = sniff(path, what="check-in table", delimiters=sep or "\t,;|", encoding=encoding)
        except ValueError as exc:
            raise unsupported(path, str(exc).split(": ", 1)[-1][:100]) from None
        names, header = head.fields, True
        detected = _headerless(head, input_format)
        if detected:
            profile, names, header = detected, list(_HEADERLESS[detected]), False
            given = {**{"user": "user", "time": "time", "lat": "lat", "lon": "lng"},
                     **{k: v for k, v in given.items() if v is not None}}
        include = needed(names)
        try:
            raw = _read_text(path, sep=head.sep, names=names, header=header, include=include,
                             encoding=encoding, convert=converters())
        except TextParseError:
            raise
        except Exception as exc:  # not valid UTF-8 (or not decodable as given): the pandas reader
            if "UTF8" not in str(exc) and "decode" not in str(exc).lower():
                where = binary_at(path, utf8=False)
                if where is not None:
                    raise unsupported(path, f"binary data from byte offset {where[0]}, line {where[1]}") from None
                raise ValueError(f"{path.name} cannot be parsed as {head.sep!r}-delimited text: {exc}") from exc
            raw = _read_text_pandas(path, sep=head.sep, names=names, header=header, encoding=encoding)
            raw.table = raw.table[include]
    elif kind == "parquet":
        is_geo = _is_geoparquet(path)
        raw = _read_parquet(path, lambda names: (needed(names, need_coords=not is_geo), converters()))
    elif kind == "gpx":
        from .gpx import read_gpx_table

        raw = read_gpx_table(path)
        given = {**{"user": "uid", "time": "time", "traj": "trajectory"},
                 **{k: v for k, v in given.items() if v is not None}}
        profile = "checkins"
    else:
        raw = _read_vector(path, kind)

    names = _names(raw.table)
    has_geometry = raw.lonlat is not None
    profile = profile or _profile_of(path, kind, names)
    cmap = resolve_columns(names, **given, need_time=False, need_coords=not has_geometry, flags=flags,
                           source=path.name, aliases=PROFILES[profile])
    notes = list(raw.notes)
    if cmap.lat is not None and cmap.lon is not None:
        lat_s, lon_s = _numbers(_column(raw.table, cmap.lat)), _numbers(_column(raw.table, cmap.lon))
    elif has_geometry:
        import pandas as pd

        lat_s, lon_s = pd.Series(raw.lonlat[:, 1]), pd.Series(raw.lonlat[:, 0])
    else:  # resolve_columns has raised already
        raise AssertionError
    usual = {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"}  # the loaders' own names
    renamed = {r: c for r, c in (("user", cmap.user), ("time", cmap.time), ("lat", cmap.lat),
                                 ("lon", cmap.lon)) if c is not None and c != usual[r]}
    if renamed:
        notes.append("columns used: " + ", ".join(f"{c!r} as {r}" for r, c in renamed.items()))
    import pandas as pd

    untimed = raw.untimed
    if cmap.time is None:  # no time at all: the file's order, as GPX points without <time>
        time_s = pd.Series(np.arange(len(raw.lines), dtype=np.int64).view("datetime64[ns]")).dt.tz_localize("UTC")
        untimed = np.ones(len(raw.lines), dtype=bool)
        looked = ", ".join(PROFILES[profile].get("time", ALIASES["time"]))
        notes.append(f"no time column (none of {looked}): points kept in the file's order and written without "
                     f"a time, as GPX points without <time>; name one with {flags.get('time', 'time=')} NAME")
    elif clock is not None:
        clock_name = _clock_column(names, clock, flags, path.name)
        joined = (_column(raw.table, cmap.time).astype("string").str.strip() + " "
                  + _column(raw.table, clock_name).astype("string").str.strip())
        time_s = pd.Series(times(joined), copy=False).dt.tz_localize("UTC")
        notes.append(f"times from the columns {cmap.time!r} (date) and {clock_name!r} (time of day) joined")
    else:
        time_s = pd.Series(_utc_times(raw.table, cmap.time, times), copy=False).dt.tz_localize("UTC")
    notes.extend(time_notes)
    poi_name = _find_poi(names, profile) if with_poi else None
    if poi_name is not None and poi_name not in names:
        poi_name = None
    used = set(cmap.used()) | ({poi_name} if poi_name else set())
    extra = {}
    if cmap.traj is not None:
        extra[cmap.traj] = _column(raw.table, cmap.traj)
    if keep_columns:
        for c in names:
            if c not in used and c not in _RESERVED:
                extra[c] = _column(raw.table, c)
    for c in list(extra):
        if c in _RESERVED:
            raise ValueError(f"the trajectory column may not be named {c!r}")
    return dict(
        uid=_user_ids(_column(raw.table, cmap.user), id_type), time=time_s, lat=lat_s, lng=lon_s,
        poi=_column(raw.table, poi_name) if poi_name else None, extra=extra, lines=raw.lines,
        bad_lines=raw.bad_lines, blank_lines=raw.blank_lines, notes=notes, source=path.name,
        fmt=raw.fmt if profile == "checkins" else f"{profile}-{raw.fmt}", position=raw.position,
        untimed=untimed, traj=cmap.traj,
        column_names={"user": cmap.user, "time": cmap.time, "lat": cmap.lat or "geometry",
                      "lon": cmap.lon or "geometry"})


def read_checkins(path, *, user=None, time=None, lat=None, lon=None, traj=None, input_format="auto",
                  time_format=None, dayfirst=False, tz="UTC", keep_columns=False, strict=False,
                  duplicates="keep", encoding=None, sep=None, flags=None, id_type="text"):
    """Read a check-in file of any supported format with any column names.

    Parameters
    ----------
    path : str or os.PathLike
        CSV / TSV (delimiter detected), Parquet, GeoParquet, GeoJSON or GPX, or a
        public trajectory data set (a Geolife or T-Drive folder, a Porto CSV).
    user, time, lat, lon, traj : str, optional
        Column names; omitted ones are found through the aliases of
        :mod:`tracs.io.columns` (and of the input format).  ``traj`` (optional)
        names a trajectory id column, kept under its name for
        ``to_trajectories(by=...)``.
    input_format : {"auto", "checkins", "foursquare", "gowalla", "geolife", "tdrive", "porto"}
        Which column names and time layout to expect.  ``"auto"`` recognises the
        Foursquare and Gowalla headers (and their headerless text forms) and the
        layouts of the public trajectory data sets: a folder holding
        ``Data/*/Trajectory/*.plt`` or a ``.plt`` file (Geolife), a headerless
        ``taxi_id,datetime,lon,lat`` file or folder of them (T-Drive), a CSV with a
        ``POLYLINE`` column (Porto), read by ``data_loaders``' readers of those
        sets.  The container (CSV, Parquet, ...) does not matter.
    time_format, dayfirst, tz
        See :func:`tracs.io.times.parse_times`.
    keep_columns : bool, default False
        Also keep every other column (as ``data_loaders.load_checkins`` does);
        the default reads only the columns needed, which is faster and lighter.
    strict, duplicates, encoding, sep
        As for ``data_loaders.load_checkins``.
    flags : dict, optional
        Option names used in messages (:data:`tracs.io.columns.CLI_FLAGS` on the
        command line).
    id_type : {"text", "infer"}, default "text"
        User ids of text files are kept exactly as written (``007``, ``7`` and
        `` 7`` are three users; an empty or blank id is missing); ``"infer"``
        reads them as int64 when every id is an integer (``007`` becomes ``7``).
        Parquet and GeoJSON ids keep their type.  Trajectory ids keep their text.

    Returns
    -------
    geopandas.GeoDataFrame
        The loaders' form (``uid``, ``datetime`` UTC, ``poi_id`` when known, kept
        columns, ``source_line`` or ``source_row``, WGS84 points) with
        ``attrs["report"]`` and, when a trajectory column was found (or is implied,
        as for GPX segments), its name in ``attrs["trajectory_column"]`` (pass it
        as ``data_loaders.to_trajectories(..., by=...)``).

    Raises
    ------
    FileNotFoundError, UnsupportedFormatError, MissingColumnsError, TimeFormatError, ValueError
    """
    from data_loaders._checkins import build_checkins

    columns = read_columns(path, user=user, time=time, lat=lat, lon=lon, traj=traj,
                           input_format=input_format, time_format=time_format, dayfirst=dayfirst,
                           tz=tz, keep_columns=keep_columns, encoding=encoding, sep=sep, flags=flags,
                           id_type=id_type)
    traj = columns.pop("traj")
    frame = build_checkins(**columns, duplicates=duplicates, strict=strict)
    if traj is not None:
        frame.attrs["trajectory_column"] = traj
    return frame


def _split_time(time, flags):
    """``"date,time"`` -> ``("date", "time")``: a date column and a time-of-day column joined."""
    if time is None or "," not in str(time):
        return time, None
    parts = [p.strip() for p in str(time).split(",")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"{flags.get('time', 'time=')} {time}: two names separated by a comma are a date column "
                         "and a time-of-day column (e.g. date,time); one name is a column of whole times")
    return parts[0], parts[1]


def _clock_column(names, clock, flags, source) -> str:
    """The time-of-day column named ``clock`` (exactly, or up to case and punctuation)."""
    if clock in names:
        return clock
    by_key = {normalise(n): n for n in names}
    if normalise(clock) in by_key:
        return by_key[normalise(clock)]
    raise MissingColumnsError(f"{source}: missing column(s) for time of day: no column {clock!r} "
                              f"({flags.get('time', 'time=')} DATE,{clock}). Columns found: {', '.join(names)}",
                              ["time"], names)


def track_format(path, input_format: str = "auto") -> str | None:
    """The public trajectory data set ``path`` holds (``"geolife"``, ``"tdrive"``, ``"porto"``):
    the one forced by ``input_format``, else the one detected from its layout
    (``data_loaders._tracks.detect_track_format``), else None."""
    if input_format in TRACK_FORMATS:
        if not Path(path).exists():
            raise FileNotFoundError(f"no such file or folder: {path}")
        return input_format
    if input_format != "auto":
        return None
    from .layouts import detect_track_format

    return detect_track_format(path)


def _utc_times(table, name, times) -> np.ndarray:
    """The time column as datetime64[ns] UTC: directly when the batches were already read
    into UTC timestamps, else through ``times`` (a :class:`~tracs.io.times.TimeReader`)."""
    import pyarrow as pa

    if hasattr(table, "column_names"):
        column = table.column(name)
        if column.type == pa.timestamp("ns", tz="UTC"):
            ns = column.cast(pa.int64()).to_numpy(zero_copy_only=False) if column.null_count == 0 else \
                column.cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy(zero_copy_only=False)
            return ns.view("datetime64[ns]")
    return times(_column(table, name))


def _is_geoparquet(path) -> bool:
    from .containers import open_parquet

    return b"geo" in (open_parquet(path).schema_arrow.metadata or {})


def _find_poi(names, profile) -> str | None:
    from .columns import normalise

    by_key = {normalise(n): n for n in names}
    for alias in PROFILES.get(profile, {}).get("poi", ()) + ("poiid",):
        if alias in by_key:
            return by_key[alias]
    return None


def _headerless(head, input_format) -> str | None:
    """``"foursquare"`` / ``"gowalla"`` for the original headerless files, else None."""
    from data_loaders.foursquare import _TIME as FOURSQUARE
    from data_loaders.gowalla import _ISO as GOWALLA

    fields = head.fields
    if input_format in ("auto", "foursquare") and len(fields) == 8 and FOURSQUARE.match(fields[7]):
        return "foursquare"
    if input_format in ("auto", "gowalla") and len(fields) == 5 and GOWALLA.match(fields[1]):
        return "gowalla"
    return None
