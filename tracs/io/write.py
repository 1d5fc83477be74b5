"""Write released rows: CSV / TSV through Arrow, GeoParquet, GeoJSON, GeoPackage, GPX.

The writers of the format table (:mod:`tracs.io.formats`) are here (``write_*``:
``write(tables, path, *, bbox, progress)``).  A release's public parameters come with the
tables, as the Arrow schema metadata ``tracs`` (:func:`with_parameters`); the writers of
formats that hold metadata store them in the file (:mod:`tracs.io.parameters`).

Text output writes times as ``YYYY-MM-DD HH:MM:SS+00:00`` (fractional seconds only
when a time has them), the same text pandas writes for UTC times, in batches so
memory stays bounded by the frame itself.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

from .formats import FORMATS, Format, UnsupportedFormatError, output_format
from .gpx import write_gpx
from .lines import line_features
from .parameters import KEY, gpkg_embed, gpx_metadata
from ..errors import InputError
from ..trajectory_batch import Batch

__all__ = ["arrow_table", "bounds", "parquet_options", "wkb_points", "with_parameters", "write_points"]

_BATCH = 1 << 17


def _iso_seconds(ns: np.ndarray):
    """Whole-second UTC times (int64 ns, no NaT) -> Arrow text
    ``YYYY-MM-DD HH:MM:SS+00:00``, composed digit by digit in NumPy (no per-row Python)."""
    import pyarrow as pa

    seconds = ns // 1_000_000_000
    days = seconds // 86400
    clock = seconds - days * 86400
    date = days.astype("datetime64[D]")
    year = date.astype("datetime64[Y]").astype(np.int64) + 1970
    month = date.astype("datetime64[M]").astype(np.int64) % 12 + 1
    day = (date - date.astype("datetime64[M]")).astype(np.int64) + 1
    template = np.frombuffer(b"0000-00-00 00:00:00+00:00", dtype=np.uint8)
    out = np.tile(template, (len(ns), 1))
    fields = ((0, 4, year), (5, 2, month), (8, 2, day), (11, 2, clock // 3600), (14, 2, clock // 60 % 60),
              (17, 2, clock % 60))
    for start, width, value in fields:
        for k in range(width):
            out[:, start + width - 1 - k] = 48 + (value // 10 ** k) % 10
    offsets = np.arange(0, 25 * (len(ns) + 1), 25, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(ns), [None, pa.py_buffer(offsets), pa.py_buffer(out.tobytes())])


def _times_as_text(column):
    """A UTC timestamp column -> text like pandas' ``2012-04-03 18:00:09+00:00`` (missing: null).

    Each time is written from its own value: whole seconds without a fraction, other
    times with nine digits of it (so a row's text never depends on the other rows).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ns = column.cast(pa.timestamp("ns", tz="UTC"))
    if isinstance(ns, pa.ChunkedArray):
        ns = ns.combine_chunks()
    values = ns.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    whole = values % 1_000_000_000 == 0
    if len(values) and np.all(whole):  # years 1677-2262
        text = _iso_seconds(values)
        return text if ns.null_count == 0 else pc.if_else(ns.is_null(), pa.scalar(None, pa.string()), text)
    text = pc.binary_join_element_wise(pc.strftime(ns, format="%Y-%m-%d %H:%M:%S"), pa.scalar("+00:00"), "")
    if not whole.any():
        return text
    text = pc.if_else(pa.array(whole), _iso_seconds(values - values % 1_000_000_000), text)
    return text if ns.null_count == 0 else pc.if_else(ns.is_null(), pa.scalar(None, pa.string()), text)


def arrow_table(frame, *, text_times: bool):
    """The frame's columns (not its geometry) as an Arrow table; UTC times as text if asked."""
    import pandas as pd
    import pyarrow as pa

    geometry = getattr(frame, "_geometry_column_name", None)
    columns = {}
    for name in frame.columns:
        if name == geometry:
            continue
        values = frame[name]
        arr = pa.chunked_array([pa.array(values.array)]) if not isinstance(values.dtype, np.dtype) \
            else pa.chunked_array([pa.array(values.to_numpy())])
        if text_times and isinstance(values.dtype, pd.DatetimeTZDtype):
            arr = _times_as_text(arr)
        columns[str(name)] = arr
    return pa.table(columns)


def write_csv(table, path, delimiter: str = ",", *, progress=None, batch: int = _BATCH) -> None:
    """Write an Arrow table as delimited text in batches (see :func:`write_csv_batches`)."""
    write_csv_batches((table.slice(start, batch) for start in range(0, table.num_rows, batch)), path,
                      delimiter, progress=progress, schema=table.schema)


def write_csv_batches(tables, path, delimiter: str = ",", *, progress=None, schema=None) -> None:
    """Write Arrow tables of one schema, one after the other, as delimited text.

    Values are quoted only where needed: a value that holds the delimiter, a quote or a
    line break is quoted (:func:`_quoted_text`), no other; in tab-separated text, where a
    quote inside a value is a character, a value holding a tab or a line break or
    beginning with a quote.  tracs reads both back exactly (:mod:`tracs.io.table_readers`);
    the header likewise.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    structural = "[" + delimiter + '"\\r\\n]'  # Arrow's writer refuses these unquoted
    pattern = structural if delimiter != "\t" else '^"|[\t\\r\\n]'
    with open(path, "wb") as fh:
        for table in tables:
            if schema is None or fh.tell() == 0:
                schema = table.schema
                header = io.StringIO()
                csv.writer(header, delimiter=delimiter, lineterminator="\n").writerow(schema.names)
                fh.write(header.getvalue().encode("utf-8"))
            needs = any(pc.any(pc.match_substring_regex(table.column(c), structural)).as_py()
                        for c in table.column_names if pa.types.is_string(table.schema.field(c).type)
                        or pa.types.is_large_string(table.schema.field(c).type))
            if needs:
                fh.write(_quoted_text(table, delimiter, pattern))
            else:
                options = pcsv.WriteOptions(delimiter=delimiter, quoting_style="none", include_header=False)
                pcsv.write_csv(table, fh, write_options=options)
            if progress is not None:
                progress(table.num_rows)
        if fh.tell() == 0 and schema is not None:
            header = io.StringIO()
            csv.writer(header, delimiter=delimiter, lineterminator="\n").writerow(schema.names)
            fh.write(header.getvalue().encode("utf-8"))


def _quoted_text(table, delimiter: str, pattern: str) -> bytes:
    """The rows of ``table`` as delimited text, quoting only the values that hold the delimiter,
    a quote or a line break (a quote doubled), as Python's ``csv`` module does; every other
    value is Arrow's text of it, as its CSV writer gives, so a row's text depends on that row only."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fields = []
    for name in table.column_names:
        column = table.column(name)
        text = column.cast(pa.string())
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            quoted = pc.binary_join_element_wise('"', pc.replace_substring(text, '"', '""'), '"', "")
            text = pc.if_else(pc.fill_null(pc.match_substring_regex(text, pattern), False), quoted, text)
        fields.append(pc.fill_null(text, ""))
    lines = pc.binary_join_element_wise(pc.binary_join_element_wise(*fields, delimiter), "", "\n")
    lines = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset:lines.offset + len(lines) + 1]
    return lines.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]] if len(lines) else b""


def wkb_points(lonlat: np.ndarray):
    """Little-endian WKB points as an Arrow binary array, built without a geometry object."""
    import pyarrow as pa

    n = len(lonlat)
    record = np.dtype([("order", "u1"), ("kind", "<u4"), ("x", "<f8"), ("y", "<f8")])
    data = np.empty(n, dtype=record)
    data["order"], data["kind"] = 1, 1
    data["x"], data["y"] = lonlat[:, 0], lonlat[:, 1]
    offsets = np.arange(0, 21 * (n + 1), 21, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())])


def bounds(lonlat: np.ndarray) -> tuple[list, list]:
    """``(min, max)`` of each column of an ``(N, 2)`` array (a reduction along axis 0 of a
    two-column array runs one element at a time: 25 times slower)."""
    return ([lonlat[:, 0].min(), lonlat[:, 1].min()], [lonlat[:, 0].max(), lonlat[:, 1].max()])


def with_parameters(table, text):
    """``table`` carrying a release's parameters (JSON ``text``; None: unchanged) in its schema
    metadata, for the writers that store them."""
    if text is None:
        return table
    return table.replace_schema_metadata({**(table.schema.metadata or {}), KEY.encode(): text.encode()})


def _parameters(table):
    """The parameters' JSON text a table carries (:func:`with_parameters`), or None."""
    text = (table.schema.metadata or {}).get(KEY.encode())
    return None if text is None else text.decode()


def _with_geometry(table, bbox):
    """The table with a WKB ``geometry`` column from ``lng``/``lat`` and GeoParquet metadata."""
    from pyproj import CRS

    lonlat = np.column_stack([table.column("lng").to_numpy(), table.column("lat").to_numpy()])
    geo = {"version": "1.0.0", "primary_column": "geometry",
           "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"],
                                    "crs": CRS.from_epsg(4326).to_json_dict(),
                                    "bbox": [float(v) for v in bbox]}}}
    out = table.append_column("geometry", wkb_points(lonlat))
    kept = {k: v for k, v in (table.schema.metadata or {}).items() if k == b"tracs"}
    return out.replace_schema_metadata({b"geo": json.dumps(geo).encode(), **kept})


def parquet_options(schema) -> dict:
    """Writer options of the released rows: dictionary pages only for the columns that repeat
    (user, trajectory, ε; coordinates, times and points rarely do), no statistics for the
    geometry (WKB bytes).  Smaller and about twice as fast to write as the defaults."""
    names = list(schema.names)
    repeating = [c for c in ("uid", "trajectory", "epsilon_point", "epsilon_trajectory") if c in names]
    return {"use_dictionary": repeating, "write_statistics": [c for c in names if c != "geometry"]}


# ----------------------------------------------------------------------------- the writers of the table
# write(tables, path, *, bbox, progress): tables of released rows (tracs.io.formats)


def write_csv_file(tables, path, *, bbox=None, progress=None) -> None:
    """Comma-separated text, batch by batch (:func:`write_csv_batches`)."""
    write_csv_batches(tables, path, ",", progress=progress)


def write_tsv_file(tables, path, *, bbox=None, progress=None) -> None:
    """Tab-separated text, batch by batch (:func:`write_csv_batches`)."""
    write_csv_batches(tables, path, "\t", progress=progress)


def write_geoparquet(tables, path, *, bbox, progress=None, geometry: str = "points") -> None:
    """GeoParquet 1.0 (WKB points from ``lng`` / ``lat``, EPSG:4326, ``bbox``), one row group per batch;
    or one line per trajectory (``geometry="lines"``, through geopandas)."""
    import pyarrow.parquet as pq

    if geometry == "lines":
        tables = list(tables)
        rows, features = _features(tables, geometry)
        features.to_parquet(path)
        text = _parameters(tables[0])
        if text is not None:  # the parameters beside geopandas' own metadata
            written = pq.read_table(path)
            pq.write_table(with_parameters(written, text), path)
        if progress is not None:
            progress(rows)
        return

    writer = None
    try:
        for table in tables:
            table = _with_geometry(table, (*bbox[0], *bbox[1]))
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, **parquet_options(table.schema))
            writer.write_table(table)
            if progress is not None:
                progress(table.num_rows)
    finally:
        if writer is not None:
            writer.close()


def _one_frame(tables):
    import pyarrow as pa

    tables = list(tables)
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    lonlat = np.column_stack([table.column("lng").to_numpy(), table.column("lat").to_numpy()])
    return table, table.to_pandas(), lonlat


def _features(tables, geometry: str):
    """``(rows, GeoDataFrame)``: points with every column, or one line per trajectory (:mod:`tracs.io.lines`)."""
    import geopandas as gpd

    table, frame, lonlat = _one_frame(tables)
    if geometry == "lines":
        return table.num_rows, line_features(table)
    return table.num_rows, gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(lonlat[:, 0], lonlat[:, 1]),
                                            crs=4326)


def _write_vector(tables, path, driver: str, progress, geometry: str, **options) -> None:
    tables = list(tables)
    rows, features = _features(tables, geometry)
    if Path(path).exists():
        Path(path).unlink()  # the GeoJSON driver refuses to overwrite
    text = _parameters(tables[0]) if tables else None
    if driver == "GeoJSON" and text is not None:  # a foreign member of the collection (GDAL 3.9 and later)
        options["layer_options"] = {"FOREIGN_MEMBERS_COLLECTION": '{"tracs": ' + text + "}"}
    features.to_file(path, driver=driver, **options)
    if driver == "GPKG" and text is not None:
        gpkg_embed(path, text)
    if progress is not None:
        progress(rows)


def write_geojson(tables, path, *, bbox=None, progress=None, geometry: str = "points") -> None:
    """GeoJSON (EPSG:4326): points with every column as a property, or lines (``geometry="lines"``)."""
    _write_vector(tables, path, "GeoJSON", progress, geometry)


def write_geopackage(tables, path, *, bbox=None, progress=None, geometry: str = "points") -> None:
    """A GeoPackage layer (EPSG:4326): points with every column as an attribute, or lines."""
    _write_vector(tables, path, "GPKG", progress, geometry, layer="released")


def write_gpx_file(tables, path, *, bbox=None, progress=None) -> None:
    """GPX: one track per trajectory, named by its user and trajectory id (:func:`tracs.io.gpx.write_gpx`)."""
    table, frame, lonlat = _one_frame(tables)
    text = _parameters(table)
    if text is not None:
        text = gpx_metadata(text)
    write_gpx(path, lat=lonlat[:, 1], lon=lonlat[:, 0], times=frame["datetime"],
              trajectory=frame["trajectory"].to_numpy(), names=frame["uid"].astype(str).to_numpy(),
              users=frame["uid"].to_numpy(), metadata=text)
    if progress is not None:
        progress(table.num_rows)


def write_points(frame, path, fmt=None, *, progress=None) -> None:
    """Write ``frame`` (a GeoDataFrame of released rows, or a :class:`tracs.Batch`) to ``path``,
    with the writer of the format table (:mod:`tracs.io.formats`).

    Parameters
    ----------
    frame : geopandas.GeoDataFrame or tracs.Batch
        Rows to write: its columns (not its geometry); ``lat`` / ``lng`` are taken from
        the point geometry when the frame has no such columns.  GPX uses ``lat``,
        ``lng``, ``datetime``, ``trajectory`` and ``uid``.  A batch in WGS84 is written
        as its GeoDataFrame view (:meth:`tracs.Batch.to_geodataframe`: keys as ``uid``,
        ``trajectory``, every column).
    fmt : str or Format, optional
        A format's name (``"CSV"``, ``"TSV"``, ``"GeoParquet"``, ``"GeoJSON"``,
        ``"GPX"``, ...) or entry; default: the one the extension names.
    progress : callable, optional
        Called with the number of rows written after each batch.
    """
    path = Path(path)
    if isinstance(frame, Batch):
        import pyproj

        if frame.crs is None or not pyproj.CRS.from_user_input(frame.crs).equals(pyproj.CRS.from_epsg(4326)):
            raise InputError(f"write_points writes WGS84 longitude/latitude: this batch's CRS is {frame.crs!r}")
        frame = frame.to_geodataframe()
    if fmt is None:
        fmt = output_format(path)
    elif not isinstance(fmt, Format):
        named = [f for f in FORMATS.values() if f.name == fmt and f.write is not None]
        if not named:
            raise UnsupportedFormatError(f"no writer of the format {fmt!r}")
        fmt = named[0]
    table = arrow_table(frame, text_times=fmt.text_times)
    if "lat" not in table.column_names or "lng" not in table.column_names:
        table = table.append_column("lat", [frame.geometry.y.to_numpy()]).append_column(
            "lng", [frame.geometry.x.to_numpy()])
    lonlat = np.column_stack([table.column("lng").to_numpy(), table.column("lat").to_numpy()])
    size = fmt.batch_rows or max(table.num_rows, 1)
    batches = [table.slice(start, size) for start in range(0, table.num_rows, size)] or [table]
    fmt.writer()(batches, path, bbox=bounds(lonlat), progress=progress)
