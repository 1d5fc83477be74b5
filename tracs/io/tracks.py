"""The public trajectory data sets as columns: what the Geolife, T-Drive, Porto and Cabspotting
readers share.

A reader of this family (:mod:`tracs.io.geolife`, :mod:`tracs.io.tdrive`,
:mod:`tracs.io.porto`, :mod:`tracs.io.cabspotting`) turns its files into
:class:`TrackColumns`: one row per point, the user id as text exactly as written, the time in nanoseconds (UTC, or
wall-clock time when ``time_zone`` is None: T-Drive's times carry no zone),
``NAT`` where unreadable, latitude and longitude (NaN where not a number), the
1-based physical line of each point in its file and, for data sets spread over
many files, the index of that file.  :func:`to_raw` hands them to the common
reading path (:func:`tracs.io.checkin_files.read_columns`) as a
:class:`~tracs.io.raw.RawColumns` whose columns play the roles of
:data:`ROLES`, so the loaders' checks, report and time zones apply as to any
file; ``data_loaders.load_geolife`` / ``load_tdrive`` / ``load_porto`` /
``iter_porto`` are the public loaders.

Line numbers count within each file, so for a folder of files :func:`finish`
adds notes naming the file and line of every kind of dropped row (the first
few), and of exact duplicates when asked.  Text files are parsed by Arrow,
several files per block (bounded by :data:`BLOCK_BYTES`), never one Python call
per point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .raw import RawColumns
from tracs._text import counted
from tracs.errors import InputError, TracsError


NAT = np.iinfo(np.int64).min
#: text parsed per Arrow call when reading many files (bounds the memory of a read)
BLOCK_BYTES = 64 << 20
#: locations shown per kind of row in the notes
SHOW = 5


@dataclass
class TrackColumns:
    """Points of a trajectory data set, one row per point, in file order.

    Attributes
    ----------
    uid : pyarrow.Array of large_string
        User (Geolife folder, T-Drive taxi, Porto ``TAXI_ID``), exactly as written.
    time : numpy.ndarray of int64
        Nanoseconds since the epoch, UTC; :data:`NAT` where the time is unreadable.
    lat, lon : numpy.ndarray of float64
        Degrees; NaN where not a finite number.
    lines : numpy.ndarray of int64
        1-based physical line of each point in its file.
    time_zone : str or None
        ``"UTC"`` (Geolife, Porto) or None: wall-clock times without a zone (T-Drive),
        read in the reader's ``tz``.
    fmt, source : str
        Format name (``"geolife-plt"``, ...) and what was read (file or folder name).
    trajectory, trajectory_name : pyarrow.Array or None, str or None
        Trajectory id of each point as written (Geolife file stem, Porto ``TRIP_ID``)
        and the column name it gets.
    file : numpy.ndarray of int32 or None
        Index into ``files`` of each point (None: a single file).
    files : list of str
        The files read, relative to the folder given.
    bad_lines, bad_files : numpy.ndarray
        Lines the parser skipped (wrong number of fields) and their files.
    blank_lines : numpy.ndarray
        Lines with no value (ignored).
    extra : dict
        More per-point columns kept (e.g. Geolife's altitude).
    notes : list of str
    marks : dict of str to numpy.ndarray
        Lines of records worth a note (e.g. Porto's trips without points), by kind.
    """

    uid: object
    time: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    lines: np.ndarray
    fmt: str
    source: str
    time_zone: str | None = "UTC"
    trajectory: object = None
    trajectory_name: str | None = None
    file: np.ndarray | None = None
    files: list = field(default_factory=list)
    bad_lines: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    bad_files: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    blank_lines: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    extra: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    marks: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.lines)

    def uid_series(self) -> pd.Series:
        import pyarrow as pa

        return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([self.uid]).cast(pa.large_string())),
                         copy=False)

    def trajectory_series(self) -> pd.Series | None:
        import pyarrow as pa

        if self.trajectory is None:
            return None
        return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([self.trajectory]).cast(pa.large_string())),
                         copy=False)


def concat(parts: list) -> TrackColumns:
    """One :class:`TrackColumns` of several read from successive blocks (same format)."""
    import pyarrow as pa

    first = parts[0]
    if len(parts) == 1:
        return first

    def arrays(name):
        values = [getattr(p, name) for p in parts]
        return None if values[0] is None else pa.concat_arrays(values)

    def cat(name, dtype):
        values = [getattr(p, name) for p in parts]
        return None if values[0] is None else np.concatenate(values).astype(dtype, copy=False)

    extra = {k: np.concatenate([p.extra[k] for p in parts]) for k in first.extra}
    notes = [n for p in parts for n in p.notes]
    marks = {k: np.concatenate([p.marks[k] for p in parts]) for k in first.marks}
    return TrackColumns(
        uid=arrays("uid"), time=cat("time", np.int64), lat=cat("lat", np.float64), lon=cat("lon", np.float64),
        lines=cat("lines", np.int64), fmt=first.fmt, source=first.source, time_zone=first.time_zone,
        trajectory=arrays("trajectory"),
        trajectory_name=first.trajectory_name, file=cat("file", np.int32), files=first.files,
        bad_lines=cat("bad_lines", np.int64), bad_files=cat("bad_files", np.int32),
        blank_lines=cat("blank_lines", np.int64), extra=extra, notes=list(dict.fromkeys(notes)), marks=marks)


def per_file(parts: list, path: Path, count: int, kind: str, note, empty: str) -> TrackColumns:
    """One :class:`TrackColumns` of the parts read from ``count`` files of one user each (T-Drive,
    Cabspotting): ``note(files read)`` first, then how many files were empty (``empty`` says what
    that means); one file keeps no file index.  No part at all raises naming ``kind``."""
    if not parts:
        raise InputError(f"{path.name}: no point in {counted(count, kind)} (all empty)")
    cols = concat(parts)
    read = len(np.unique(cols.file))
    if count == 1:
        cols.file, cols.files = None, []
    cols.notes.append(note(read))
    if read < count:
        cols.notes.append(f"{counted(count - read, 'empty file')} ({empty})")
    return cols


# ----------------------------------------------------------------------------- reading many small files


class TrackFileError(TracsError, ValueError):
    """A file of a trajectory data set that is not text tracs can read (the message names the file,
    its line and byte offset)."""


_LONE_CR = re.compile(rb"\r(?!\n)")


def text_of(path: str, data: bytes) -> bytes:
    """The bytes of a text file (named ``path`` in messages) ready for the parser: lone carriage
    returns (old Mac line ends) read as line ends (byte for byte, so offsets stay), a NUL byte
    refused with its line and byte offset."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise nul_byte(path, data.count(b"\n", 0, nul) + 1, nul)
    if b"\r" in data and _LONE_CR.search(data):
        data = _LONE_CR.sub(b"\n", data)
    return data


def nul_byte(name: str, line: int, offset: int) -> TrackFileError:
    """The error naming the NUL byte of a text file: ``name``, its line and byte offset."""
    return TrackFileError(f"{name}: line {line} holds a NUL byte (byte offset {offset}): a binary or damaged "
                          "file, not text")


def not_utf8(name: str, data: bytes, offset: int = 0, line: int = 1) -> TrackFileError:
    """The error naming the first byte of ``data`` that is not UTF-8: ``name``, its line and byte
    offset (``data`` starts at byte ``offset``, line ``line`` of the file)."""
    try:
        data.decode("utf-8")
        at = 0
    except UnicodeDecodeError as exc:
        at = exc.start
    line += data.count(b"\n", 0, at)
    return TrackFileError(f"{name}: line {line} is not UTF-8 text (byte {data[at:at + 1]!r} at byte offset "
                          f"{offset + at}): save the file as UTF-8")


def read_files(paths, *, skip: int, names, block_bytes: int = BLOCK_BYTES, sep: str = ",", labels=None):
    """Parse headerless delimited files (after ``skip`` lines each) with Arrow, several per call.

    Yields, per block of files, ``(table, lines, file, bad_lines, bad_files, blank_lines)``:
    the columns ``names`` as text (empty -> null; no other value is missing), the 1-based line of
    each row in its file, the index of its file in ``paths``, the lines the parser skipped (a wrong
    number of fields) and their files, and the blank lines (dropped from the table).
    A file with fewer than ``skip`` lines contributes nothing; ``labels`` name the files in
    messages (default: their names).  Line ends may be ``\\n``, ``\\r\\n``
    or ``\\r``.

    Raises
    ------
    TrackFileError
        A file holding a NUL byte or bytes that are not UTF-8, naming the file, line and byte offset.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    block, starts, index, cuts = [], [], [], []
    size = 0
    labels = [Path(p).name for p in paths] if labels is None else labels

    def parse():
        buf = b"".join(block)
        first_line = np.asarray(starts, dtype=np.int64)  # global 0-based line where each file's data starts
        file_of = np.asarray(index, dtype=np.int32)
        bad = []
        try:
            table = pcsv.read_csv(
                pa.BufferReader(buf),
                read_options=pcsv.ReadOptions(column_names=list(names), use_threads=False, block_size=1 << 24),
                parse_options=pcsv.ParseOptions(delimiter=sep, ignore_empty_lines=False,
                                                invalid_row_handler=lambda row: bad.append(row.number) or "skip"),
                convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in names}, null_values=[""],
                                                    strings_can_be_null=True, quoted_strings_can_be_null=True))
        except pa.ArrowInvalid as exc:
            if "UTF8" not in str(exc):
                raise
            for body, k, cut in zip(block, index, cuts):
                try:
                    body.decode("utf-8")
                except UnicodeDecodeError:
                    raise not_utf8(labels[k], body, cut, skip + 1) from None
            raise
        total = buf.count(b"\n")
        bad_global = np.asarray(bad, dtype=np.int64) - 1  # 0-based line in the block
        rows = np.ones(total, dtype=bool)
        rows[bad_global] = False
        global_lines = np.flatnonzero(rows)[:table.num_rows]
        blank = np.ones(table.num_rows, dtype=bool)
        for column in table.columns:
            blank &= column.is_null().to_numpy(zero_copy_only=False)

        def where(g):
            k = np.searchsorted(first_line, g, side="right") - 1
            return g - first_line[k] + skip + 1, file_of[k]

        lines, files = where(global_lines)
        b_lines, b_files = where(bad_global)
        if blank.any():
            table = table.filter(pa.array(~blank))
        return (table, lines[~blank], files[~blank], b_lines, b_files, lines[blank])

    lines_so_far = 0
    for k, path in enumerate(paths):
        data = text_of(labels[k], Path(path).read_bytes())
        cut = 0
        for _ in range(skip):
            nl = data.find(b"\n", cut)
            cut = len(data) if nl < 0 else nl + 1
        body = data[cut:]
        if not body:
            continue
        if not body.endswith(b"\n"):
            body += b"\n"
        starts.append(lines_so_far)
        index.append(k)
        cuts.append(cut)
        block.append(body)
        lines_so_far += body.count(b"\n")
        size += len(body)
        if size >= block_bytes:
            yield parse()
            block, starts, index, cuts, size, lines_so_far = [], [], [], [], 0, 0
    if block:
        yield parse()


def parse_datetime(text, fmt: str = "%Y-%m-%d %H:%M:%S") -> np.ndarray:
    """Arrow text -> int64 nanoseconds of the clock time written (:data:`NAT` where missing or not
    in ``fmt``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stamps = pc.strptime(pc.utf8_trim_whitespace(text), format=fmt, unit="ns", error_is_null=True)
    return stamps.cast(pa.int64()).fill_null(NAT).to_numpy(zero_copy_only=False)


def numbers(text) -> np.ndarray:
    """Arrow text -> float64 (NaN where missing or not a finite number)."""
    import pyarrow as pa

    try:
        out = pa.chunked_array([text]).cast(pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([text]).cast(pa.large_string())))
        out = pd.to_numeric(values.str.strip(), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    out = np.asarray(out, dtype=np.float64)
    return np.where(np.isfinite(out), out, np.nan)


# ----------------------------------------------------------------------------- where rows are, in notes


def locate(cols: TrackColumns, rows: np.ndarray, limit: int = SHOW) -> str:
    """``"000/Trajectory/a.plt line 7, ..."``: where the first ``limit`` of ``rows`` are."""
    rows = np.asarray(rows)[:limit]
    if cols.file is None:
        text = ", ".join(f"line {int(cols.lines[r])}" for r in rows)
    else:
        text = ", ".join(f"{cols.files[int(cols.file[r])]} line {int(cols.lines[r])}" for r in rows)
    return text


def finish(cols: TrackColumns, *, duplicates_note: bool = False) -> TrackColumns:
    """Add the notes that name files: where the rows that will be dropped are (when the
    points come from several files, whose line numbers alone are ambiguous) and, with
    ``duplicates_note``, the exact duplicates (same user, time and position as an earlier
    row) and repeated (user, time) pairs, with their files and lines."""
    check_rows = _row_checks()
    n = len(cols)
    rows = np.arange(n, dtype=np.int64)
    dropped = {}
    keep = check_rows(cols.uid.is_null().to_numpy(zero_copy_only=False), cols.time == NAT, cols.lat,
                      cols.lon, rows, dropped)
    if cols.file is not None and (dropped or len(cols.bad_lines)):
        for reason, where in dropped.items():
            cols.notes.append(f"{counted(len(where), 'row')} dropped as {reason} {'is' if len(where) == 1 else 'are'} "
                              f"at: {locate(cols, where)}"
                              + (", ..." if len(where) > SHOW else ""))
        if len(cols.bad_lines):
            shown = ", ".join(f"{cols.files[int(f)]} line {int(ln)}"
                              for f, ln in zip(cols.bad_files[:SHOW], cols.bad_lines[:SHOW]))
            cols.notes.append(f"{counted(len(cols.bad_lines), 'line')} dropped as bad_fields "
                              f"{'is' if len(cols.bad_lines) == 1 else 'are'} at: {shown}"
                              + (", ..." if len(cols.bad_lines) > SHOW else ""))
    if duplicates_note and len(keep) > 1:
        frame = pd.DataFrame({"u": pd.factorize(cols.uid_series().take(keep))[0], "t": cols.time[keep],
                              "y": cols.lat[keep], "x": cols.lon[keep]})
        exact = keep[frame.duplicated().to_numpy()]
        same_time = keep[frame.duplicated(["u", "t"]).to_numpy()]
        repeated = np.setdiff1d(same_time, exact)
        if len(exact):
            cols.notes.append(f"{counted(len(exact), 'exact duplicate row')} (the same user, time and position "
                              "as an earlier row; kept unless duplicates='drop_exact' or 'drop_user_time'): "
                              f"{locate(cols, exact)}"
                              + (", ..." if len(exact) > SHOW else ""))
        if len(repeated):
            cols.notes.append(f"{counted(len(repeated), 'row')} with the user and time of an earlier row at "
                              f"another position (kept unless duplicates='drop_user_time'): {locate(cols, repeated)}" + (", ..." if len(repeated) > SHOW else ""))
    return cols


#: peak memory of a whole read by ``tracs perturb`` per point (measured: 1.3 GB for 6 million
#: Porto points, the imports included); a GeoDataFrame of the points needs more
WHOLE_READ_BYTES_PER_POINT = 220


class NotEnoughMemoryError(TracsError, ValueError):
    """A whole read would not fit in the memory available (refused before reading)."""


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable`` of ``/proc/meminfo``), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_fits_in_memory(text_bytes: int, text_bytes_per_point: float, source: str, advice: str) -> None:
    """Refuse up front a whole read of ``text_bytes`` of text (about ``text_bytes_per_point`` per
    point) that would need more than the memory available, saying what to do instead."""
    points = text_bytes / text_bytes_per_point
    need = points * WHOLE_READ_BYTES_PER_POINT
    free = available_memory()
    if free is not None and need > free:
        raise NotEnoughMemoryError(
            f"{source}: about {points / 1e6:,.0f} million points ({text_bytes / 1e9:,.1f} GB of text) need about "
            f"{need / 1e9:,.1f} GB of memory to be read whole, and {free / 1e9:,.1f} GB is available: {advice}")


#: the column of :func:`to_raw`'s table that plays each role of the reading path
ROLES = {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"}


def to_raw(cols: TrackColumns):
    """The points as a :class:`~tracs.io.raw.RawColumns` for the common reading path: an
    Arrow table with ``uid``, ``datetime`` (timestamps, UTC or without a zone), ``lat``, ``lng``,
    the trajectory id column, ``source_file`` (several files) and the kept extra columns; its
    ``roles`` name the columns of :data:`ROLES` and the trajectory's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stamps = pa.array(cols.time, type=pa.int64()).cast(pa.timestamp("ns", tz=cols.time_zone))
    valid = pa.array(cols.time != NAT)
    columns = {"uid": cols.uid, "datetime": pc.if_else(valid, stamps, pa.scalar(None, stamps.type)),
               "lat": pa.array(cols.lat), "lng": pa.array(cols.lon)}
    roles = dict(ROLES)
    if cols.trajectory is not None:
        columns[cols.trajectory_name] = cols.trajectory
        roles["traj"] = cols.trajectory_name
    if cols.file is not None:
        columns["source_file"] = pa.DictionaryArray.from_arrays(pa.array(cols.file, pa.int32()),
                                                                pa.array(cols.files, pa.string()))
    for name, values in cols.extra.items():
        columns[name] = pa.array(values)
    raw = RawColumns(pa.table(columns), cols.lines, "line", cols.fmt, bad_lines=cols.bad_lines,
                     blank_lines=cols.blank_lines, notes=list(cols.notes))
    raw.roles = roles
    return raw


def _row_checks():
    """The loaders' row checks (``check_rows``: bad user, bad time, bad coordinates, out of range)."""
    from .checkins import check_rows

    return check_rows
