"""The public trajectory data sets: Geolife, T-Drive, the Porto taxi trips and Cabspotting.

The loaders' form (``data_loaders`` module docstring) for each, read by the
readers of ``tracs.io`` (:mod:`tracs.io.geolife`, :mod:`tracs.io.tdrive`,
:mod:`tracs.io.porto`, :mod:`tracs.io.cabspotting`, which say what each reads and
reports): user ids exactly
as written, one trajectory per Geolife file and per Porto trip (its id in
``attrs["trajectory_column"]``, for ``to_trajectories(frame, by=...)``), every
dropped row listed with its line (and, for folders of files, its file in the
notes), T-Drive's duplicates listed.  :func:`iter_porto` reads the 1.9 GB Porto
file block by block in bounded memory.  Every file is read by the reader of the format
table (:mod:`tracs.io.formats`): through :func:`tracs.io.checkin_files.read_checkins`, or,
for the Porto file, that entry's reader and block reader with the block size in the
request.
"""

from __future__ import annotations

import pandas as pd

from pathlib import Path

from tracs.io.checkins import build_checkins, check_duplicates_policy, check_strict
from tracs.io.checkin_files import read_checkins
from tracs.io.formats import format_of
from tracs.io.raw import ReadRequest

__all__ = ["iter_porto", "load_cabspotting", "load_geolife", "load_porto", "load_tdrive"]


def load_geolife(root, *, duplicates: str = "keep", strict: bool = False):
    """Load Geolife trajectories: one trajectory per ``.plt`` file.

    Parameters
    ----------
    root : str or os.PathLike
        The folder holding ``Data`` (or ``Data`` itself, or one user's folder), or one
        ``.plt`` file.
    duplicates : {"keep", "drop_exact", "drop_user_time"}
    strict : bool
        As for every loader.

    Returns
    -------
    geopandas.GeoDataFrame
        ``uid`` (the user folder's name, text as written: ``"000"``), ``datetime``
        (UTC), ``trajectory_id`` (the ``.plt`` file's stem), ``source_file`` (when
        several files), ``altitude_ft``, ``source_line`` (the line in its file) and
        WGS84 points, in (user, time) order, with ``attrs["report"]`` (drops with
        their lines; the notes name their files) and
        ``attrs["trajectory_column"] == "trajectory_id"``.

    Raises
    ------
    FileNotFoundError, ValueError, DroppedRowsError
    """
    return read_checkins(root, input_format="geolife", keep_columns=True,
                         duplicates=check_duplicates_policy(duplicates), strict=check_strict(strict))


def load_tdrive(path_or_dir, *, tz: str = "UTC", duplicates: str = "keep", strict: bool = False):
    """Load T-Drive taxi points: one user per taxi.

    Parameters
    ----------
    path_or_dir : str or os.PathLike
        One ``<taxi id>.txt`` file or the folder holding them.
    tz : str, default "UTC"
        Timezone of the times (the files carry none): a name (``"Asia/Shanghai"``) or an
        offset (``"+08:00"``).
    duplicates : {"keep", "drop_exact", "drop_user_time"}
        Exact duplicates and repeated (taxi, time) pairs are always listed (report and
        notes, with files and lines); ``"keep"`` keeps them.
    strict : bool

    Returns
    -------
    geopandas.GeoDataFrame
        ``uid`` (the taxi id as written), ``datetime`` (UTC), ``source_file`` (when
        several files), ``source_line`` and WGS84 points, in (taxi, time) order, with
        ``attrs["report"]``.

    Raises
    ------
    FileNotFoundError, ValueError, DroppedRowsError
    """
    return read_checkins(path_or_dir, input_format="tdrive", keep_columns=True, tz=tz,
                         duplicates=check_duplicates_policy(duplicates), strict=check_strict(strict))


def load_cabspotting(path_or_dir, *, duplicates: str = "keep", strict: bool = False):
    """Load Cabspotting taxi points: one user per cab (``new_abboip.txt`` is cab ``abboip``).

    Parameters
    ----------
    path_or_dir : str or os.PathLike
        One ``new_<cab>.txt`` file or the folder holding them.
    duplicates : {"keep", "drop_exact", "drop_user_time"}
        As for :func:`load_tdrive`.
    strict : bool

    Returns
    -------
    geopandas.GeoDataFrame
        ``uid`` (the cab), ``datetime`` (UTC), ``occupancy``, ``source_file`` (when several
        files), ``source_line`` and WGS84 points, in (cab, time) order, with ``attrs["report"]``.

    Raises
    ------
    FileNotFoundError, ValueError, DroppedRowsError
    """
    return read_checkins(path_or_dir, input_format="cabspotting", keep_columns=True,
                         duplicates=check_duplicates_policy(duplicates), strict=check_strict(strict))


def _porto(path, chunk_bytes):
    """The format table's entry of the Porto layout and the request of a read in blocks of
    ``chunk_bytes`` of text (None: the reader's default)."""
    return format_of(path, "porto"), ReadRequest(plan=None, input_format="porto", chunk_bytes=chunk_bytes)


def _frame(raw, path, duplicates, strict):
    """The loaders' frame of the Porto reader's columns (:class:`tracs.io.raw.RawColumns`;
    times already UTC)."""
    table, traj = raw.table, raw.roles["traj"]
    frame = build_checkins(uid=_text(table.column("uid")), time=table.column("datetime").to_pandas(),
                           lat=table.column("lat").to_pandas(), lng=table.column("lng").to_pandas(),
                           lines=raw.lines, source=Path(path).name, fmt=raw.fmt,
                           extra={traj: _text(table.column(traj))}, bad_lines=raw.bad_lines,
                           blank_lines=raw.blank_lines, notes=raw.notes, duplicates=duplicates, strict=strict)
    frame.attrs["trajectory_column"] = traj
    return frame


def _text(column) -> pd.Series:
    """An Arrow column of text as a pandas Series, exactly as written (Arrow-backed)."""
    return pd.Series(pd.arrays.ArrowStringArray(column), copy=False)


def load_porto(path, *, duplicates: str = "keep", strict: bool = False, chunk_bytes: int | None = None):
    """Load the Porto taxi trips (ECML/PKDD 2015 ``train.csv``): one trajectory per trip.

    Parameters
    ----------
    path : str or os.PathLike
    duplicates : {"keep", "drop_exact", "drop_user_time"}
    strict : bool
    chunk_bytes : int, optional
        Text parsed per block (default :data:`tracs.io.porto.CHUNK_BYTES`); the whole
        file is returned all the same: for bounded memory use :func:`iter_porto`.

    Returns
    -------
    geopandas.GeoDataFrame
        ``uid`` (``TAXI_ID`` as written), ``datetime`` (UTC: ``TIMESTAMP`` + 15 s per
        point), ``trip_id`` (``TRIP_ID`` as written), ``source_line`` (the trip's line)
        and WGS84 points, in (taxi, time) order, with ``attrs["report"]`` and
        ``attrs["trajectory_column"] == "trip_id"``.

    Raises
    ------
    FileNotFoundError, ValueError, DroppedRowsError
    """
    duplicates, strict = check_duplicates_policy(duplicates), check_strict(strict)
    fmt, request = _porto(path, chunk_bytes)
    return _frame(fmt.reader()(path, request), path, duplicates, strict)


def iter_porto(path, *, chunk_bytes: int | None = None, duplicates: str = "keep", strict: bool = False):
    """Read a Porto file in chunks of whole trips, in bounded memory.

    Yields the loaders' frame (as :func:`load_porto`) of each block of about
    ``chunk_bytes`` of text (default 8 MB), each with its own ``attrs["report"]``
    (line numbers are the file's).  Stably sorting the concatenated chunks by (uid,
    datetime) gives :func:`load_porto`'s frame; duplicates are found within a chunk
    only.  A block holding only trips without points yields nothing.
    """
    duplicates, strict = check_duplicates_policy(duplicates), check_strict(strict)
    fmt, request = _porto(path, chunk_bytes)
    for raw in fmt.block_reader()(path, request):
        yield _frame(raw, path, duplicates, strict)
