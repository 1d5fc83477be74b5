"""A folder of Parquet files read as one table: the layout ``tracs perturb --engine dask`` reads and writes.

``tracs perturb --engine dask`` reads a folder of (Geo)Parquet files and writes its
release as a folder of GeoParquet parts ``part.0.parquet``, ``part.1.parquet``, …;
every command reads such a folder as one file (:data:`tracs.io.formats.FORMATS`,
key ``parquet-folder``): its files in turn (:func:`parquet_parts`), each through the
Parquet reader, the row of each record its position in the whole folder (as
``source_row`` of a Dask release counts it).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from .table_readers import read_parquet
from ..errors import InputError

__all__ = ["is_parquet_folder", "parquet_parts", "read_parquet_folder"]

_PART = re.compile(r"part\.(\d+)\.parquet", flags=re.IGNORECASE)


def parquet_parts(folder) -> list:
    """The ``.parquet`` files of ``folder``: ``part.N.parquet`` in the order of ``N`` (``part.2``
    before ``part.10``, the order they are written in), then the others in name order."""

    def order(path: Path):
        found = _PART.fullmatch(path.name)
        return (0, int(found.group(1)), "") if found else (1, 0, path.name)

    return sorted((p for p in Path(folder).glob("*.parquet") if p.is_file()), key=order)


def is_parquet_folder(path) -> bool:
    """A folder holding ``.parquet`` files (and no other layout: detected after Geolife and T-Drive)."""
    path = Path(path)
    return path.is_dir() and bool(parquet_parts(path))


def read_parquet_folder(path: Path, request):
    """The Parquet files of a folder (:func:`parquet_parts`) as one
    :class:`~tracs.io.raw.RawColumns`: their columns in turn, point geometry as
    longitude/latitude, each row's position in the whole folder."""
    import pyarrow as pa

    parts = [read_parquet(p, request) for p in parquet_parts(path)]
    if not parts:
        raise InputError(f"{Path(path).name} is a folder without .parquet files")
    try:
        tables = [p.table if hasattr(p.table, "column_names") else pa.Table.from_pandas(p.table, preserve_index=False)
                  for p in parts]  # GeoParquet of lines is read as a frame
        table = pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"the Parquet files of {Path(path).name} do not hold the same columns: "
                         f"{' '.join(str(exc).split())}") from None
    starts = np.cumsum([0] + [p.table.num_rows for p in parts[:-1]])
    lonlat = None
    if all(p.lonlat is not None for p in parts):
        lonlat = np.concatenate([p.lonlat for p in parts]).reshape(-1, 2)
    return dataclasses.replace(
        parts[0], table=table, lines=np.concatenate([p.lines + s for p, s in zip(parts, starts)]),
        bad_lines=np.concatenate([p.bad_lines + s for p, s in zip(parts, starts)]).astype(np.int64),
        blank_lines=np.concatenate([p.blank_lines + s for p, s in zip(parts, starts)]).astype(np.int64),
        notes=[note for p in parts for note in p.notes], lonlat=lonlat)
