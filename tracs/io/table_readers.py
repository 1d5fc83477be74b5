"""The format table's readers of tables: delimited text, Parquet / GeoParquet, vector files, in Arrow batches.

Each returns a :class:`~tracs.io.raw.RawColumns`: the columns read (an Arrow table, or a pandas
frame for vector files), the line or row of each record, the lines skipped by the
parser and the blank ones, and the WGS84 longitude/latitude of point geometry.
Conversions given per column (times, coordinates) run batch by batch, so a file's
text is never held whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._progress import progress_bar
from ..errors import InputError
from .arrow_text import ShortLineError, TextParseError, read_text
from .formats import binary_at, container_of, unsupported
from .lines import geometry_kind, line_table
from .profiles import HEADERLESS, headerless_profile
from .raw import RawColumns, ReadRequest


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
    from .delimited_text import read_table_pandas

    t = read_table_pandas(path, sep=sep, header=header, names=None if header else list(names),
                          encoding=encoding, text=True)
    if header:
        t.frame.columns = list(names)
    return RawColumns(t.frame.astype({c: "string" for c in t.frame.columns}), t.lines, "line",
                      {"\t": "tsv", ",": "csv"}.get(sep, "delimited text"), t.bad_lines,
                      t.blank_lines, list(t.notes))


def _lonlat_from_wkb(values, crs, notes, source: str = "the file", first_row: int = 0) -> np.ndarray:
    import shapely

    geoms = shapely.from_wkb(np.asarray(values, dtype=object))
    return _lonlat_from_geoms(geoms, crs, notes, source, first_row)


def _lonlat_from_geoms(geoms, crs, notes, source: str = "the file", first_row: int = 0) -> np.ndarray:
    """WGS84 longitude/latitude of point geometries (a line among them raises: lines are read by
    :func:`_read_features`)."""
    import shapely

    geoms = np.asarray(geoms, dtype=object)
    if geometry_kind(geoms, source, first_row) != "points":
        raise InputError(f"{source}: lines among the points of row group starting at row {first_row}: "
                         "a file holds points or lines")
    xy = np.full((len(geoms), 2), np.nan)
    present = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    xy[present] = shapely.get_coordinates(geoms[present])
    return _to_wgs84(xy, crs, notes)


def _to_wgs84(xy: np.ndarray, crs, notes) -> np.ndarray:
    if crs is not None:
        from pyproj import CRS, Transformer

        crs = CRS.from_user_input(crs)
        if not crs.equals(CRS.from_epsg(4326)):
            t = Transformer.from_crs(crs, 4326, always_xy=True)
            xy = np.array(xy, dtype=float)
            xy[:, 0], xy[:, 1] = t.transform(xy[:, 0], xy[:, 1])
            notes.append(f"coordinates converted from {crs.to_string()} to EPSG:4326")
    return xy


def _read_parquet(path: Path, plan) -> RawColumns:
    """Parquet / GeoParquet in batches: ``plan(names) -> (columns, converters)`` chooses the
    columns to read and how to convert each batch (as for text); point geometry (WKB)
    becomes WGS84 longitude/latitude batch by batch."""
    import pyarrow as pa

    handle = open_parquet(path)
    schema = handle.schema_arrow
    meta = schema.metadata or {}
    geo = json.loads(meta[b"geo"]) if b"geo" in meta else None
    names = [n for n in schema.names]
    geometry = geo.get("primary_column", "geometry") if geo else None
    wanted, convert = plan([n for n in names if n != geometry])
    wanted = [c for c in wanted if c in names]
    crs = geo["columns"].get(geometry, {}).get("crs", "OGC:CRS84") if geo else None  # GeoParquet default
    if crs is not None:  # parsed once, not for each batch (PROJJSON takes tens of milliseconds)
        from pyproj import CRS

        crs = CRS.from_user_input(crs)
    notes, chunks, lonlat = [], {c: [] for c in wanted}, []
    columns = wanted + ([geometry] if geometry else [])
    with progress_bar(handle.metadata.num_rows, desc=f"read {path.name}", unit="row", unit_scale=True) as bar:
        for batch in _batches(handle, path, columns):
            for name in wanted:
                column = batch.column(name)
                chunks[name].append(convert[name](column) if name in convert else column)
            if geometry:
                lonlat.append(_lonlat_from_wkb(batch.column(geometry).to_numpy(zero_copy_only=False), crs,
                                               notes if not lonlat else [], path.name,
                                               sum(map(len, lonlat))))
            bar.update(batch.num_rows)
    table = pa.table({name: pa.chunked_array(parts, type=parts[0].type if parts else
                                             schema.field(name).type) for name, parts in chunks.items()})
    xy = (np.concatenate(lonlat) if lonlat else np.empty((0, 2))) if geometry else None
    return RawColumns(table, np.arange(table.num_rows, dtype=np.int64), "row",
                      "geoparquet" if geo else "parquet", notes=notes, lonlat=xy, geometry=geometry)


def open_parquet(path: Path):
    """``pyarrow.parquet.ParquetFile`` of ``path``; a file it cannot open is a ``ValueError``
    naming the file and the byte offset of the part that failed (the footer at the end)."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as exc:
        size = path.stat().st_size
        where = (f"its footer (the last 8 bytes, from byte offset {max(size - 8, 0)} of {size}) is not "
                 "a Parquet footer: a truncated or damaged file, or not Parquet at all"
                 if "magic" in str(exc).lower() or "footer" in str(exc).lower() else
                 f"reading its metadata at the end of the file ({size} bytes) failed")
        raise InputError(f"{path.name} is not a readable Parquet file: {where} ({_first_line(exc)})") from None


def _first_line(exc) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]


def _batches(handle, path: Path, columns):
    """Record batches of ``handle``, row group by row group; a row group that cannot be
    decoded is a ``ValueError`` naming the file, its rows and its byte offset."""
    meta = handle.metadata
    first = 0
    for group in range(meta.num_row_groups):
        rows = meta.row_group(group).num_rows
        try:
            yield from handle.iter_batches(batch_size=1 << 16, columns=columns, row_groups=[group])
        except Exception as exc:
            chunks = [meta.row_group(group).column(c) for c in range(meta.num_columns)]
            offsets = [c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in chunks]
            raise InputError(f"{path.name}: cannot read row group {group} (rows {first}–{first + rows - 1}, "
                             f"from byte offset {min(offsets)}): {_first_line(exc)}") from None
        first += rows


def _read_vector(path: Path, kind: str, source=None) -> RawColumns:
    """A vector file through geopandas (``source``: how GDAL is to open it, default ``path``)."""
    import geopandas as gpd

    try:
        frame = gpd.read_file(path if source is None else source)
    except Exception as exc:
        raise unsupported(path, f"not a readable {kind} file: {str(exc).splitlines()[0][:120]}") from exc
    return _read_features(path, frame, kind)


def _read_features(path: Path, frame, kind: str) -> RawColumns:
    """A frame of features: one check-in per point, or one trajectory per line part
    (:mod:`tracs.io.lines`)."""
    import geopandas as gpd
    import pandas as pd

    notes = []
    if not (isinstance(frame, gpd.GeoDataFrame) and frame.geometry.name in frame.columns):
        return RawColumns(frame, np.arange(len(frame), dtype=np.int64), "row", kind)
    if frame.crs is None:
        raise InputError(f"{path.name} has no CRS: its coordinates cannot be read as longitude/latitude")
    geoms = np.asarray(frame.geometry.array, dtype=object)
    crs = frame.crs
    frame = pd.DataFrame(frame.drop(columns=frame.geometry.name))
    if geometry_kind(geoms, path.name) == "points":
        lonlat = _lonlat_from_geoms(geoms, crs, notes, path.name)
        return RawColumns(frame, np.arange(len(frame), dtype=np.int64), "row", kind, notes=notes,
                          lonlat=lonlat, geometry="geometry")
    table, untimed, roles, lonlat = line_table(frame, geoms, path.name, stem=path.stem, notes=notes,
                                               to_lonlat=lambda xy: _to_wgs84(xy, crs, notes))
    notes.append("rows are the lines' vertices, numbered in file order from 0")
    return RawColumns(table, np.arange(len(table), dtype=np.int64), "row", kind, notes=notes, lonlat=lonlat,
                      geometry="geometry", untimed=untimed, roles=roles)


# ----------------------------------------------------------------------------- the readers of the table


def read_delimited(path: Path, request: ReadRequest) -> RawColumns:
    """CSV / TSV / any delimited text (delimiter detected; the headerless Foursquare and
    Gowalla files recognised), through :func:`read_text`; not valid UTF-8: pandas."""
    from .delimited_text import sniff

    try:
        head = sniff(path, what="check-in table", delimiters=request.sep or "\t,;|", encoding=request.encoding)
    except ValueError as exc:
        if isinstance(exc.__cause__, UnicodeDecodeError):  # not the encoding given: the message names it
            raise
        raise unsupported(path, str(exc).split(": ", 1)[-1][:100]) from None
    names, header, roles = head.fields, True, {}
    profile = headerless_profile(head, request.input_format)
    if profile:
        names, header = list(HEADERLESS[profile]), False
        roles = {"user": "user", "time": "time", "lat": "lat", "lon": "lng"}
    include, convert = request.plan(names, roles=roles, profile_hint=profile)
    try:
        raw = read_text(path, sep=head.sep, names=names, header=header, include=include,
                         encoding=request.encoding, convert=convert,
                         short_lines="raise" if request.short_lines == "pad" else "skip")
    except TextParseError:
        raise
    except Exception as exc:  # not valid UTF-8 (or not decodable as given), short lines padded: pandas
        if not isinstance(exc, ShortLineError) and "UTF8" not in str(exc) and "decode" not in str(exc).lower():
            where = binary_at(path, utf8=False)
            if where is not None:
                raise unsupported(path, f"binary data from byte offset {where[0]}, line {where[1]}") from None
            raise InputError(f"{path.name} cannot be parsed as {head.sep!r}-delimited text: {exc}") from exc
        raw = _read_text_pandas(path, sep=head.sep, names=names, header=header, encoding=request.encoding)
        raw.table = raw.table[include]
    if _holds_nul(raw.table):  # a NUL byte in a text column (an id): never a new id, the place named
        offset, line = binary_at(path, utf8=False)
        raise unsupported(path, f"a binary file: NUL byte at byte offset {offset}, line {line}")
    raw.roles, raw.profile = roles, profile
    return raw


def _holds_nul(table) -> bool:
    """Whether a text column of a table (Arrow or pandas) holds a NUL character."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(table, pd.DataFrame):
        return any(bool(table[c].str.contains("\x00", regex=False).fillna(False).any()) for c in table.columns
                   if pd.api.types.is_string_dtype(table[c].dtype))
    return any(pc.any(pc.match_substring(table.column(c), "\x00")).as_py() for c in table.column_names
               if pa.types.is_string(table.schema.field(c).type))


def read_parquet(path: Path, request: ReadRequest) -> RawColumns:
    """Parquet / GeoParquet in batches (:func:`_read_parquet`); GeoParquet needs no coordinate
    columns.  GeoParquet of lines is read whole, through geopandas (:mod:`tracs.io.lines`)."""
    handle = open_parquet(path)
    is_geo = b"geo" in (handle.schema_arrow.metadata or {})
    if is_geo and _has_lines(handle):
        import geopandas as gpd

        return _read_features(path, gpd.read_parquet(path), "geoparquet")
    return _read_parquet(path, lambda names: request.plan(names, need_coords=not is_geo))


def _has_lines(handle) -> bool:
    """Whether a GeoParquet file holds lines: its declared geometry types, or its first rows."""
    import shapely

    geo = json.loads(handle.schema_arrow.metadata[b"geo"])
    name = geo.get("primary_column", "geometry")
    declared = geo.get("columns", {}).get(name, {}).get("geometry_types") or []
    if declared:
        return any("LineString" in t for t in declared)
    for batch in handle.iter_batches(batch_size=4096, columns=[name]):
        kinds = shapely.get_type_id(shapely.from_wkb(batch.column(0).to_numpy(zero_copy_only=False)))
        return bool(np.isin(kinds, (1, 5)).any())
    return False


#: GDAL's prefix naming the driver of a container, for a file whose extension says another
_DRIVERS = {"gpkg": ("GPKG", ".gpkg")}


def read_vector(path: Path, request: ReadRequest) -> RawColumns:
    """GeoJSON, GeoPackage, Shapefile, FlatGeobuf (through geopandas); a GeoPackage under another
    extension (told by its content, :func:`~tracs.io.formats.container_of`) is opened as one."""
    key = container_of(path)
    prefix, suffix = _DRIVERS.get(key, (None, None))
    source = f"{prefix}:{path}" if prefix and path.suffix.lower() != suffix else None
    return _read_vector(path, "geojson" if key == "geojson" else "vector", source)
