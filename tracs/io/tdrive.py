"""Microsoft Research Asia's T-Drive taxi trajectories (one headerless text file per taxi).

Layout of the data set: a folder of files ``<taxi id>.txt``, one taxi each, one
GPS point per line, no header::

    taxi_id,datetime,longitude,latitude
    1,2008-02-02 15:36:08,116.51172,39.92123

(longitude first).  Read here (:func:`read_tdrive`, the reader of the common
reading path; the public loader is ``data_loaders.load_tdrive``): the user id is
the ``taxi_id`` field exactly as written (spaces included; an empty field is
missing), the time is the clock time written, without a zone (the reading path reads it in ``tz``, default UTC; give
``tz="Asia/Shanghai"`` / ``--timezone Asia/Shanghai`` for Beijing time), one
trajectory per taxi unless split by time gaps (``split_gap``).

The data set repeats many rows.  Exact duplicates (same taxi, time and position
as an earlier row) and repeated (taxi, time) pairs at another position are
listed in the report's notes with their files and lines, and kept unless
``duplicates=`` says otherwise: never merged silently.  Empty files (taxis with
no point) are counted in a note, and a file whose taxi ids differ from its name
is named in a note.  Line ends may be ``\n``, ``\r\n`` or ``\r``; a file holding a NUL
byte or bytes that are not UTF-8 is refused, naming the file, line and byte offset
(:class:`~tracs.io.tracks.TrackFileError`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from tracs._text import counted

from .raw import RawColumns
from .tracks import block, check_fits_in_memory, finish, numbers, parse_datetime, per_file, points, read_files

__all__ = ["TDRIVE_FIELDS", "read_tdrive"]

#: the fields of a T-Drive line, in order
TDRIVE_FIELDS = ("taxi_id", "datetime", "lon", "lat")
#: bytes of text per point of a T-Drive file (``1,2008-02-02 15:36:08,116.51172,39.92123``)
TEXT_BYTES_PER_POINT = 40


def _files(path: Path) -> list:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no such file or folder: {path}")
    files = sorted(path.glob("*.txt"), key=lambda p: (len(p.stem), p.stem))
    if not files:
        raise InputError(f"{path} holds no T-Drive file (<taxi id>.txt)")
    return files


def read_tdrive(path, request=None) -> RawColumns:
    """The reader of the format table: a T-Drive file or folder as a
    :class:`~tracs.io.raw.RawColumns` (:mod:`tracs.io.tracks`; times without a zone, read in the
    reading path's ``tz``).

    Parsed by Arrow, many files per call; see the module docstring.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    path = Path(path)
    files = _files(path)
    check_fits_in_memory(sum(p.stat().st_size for p in files), TEXT_BYTES_PER_POINT, path.name,
                 "read fewer taxis at a time (a folder of some of the files)")
    names = [p.name for p in files]
    parts, mismatched = [], []
    own = pa.array([p.stem for p in files], type=pa.large_string())
    for table, lines, file, bad_lines, bad_files, blank in read_files(files, skip=0, names=TDRIVE_FIELDS):
        uid = table.column("taxi_id").combine_chunks().cast(pa.large_string())  # as written: " 7" is not "7"
        if len(files) > 1:
            differs = pc.not_equal(uid, own.take(pa.array(file))).fill_null(True)
            file_differs = file[differs.to_numpy(zero_copy_only=False)]
        else:
            file_differs = file[:0]
        mismatched.extend(np.unique(file_differs).tolist())
        rows = points(uid, parse_datetime(table.column("datetime").combine_chunks()),
                      numbers(table.column("lat").combine_chunks()), numbers(table.column("lon").combine_chunks()),
                      time_zone=None, file=file, files=names)
        parts.append(block(rows, lines, "tdrive-txt", bad_lines=bad_lines, bad_files=bad_files, blank_lines=blank))
    raw = per_file(parts, path, len(files), "T-Drive file", lambda read: (
        f"T-Drive: {counted(read, 'taxi file')}, fields taxi_id, datetime, longitude, latitude; the times carry "
        "no zone (tz='Asia/Shanghai' / --timezone Asia/Shanghai reads them as Beijing time)"),
        "taxis without a point")
    if mismatched:
        shown = ", ".join(names[k] for k in mismatched[:5]) + (", ..." if len(mismatched) > 5 else "")
        raw.notes.append(f"{counted(len(mismatched), 'file')} {'holds' if len(mismatched) == 1 else 'hold'} taxi ids other than their name "
                         f"(the ids written in the rows are used): {shown}")
    return finish(raw, duplicates_note=True)

