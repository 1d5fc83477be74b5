"""Read back a file ``tracs perturb`` wrote, in any format of the table (:mod:`tracs.io.formats`).

:func:`read_release` gives the released rows in the file's order as a pandas
frame: ``lat``, ``lng`` (WGS84) and, when the file has them, ``uid``,
``trajectory``, ``point``, ``datetime``, ``source_file``, ``source_line`` /
``source_row``, ``epsilon_point``, ``epsilon_trajectory``.  A file of tracks or
lines (GPX, ``--geometry lines``) holds its points in trajectory order, so
``point`` is their position in their track or line.  The reader is the format's own (the one every command
reads inputs with), asked for every column; point geometry gives ``lat`` /
``lng`` when the file has no such columns.  A GPX release has one track per
trajectory, its ids in its ``<extensions>`` (:mod:`tracs.io.gpx`); in a GPX file
without them (written before they were), ``uid`` and ``trajectory`` come from the
track name ``"<uid> <trajectory>"`` (the track's position in the file when the name
is not of that form).  A folder of Parquet parts (``part.0.parquet``, ``part.1.parquet``,
…: what ``tracs perturb --engine dask`` writes) is read as one release, its parts in
the order of their numbers (:mod:`tracs.io.parquet_folder`).  ``tracs map``, ``tracs
estimate`` and ``tracs evaluate --dataset`` read releases through it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import TracsError
from .raw import ReadRequest
from .formats import format_of
from .gpx import track_ids, track_names

__all__ = ["NotAReleaseError", "read_release", "read_rows"]

#: released columns and their types (integer columns whose values are not all integers written
#: plainly keep the file's text: trajectory ids such as ``trip-7`` or ``01``)
_NUMBERS = {"lat": float, "lng": float, "epsilon_point": float, "epsilon_trajectory": float,
            "trajectory": np.int64, "point": np.int64, "source_line": np.int64, "source_row": np.int64}


class NotAReleaseError(TracsError, ValueError):
    """A file without the columns of a release (it names the file and what it lacks)."""


def read_release(path, *, need=("lat", "lng")):
    """The rows of a released file, in file order (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        Any format :func:`tracs.io.formats.format_of` reads (a file, or a folder of Parquet
        parts).
    need : tuple of str
        Columns the caller needs; a file without one raises :class:`NotAReleaseError`.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    frame, fmt, raw = _read(path)
    path = Path(path)
    if fmt.key == "gpx":
        frame = _gpx_release(path, frame)
        frame.attrs["order"] = "tracks"
    elif raw.roles.get("time") in frame.columns:  # a file of lines (tracs.io.lines): vertices and their times
        frame.attrs["order"] = "perturbation"  # rows in the order the points were perturbed in
        if raw.untimed is not None:
            frame.loc[raw.untimed, raw.roles["time"]] = None
        frame = frame.rename(columns={raw.roles["time"]: "datetime"}) if "datetime" not in frame.columns else frame
        frame = frame.drop(columns=[c for c in raw.roles.values() if c in frame.columns and c != "datetime"])
        if "point" not in frame.columns and {"uid", "trajectory"} <= set(frame.columns):
            frame["point"] = frame.groupby(["uid", "trajectory"], sort=False, dropna=False).cumcount().to_numpy()
    _with_lonlat(frame, raw)
    for name, kind in _NUMBERS.items():
        if name in frame.columns:
            values = _numeric(frame[name], kind)
            if kind is float:
                frame[name] = values.astype(float)
            elif values.notna().all() and (values == values.round()).all() and _plain_integers(frame[name]):
                frame[name] = values.astype(kind)  # else ids stay exactly as written (text: 01 is not 1)
    if "datetime" in frame.columns and not isinstance(frame["datetime"].dtype, pd.DatetimeTZDtype):
        frame["datetime"] = pd.to_datetime(frame["datetime"], utc=True, errors="coerce", format="ISO8601")
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise NotAReleaseError(f"{path.name} ({fmt.name}) lacks the column(s) {', '.join(missing)}: "
                               "not a file written by 'tracs perturb'")
    return frame


def _numeric(column, kind):
    """``pd.to_numeric(column, errors="coerce")``; text held by Arrow is cast by Arrow (ten times
    faster) when every value is a number of the column's kind."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(column.dtype) and column.dtype != bool:
        return column
    if isinstance(column.array, pd.arrays.ArrowStringArray):
        import pyarrow as pa
        import pyarrow.compute as pc

        try:
            cast = pc.cast(pa.array(column.array), pa.float64() if kind is float else pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        else:
            return pd.Series(cast.to_numpy(zero_copy_only=False), index=column.index, name=column.name)
    return pd.to_numeric(column, errors="coerce")


def _plain_integers(values) -> bool:
    """Whether a column holds numbers, or text that is integers written plainly (``7``, not ``07``)."""
    import pandas as pd

    if not (pd.api.types.is_string_dtype(values.dtype) or values.dtype == object):
        return True
    text = values.astype(str)
    return bool(text.str.fullmatch(r"0|-?[1-9][0-9]*").all())


def read_rows(path):
    """Every row and column of a file in any format of the table, in file order, as text or as
    stored (a pandas frame); point geometry adds ``lat`` / ``lng`` when the file has no such
    columns.  For files that are no check-ins, such as points of interest."""
    frame, _, raw = _read(path)
    return _with_lonlat(frame, raw)


def _read(path):
    import pandas as pd

    from .delimited_text import check_path

    path = Path(path) if isinstance(path, (str, os.PathLike)) and Path(path).is_dir() else check_path(path)
    fmt = format_of(path)  # a folder: one of the layouts read as a whole (a folder of Parquet parts)
    raw = fmt.reader()(path, ReadRequest(plan=lambda names, **_: (list(names), {})))
    table = raw.table
    frame = table.to_pandas() if hasattr(table, "column_names") else pd.DataFrame(table).reset_index(drop=True)
    return frame, fmt, raw


def _with_lonlat(frame, raw):
    if raw.lonlat is not None and not {"lat", "lng"} <= set(frame.columns):
        frame["lat"], frame["lng"] = raw.lonlat[:, 1], raw.lonlat[:, 0]
    return frame


def _gpx_release(path: Path, frame):
    """A GPX release's columns under the released names: its tracks are the trajectories."""
    out = frame.rename(columns={"lon": "lng", "time": "datetime"})
    if track_ids(path) is not None:  # the ids are in the tracks' <extensions>: read as written
        if "point" not in out.columns:  # the points in track order
            out["point"] = out.groupby(["uid", "trajectory"], sort=False, dropna=False).cumcount().to_numpy()
        return out[[c for c in ("uid", "trajectory", "point", "datetime", "lat", "lng") if c in out.columns]]
    names = [name or "" for name in track_names(path)]
    parts = [name.rsplit(" ", 1) for name in names]
    users = np.array([p[0] if len(p) == 2 else name for p, name in zip(parts, names)], dtype=object)
    ids = np.array([p[1] if len(p) == 2 else None for p in parts], dtype=object)  # as written: 0001 stays
    track = out["trajectory"].to_numpy()
    out["point"] = out.groupby(track, sort=False).cumcount().to_numpy()  # points in track order
    out["uid"] = users[track]
    if all(i is not None for i in ids) and len(set(zip(users.tolist(), ids.tolist()))) == len(ids):
        # "<uid> <trajectory>": the released ids (numbered within each user)
        out["trajectory"] = ids[track]
    return out[[c for c in ("uid", "trajectory", "point", "datetime", "lat", "lng") if c in out.columns]]
