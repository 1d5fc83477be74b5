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

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .columns import API_FLAGS, resolve_columns
from .formats import container_of, unsupported

__all__ = ["PROFILES", "read_checkins", "read_columns", "RawColumns"]

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
INPUT_FORMATS = ("auto", "checkins", "foursquare", "gowalla")


@dataclass
class RawColumns:
    """What a container reader returns: the table, its row positions and what it noticed."""

    table: object                      # pyarrow.Table or pandas.DataFrame
    lines: np.ndarray                  # line (text) or row (others) of each row
    position: str                      # "line" or "row"
    fmt: str
    bad_lines: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    blank_lines: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    notes: list = field(default_factory=list)
    lonlat: np.ndarray | None = None   # (n, 2) WGS84 from point geometry, when the table has it
    geometry: str | None = None        # the geometry column's name (not a data column)


def _names(table) -> list:
    return list(table.column_names) if hasattr(table, "column_names") else [str(c) for c in table.columns]


# ----------------------------------------------------------------------------- containers


#: bytes of text per streamed block (bounds the memory of a read)
BLOCK_BYTES = 2 << 20
#: parse blocks on several threads
THREADS = True


def _read_text(path: Path, *, sep: str, names, header: bool, include, encoding, convert=None) -> RawColumns:
    """Delimited text through pyarrow's streaming CSV reader: every column read as text,
    each batch converted at once (``convert``: column -> function of an Arrow array), so
    the text of the whole file is never held in memory."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    convert = convert or {}
    block = BLOCK_BYTES

    def read(threads: bool):
        bad = []

        def skip(row):
            bad.append(row.number)
            return "skip"

        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(use_threads=threads, block_size=block, column_names=list(names),
                                          skip_rows=1 if header else 0, encoding=encoding or "utf8"),
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char=False if sep == "\t" else '"',
                                            ignore_empty_lines=False, invalid_row_handler=skip),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(include), column_types={c: pa.string() for c in include},
                strings_can_be_null=True, quoted_strings_can_be_null=True))
        chunks = {c: [] for c in include}
        blanks = []
        for batch in reader:
            blank = np.ones(batch.num_rows, dtype=bool)
            for column in batch.columns:
                blank &= column.is_null().to_numpy(zero_copy_only=False)
            blanks.append(blank)
            for name in include:
                column = batch.column(name)
                chunks[name].append(convert[name](column) if name in convert else column)
        return chunks, np.concatenate(blanks) if blanks else np.zeros(0, bool), bad

    chunks, blank, bad = read(THREADS)
    if any(b is None for b in bad):  # line numbers of skipped lines are known on one thread only
        chunks, blank, bad = read(False)
    table = pa.table({name: pa.chunked_array(parts, type=parts[0].type if parts else pa.string())
                      for name, parts in chunks.items()})
    first = 2 if header else 1
    bad_lines = np.asarray(sorted(bad), dtype=np.int64)
    all_lines = np.arange(first, first + table.num_rows + len(bad_lines), dtype=np.int64)
    lines = all_lines[~np.isin(all_lines, bad_lines)] if len(bad_lines) else all_lines
    blank_lines = lines[blank]
    if blank.any():
        table, lines = table.filter(pa.array(~blank)), lines[~blank]
    fmt = {"\t": "tsv", ",": "csv"}.get(sep, "delimited text")
    return RawColumns(table, lines, "line", fmt, bad_lines, blank_lines)


def _float_column(column):
    """Text -> float64 Arrow array (NaN where not a number); through Arrow when all are numbers."""
    import pandas as pd
    import pyarrow as pa

    try:
        return column.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pd.to_numeric(pd.Series(column.to_pandas()).astype("string").str.strip(), errors="coerce")
        return pa.array(values.to_numpy(dtype=np.float64, na_value=np.nan))


def _read_text_pandas(path: Path, *, sep: str, names, header: bool, encoding) -> RawColumns:
    """The pandas reader of ``data_loaders`` (files that are not valid UTF-8)."""
    from data_loaders._io import read_table

    t = read_table(path, sep=sep, header=header, names=None if header else list(names),
                   encoding=encoding)
    if header:
        t.frame.columns = list(names)
    return RawColumns(t.frame.astype({c: "string" for c in t.frame.columns}), t.lines, "line",
                      {"\t": "tsv", ",": "csv"}.get(sep, "delimited text"), t.bad_lines,
                      t.blank_lines, list(t.notes))


def _lonlat_from_wkb(values, crs, notes) -> np.ndarray:
    import shapely

    geoms = shapely.from_wkb(np.asarray(values, dtype=object))
    return _lonlat_from_geoms(geoms, crs, notes)


def _lonlat_from_geoms(geoms, crs, notes) -> np.ndarray:
    import shapely

    geoms = np.asarray(geoms, dtype=object)
    kinds = shapely.get_type_id(geoms)
    if not np.all((kinds == 0) | (kinds == -1)):
        raise ValueError("the geometry column must hold points (one per check-in)")
    xy = np.full((len(geoms), 2), np.nan)
    present = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    xy[present] = shapely.get_coordinates(geoms[present])
    if crs is not None:
        from pyproj import CRS, Transformer

        crs = CRS.from_user_input(crs)
        if not crs.equals(CRS.from_epsg(4326)):
            t = Transformer.from_crs(crs, 4326, always_xy=True)
            xy[:, 0], xy[:, 1] = t.transform(xy[:, 0], xy[:, 1])
            notes.append(f"coordinates converted from {crs.to_string()} to EPSG:4326")
    return xy


def _read_parquet(path: Path, include) -> RawColumns:
    import json

    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except Exception as exc:
        raise ValueError(f"{path.name} is not a readable Parquet file: {exc}") from exc
    meta = schema.metadata or {}
    geo = json.loads(meta[b"geo"]) if b"geo" in meta else None
    names = schema.names
    geometry = geo.get("primary_column", "geometry") if geo else None
    wanted = [c for c in (include(names) if callable(include) else names) if c in names]
    table = pq.read_table(path, columns=wanted + ([geometry] if geometry and geometry not in wanted else []))
    notes, lonlat = [], None
    if geometry is not None:
        crs = geo["columns"].get(geometry, {}).get("crs", "EPSG:4326")  # GeoParquet: missing = OGC:CRS84
        lonlat = _lonlat_from_wkb(table.column(geometry).to_numpy(zero_copy_only=False), crs, notes)
        table = table.drop_columns([geometry])
    fmt = "geoparquet" if geo else "parquet"
    return RawColumns(table, np.arange(table.num_rows, dtype=np.int64), "row", fmt, notes=notes,
                      lonlat=lonlat, geometry=geometry)


def _read_vector(path: Path, kind: str) -> RawColumns:
    import geopandas as gpd

    try:
        frame = gpd.read_file(path)
    except Exception as exc:
        raise unsupported(path, f"not a readable {kind} file: {str(exc).splitlines()[0][:120]}") from exc
    notes = []
    lonlat = None
    if isinstance(frame, gpd.GeoDataFrame) and frame.geometry.name in frame.columns:
        if frame.crs is None:
            raise ValueError(f"{path.name} has no CRS: its coordinates cannot be read as longitude/latitude")
        lonlat = _lonlat_from_geoms(frame.geometry.array, frame.crs, notes)
        frame = frame.drop(columns=frame.geometry.name)
    return RawColumns(frame, np.arange(len(frame), dtype=np.int64), "row", kind, notes=notes,
                      lonlat=lonlat, geometry="geometry")


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


def _user_ids(series):
    """Text ids that are all integers become int64 (as pandas' inference would); others stripped text."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow":
        arr = pc.utf8_trim_whitespace(pa.chunked_array(series.array._pa_array))
        if arr.null_count == 0:
            try:
                return pd.Series(arr.cast(pa.int64()).to_numpy(), copy=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, arr.type), arr)
        return pd.Series(pd.arrays.ArrowStringArray(arr), copy=False)
    if pd.api.types.is_string_dtype(series.dtype) or series.dtype == object:
        series = series.astype("string").str.strip()
        return series.where(series != "")
    return series


def read_columns(path, *, user=None, time=None, lat=None, lon=None, traj=None, input_format="auto",
                 time_format=None, dayfirst=False, tz="UTC", keep_columns=False, encoding=None, sep=None,
                 flags=None) -> dict:
    """Read the columns of a check-in file: the keyword arguments of ``data_loaders``' ``build_checkins``.

    See :func:`read_checkins` for the parameters.  ``uid``, ``time`` (UTC),
    ``lat``, ``lng``, ``poi`` are pandas Series (text in Arrow memory, no Python
    objects), ``extra`` a dict of Series (the trajectory column under its name,
    and with ``keep_columns`` every other column), plus ``lines``, ``bad_lines``,
    ``blank_lines``, ``notes``, ``source``, ``fmt``, ``position`` and ``traj``
    (the trajectory column's name or None).
    """
    from data_loaders._checkins import _RESERVED
    from data_loaders._io import check_path, sniff

    path = check_path(path)
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {input_format!r}; choose from {', '.join(INPUT_FORMATS)}")
    flags = API_FLAGS if flags is None else flags
    kind = container_of(path)
    given = {"user": user, "time": time, "lat": lat, "lon": lon, "traj": traj}
    profile = None if input_format == "auto" else input_format

    from .times import TimeReader

    time_notes = []
    times = TimeReader(time_format=time_format, dayfirst=dayfirst, tz=tz, notes=time_notes, flags=flags)

    def needed(names, need_coords=True):
        nonlocal profile, planned
        profile = profile or _profile_of(path, kind, names)
        planned = resolve_columns(names, **given, need_coords=need_coords, flags=flags, source=path.name,
                                  aliases=PROFILES[profile])
        poi = _find_poi(names, profile)
        if keep_columns:
            return list(names)
        return [*planned.used(), *([poi] if poi and poi not in planned.used() else [])]

    def text_converters():
        import pyarrow as pa

        def utc(column):
            return pa.array(times(column)).cast(pa.timestamp("ns", tz="UTC"))

        out = {planned.time: utc}
        if planned.lat is not None and planned.lon is not None:
            out[planned.lat] = out[planned.lon] = _float_column
        return out

    planned = None

    if kind == "text":
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
                             encoding=encoding, convert=text_converters())
        except Exception as exc:  # not valid UTF-8 (or not decodable as given): the pandas reader
            if "UTF8" not in str(exc) and "decode" not in str(exc).lower():
                raise ValueError(f"{path.name} cannot be parsed as {head.sep!r}-delimited text: {exc}") from exc
            raw = _read_text_pandas(path, sep=head.sep, names=names, header=header, encoding=encoding)
            raw.table = raw.table[include]
    elif kind == "parquet":
        is_geo = _is_geoparquet(path)
        raw = _read_parquet(path, lambda names: needed(names, need_coords=not is_geo))
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
    cmap = resolve_columns(names, **given, need_coords=not has_geometry, flags=flags, source=path.name,
                           aliases=PROFILES[profile])
    notes = list(raw.notes)
    n = len(raw.lines)
    if cmap.lat is not None and cmap.lon is not None:
        lat_s, lon_s = _numbers(_column(raw.table, cmap.lat)), _numbers(_column(raw.table, cmap.lon))
    elif has_geometry:
        import pandas as pd

        lat_s, lon_s = pd.Series(raw.lonlat[:, 1]), pd.Series(raw.lonlat[:, 0])
    else:  # resolve_columns has raised already
        raise AssertionError
    renamed = {r: c for r, c in (("user", cmap.user), ("time", cmap.time), ("lat", cmap.lat),
                                 ("lon", cmap.lon)) if c is not None and c != r}
    if renamed:
        notes.append("columns used: " + ", ".join(f"{c!r} as {r}" for r, c in renamed.items()))
    import pandas as pd

    time_s = pd.Series(times(_column(raw.table, cmap.time)), copy=False).dt.tz_localize("UTC")
    notes.extend(time_notes)
    poi_name = _find_poi(names, profile)
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
        uid=_user_ids(_column(raw.table, cmap.user)), time=time_s, lat=lat_s, lng=lon_s,
        poi=_column(raw.table, poi_name) if poi_name else None, extra=extra, lines=raw.lines,
        bad_lines=raw.bad_lines, blank_lines=raw.blank_lines, notes=notes, source=path.name,
        fmt=raw.fmt if profile == "checkins" else f"{profile}-{raw.fmt}", position=raw.position,
        traj=cmap.traj)


def read_checkins(path, *, user=None, time=None, lat=None, lon=None, traj=None, input_format="auto",
                  time_format=None, dayfirst=False, tz="UTC", keep_columns=False, strict=False,
                  duplicates="keep", encoding=None, sep=None, flags=None):
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
                           tz=tz, keep_columns=keep_columns, encoding=encoding, sep=sep, flags=flags)
    traj = columns.pop("traj")
    frame = build_checkins(**columns, duplicates=duplicates, strict=strict)
    if traj is not None:
        frame.attrs["trajectory_column"] = traj
    return frame


def _is_geoparquet(path) -> bool:
    import pyarrow.parquet as pq

    return b"geo" in (pq.read_schema(path).metadata or {})


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
