"""The Cabspotting San Francisco taxi traces (one headerless text file per cab).

Layout of the data set as published: a folder of files ``new_<cab>.txt``, one cab
each, one GPS point per line, four fields separated by one space, no header::

    37.75134 -122.39488 0 1213084687

latitude, longitude, occupancy (1: a fare on board, 0: free) and the time in Unix
seconds (UTC); each file lists its points newest first.  An index ``_cabs.txt``
(``<cab id="abboip" updates="21384"/>`` per cab) sits beside them.

Read here (:func:`read_cabspotting`, the reader of the common reading path; the
public loader is ``data_loaders.load_cabspotting``): the user id is the cab's
name, the file name without its ``new_`` prefix and ``.txt`` suffix
(``new_abboip.txt`` is cab ``abboip``, the id ``_cabs.txt`` gives it; a file
without the prefix is named by its whole stem), exactly as written; one
trajectory per cab unless split by time gaps; the points are put in time order
by the loaders, their lines kept.  The occupancy is kept (``occupancy``).  Not
read: ``_cabs.txt`` (the same cabs; the notes say so).  Detected by the layout
of the first line (:func:`tracs.io.layouts.is_cabspotting`), a file or a folder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from tracs._text import counted

from .raw import RawColumns
from .tracks import NAT, block, check_fits_in_memory, finish, numbers, per_file, points, read_files

__all__ = ["CABSPOTTING_FIELDS", "cab_of", "read_cabspotting"]

#: the fields of a Cabspotting line, in order
CABSPOTTING_FIELDS = ("lat", "lon", "occupancy", "time")
#: bytes of text per point (``37.75134 -122.39488 0 1213084687``)
TEXT_BYTES_PER_POINT = 32
#: the prefix of the published file names
PREFIX = "new_"


def cab_of(path) -> str:
    """The cab of a file: its stem without the ``new_`` prefix (``new_abboip.txt`` -> ``abboip``)."""
    stem = Path(path).stem
    return stem[len(PREFIX):] if stem.startswith(PREFIX) and len(stem) > len(PREFIX) else stem


def _files(path: Path) -> tuple[list, bool]:
    """``(cab files, whether an index _cabs.txt is beside them)``."""
    if path.is_file():
        return [path], False
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or folder: {path}")
    files = sorted(path.glob(PREFIX + "*.txt")) or sorted(p for p in path.glob("*.txt") if not p.name.startswith("_"))
    if not files:
        raise InputError(f"{path} holds no Cabspotting file (new_<cab>.txt)")
    return files, (path / "_cabs.txt").is_file()


def read_cabspotting(path, request=None) -> RawColumns:
    """The reader of the format table: a Cabspotting file or folder as a
    :class:`~tracs.io.raw.RawColumns` (:mod:`tracs.io.tracks`).

    Parsed by Arrow, many files per call; see the module docstring.
    """
    import pyarrow as pa

    path = Path(path)
    files, index = _files(path)
    check_fits_in_memory(sum(p.stat().st_size for p in files), TEXT_BYTES_PER_POINT, path.name,
                 "read fewer cabs at a time (a folder of some of the files)")
    names = [p.name for p in files]
    cabs = pa.array([cab_of(p) for p in files], type=pa.large_string())
    parts = []
    for table, lines, file, bad_lines, bad_files, blank in read_files(files, skip=0, names=CABSPOTTING_FIELDS,
                                                                      sep=" "):
        seconds = numbers(table.column("time").combine_chunks())
        whole = np.isfinite(seconds) & (seconds == np.round(seconds)) & (np.abs(seconds) < 9e9)
        time = np.where(whole, np.nan_to_num(seconds).astype(np.int64) * 1_000_000_000, NAT)
        rows = points(cabs.take(pa.array(file)), time, numbers(table.column("lat").combine_chunks()),
                      numbers(table.column("lon").combine_chunks()), file=file, files=names,
                      extra={"occupancy": numbers(table.column("occupancy").combine_chunks())})
        parts.append(block(rows, lines, "cabspotting-txt", bad_lines=bad_lines, bad_files=bad_files,
                           blank_lines=blank))
    raw = per_file(parts, path, len(files), "Cabspotting file", lambda read: (
        f"Cabspotting: {counted(read, 'cab file')}, fields latitude, longitude, occupancy, Unix seconds (UTC); "
        "the cab is the file name without new_ and .txt"), "cabs without a point")
    if index:
        raw.notes.append("_cabs.txt (the index of the cabs) not read")
    return finish(raw, duplicates_note=True)

