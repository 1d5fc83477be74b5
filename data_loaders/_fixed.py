"""Fixed-column check-in files (Foursquare, Gowalla): recognise, read, build.

:func:`read_known_format` tells a headerless file from one with a header and
reads it with the text reader of :mod:`tracs.io.delimited_text`; :func:`load_known_format`
turns its columns into the loaders' frame with :func:`tracs.io.checkins.build_checkins`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tracs.errors import InputError
from tracs.io.checkins import build_checkins, check_duplicates_policy, check_strict
from tracs.io.delimited_text import Table, check_path, map_header, read_table, sniff

if TYPE_CHECKING:
    import geopandas as gpd

def read_known_format(path: Path, *, what: str, columns, aliases: dict, time_field: int,
                      time_pattern, describe: str, hints: dict, text=(),
                      encoding: str | None = None) -> tuple[pd.DataFrame, Table, str]:
    """Sniff, recognise and read a file of a fixed-column check-in format.

    The file is headerless when field ``time_field`` of its first line matches
    ``time_pattern`` (columns then in the order of ``columns``), else its header is
    matched by name through ``aliases``.  A first line with another number of
    fields raises ValueError, with ``hints[n]`` appended when given.

    Returns the raw frame with canonical column names, the :class:`Table` and the
    delimiter.
    """
    head = sniff(path, what=what, encoding=encoding)
    if len(head.fields) != len(columns):
        sep = "tab" if head.sep == "\t" else repr(head.sep)
        raise InputError(f"{path} is not a {what} file: its first line has {len(head.fields)} "
                         f"{sep}-separated fields, expected {len(columns)} ({describe})"
                         f"{hints.get(len(head.fields), '')}")
    if time_pattern.match(head.fields[time_field]):
        table = read_table(path, sep=head.sep, header=False, names=list(columns), text=text,
                           encoding=encoding)
        return table.frame, table, head.sep
    rename = map_header(head.fields, aliases, columns, path=path, what=what)
    table = read_table(path, sep=head.sep, header=True, encoding=encoding,
                       text=[orig for orig, canon in rename.items() if canon in text])
    return table.frame.rename(columns=rename), table, head.sep


def load_known_format(path, *, name: str, parse, duplicates: str, strict, encoding,
                      **file_format) -> gpd.GeoDataFrame:
    """The body shared by the loaders of fixed-column check-in files.

    Checks the arguments (path, ``duplicates``, ``strict``) before reading, reads
    the file with :func:`read_known_format` (``file_format`` are
    its format arguments), turns the raw columns into those of
    :func:`build_checkins` with ``parse(raw, notes)`` (which returns a dict with
    ``uid``, ``time``, ``lat``, ``lng`` and optionally ``poi`` and ``extra``, and
    may append to ``notes``, a copy of the reader's notes) and builds the result
    with the source lines, the file name and the format ``"<name>-csv"`` or
    ``"<name>-tsv"``.
    """
    path = check_path(path)
    check_duplicates_policy(duplicates)
    strict = check_strict(strict)
    raw, table, sep = read_known_format(path, encoding=encoding, **file_format)
    notes = list(table.notes)
    columns = parse(raw, notes)
    return build_checkins(
        **columns, lines=table.lines, bad_lines=table.bad_lines, blank_lines=table.blank_lines,
        notes=notes, source=path.name, fmt=f"{name}-" + ("csv" if sep == "," else "tsv"),
        duplicates=duplicates, strict=strict)
