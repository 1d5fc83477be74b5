"""Check-ins as plain arrays, grouped into trajectories: the light path of the command line.

:func:`read_points` reads a file with :func:`tracs.io.checkin_files.read_columns`, drops
and reports rows with the loaders' own checks (:mod:`tracs.io.checkins`:
``check_rows`` and ``make_report``), orders the rows by (user, trajectory
column, time) with a stable sort (ties keep their file order) and splits them
into trajectories — the steps of ``data_loaders.load_checkins`` and
``to_trajectories`` — into a :class:`tracs.Batch` whose every column is a NumPy
or Arrow array: no GeoDataFrame, no Python object per row.  A million check-ins take tens of
megabytes.  :func:`released_table` and :func:`write_released` write the released
rows back in the input's order through the writers of :mod:`tracs.io.formats`.
"""

from __future__ import annotations

import ctypes
import queue
import sys
import threading

import numpy as np

from .formats import output_format
from .checkin_files import read_columns
from .raw import files_of
from .write import _times_as_text, bounds, with_parameters
from ..errors import InputError
from ..trajectory_batch import Batch

__all__ = ["read_points", "released_table", "released_digest", "released_row_hashes", "write_released",
           "trajectory_ids", "row_labels", "metric_crs", "to_metric"]


def place_labels(word: str, positions, files=None) -> list:
    """How messages name rows: ``"line 7"``, or ``"000/a.plt line 7"`` with the file of each."""
    files = [""] * len(positions) if files is None else [f"{f} " for f in files]
    return [f"{f}{word} {int(v)}" for f, v in zip(files, positions)]


def with_points(labels, shared, ids, points) -> list:
    """``labels`` of rows whose line holds several points (``shared``) completed with their
    trajectory and point: ``"line 7 (trajectory T point 2)"`` (a Porto trip)."""
    return [f"{t} (trajectory {i} point {int(k)})" if s else t for t, i, k, s in zip(labels, ids, points, shared)]


def trajectory_ids(points: Batch):
    """The released trajectory id of each trajectory of a read batch: the input's own id (the
    ``traj`` column), or its number among its user's trajectories (``0, 1, …`` in (trajectory,
    time) order), which depends on that user's rows only."""
    traj = points.column("traj")
    if traj is not None:
        return traj.take(points.offsets[:-1]).reset_index(drop=True)
    return within_runs(points.first_of_key())


def row_labels(points: Batch, rows) -> list:
    """How messages name ``rows`` of a read batch: ``"line 7"``, ``"000/a.plt line 7"`` for a folder,
    and, for a line holding several points (a Porto trip), ``"line 7 (trajectory T point 2)"``."""
    rows = np.asarray(rows, dtype=np.int64)
    source, file, files = points.column("source"), points.column("file"), points.attrs["files"]
    names = None if file is None else [files[int(f)] for f in file[rows]]
    text = place_labels("line" if points.attrs["position"] == "line" else "row", source[rows], names)
    place = source if file is None else source * (len(files) + 1) + file
    _, first, count = np.unique(place, return_inverse=True, return_counts=True)
    shared = count[first[rows]] > 1
    if not shared.any():
        return text
    traj = np.searchsorted(points.offsets, rows, side="right") - 1
    ids = trajectory_ids(points)
    ids = ids[traj] if isinstance(ids, np.ndarray) else ids.take(traj).to_numpy()
    return with_points(text, shared, ids, rows - points.offsets[traj])


def metric_crs(points: Batch):
    """The local UTM zone of a batch in WGS84 (``tracs.geo.local_metric_crs``)."""
    from tracs.geo import local_metric_crs

    return local_metric_crs(points.coords[:, 0], points.coords[:, 1])


def to_metric(points: Batch, crs, *, workers: int = 1) -> Batch:
    """A batch in WGS84 in the metric ``crs`` (metres), projected on ``workers`` threads."""
    from tracs.geo import transform_xy

    x, y = transform_xy(points.coords[:, 0], points.coords[:, 1], 4326, crs, workers=workers)
    return points.with_coords(np.column_stack([x, y]), crs=crs)


def within_runs(first: np.ndarray) -> np.ndarray:
    """``out[t]``: the position of item ``t`` within its run, where ``first[t]`` starts a run.

    With ``first[t]`` true at each user's first trajectory (trajectories grouped by
    user), this numbers every user's trajectories ``0, 1, …``: a number that depends
    on that user's trajectories only, never on other users.
    """
    first = np.asarray(first, dtype=bool)
    t = np.arange(len(first), dtype=np.int64)
    return t - np.maximum.accumulate(np.where(first, t, 0)) if len(first) else t


def to_wgs84(xy: np.ndarray, crs, *, workers: int = 1) -> np.ndarray:
    """``(N, 2)`` metric coordinates in ``crs`` -> longitude, latitude, on ``workers`` threads."""
    from tracs.geo import transform_xy

    lon, lat = transform_xy(xy[:, 0], xy[:, 1], crs, 4326, workers=workers)
    return np.column_stack([lon, lat])


def _gap_ns(split_gap) -> int | None:
    if split_gap is None:
        return None
    import pandas as pd

    gap = pd.Timedelta(split_gap)
    if pd.isna(gap) or gap <= pd.Timedelta(0):
        raise InputError(f"split_gap must be a positive time span, got {split_gap!r}")
    return int(gap.value)


def read_points(path, *, split_gap=None, strict: bool = False, **options) -> Batch:
    """Read, check, order and group the check-ins of a file (see the module docstring).

    Returns a :class:`tracs.Batch` in (user, trajectory, time) order: WGS84
    longitude/latitude, the user ids as keys (int64, or text held by Arrow, exactly as
    read), the columns ``time`` (UTC ``datetime64[ns]``), ``source`` (the line, or 0-based
    row, of each row in the file), ``traj`` (the input's own trajectory id of each row,
    only when the trajectories are exactly the input's: a trajectory column and no time
    gap) and ``file`` (for a folder of files: the index into ``attrs["files"]`` of each
    row's file); ``attrs``: ``report`` (the :class:`~tracs.io.report.LoadReport`),
    ``position`` (``"line"`` or ``"row"``), ``others`` (the columns not read, not
    released) and ``files``.

    ``options`` are those of :func:`tracs.io.checkin_files.read_columns` (column names,
    ``input_format``, ``time_format``, ``dayfirst``, ``tz``, ``flags``).  A
    trajectory starts at each new user, each new value of the trajectory column
    (``traj``) and, with ``split_gap``, after a gap longer than it.  Repeats of a
    (user, time) pair are kept and reported, as the loaders do by default.
    Points with no time of their own (GPX) keep their place and a missing time.
    """
    import pandas as pd

    from .checkins import _user_ids, check_rows, make_report, user_order_keys

    gap = _gap_ns(split_gap)
    raw = read_columns(path, with_poi=False, **options)
    table, roles = raw.table, raw.roles
    lines = np.asarray(raw.lines, dtype=np.int64)
    lng, lat = raw.lonlat[:, 0], raw.lonlat[:, 1]
    time = table[roles["time"]].dt.as_unit("ns").array.asi8.view("datetime64[ns]")  # UTC; NaT stays NaT
    uid = table[roles["user"]]
    traj = table[roles["traj"]].reset_index(drop=True) if "traj" in roles else None
    traj_key = pd.factorize(traj, sort=True)[0] if traj is not None else None
    untimed = np.zeros(len(lines), bool) if raw.untimed is None else np.asarray(raw.untimed, dtype=bool)
    meta = dict(source=raw.source, fmt=raw.fmt, blank_lines=raw.blank_lines, position=raw.position,
                notes=raw.notes, column_names=raw.file_columns)
    if gap is not None and untimed.any():
        flag = (options.get("flags") or {}).get("split_gap", "split_gap=")
        meta["notes"] = [*meta["notes"], f"{flag} splits no trajectory at points without a time: they keep the "
                                         "file's order"]
    file, files = files_of(table) or (None, ())
    others = tuple(raw.unread)
    dropped = {}
    if len(raw.bad_lines):
        dropped["bad_fields"] = np.asarray(raw.bad_lines, dtype=np.int64)
    del raw, table
    _release_memory()
    n_rows = len(lines)
    if n_rows == 0:
        make_report(rows=0, kept=0, dropped=dropped, exact=[], repeated=[], duplicates="keep",
                    strict=strict, **_report_meta(meta))  # raises
    keep = check_rows(uid.isna().to_numpy(), np.isnat(time), lat, lng, lines, dropped)
    if len(keep) == 0:  # every row dropped: the report says which and why (raises)
        make_report(rows=n_rows, kept=0, dropped=dropped, exact=[], repeated=[], duplicates="keep",
                    strict=strict, **_report_meta(meta))
    if len(keep) < n_rows:
        uid = uid.take(keep).reset_index(drop=True)
        time, lat, lng, lines = time[keep], lat[keep], lng[keep], lines[keep]
        traj_key = None if traj_key is None else traj_key[keep]
        traj = None if traj is None else traj.take(keep).reset_index(drop=True)
        untimed = untimed[keep]
        file = None if file is None else file[keep]
    uid = _user_ids(uid)
    ukey = user_order_keys(uid)
    tkey = time.view(np.int64)
    order = _row_order(tkey, traj_key, ukey)
    if not np.array_equal(order, np.arange(len(order))):
        uid = uid.take(order).reset_index(drop=True)
        ukey, tkey, lat, lng, lines, time = ukey[order], tkey[order], lat[order], lng[order], lines[order], time[order]
        traj_key = None if traj_key is None else traj_key[order]
        traj = None if traj is None else traj.take(order).reset_index(drop=True)
        untimed = untimed[order]
        file = None if file is None else file[order]
    same_user = np.r_[False, ukey[1:] == ukey[:-1]]
    same = same_user & np.r_[False, tkey[1:] == tkey[:-1]]
    same &= ~untimed & ~np.r_[False, untimed[:-1]]  # an ordering time is no time: never a repeat
    exact = same & np.r_[False, (lat[1:] == lat[:-1]) & (lng[1:] == lng[:-1])]
    report = make_report(rows=n_rows, kept=len(lines), dropped=dropped, exact=lines[exact],
                         repeated=lines[same & ~exact], duplicates="keep", strict=strict,
                         untimed=lines[untimed], **_report_meta(meta))
    new = ~same_user
    if traj_key is not None:
        new[1:] |= traj_key[1:] != traj_key[:-1]
    if gap is not None:
        new[1:] |= np.diff(tkey) > gap
    offsets = np.r_[np.flatnonzero(new), len(lines)].astype(np.int64)
    if untimed.any():  # ordered by their ordering time; released without a time
        time = time.copy()
        time[untimed] = np.datetime64("NaT")
    return read_batch(np.column_stack([lng, lat]), offsets, uid, time, lines, report=report,
                      position=meta["position"], others=others, traj=traj if gap is None else None, file=file,
                      files=tuple(files))


def read_batch(lonlat, offsets, uid, time, source, *, report=None, position: str = "row", others=(), traj=None,
               file=None, files=()) -> Batch:
    """The batch of rows :func:`read_points` gives and :func:`write_released` takes, from its arrays:
    WGS84 ``lonlat``, ``offsets``, the user id ``uid`` of each row (the keys), its ``time`` and
    ``source`` position, the input's trajectory ids ``traj`` and the ``file`` of each row when
    known, and the facts of the file (``report``, ``position``, ``others``, ``files``)."""
    columns = {"time": time, "source": source}
    if traj is not None:
        columns["traj"] = traj
    if file is not None:
        columns["file"] = file
    return Batch(lonlat, offsets, keys=uid, columns=columns, crs="EPSG:4326",
                 attrs={"report": report, "position": position, "others": tuple(others), "files": tuple(files)})


def _row_order(tkey: np.ndarray, traj_key, ukey: np.ndarray) -> np.ndarray:
    """``np.lexsort`` by user, then trajectory, then time (ties keep the file's order).

    When the file is already in time order (as check-in files usually are) and has
    no trajectory column, a stable sort by user alone gives the same permutation,
    and user keys spanning fewer than 2^16 values sort in linear time (numpy's
    radix sort of 16-bit keys).
    """
    if traj_key is None and len(tkey) and bool(np.all(tkey[1:] >= tkey[:-1])):
        span = ukey - ukey.min()
        if span.max() < 1 << 16:
            span = span.astype(np.uint16)
        return np.argsort(span, kind="stable")
    return np.lexsort([tkey] + ([traj_key] if traj_key is not None else []) + [ukey])


def _report_meta(meta: dict) -> dict:
    return dict(source=meta["source"], fmt=meta["fmt"], blank_lines=meta["blank_lines"],
                position=meta["position"], notes=meta["notes"], column_names=meta["column_names"])


def _release_memory() -> None:
    """Give back to the system the memory freed after a read: Arrow's allocator keeps it
    for reuse, and so does the C library's (``malloc_trim`` where it exists)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:  # glibc by its usual name; ctypes.util.find_library would run ldconfig (0.1-0.2 s)
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def released_table(points: Batch, released_lonlat, eps_point, eps_traj, *, text_times: bool, rows=None,
                   input_order_rows: bool = True, keep_lines: bool = False, budget: bool = True, ids=None):
    """The rows to publish, in the input file's order (the columns of ``tracs perturb``).

    Every column of a user's rows depends only on that user's rows, the public
    parameters and the seed: ``uid`` (exactly as read), ``trajectory``
    (:func:`trajectory_ids`: the input's own id, or the number of the
    trajectory among its user's), ``point`` (the row's 0-based position in its
    released trajectory: with ``uid`` and ``trajectory``, the key that pairs a
    released row with its input row), ``datetime``, the released ``lat`` / ``lng`` and,
    with ``budget``, ``epsilon_point`` / ``epsilon_trajectory`` (the ε spent: with a
    budget per point, ``epsilon_trajectory`` is ``n`` times it for a trajectory of
    ``n`` points, and with a budget per trajectory ``epsilon_point`` is ``1 / n`` of
    it, so both reveal each trajectory's length, as its rows do).  ``keep_lines``
    adds ``source_line`` / ``source_row``, the row's position in the input file,
    which depends on the rows of every user above it, and for a folder
    ``source_file``, the file of the folder it is in.  True coordinates and venue
    ids are never included.

    ``rows`` (positions in the input's order, default all) builds one batch of them;
    ``input_order_rows=False`` keeps the order the points were perturbed in (user,
    trajectory, time), as lines are written.  ``ids``: :func:`trajectory_ids` when already
    computed (a writer of many batches computes them once).
    """
    import pyarrow as pa

    order = input_order(points) if input_order_rows else np.arange(points.n_points)
    if rows is not None:
        order = order[rows]
    traj = np.searchsorted(points.offsets, order, side="right") - 1
    uid = points.keys.take(order)
    ids = trajectory_ids(points) if ids is None else ids
    ids = ids[traj] if isinstance(ids, np.ndarray) else ids.take(traj)
    times = pa.array(points.column("time")[order]).cast(pa.timestamp("ns", tz="UTC"))
    columns = {"uid": _arrow(uid), "trajectory": _arrow(ids), "point": order - points.offsets[traj],
               "datetime": _times_as_text(times) if text_times else times}
    if keep_lines:
        file = points.column("file")
        if file is not None:
            columns["source_file"] = pa.DictionaryArray.from_arrays(
                pa.array(file[order], pa.int32()), pa.array(list(points.attrs["files"]), pa.string()))
        columns["source_line" if points.attrs["position"] == "line" else "source_row"] = \
            points.column("source")[order]
    columns["lat"], columns["lng"] = released_lonlat[order, 1], released_lonlat[order, 0]
    if budget:
        columns["epsilon_point"] = np.asarray(eps_point, dtype=np.float64)[order]
        columns["epsilon_trajectory"] = np.asarray(eps_traj, dtype=np.float64)[order]
    return pa.table(columns)


def released_digest(points: Batch, released_lonlat, fmt=None, geometry: str = "points") -> str:
    """The digest of the released rows (:mod:`tracs.io.digest`), from the columns
    :func:`released_table` gives every writer, as the file written in the format ``fmt``
    (a :class:`~tracs.io.formats.Format`; None: one that keeps every value) with
    ``geometry`` keeps them: times to its ``time_ns`` (lines: their vertex times, to the
    microsecond); a GPX release gives its ids back as written (its tracks' ``<extensions>``).
    The rows are taken in the order they were perturbed in (the digest does not depend on
    it), and the digest equals that of the written file read back, without reading it."""
    from .digest import combine

    return combine(*released_row_hashes(points, released_lonlat, fmt, geometry))


def released_row_hashes(points: Batch, released_lonlat, fmt=None, geometry: str = "points"):
    """``(names, hashes)``: the digest's columns present and the row digests
    (:func:`tracs.io.digest.row_hashes`) of the rows :func:`released_digest` covers, so that
    a release written in parts combines them (:func:`tracs.io.digest.combine`, or
    :class:`tracs.io.digest.SpilledRowHashes` when they do not fit in memory)."""
    import pyarrow as pa

    from .digest import row_hashes

    gpx = getattr(fmt, "key", None) == "gpx"
    table = released_table(points, released_lonlat, None, None, text_times=False, input_order_rows=gpx,
                           budget=False)
    columns = {name: table.column(name) for name in table.column_names}
    step = 1_000 if geometry == "lines" else getattr(fmt, "time_ns", 1)
    if step > 1:
        times = columns["datetime"].cast(pa.timestamp("ns", tz="UTC"))
        ns = times.cast(pa.int64()).fill_null(0).to_numpy()
        columns["datetime"] = pa.array(ns - ns % step, mask=times.is_null().to_numpy()).cast(times.type)
    return list(columns), row_hashes(columns)


def _arrow(values):
    """A pandas Series or NumPy array as an Arrow array, keeping its type (text stays text)."""
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        return pa.array(values)
    return pa.array(values.array) if not isinstance(values.dtype, np.dtype) else pa.array(values.to_numpy())


def input_order(points: Batch) -> np.ndarray:
    """Positions of the rows of a read batch in the input's order: by line (or row), and for a
    folder file by file, then line."""
    source, file = points.column("source"), points.column("file")
    return np.argsort(source, kind="stable") if file is None else np.lexsort([source, file])


def write_released(points: Batch, released_lonlat, eps_point, eps_traj, path, fmt=None, *,
                   progress=None, geometry: str = "points", keep_lines: bool = False, budget: bool = True,
                   parameters: str | None = None) -> None:
    """Write the released rows (:func:`released_table`) of a read batch (:func:`read_points`) in the
    input's order, in the format of ``fmt`` (a :class:`~tracs.io.formats.Format`; default: the one
    ``path``'s extension names).

    Formats whose writer takes batches (``batch_rows``: CSV, TSV, GeoParquet) get them
    built one at a time, while the previous one is written, so the output never exists
    whole in memory; the others get one table.  ``geometry="lines"`` writes one line
    per trajectory (formats whose ``geometry`` allows it), from one table in the order
    the points were perturbed in.  ``keep_lines`` and ``budget``: the optional columns
    of :func:`released_table`.  ``parameters``: the release's public parameters (JSON text),
    stored in the file by the formats that hold metadata (:mod:`tracs.io.parameters`).
    """
    columns = dict(keep_lines=keep_lines, budget=budget, ids=trajectory_ids(points))
    fmt = output_format(path, geometry=geometry) if fmt is None else fmt
    if geometry == "lines":
        table = released_table(points, released_lonlat, eps_point, eps_traj, text_times=False,
                               input_order_rows=False, **columns)
        fmt.writer()([with_parameters(table, parameters)], path, bbox=bounds(released_lonlat), progress=progress, geometry="lines")
        return
    n = points.n_points
    size = fmt.batch_rows or max(n, 1)
    order = input_order(points)
    tables = (with_parameters(released_table(points, released_lonlat, eps_point, eps_traj,
                                             text_times=fmt.text_times, rows=order[start:start + size],
                                             input_order_rows=False, **columns), parameters)
              for start in range(0, n, size))
    fmt.writer()(_ahead(tables) if fmt.batch_rows else tables, path, bbox=bounds(released_lonlat),
                 progress=progress)


class _Failed:
    def __init__(self, error):
        self.error = error


def _ahead(items, depth: int = 2):
    """Yield ``items``, computing the next ones in a background thread (at most ``depth`` ahead):
    batches are built while the previous one is written."""
    pending = queue.Queue(depth)
    done = object()

    def work():
        try:
            for item in items:
                pending.put(item)
            pending.put(done)
        except BaseException as exc:  # noqa: BLE001 - raised again in the consumer
            pending.put(_Failed(exc))

    threading.Thread(target=work, name="tracs-batches", daemon=True).start()
    while True:
        item = pending.get()
        if item is done:
            return
        if isinstance(item, _Failed):
            raise item.error
        yield item
