"""Read check-ins from CSV / TSV / Parquet / GeoParquet / GeoJSON / GPX with any column names.

:func:`read_checkins` is the one entry point: it finds the container
(:func:`~tracs.io.formats.container_of`), reads only the columns it needs with
Arrow (CSV/TSV through ``pyarrow.csv`` on all cores, Parquet through
``pyarrow.parquet``; no row-wise Python), finds the user / time / coordinate /
trajectory columns (:func:`~tracs.io.columns.resolve_columns`), reads the times
once every row is in, each user's by that user's own values
(:func:`~tracs.io.times.parse_times` with ``groups=`` the user of each row; a file
without a time column is refused unless ``no_time=True``) and hands the columns to
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

import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from .columns import ALIASES, API_FLAGS, MissingColumnsError, normalise, resolve_columns
from .raw import FILE_COLUMN, RawColumns, ReadRequest, files_of
from .table_readers import _float_column
from .formats import format_of, input_formats
from .lines import ADDED
from .profiles import PROFILES, find_poi, profile_of
from .times import TimeReader

#: columns a reader adds under names of its own (never shown as the user's columns)
PLACEHOLDERS = frozenset(ADDED.values())
#: how text user ids are read: exactly as written, or as integers when all of them are
ID_TYPES = ("text", "infer")

__all__ = ["PROFILES", "checkin_arguments", "read_checkins", "read_columns"]


def _names(table) -> list:
    return list(table.column_names) if hasattr(table, "column_names") else [str(c) for c in table.columns]


# ----------------------------------------------------------------------------- columns -> check-ins


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
                 time_format=None, dayfirst=False, tz="UTC", ambiguous="earlier", no_time=False,
                 keep_columns=False, encoding=None, sep=None, flags=None, with_poi=True,
                 id_type="text") -> RawColumns:
    """Read the columns of a check-in file, each role found, times read, no row checked yet.

    See :func:`read_checkins` for the parameters.  Returns a
    :class:`~tracs.io.raw.RawColumns` (:func:`checkin_arguments` gives ``build_checkins``'
    arguments of it) whose ``table`` is a pandas frame (text in Arrow memory, no Python
    objects): ``uid`` (the user ids, :func:`_user_ids`), ``datetime`` (UTC), ``poi_id`` (the
    venue, when read), the trajectory column under its name, with ``keep_columns`` every other
    column, and ``source_file`` for a folder read (a categorical of the file of each row, whose
    ``lines`` count within it); its ``roles`` name them (``user``, ``time``, ``poi``,
    ``traj``).  ``lonlat`` holds the WGS84 longitude and latitude of every row (NaN where not
    a finite number); ``untimed`` is the mask of the rows with no time of their own, whose
    time only orders them, or None; ``source`` the name of what was read;
    ``file_columns`` the file's column of each role (for the report's messages); ``unread``
    the file's columns and elements used for none of these (for the "not released" message
    of the command line).  ``with_poi=False`` leaves the venue column unread: the command
    line never writes it.
    """
    from .checkins import RESERVED, to_number
    from .delimited_text import check_path

    choices = input_formats()
    if input_format not in choices:
        raise InputError(f"unknown input format {input_format!r}; choose from {', '.join(choices)}")
    if id_type not in ID_TYPES:
        raise InputError(f"id_type must be one of {', '.join(ID_TYPES)}, got {id_type!r}")
    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        path = Path(path)  # a folder: read only by a layout of folders (format_of says which)
    else:
        path = check_path(path)
    fmt = format_of(path, input_format)
    flags = API_FLAGS if flags is None else flags
    time, clock = _split_time(time, flags)
    given = {"user": user, "time": time, "lat": lat, "lon": lon, "traj": traj}
    profile = input_format if input_format in PROFILES else None

    time_notes = []
    times = TimeReader(time_format=time_format, dayfirst=dayfirst, tz=tz, ambiguous=ambiguous, notes=time_notes,
                       flags=flags)
    header_names = []

    def plan(names, *, roles=None, profile_hint=None, need_coords=True):
        """The columns to read of a file whose columns are ``names``, and their converters."""
        nonlocal profile, planned
        header_names[:] = list(names)
        profile = profile_hint or profile or profile_of(names)
        planned = resolve_columns(names, **_with_roles(given, roles), need_time=False, need_coords=need_coords,
                                  flags=flags, source=path.name, aliases=PROFILES[profile])
        poi = find_poi(names, profile) if with_poi else None
        clock_col = [_clock_column(names, clock, flags, path.name)] if clock else []
        include = list(names) if keep_columns else \
            [*planned.used(), *clock_col, *([poi] if poi and poi not in planned.used() else [])]
        return include, converters()

    def converters():  # times are read once every row is in: each user's from that user's own values
        out = {}
        if planned.lat is not None and planned.lon is not None:
            out[planned.lat] = out[planned.lon] = _float_column
        return out

    planned = None
    raw = fmt.reader()(path, ReadRequest(plan=plan, input_format=input_format, sep=sep, encoding=encoding))
    if fmt.selectable:  # a layout --input-format names (a public trajectory data set): its reader knows the columns
        unused = [flags.get(r, r) for r, v in given.items() if v is not None] + \
            ([flags.get("time_format", "time_format=")] if time_format is not None else [])
        if unused:
            raw.notes.append(f"not used: {', '.join(unused)} (the {fmt.key} layout is fixed)")
        if tz not in (None, "UTC") and raw.table.column("datetime").type.tz is not None:
            raw.notes.append(f"the timezone {tz} is not used: {fmt.key} times are UTC")
        given, clock = dict(raw.roles), None
    given = _with_roles(given, raw.roles)
    if raw.profile is not None:
        profile = raw.profile

    names = _names(raw.table)
    has_geometry = raw.lonlat is not None
    profile = profile or profile_of(names)
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
                                 ("lon", cmap.lon)) if c is not None and c != usual[r] and c not in PLACEHOLDERS}
    if renamed:
        notes.append("columns used: " + ", ".join(f"{c!r} as {r}" for r, c in renamed.items()))
    import pandas as pd

    untimed = raw.untimed
    clock_name = None
    uid_s = _user_ids(_column(raw.table, cmap.user), id_type)
    if cmap.time is None or no_time:  # the file's order, as GPX points without <time>
        time_s = _file_order(len(raw.lines), cmap.time, names, profile, path.name, flags, notes, no_time=no_time)
        untimed = np.ones(len(raw.lines), dtype=bool)
    elif clock is not None:
        from .delimited_text import na_words_missing

        clock_name = _clock_column(names, clock, flags, path.name)
        joined = (na_words_missing(_column(raw.table, cmap.time)).astype("string").str.strip() + " "
                  + na_words_missing(_column(raw.table, clock_name)).astype("string").str.strip())
        time_s = pd.Series(times(joined, user_codes(uid_s)), copy=False).dt.tz_localize("UTC")
        notes.append(f"times from the columns {cmap.time!r} (date) and {clock_name!r} (time of day) joined")
    else:
        time_s = pd.Series(_utc_times(raw.table, cmap.time, times, uid_s), copy=False).dt.tz_localize("UTC")
    if untimed is None and len(time_s) and time_s.isna().all() and not time_notes:  # not one time in the column
        raise InputError(f"{path.name}: the time column {cmap.time!r} is empty in every row (name another with "
                         f"{flags.get('time', 'time=')} NAME, or give {flags.get('no_time', 'no_time=True')} to "
                         "keep the file's order without times)")
    notes.extend(time_notes)
    poi_name = find_poi(names, profile) if with_poi else None
    if poi_name is not None and poi_name not in names:
        poi_name = None
    used = set(cmap.used()) | {c for c in (poi_name, clock_name) if c}  # a joined time-of-day column is used
    extra = {}
    if cmap.traj is not None:
        extra[cmap.traj] = _column(raw.table, cmap.traj)
    if keep_columns:
        for c in names:
            if c not in used and c not in RESERVED:
                extra[c] = _column(raw.table, c)
    for c in list(extra):
        if c in RESERVED:
            raise InputError(f"the trajectory column may not be named {c!r}")
    files = files_of(raw.table) if hasattr(raw.table, "column_names") else None
    if files is not None and FILE_COLUMN not in extra:  # a folder: each row's file
        extra[FILE_COLUMN] = pd.Series(pd.Categorical.from_codes(files[0], files[1]))
    poi_s = _column(raw.table, poi_name) if poi_name else None
    columns = {"uid": uid_s, "datetime": time_s, **({"poi_id": poi_s} if poi_s is not None else {}), **extra}
    roles = {"user": "uid", "time": "datetime", **({"poi": "poi_id"} if poi_s is not None else {}),
             **({"traj": cmap.traj} if cmap.traj is not None else {})}
    return RawColumns(
        pd.DataFrame({k: v.reset_index(drop=True) for k, v in columns.items()}, copy=False), raw.lines,
        raw.position, raw.fmt if profile == "checkins" else f"{profile}-{raw.fmt}", bad_lines=raw.bad_lines,
        blank_lines=raw.blank_lines, notes=notes, lonlat=np.column_stack([to_number(lon_s), to_number(lat_s)]),
        untimed=untimed, roles=roles, source=path.name,
        file_columns={r: c for r, c in (("user", cmap.user), ("time", None if no_time else cmap.time),
                                        ("lat", cmap.lat or "geometry"), ("lon", cmap.lon or "geometry"))
                      if c is not None and c not in PLACEHOLDERS},
        unread=[c for c in (header_names or names) if c not in used and c != raw.geometry
                and c not in raw.roles.values() and c != FILE_COLUMN] + list(raw.unread))


def checkin_arguments(raw: RawColumns) -> dict:
    """The keyword arguments of ``build_checkins`` (:mod:`tracs.io.checkins`) of what
    :func:`read_columns` read: the user, time and venue columns by their roles, every other
    column of the table as an extra column, the positions and what the read noticed."""
    import pandas as pd

    table, roles = raw.table, raw.roles
    named = {roles[r] for r in ("user", "time", "poi") if r in roles}
    return dict(uid=table[roles["user"]], time=table[roles["time"]], lat=pd.Series(raw.lonlat[:, 1], copy=False),
                lng=pd.Series(raw.lonlat[:, 0], copy=False), poi=table[roles["poi"]] if "poi" in roles else None,
                extra={c: table[c] for c in table.columns if c not in named}, lines=raw.lines,
                bad_lines=raw.bad_lines, blank_lines=raw.blank_lines, notes=raw.notes, source=raw.source,
                fmt=raw.fmt, position=raw.position, untimed=raw.untimed, column_names=raw.file_columns)


def read_checkins(path, *, user=None, time=None, lat=None, lon=None, traj=None, input_format="auto",
                  time_format=None, dayfirst=False, tz="UTC", ambiguous="earlier", no_time=False,
                  keep_columns=False, strict=False, duplicates="keep", encoding=None, sep=None, flags=None,
                  id_type="text"):
    """Read a check-in file of any supported format with any column names.

    Parameters
    ----------
    path : str or os.PathLike
        CSV / TSV (delimiter detected), Parquet, GeoParquet, GeoJSON or GPX.
    user, time, lat, lon, traj : str, optional
        Column names; omitted ones are found through the aliases of
        :mod:`tracs.io.columns` (and of the input format).  ``traj`` (optional)
        names a trajectory id column, kept under its name for
        ``to_trajectories(by=...)``.
    input_format : {"auto", "checkins", "foursquare", "gowalla"}
        Which column names and time layout to expect.  ``"auto"`` recognises the
        Foursquare and Gowalla headers (and their headerless text forms).  The
        container (CSV, Parquet, ...) does not matter.
    time_format, dayfirst, tz, ambiguous
        See :func:`tracs.io.times.parse_times`; each user's times are read by the
        layout, day/month order and epoch unit of that user's own values.
    no_time : bool, default False
        Read no time: the points keep the file's order and are released without a
        time.  Without it, a file with no time column is a ``MissingColumnsError``.
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
        columns, ``source_line`` or ``source_row``, ``source_file`` for a folder, WGS84 points) with
        ``attrs["report"]`` and, when a trajectory column was found (or is implied,
        as for GPX segments), its name in ``attrs["trajectory_column"]`` (pass it
        as ``data_loaders.to_trajectories(..., by=...)``).

    Raises
    ------
    FileNotFoundError, UnsupportedFormatError, MissingColumnsError, TimeFormatError, ValueError
    """
    from .checkins import build_checkins

    raw = read_columns(path, user=user, time=time, lat=lat, lon=lon, traj=traj,
                       input_format=input_format, time_format=time_format, dayfirst=dayfirst, tz=tz,
                       ambiguous=ambiguous, no_time=no_time, keep_columns=keep_columns, encoding=encoding, sep=sep,
                       flags=flags, id_type=id_type)
    frame = build_checkins(**checkin_arguments(raw), duplicates=duplicates, strict=strict)
    if "traj" in raw.roles:
        frame.attrs["trajectory_column"] = raw.roles["traj"]
    return frame


def _split_time(time, flags):
    """``"date,time"`` -> ``("date", "time")``: a date column and a time-of-day column joined."""
    if time is None or "," not in str(time):
        return time, None
    parts = [p.strip() for p in str(time).split(",")]
    if len(parts) != 2 or not all(parts):
        raise InputError(f"{flags.get('time', 'time=')} {time}: two names separated by a comma are a date column "
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


def user_codes(uid) -> np.ndarray:
    """One integer code per row, the same for the rows of one user (ids exactly as read;
    rows without a user share one code): the groups each user's times are read by."""
    import pandas as pd

    return pd.factorize(uid)[0]


def _file_order(n, time_col, names, profile, source, flags, notes, *, no_time):
    """Times that only keep the file's order, with ``no_time``; without it, a missing time
    column is a :class:`MissingColumnsError` naming the columns looked for and the file."""
    import pandas as pd

    looked = ", ".join(PROFILES[profile].get("time", ALIASES["time"]))
    given = flags.get("no_time", "no_time=True")
    if not no_time:
        raise MissingColumnsError(f"{source}: missing column for time: none of {looked} (name it with "
                                  f"{flags.get('time', 'time=')} NAME, or give {given} to keep the file's order "
                                  f"without times). Columns found: {', '.join(names)}", ["time"], names)
    order = pd.Series(np.arange(n, dtype=np.int64).view("datetime64[ns]")).dt.tz_localize("UTC")
    notes.append(f"no times ({given}): points kept in the file's order and written without a time"
                 + (f"; the column {time_col!r} is not read" if time_col is not None else ""))
    return order


def _utc_times(table, name, times, uid) -> np.ndarray:
    """The time column as datetime64[ns] UTC: directly when it holds UTC timestamps, else
    through ``times`` (a :class:`~tracs.io.times.TimeReader`), each user's by its own values."""
    import pyarrow as pa

    from .delimited_text import na_words_missing

    if hasattr(table, "column_names"):
        column = table.column(name)
        if column.type == pa.timestamp("ns", tz="UTC"):
            ns = column.cast(pa.int64()).to_numpy(zero_copy_only=False) if column.null_count == 0 else \
                column.cast(pa.int64()).fill_null(np.iinfo(np.int64).min).to_numpy(zero_copy_only=False)
            return ns.view("datetime64[ns]")
    return times(na_words_missing(_column(table, name)), user_codes(uid))  # the words of missing values are no times


def _with_roles(given: dict, roles) -> dict:
    """The column names given, completed by the roles a file's layout implies."""
    out = dict(given)
    for role, name in (roles or {}).items():
        if out.get(role) is None:
            out[role] = name
    return out
