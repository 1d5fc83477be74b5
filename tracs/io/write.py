"""Write released rows: CSV / TSV and Parquet through Arrow, GeoParquet, GeoJSON, GPX.

Text output writes times as ``YYYY-MM-DD HH:MM:SS+00:00`` (fractional seconds only
when a time has them), the same text pandas writes for UTC times, in batches so
memory stays bounded by the frame itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .formats import output_format

__all__ = ["write_points", "arrow_table"]

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

    Values are quoted only where needed: a value that holds the delimiter, a quote (not
    in tab-separated text, which tracs reads without quoting) or a line break is quoted
    (:func:`_quoted_text`), no other; the header likewise.
    """
    import csv
    import io

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    structural = "[" + delimiter + '"\\r\\n]'  # Arrow's writer refuses these unquoted
    # tab-separated text has no quoting (tracs reads a quote in it as a character): there only a tab
    # or a line break needs quotes
    pattern = structural if delimiter != "\t" else "[\t\\r\\n]"
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


def write_points(frame, path, fmt: str | None = None, *, progress=None) -> None:
    """Write ``frame`` (a GeoDataFrame of released rows) to ``path``.

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        Rows to write; CSV/TSV/Parquet write its columns without the geometry
        (which ``lat``/``lng`` columns carry), GeoParquet and GeoJSON with it,
        GPX uses ``lat``, ``lng``, ``datetime``, ``trajectory`` and ``uid``.
    fmt : str, optional
        ``"CSV"``, ``"TSV"``, ``"GeoParquet"``, ``"GeoJSON"`` or ``"GPX"``
        (default: from the extension).
    progress : callable, optional
        Called with the number of rows written after each batch (text output).
    """
    path = Path(path)
    fmt = fmt or output_format(path)
    if fmt in ("CSV", "TSV"):
        write_csv(arrow_table(frame, text_times=True), path, "," if fmt == "CSV" else "\t", progress=progress)
    elif fmt == "GeoJSON":
        if path.exists():
            path.unlink()  # the GeoJSON driver refuses to overwrite
        frame.to_file(path, driver="GeoJSON")
    elif fmt == "GPX":
        from .gpx import write_gpx

        lat = frame["lat"].to_numpy() if "lat" in frame.columns else frame.geometry.y.to_numpy()
        lon = frame["lng"].to_numpy() if "lng" in frame.columns else frame.geometry.x.to_numpy()
        traj = frame["trajectory"].to_numpy() if "trajectory" in frame.columns else frame["uid"].to_numpy()
        names = frame["uid"].astype(str).to_numpy() if "uid" in frame.columns else None
        users = frame["uid"].to_numpy() if "uid" in frame.columns and "trajectory" in frame.columns else None
        write_gpx(path, lat=lat, lon=lon, times=frame["datetime"], trajectory=traj, names=names, users=users)
    else:
        frame.to_parquet(path)
