"""Every column of a file as a pandas frame, read by the reader the format table chooses.

The reading path of ``data_loaders``: :func:`read_records` asks the table of
:mod:`tracs.io.formats` for the file's format (:func:`~tracs.io.formats.format_of`:
its layout, signature, content or extension), reads every column with that format's
reader (the one every command uses) and keeps what the reader noticed (the line or
row of each record, the lines skipped and the blank ones, the notes, the WGS84
longitude/latitude of point geometry).  :meth:`Records.frame` then gives the columns
the types pandas' inference would: a text file's columns become int64, float64 or
bool where every value is one (integers with gaps: float64), the columns named
``text`` stay text exactly as written (ids: ``007`` is not ``7``); typed columns
(Parquet, vector files) keep their types.  Lines of a text file with too few fields
are padded with missing values (the loaders' checks then drop them for the value
that is missing, or keep them when it is an optional one).

:func:`file_profile` tells the original Foursquare and Gowalla text files (headerless
or with their header) from any other table.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .raw import RawColumns
from .raw import ReadRequest
from .table_readers import _read_features
from .formats import FORMATS, Format, delimited, format_of
from .profiles import HEADERLESS, headerless_profile, profile_of
from .delimited_text import _infer, check_path, sniff

__all__ = ["Records", "file_profile", "frame_records", "own_columns", "read_records"]

#: the columns pyarrow writes for an unnamed pandas index (row labels, not data)
_INDEX = re.compile(r"__index_level_\d+__")


@dataclass
class Records:
    """What :func:`read_records` read: the reader's columns and what it noticed."""

    raw: RawColumns
    source: str
    format: Format | None = None  # None: a frame in memory (:func:`frame_records`)

    @property
    def names(self) -> list:
        """The file's column names (a vector file's geometry excluded, an unnamed index too)."""
        table = self.raw.table
        names = table.column_names if hasattr(table, "column_names") else [str(c) for c in table.columns]
        return [n for n in names if not _INDEX.fullmatch(n)]

    @property
    def text_file(self) -> bool:
        """Whether the columns are a text file's (every value read as text, line numbers)."""
        return self.raw.position == "line"

    def frame(self, text=()) -> pd.DataFrame:
        """The columns as a pandas frame, types inferred for a text file's (see the module
        docstring); the columns named in ``text`` stay text."""
        table = self.raw.table
        if self.text_file:
            return pd.DataFrame({name: _infer(_arrow(table, name), name in text) for name in self.names})
        if hasattr(table, "column_names"):  # Parquet: the file's types
            return table.select(self.names).to_pandas()
        return pd.DataFrame(table).reset_index(drop=True)


def _arrow(table, name):
    """A column of text as an Arrow array (the pandas reader's columns are pandas strings)."""
    import pyarrow as pa

    if hasattr(table, "column_names"):
        return table.column(name)
    return pa.array(table[name].astype("string").to_numpy(dtype=object, na_value=None), type=pa.string())


def read_records(path, *, input_format: str = "checkins", sep: str | None = None,
                 encoding: str | None = None, fmt: Format | None = None) -> Records:
    """Read every column of a file with the reader of its format in :data:`tracs.io.formats.FORMATS`.

    Parameters
    ----------
    path : str or os.PathLike
        A file of any format of the table.
    input_format : str, default "checkins"
        ``"foursquare"`` or ``"gowalla"`` recognise those sets' headerless text files
        (their columns then take the names of :data:`tracs.io.profiles.HEADERLESS`);
        ``"checkins"`` reads a text file's first line as its header.
    sep, encoding : str, optional
        Delimiter and encoding of a text file (default: detected; UTF-8 with a
        latin-1 fallback for bytes that are not UTF-8, noted).
    fmt : Format, optional
        The entry of the table to read with (default: :func:`~tracs.io.formats.format_of`).

    Returns
    -------
    Records

    Raises
    ------
    FileNotFoundError, UnsupportedFormatError, ValueError
    """
    path = Path(path) if isinstance(path, (str, os.PathLike)) and Path(path).is_dir() else check_path(path)
    fmt = format_of(path, input_format) if fmt is None else fmt

    def plan(names, **_):  # every column, as the file holds it
        return list(names), {}

    raw = fmt.reader()(path, ReadRequest(plan=plan, input_format=input_format, sep=sep, encoding=encoding,
                                         short_lines="pad"))
    return Records(raw, path.name, fmt)


def frame_records(frame: pd.DataFrame, source: str = "<DataFrame>") -> Records:
    """A frame in memory as :class:`Records`, as a vector file's reader gives one: a GeoDataFrame's
    point geometry becomes WGS84 longitude/latitude (converted from its CRS, noted; none is an
    error), lines the vertices of trajectories (:mod:`tracs.io.lines`); rows numbered from 0."""
    import geopandas as gpd

    if isinstance(frame, gpd.GeoDataFrame) and frame._geometry_column_name not in frame.columns:
        frame = pd.DataFrame(frame)  # no active geometry: columns only
    return Records(_read_features(Path(source), frame, "dataframe"), source)


def own_columns(fmt: Format) -> bool:
    """Whether the reader of ``fmt`` gives a file's own columns, no layout implied: the readers of
    delimited text, Parquet and vector files (a GPX, KML or trajectory set's reader names its
    columns' roles itself)."""
    return fmt.read in {FORMATS[key].read for key in ("csv", "parquet", "geojson")}


def file_profile(path) -> str | None:
    """``"foursquare"`` or ``"gowalla"`` when ``path`` is delimited text (by the format table)
    whose first line is the original headerless file's, or whose header has that set's names
    and as many fields (:mod:`tracs.io.profiles`); else None."""
    path = check_path(path)
    if not delimited(format_of(path)):
        return None
    head = sniff(path, what="check-in", delimiters="\t,;|")
    profile = headerless_profile(head, "auto") or profile_of(head.fields)
    return profile if len(head.fields) == len(HEADERLESS.get(profile, ())) else None
