"""The Porto taxi trips of the ECML/PKDD 2015 challenge (``train.csv``), whole or in chunks.

Layout of the data set: a CSV with a header, one row per trip, every field quoted::

    "TRIP_ID","CALL_TYPE","ORIGIN_CALL","ORIGIN_STAND","TAXI_ID","TIMESTAMP","DAY_TYPE","MISSING_DATA","POLYLINE"
    "1372636858620000589","C","","","20000589","1372636858","A","False","[[-8.618643,41.141412],[-8.618499,41.141376]]"

``TIMESTAMP`` is the trip's start in Unix seconds, ``POLYLINE`` its GPS points as
``[[lon,lat],...]``, one every 15 s from the start.  The full file has 1.7 million
trips, about 83 million points, 1.9 GB.

Read here (:func:`read_porto`, the reader of the format table;
:func:`read_porto_blocks`, its reader block by block; the public loaders are
``data_loaders.load_porto`` and ``data_loaders.iter_porto``): the user id is
``TAXI_ID`` and the trajectory id (``trip_id``) is
``TRIP_ID``, both exactly as written (spaces included; an empty field is missing,
no other value); point ``k`` of a trip is at ``TIMESTAMP + 15 k``
seconds (UTC).  A trip with an empty ``POLYLINE`` (``[]``) has no point: the
notes list its line.  A trip flagged ``MISSING_DATA`` = True (points missing
from its polyline, so later times are early) is kept and listed in the notes.  A
``POLYLINE`` that is not a list of ``[lon,lat]`` pairs is one dropped row
(``bad_coords``) at its line; a bad ``TIMESTAMP`` drops the trip's points as
``bad_time``.  Not kept: ``CALL_TYPE``, ``ORIGIN_CALL``, ``ORIGIN_STAND``,
``DAY_TYPE`` (trip attributes; the notes say so).

The file is read in blocks of text (``chunk_bytes``, or the ``chunk_bytes`` of the
:class:`~tracs.io.raw.ReadRequest`; :func:`read_porto_blocks`): memory is bounded by
the block, not the file.  Line numbers
are the file's physical lines (the header is line 1, one trip per line).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .formats import binary_at
from tracs._text import counted

from ..errors import InputError
from .raw import RawColumns
from .tracks import NAT, SHOW, block, check_fits_in_memory, concat, finish, not_utf8, nul_byte, numbers, points

__all__ = ["CHUNK_BYTES", "PORTO_COLUMNS", "POINT_SECONDS", "read_porto", "read_porto_blocks"]

#: the columns of train.csv, in order
PORTO_COLUMNS = ("TRIP_ID", "CALL_TYPE", "ORIGIN_CALL", "ORIGIN_STAND", "TAXI_ID", "TIMESTAMP", "DAY_TYPE",
                 "MISSING_DATA", "POLYLINE")
_READ = ("TRIP_ID", "TAXI_ID", "TIMESTAMP", "MISSING_DATA", "POLYLINE")
#: seconds between two points of a trip
POINT_SECONDS = 15
#: text per block of the streaming read
CHUNK_BYTES = 8 << 20


def _header(path: Path) -> list:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        first = fh.readline().lstrip("\ufeff")
    names = [f.strip() for f in next(csv.reader([first]))] if first.strip() else []
    missing = [c for c in _READ if c not in names]
    if missing:
        raise InputError(f"{path.name} is not a Porto taxi file: no column {', '.join(missing)} in its header "
                         f"(expected {', '.join(PORTO_COLUMNS)}); found: {', '.join(names) or '(nothing)'} "
                         "(input_format='checkins' / --input-format checkins reads it as a plain table)")
    return names


def _arrow_pairs(column):
    """``(lonlat (P, 2), pairs per trip, empty, bad)`` through Arrow's text functions and cast:
    for a batch holding a number the compiled parser leaves to Arrow (an exponent, more than 15
    digits)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    poly = pc.utf8_trim_whitespace(column).fill_null("")
    inner = pc.replace_substring(pc.replace_substring(poly, "[", ""), "]", "")
    parts = pc.split_pattern(inner, ",")
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False).astype(np.int64)
    opens = pc.count_substring(poly, "[").to_numpy(zero_copy_only=False).astype(np.int64)
    closes = pc.count_substring(poly, "]").to_numpy(zero_copy_only=False).astype(np.int64)
    empty = pc.equal(poly, "[]").to_numpy(zero_copy_only=False)
    pairs = counts // 2
    valid = ~empty & (counts % 2 == 0) & (opens == pairs + 1) & (closes == pairs + 1) & \
        pc.starts_with(poly, "[[").to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(parts) if len(poly) else pa.array([], pa.string())
    values = numbers(flat.filter(pa.array(np.repeat(valid, counts))))  # only the pairs of valid trips
    return values.reshape(-1, 2), np.where(valid, pairs, 0), empty, ~empty & ~valid


def _pairs(column):
    """``(lonlat (P, 2), pairs per trip, empty, bad)`` of a column of polylines: the compiled
    parser (:mod:`tracs.io.polyline_kernel`), and Arrow for the trips it leaves to Arrow."""
    import pyarrow as pa

    from .polyline_kernel import BAD, EMPTY, SLOW, parse_polylines

    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    lonlat, counts, status = parse_polylines(column)
    empty, bad, slow = status == EMPTY, status == BAD, status == SLOW
    if slow.any():
        xy, slow_counts, slow_empty, slow_bad = _arrow_pairs(column.filter(pa.array(slow)))
        which = np.flatnonzero(slow)
        counts[which], empty[which], bad[which] = slow_counts, slow_empty, slow_bad
        from_arrow = np.repeat(slow, counts)
        merged = np.empty((len(from_arrow), 2))
        merged[~from_arrow], merged[from_arrow] = lonlat, xy
        lonlat = merged
    return lonlat, counts, empty, bad


def _trip_points(batch, trip_lines: np.ndarray) -> tuple:
    """``(raw, marks)``: the points of a batch of trips (one row per point, a malformed polyline
    as one row without coordinates; vectorised over the batch) and the lines of its trips by kind
    (empty, flagged ``MISSING_DATA``, bad polyline, every trip)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lonlat, pairs, empty, bad = _pairs(batch.column("POLYLINE"))
    valid = ~empty & ~bad
    n_points = pairs + bad
    total = int(n_points.sum())
    trip = np.repeat(np.arange(len(n_points)), n_points)
    first = np.cumsum(n_points) - n_points
    k = np.arange(total, dtype=np.int64) - first[trip]
    lon, lat = np.full(total, np.nan), np.full(total, np.nan)
    good = valid[trip]
    lon[good], lat[good] = lonlat[:, 0], lonlat[:, 1]

    seconds = numbers(pc.utf8_trim_whitespace(batch.column("TIMESTAMP")))
    whole = np.isfinite(seconds) & (seconds == np.round(seconds)) & (np.abs(seconds) < 9e9)
    start = np.where(whole, np.nan_to_num(seconds), 0).astype(np.int64) * 1_000_000_000
    time = np.where(whole[trip], start[trip] + k * (POINT_SECONDS * 1_000_000_000), NAT)

    def text(name):  # as written: " 20000589" is not "20000589"; an empty field is missing
        values = batch.column(name).cast(pa.large_string())
        return pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.large_string()), values)

    index = pa.array(trip)
    missing = pc.equal(pc.utf8_lower(pc.utf8_trim_whitespace(batch.column("MISSING_DATA"))), "true") \
        .fill_null(False).to_numpy(zero_copy_only=False)
    rows = points(text("TAXI_ID").take(index), time, lat, lon, trajectory=text("TRIP_ID").take(index),
                  trajectory_name="trip_id")
    marks = {"empty": trip_lines[empty], "missing_data": trip_lines[missing], "bad_polyline": trip_lines[bad],
             "trips": trip_lines}
    return block(rows, trip_lines[trip], "porto-csv", trajectory_name="trip_id"), marks


def _batches(path: Path, chunk_bytes: int):
    """``(batch, lines of its rows, lines skipped by the parser, blank lines)`` of ``path``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    names = _header(path)
    bad = []
    reader = pcsv.open_csv(
        path,
        read_options=pcsv.ReadOptions(use_threads=False, block_size=int(chunk_bytes), column_names=names,
                                      skip_rows=1),
        parse_options=pcsv.ParseOptions(ignore_empty_lines=False,
                                        invalid_row_handler=lambda row: bad.append(row.number) or "skip"),
        convert_options=pcsv.ConvertOptions(include_columns=list(_READ), column_types={c: pa.string() for c in _READ},
                                            null_values=[""], strings_can_be_null=True,
                                            quoted_strings_can_be_null=False))
    # the parser reports a skipped line when it reads the block holding it, which may be a block
    # ahead of the batch being yielded: a batch is numbered once the next one is read (or the file
    # ends), its rows taking the lines from ``next_line`` on that are not skipped
    next_line, pending, held = 2, np.empty(0, np.int64), None

    def number(batch, final):
        nonlocal next_line, pending
        pending = np.unique(np.r_[pending, np.asarray(bad, dtype=np.int64)])
        bad.clear()
        candidates = np.arange(next_line, next_line + batch.num_rows + len(pending), dtype=np.int64)
        lines = candidates[~np.isin(candidates, pending)][:batch.num_rows]
        last = int(lines[-1]) if len(lines) else next_line - 1
        mine = pending if final else pending[pending <= last]
        pending = pending[len(mine):]
        next_line = last + 1
        blank = np.ones(batch.num_rows, dtype=bool)
        for column in batch.columns:
            blank &= column.is_null().to_numpy(zero_copy_only=False)
        if blank.any():
            batch = batch.filter(pa.array(~blank))
        return batch, lines[~blank], mine, lines[blank]

    for batch in reader:
        if held is not None:
            yield number(held, False)
        held = batch
    if held is not None:
        yield number(held, True)


def porto_notes(raw: RawColumns, marks: dict) -> RawColumns:
    """Add the notes of a Porto read (trips, empty and flagged ones, columns not kept: ``marks``,
    the lines of each kind of trip) and the file checks."""
    def where(lines):
        return ", ".join(str(int(v)) for v in lines[:SHOW]) + (", ..." if len(lines) > SHOW else "")

    trips = len(marks["trips"]) + len(raw.bad_lines)
    raw.notes.append(f"Porto: {counted(trips, 'trip')}, one trajectory per TRIP_ID (trip_id), user TAXI_ID, "
                     f"a point every {POINT_SECONDS} s from TIMESTAMP (UTC)")
    if len(marks["empty"]):
        raw.notes.append(f"{counted(len(marks['empty']), 'trip')} with an empty POLYLINE (no point to read): "
                         f"lines {where(marks['empty'])}")
    if len(marks["missing_data"]):
        raw.notes.append(f"{counted(len(marks['missing_data']), 'trip')} flagged MISSING_DATA=True (points missing "
                         f"from the polyline, so the times after a gap are early; kept): lines "
                         f"{where(marks['missing_data'])}")
    if len(marks["bad_polyline"]):
        raw.notes.append(f"{counted(len(marks['bad_polyline']), 'trip')} whose POLYLINE is not a list of "
                         f"[lon,lat] pairs (one bad_coords row each): lines {where(marks['bad_polyline'])}")
    raw.notes.append("not kept: CALL_TYPE, ORIGIN_CALL, ORIGIN_STAND, DAY_TYPE (trip attributes)")
    return finish(raw)


def _blocks(path, chunk_bytes: int):
    """``(raw, marks)`` of each block of about ``chunk_bytes`` of text of a Porto file (whole
    trips), in file order, without notes (:func:`_trip_points`).

    Raises
    ------
    TrackFileError
        Bytes that are not UTF-8, or a NUL byte in an id, naming the file, line and byte offset.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, (int, np.integer)) or chunk_bytes < 1 << 12:
        raise InputError(f"chunk_bytes must be an int >= 4096, got {chunk_bytes!r}")
    batches = _batches(path, chunk_bytes)
    while True:
        try:
            batch, lines, skipped, blank = next(batches)
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            if "UTF8" not in str(exc):
                raise
            raise _not_text(path) from None
        for name in ("TAXI_ID", "TRIP_ID"):
            if pc.any(pc.match_substring(batch.column(name), "\x00")).as_py():
                raise _not_text(path) from None
        raw, marks = _trip_points(batch, lines)
        raw.bad_lines, raw.blank_lines = skipped, blank
        yield raw, marks


def _chunk_bytes(request) -> int:
    """The block size a read request asks for (:data:`CHUNK_BYTES` by default)."""
    return CHUNK_BYTES if request is None or request.chunk_bytes is None else request.chunk_bytes


def read_porto_blocks(path, request=None):
    """The block reader of the format table: the points of a Porto file as a
    :class:`~tracs.io.raw.RawColumns` per block of about ``request.chunk_bytes`` of text
    (default :data:`CHUNK_BYTES`; whole trips), in file order, each with its own notes; a block
    holding only trips without points gives nothing.  Memory is bounded by the block.

    Raises
    ------
    TrackFileError
        Bytes that are not UTF-8, or a NUL byte in an id, naming the file, line and byte offset.
    """
    for raw, marks in _blocks(path, _chunk_bytes(request)):
        if len(raw.lines):
            yield porto_notes(raw, marks)


def _not_text(path: Path):
    """The error naming the first NUL byte or byte that is not UTF-8 of a Porto file (file, line,
    byte offset)."""
    offset, line = binary_at(path) or (0, 1)
    with open(path, "rb") as fh:
        fh.seek(offset)
        byte = fh.read(1)
    return nul_byte(path.name, line, offset) if byte == b"\x00" else not_utf8(path.name, byte, offset, line)


#: bytes of text per point of a Porto file (``[-8.618643,41.141412],``)
TEXT_BYTES_PER_POINT = 22


def read_porto(path, request=None) -> RawColumns:
    """The reader of the format table: every point of a Porto file as a
    :class:`~tracs.io.raw.RawColumns` (:mod:`tracs.io.tracks`), read in blocks of
    ``request.chunk_bytes`` of text (default :data:`CHUNK_BYTES`), with the notes.

    Refused up front (:class:`~tracs.io.tracks.NotEnoughMemoryError`) when the file would
    need more memory than is available (:func:`~tracs.io.tracks.check_fits_in_memory`).
    """
    path = Path(path)
    if path.is_file():
        check_fits_in_memory(path.stat().st_size, TEXT_BYTES_PER_POINT, path.name,
                     "read it in blocks (data_loaders.iter_porto, tracs.io.porto.read_porto_blocks) or "
                     "split the file by lines (the header first)")
    parts = list(_blocks(path, _chunk_bytes(request)))
    if not parts:
        raise InputError(f"{Path(path).name} has no trip rows")
    marks = {kind: np.concatenate([m[kind] for _, m in parts]) for kind in parts[0][1]}
    return porto_notes(concat([raw for raw, _ in parts]), marks)
