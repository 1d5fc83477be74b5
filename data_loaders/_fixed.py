"""Fixed-column check-in files (Foursquare, Gowalla): recognise, read, build.

:func:`read_known_format` reads a file with the reader the format table of
:mod:`tracs.io.formats` chooses (:func:`tracs.io.records.read_records`: the original
headerless text files are recognised by their first line) and names its columns, by
their order or through the set's header names; :func:`load_known_format` turns them
into the loaders' frame with :func:`tracs.io.checkins.build_checkins`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from tracs.errors import InputError
from tracs.io.checkins import build_checkins, check_duplicates_policy, check_strict
from tracs.io.formats import format_of
from tracs.io.records import Records, own_columns, read_records
from tracs.io.delimited_text import check_path, map_header

if TYPE_CHECKING:
    import geopandas as gpd

#: how a message names the delimiter of a text file of each format
_DELIMITERS = {"tsv": "tab-separated fields", "csv": "','-separated fields"}


def read_known_format(path, *, name: str, what: str, columns, aliases: dict, describe: str, hints: dict,
                      text=(), encoding: str | None = None) -> tuple[pd.DataFrame, Records]:
    """Read and recognise a file of a fixed-column check-in format (``name``: a profile of
    :mod:`tracs.io.profiles`).

    A headerless text file recognised by its first line has its columns in the order of
    ``columns``; any other file's header is matched by name through ``aliases``.  A file
    with another number of columns raises ValueError, with ``hints[n]`` appended when given.

    Returns the raw frame with canonical column names (those in ``text`` kept as written)
    and the :class:`~tracs.io.records.Records`.
    """
    fmt = format_of(path, name)
    if not own_columns(fmt):
        raise InputError(f"{path} is not a {what} file: it is a {fmt.name} file")
    records = read_records(path, input_format=name, encoding=encoding, fmt=fmt)
    names = records.names
    if len(names) != len(columns):
        held = f"its first line has {len(names)} {_DELIMITERS.get(records.raw.fmt, 'fields')}" \
            if records.text_file else f"it has {len(names)} columns"
        raise InputError(f"{path} is not a {what} file: {held}, expected {len(columns)} ({describe})"
                         f"{hints.get(len(names), '')}")
    if records.raw.profile == name:  # headerless: the reader named the columns in the set's order
        rename = dict(zip(names, columns))
    else:
        rename = map_header(names, aliases, columns, path=path, what=what)
    frame = records.frame(text=[orig for orig, canon in rename.items() if canon in text])
    return frame.rename(columns=rename), records


def load_known_format(path, *, name: str, parse, duplicates: str, strict, encoding,
                      **file_format) -> gpd.GeoDataFrame:
    """The body shared by the loaders of fixed-column check-in files.

    Checks the arguments (path, ``duplicates``, ``strict``) before reading, reads
    the file with :func:`read_known_format` (``file_format`` are
    its format arguments), turns the raw columns into those of
    :func:`build_checkins` with ``parse(raw, notes)`` (which returns a dict with
    ``uid``, ``time``, ``lat``, ``lng`` and optionally ``poi`` and ``extra``, and
    may append to ``notes``, a copy of the reader's notes) and builds the result
    with the source lines, the file name and the format ``"<name>-<container>"``
    (``"foursquare-tsv"``, ``"gowalla-csv"``, ...).
    """
    path = check_path(path)
    check_duplicates_policy(duplicates)
    strict = check_strict(strict)
    raw, records = read_known_format(path, name=name, encoding=encoding, **file_format)
    notes = list(records.raw.notes)
    columns = parse(raw, notes)
    return build_checkins(
        **columns, lines=records.raw.lines, bad_lines=records.raw.bad_lines, blank_lines=records.raw.blank_lines,
        notes=notes, source=path.name, fmt=f"{name}-{records.raw.fmt}", duplicates=duplicates, strict=strict,
        position=records.raw.position)
