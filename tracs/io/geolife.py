"""Microsoft Research Asia's Geolife GPS trajectories (``Data/<user>/Trajectory/*.plt``).

Layout of the data set (version 1.3): one folder per user, named by a
three-digit id (``000`` … ``181``), each with a ``Trajectory`` folder of ``.plt``
files, one recorded trajectory per file, named by its start time
(``20081023025304.plt``).  A ``.plt`` file has 6 header lines, then one point per
line::

    latitude,longitude,0,altitude,days,date,time
    39.984702,116.318417,0,492,39744.1201851852,2008-10-23,02:53:04

with the altitude in feet (``-777``: none), ``days`` the time as days since
1899-12-30, and ``date``, ``time`` the time in GMT.

Read here (:func:`read_geolife`, the reader of the common reading path; the
public loader is ``data_loaders.load_geolife``): the user id is the folder name
exactly as written (``"000"`` stays ``"000"``), the trajectory id
(``trajectory_id``) the file's stem, the time is ``date`` + ``time`` in UTC, the
altitude is kept (``altitude_ft``).  Not kept:
the third field (always 0) and ``days`` (the same time as ``date`` and ``time``).
Users' ``labels.txt`` files (transport modes) are not read, and the report says
how many there were.  Line ends may be ``\n``, ``\r\n`` or ``\r``; a file holding a
NUL byte or bytes that are not UTF-8 is refused, naming the file, line and byte
offset (:class:`~tracs.io.tracks.TrackFileError`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from tracs._text import counted

from .layouts import geolife_files_of
from .raw import RawColumns
from .tracks import block, check_fits_in_memory, concat, files_of, finish, numbers, one_file, parse_datetime, points, \
    read_files

__all__ = ["GEOLIFE_FIELDS", "read_geolife"]

#: the fields of a ``.plt`` line, in order
GEOLIFE_FIELDS = ("lat", "lon", "zero", "altitude", "days", "date", "time")
#: bytes of text per point of a .plt file (``39.984702,116.318417,0,492,39744.1201851852,2008-10-23,02:53:04``)
TEXT_BYTES_PER_POINT = 60
_HEADER_LINES = 6


def _files(root: Path):
    """``(files, users, relative names, labels count)`` of a Geolife folder or ``.plt`` file."""
    if root.is_file():
        if root.suffix.lower() != ".plt":
            raise InputError(f"{root.name} is not a Geolife .plt file")
        user = root.parent.parent.name if root.parent.name == "Trajectory" else root.stem
        return [root], [user], [root.name], 0
    if not root.is_dir():
        raise FileNotFoundError(f"no such file or folder: {root}")
    files = geolife_files_of(root)
    if not files:
        raise InputError(f"{root} holds no Geolife trajectories: expected Data/<user>/Trajectory/*.plt "
                         "(or <user>/Trajectory/*.plt) below it")
    users = [p.parent.parent.name for p in files]
    base = files[0].parent.parent.parent
    names = [str(p.relative_to(base)) for p in files]
    labels = sum(1 for user_dir in {p.parent.parent for p in files} if (user_dir / "labels.txt").is_file())
    return files, users, names, labels


def read_geolife(path, request=None) -> RawColumns:
    """The reader of the format table: a Geolife folder or ``.plt`` file as a
    :class:`~tracs.io.raw.RawColumns` (:mod:`tracs.io.tracks`; ``request`` is not needed: the
    layout is fixed).

    Parsed by Arrow, many files per call; see the module docstring for what is read.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    root = Path(path)
    files, users, names, labels = _files(root)
    check_fits_in_memory(sum(p.stat().st_size for p in files), TEXT_BYTES_PER_POINT, root.name,
                 "read fewer users at a time (a user's folder, or a folder of some users' folders)")
    user_of = pa.array(users, type=pa.large_string())
    stem_of = pa.array([p.stem for p in files], type=pa.large_string())
    parts = []
    for table, lines, file, bad_lines, bad_files, blank in read_files(files, skip=_HEADER_LINES,
                                                                      names=GEOLIFE_FIELDS, labels=names):
        when = pc.binary_join_element_wise(pc.utf8_trim_whitespace(table.column("date")),
                                           pc.utf8_trim_whitespace(table.column("time")), " ")
        index = pa.array(file)
        rows = points(user_of.take(index), parse_datetime(when.combine_chunks()),
                      numbers(table.column("lat").combine_chunks()), numbers(table.column("lon").combine_chunks()),
                      trajectory=stem_of.take(index), trajectory_name="trajectory_id", file=file, files=names,
                      extra={"altitude_ft": numbers(table.column("altitude").combine_chunks())})
        parts.append(block(rows, lines, "geolife-plt", trajectory_name="trajectory_id", bad_lines=bad_lines,
                           bad_files=bad_files, blank_lines=blank))
    if not parts:
        raise InputError(f"{root.name}: no point in {len(files):,} .plt file(s) (each has only its "
                         f"{_HEADER_LINES} header lines)")
    raw = concat(parts)
    read = len(np.unique(files_of(raw.table)[0]))
    if len(files) == 1:
        one_file(raw)
    raw.notes.append(f"Geolife: {counted(read, '.plt file')} of {counted(len(set(users)), 'user')}, one "
                     "trajectory per file (trajectory_id = the file name); times are GMT")
    if read < len(files):
        raw.notes.append(f"{counted(len(files) - read, '.plt file')} without a point (only the header) skipped")
    raw.notes.append("not kept: the third field (always 0) and days (the same time as date and time)")
    if labels:
        raw.notes.append(f"labels.txt (transport modes) of {counted(labels, 'user')} not read")
    return finish(raw)
