"""The public trajectory data sets as columns: what the Geolife, T-Drive, Porto and Cabspotting
readers share.

A reader of this family (:mod:`tracs.io.geolife`, :mod:`tracs.io.tdrive`,
:mod:`tracs.io.porto`, :mod:`tracs.io.cabspotting`) is a reader of the format table:
it turns its files into a :class:`~tracs.io.raw.RawColumns` whose Arrow table
(:func:`points`) holds one row per point, in file order: ``uid``, the user id as
text exactly as written; ``datetime``, timestamps (UTC, or without a zone when the
files' times carry none: T-Drive's), null where unreadable; ``lat``, ``lng``
(NaN where not a number); the trajectory id when the layout has one; ``source_file``
(for data sets spread over many files: the file of each point, a dictionary over the
files read); more per-point columns kept (e.g. Geolife's altitude).  Its ``lines``
are the 1-based physical line of each point in its file, and its ``roles`` name the
columns of :data:`ROLES` and the trajectory's, so the common reading path
(:func:`tracs.io.checkin_files.read_columns`) applies the loaders' checks, report
and time zones as to any file; ``data_loaders.load_geolife`` / ``load_tdrive`` /
``load_porto`` / ``iter_porto`` / ``load_cabspotting`` are the public loaders.

Line numbers count within each file, so for a folder of files :func:`finish`
adds notes naming the file and line of every kind of dropped row (the first
few), and of exact duplicates when asked.  Text files are parsed by Arrow,
several files per block (bounded by :data:`BLOCK_BYTES`), never one Python call
per point; the blocks are joined by :func:`concat`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .raw import FILE_COLUMN, RawColumns, files_of
from tracs._text import counted
from tracs.errors import InputError, TracsError


NAT = np.iinfo(np.int64).min
#: text parsed per Arrow call when reading many files (bounds the memory of a read)
BLOCK_BYTES = 64 << 20
#: locations shown per kind of row in the notes
SHOW = 5
#: the column of the table that plays each role of the reading path
ROLES = {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"}


def points(uid, time: np.ndarray, lat: np.ndarray, lon: np.ndarray, *, time_zone: str | None = "UTC",
           trajectory=None, trajectory_name: str | None = None, file: np.ndarray | None = None, files=(),
           extra: dict | None = None):
    """The Arrow table of a block of points, in the columns of the module docstring.

    Parameters
    ----------
    uid : pyarrow.Array of large_string
        User of each point, exactly as written.
    time : numpy.ndarray of int64
        Nanoseconds since the epoch (UTC, or the clock time written when ``time_zone`` is
        None); :data:`NAT` where the time is unreadable (a null timestamp).
    lat, lon : numpy.ndarray of float64
        Degrees; NaN where not a finite number.
    trajectory, trajectory_name : pyarrow.Array, str, optional
        Trajectory id of each point as written, and the column it is.
    file, files : numpy.ndarray of int32, list of str, optional
        Index into ``files`` (the files read, relative to what was given) of each point:
        the ``source_file`` column.
    extra : dict, optional
        More per-point columns (NumPy arrays), after the others.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    stamps = pa.array(time, type=pa.int64()).cast(pa.timestamp("ns", tz=time_zone))
    valid = pa.array(time != NAT)
    columns = {"uid": uid, "datetime": pc.if_else(valid, stamps, pa.scalar(None, stamps.type)),
               "lat": pa.array(lat), "lng": pa.array(lon)}
    if trajectory is not None:
        columns[trajectory_name] = trajectory
    if file is not None:
        columns[FILE_COLUMN] = pa.DictionaryArray.from_arrays(pa.array(file, pa.int32()),
                                                              pa.array(list(files), pa.string()))
    for name, values in (extra or {}).items():
        columns[name] = pa.array(values)
    return pa.table(columns)


def block(table, lines: np.ndarray, fmt: str, *, trajectory_name: str | None = None, bad_lines=None,
          bad_files=None, blank_lines=None) -> RawColumns:
    """A block of points read (:func:`points`) as the :class:`~tracs.io.raw.RawColumns` of format
    ``fmt``: ``lines`` of each point, the lines the parser skipped (``bad_lines``, in the files
    ``bad_files`` of a folder) and the blank ones; its ``roles`` are :data:`ROLES` and the
    trajectory's."""
    roles = dict(ROLES)
    if trajectory_name is not None:
        roles["traj"] = trajectory_name
    empty = np.empty(0, np.int64)
    return RawColumns(table, np.asarray(lines, dtype=np.int64), "line", fmt,
                      bad_lines=empty if bad_lines is None else np.asarray(bad_lines, dtype=np.int64),
                      blank_lines=empty if blank_lines is None else np.asarray(blank_lines, dtype=np.int64),
                      roles=roles, bad_files=None if bad_files is None else np.asarray(bad_files, dtype=np.int32))


def concat(parts: list) -> RawColumns:
    """One :class:`~tracs.io.raw.RawColumns` of the blocks of one read (same format, in order)."""
    import pyarrow as pa

    first = parts[0]
    if len(parts) == 1:
        return first

    def cat(name, dtype):
        values = [getattr(p, name) for p in parts]
        return None if values[0] is None else np.concatenate(values).astype(dtype, copy=False)

    table = pa.concat_tables([p.table for p in parts]).combine_chunks()
    return RawColumns(table, cat("lines", np.int64), first.position, first.fmt, bad_lines=cat("bad_lines", np.int64),
                      blank_lines=cat("blank_lines", np.int64), bad_files=cat("bad_files", np.int32),
                      notes=list(dict.fromkeys(n for p in parts for n in p.notes)), roles=dict(first.roles))


def one_file(raw: RawColumns) -> RawColumns:
    """``raw`` read from a single file: no file column (its lines alone say where a point is)."""
    raw.table = raw.table.drop_columns([FILE_COLUMN]) if FILE_COLUMN in raw.table.column_names else raw.table
    raw.bad_files = None
    return raw


def per_file(parts: list, path: Path, count: int, kind: str, note, empty: str) -> RawColumns:
    """One :class:`~tracs.io.raw.RawColumns` of the blocks read from ``count`` files of one user
    each (T-Drive, Cabspotting): ``note(files read)`` first, then how many files were empty
    (``empty`` says what that means); one file keeps no file column.  No block at all raises
    naming ``kind``."""
    if not parts:
        raise InputError(f"{path.name}: no point in {counted(count, kind)} (all empty)")
    raw = concat(parts)
    read = len(np.unique(files_of(raw.table)[0]))
    if count == 1:
        one_file(raw)
    raw.notes.append(note(read))
    if read < count:
        raw.notes.append(f"{counted(count - read, 'empty file')} ({empty})")
    return raw


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


def _located(lines: np.ndarray, where, rows: np.ndarray, limit: int = SHOW) -> str:
    """``"000/Trajectory/a.plt line 7, ..."``: where the first ``limit`` of ``rows`` are
    (``where``: ``(file of each point, file names)``, or None for one file)."""
    rows = np.asarray(rows)[:limit]
    if where is None:
        return ", ".join(f"line {int(lines[r])}" for r in rows)
    file, files = where
    return ", ".join(f"{files[int(file[r])]} line {int(lines[r])}" for r in rows)


def finish(raw: RawColumns, *, duplicates_note: bool = False) -> RawColumns:
    """Add the notes that name files: where the rows that will be dropped are (when the
    points come from several files, whose line numbers alone are ambiguous) and, with
    ``duplicates_note``, the exact duplicates (same user, time and position as an earlier
    row) and repeated (user, time) pairs, with their files and lines."""
    import pyarrow as pa

    check_rows = _row_checks()
    table, notes = raw.table, raw.notes
    uid = table.column("uid")
    time = table.column("datetime").cast(pa.int64()).fill_null(NAT).to_numpy()
    lat, lon = table.column("lat").to_numpy(), table.column("lng").to_numpy()
    rows = np.arange(len(raw.lines), dtype=np.int64)
    dropped = {}
    keep = check_rows(uid.is_null().to_numpy(), time == NAT, lat, lon, rows, dropped)
    where = files_of(raw.table)
    if where is not None and (dropped or len(raw.bad_lines)):
        for reason, at in dropped.items():
            notes.append(f"{counted(len(at), 'row')} dropped as {reason} {'is' if len(at) == 1 else 'are'} "
                         f"at: {_located(raw.lines, where, at)}" + (", ..." if len(at) > SHOW else ""))
        if len(raw.bad_lines):
            shown = ", ".join(f"{where[1][int(f)]} line {int(ln)}"
                              for f, ln in zip(raw.bad_files[:SHOW], raw.bad_lines[:SHOW]))
            notes.append(f"{counted(len(raw.bad_lines), 'line')} dropped as bad_fields "
                         f"{'is' if len(raw.bad_lines) == 1 else 'are'} at: {shown}"
                         + (", ..." if len(raw.bad_lines) > SHOW else ""))
    if duplicates_note and len(keep) > 1:
        users = pd.Series(pd.arrays.ArrowStringArray(uid.cast(pa.large_string())), copy=False)
        frame = pd.DataFrame({"u": pd.factorize(users.take(keep))[0], "t": time[keep], "y": lat[keep],
                              "x": lon[keep]})
        exact = keep[frame.duplicated().to_numpy()]
        same_time = keep[frame.duplicated(["u", "t"]).to_numpy()]
        repeated = np.setdiff1d(same_time, exact)
        if len(exact):
            notes.append(f"{counted(len(exact), 'exact duplicate row')} (the same user, time and position "
                         "as an earlier row; kept unless duplicates='drop_exact' or 'drop_user_time'): "
                         f"{_located(raw.lines, where, exact)}" + (", ..." if len(exact) > SHOW else ""))
        if len(repeated):
            notes.append(f"{counted(len(repeated), 'row')} with the user and time of an earlier row at "
                         f"another position (kept unless duplicates='drop_user_time'): "
                         f"{_located(raw.lines, where, repeated)}" + (", ..." if len(repeated) > SHOW else ""))
    return raw


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


def _row_checks():
    """The loaders' row checks (``check_rows``: bad user, bad time, bad coordinates, out of range)."""
    from .checkins import check_rows

    return check_rows
