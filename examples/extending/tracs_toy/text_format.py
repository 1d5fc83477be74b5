"""A toy file format: pipe-separated text (``.toytext``) whose first line holds the release's parameters.

A file::

    #tracs {"method": "toy-cells", "epsilon": 2.0, ...}
    uid|trajectory|datetime|lat|lng|...
    007|0|2012-04-03 18:00:09+00:00|35.61|139.62|...

Every requirement tracs places on a format of another package, as this one meets it:

1. **A reader** ``read(path, request) -> RawColumns`` (:mod:`tracs.io.raw`).
   ``request.plan(names)`` takes the file's column names and returns ``(columns to
   read, {column: converter of an Arrow array})``; the reader reads those columns as
   text (so ids stay as written: ``007`` is not ``7``), applies the converters and
   returns the table with the line of each row (``position="line"``).  The generic
   column finder then recognises the user, time and coordinate columns by name, so
   every command reads the file (``tracs perturb`` as input, ``tracs estimate``,
   ``tracs evaluate``, ``tracs map`` as a release).
2. **A writer** ``write(tables, path, *, bbox, progress)``: ``tables`` yields Arrow
   tables of the released rows (``uid``, ``trajectory``, ``datetime``, the source
   position, ``lat``, ``lng``, ``epsilon_point``, ``epsilon_trajectory``), times as
   text here (``text_times=True``), each batch reported to ``progress(rows)`` when
   given.  Every column is written; nothing disappears.  The release's public
   parameters come as the JSON text of the tables' schema metadata ``tracs``
   (:func:`tracs.io.write.with_parameters`); a writer of a format that can hold them
   stores them (here: the first line), as the GeoParquet, GeoPackage, GPX and GeoJSON
   writers do.
3. **``parameters(path)``** gives that JSON text back (None when the file holds
   none): :func:`tracs.io.parameters.embedded_parameters` reads it for every command
   that reads a release, and checks it against the sidecar ``tracs perturb`` writes.
4. **The entry** (:data:`FORMAT`, a :class:`tracs.io.Format`): its name, key,
   extensions (new ones: an extension already taken is refused), the callables,
   ``text_times``, and ``sniff(first bytes)`` (:func:`starts_with_parameters`): a file
   beginning with the parameters' line is recognised under any name (``.txt``, none),
   as magic bytes in ``signature`` would be.  ``selectable=True`` would offer the key
   to ``--input-format``, ``detect(path)`` recognise a layout the extension does not tell.
5. **An entry point** naming :data:`FORMAT` in the group ``tracs.formats``
   (``pyproject.toml``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tracs.io import Format
from tracs.io.raw import RawColumns

__all__ = ["FORMAT", "embedded", "read_toy_text", "starts_with_parameters", "write_toy_text"]

#: the first characters of the parameters' line
MARK = "#tracs "


def embedded(path) -> str | None:
    """The JSON text of the parameters on the first line of ``path``, or None."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    return first[len(MARK):].strip() if first.startswith(MARK) else None


def starts_with_parameters(head: bytes) -> bool:
    """The entry's sniff: whether a file's first bytes begin with the parameters' line."""
    return head.startswith(MARK.encode())


def read_toy_text(path, request) -> RawColumns:
    """The reader of the entry: the columns ``request.plan`` asks for, read as text and converted."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    path = Path(path)
    skip = 1 if embedded(path) is not None else 0
    with open(path, encoding="utf-8") as fh:
        for _ in range(skip):
            fh.readline()
        names = fh.readline().rstrip("\r\n").split("|")
    include, convert = request.plan(names)
    table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(skip_rows=skip + 1, column_names=names),
                          parse_options=pcsv.ParseOptions(delimiter="|"),
                          convert_options=pcsv.ConvertOptions(
                              include_columns=list(include), column_types={c: pa.string() for c in include},
                              null_values=[""], strings_can_be_null=True))
    table = pa.table({c: convert[c](table.column(c)) if c in convert else table.column(c) for c in include})
    lines = np.arange(skip + 2, skip + 2 + table.num_rows, dtype=np.int64)
    return RawColumns(table, lines, "line", "toy text")


def write_toy_text(tables, path, *, bbox=None, progress=None) -> None:
    """The writer of the entry: the parameters' line, the header, then every batch of rows."""
    import pyarrow.csv as pcsv

    with open(path, "wb") as fh:
        for number, table in enumerate(tables):
            if number == 0:
                text = (table.schema.metadata or {}).get(b"tracs")
                if text is not None:
                    fh.write(MARK.encode() + text.replace(b"\n", b" ") + b"\n")
                fh.write("|".join(table.column_names).encode() + b"\n")
            pcsv.write_csv(table.replace_schema_metadata(None), fh,
                           write_options=pcsv.WriteOptions(delimiter="|", include_header=False))
            if progress is not None:
                progress(table.num_rows)


#: the registry entry, named by the entry point ``toy-text`` of the group ``tracs.formats``
FORMAT = Format("Toy text", "toy-text", (".toytext",), read=read_toy_text, write=write_toy_text,
                parameters=embedded, text_times=True, sniff=starts_with_parameters)
