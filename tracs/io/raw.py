"""What a reader of the format table (:data:`tracs.io.formats.FORMATS`) is asked for
(:class:`ReadRequest`) and what it returns (:class:`RawColumns`): the one raw parse type of
every reader, shipped or registered."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FILE_COLUMN", "RawColumns", "ReadRequest", "files_of"]


@dataclass
class ReadRequest:
    """What a reader of :data:`tracs.io.formats.FORMATS` is asked for.

    ``plan(names, *, roles=None, profile_hint=None, need_coords=True)`` takes the
    file's column names (and the roles / profile its layout implies) and returns
    ``(columns to read, {column: converter of an Arrow array})``; readers that read
    batch by batch call it once they know the names, others may ignore it.
    """

    plan: object
    input_format: str = "auto"
    sep: str | None = None
    encoding: str | None = None
    short_lines: str = "skip"  # a text line with too few fields: "skip" (bad_fields) or "pad" with missing values
    chunk_bytes: int | None = None  # text per block of a reader that reads in blocks (None: its default)


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
    untimed: np.ndarray | None = None  # rows with no time of their own (GPX): kept, time left missing
    roles: dict = field(default_factory=dict)  # column names the layout implies: role -> column
    profile: str | None = None         # the column profile the layout implies (tracs.io.profiles)
    unread: list = field(default_factory=list)  # parts of the file not read as columns (GPX waypoints, ...)
    bad_files: np.ndarray | None = None  # a folder's read: the file (index into files_of) of each bad line
    source: str | None = None          # the name of what was read (a file or folder), for messages
    file_columns: dict = field(default_factory=dict)  # role -> the file's column it was read from (the report)


#: the column of a folder's rows naming the file of each (a dictionary over the files read)
FILE_COLUMN = "source_file"


def files_of(table):
    """``(file index of each row (int32), file names)`` of a folder's rows (the
    :data:`FILE_COLUMN` of a :attr:`RawColumns.table`: an Arrow dictionary or a pandas
    categorical), or None."""
    import pyarrow as pa

    if not hasattr(table, "column_names"):  # a pandas frame: a categorical column (read_columns')
        column = table[FILE_COLUMN] if FILE_COLUMN in table.columns else None
        if column is None or column.dtype != "category":
            return None
        return (column.cat.codes.to_numpy().astype(np.int32), [str(v) for v in column.cat.categories])
    if FILE_COLUMN not in table.column_names:
        return None
    column = table.column(FILE_COLUMN).combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    return (column.indices.to_numpy(zero_copy_only=False).astype(np.int32),
            [str(v) for v in column.dictionary.to_pylist()])
