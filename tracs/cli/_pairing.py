"""Pair the rows of an input file with the rows ``tracs perturb`` released for it, by key.

Every released row carries ``uid``, ``trajectory`` and ``point`` (its 0-based
position in its released trajectory): the input read again as ``tracs perturb``
read it (:func:`tracs.io.batch_files.read_points`, the same ``--split-gap``, and the
rows outside the release's region left out when the release has fewer rows, as
``--drop`` left them) gives every input row the same key.  Rows are paired by
that key, never by position, so releases written in any order, by any writer
(GPX tracks, lines), from folders or with ``--drop`` pair exactly; an input row
without a released row is *not released*, a released row without an input row
is an error (the release is not of this input).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import CLIError

#: the columns that name a released row
KEYS = ("uid", "trajectory", "point")


@dataclass
class Paired:
    """Input rows and their released rows.

    Attributes
    ----------
    points : tracs.Batch
        The input rows that may have been released, in (user, trajectory, time) order.
    where : numpy.ndarray of int64
        For each of them, the row of the release that reports it, or -1 (not released).
    outside : numpy.ndarray of int64
        Rows of the input as read that lie outside the release's region (left out, as
        ``--drop`` leaves them; empty when the release kept every row).
    everything : tracs.Batch
        The input rows as read (:func:`tracs.io.batch_files.read_points`) (``outside`` indexes them).
    """

    points: object
    where: np.ndarray
    outside: np.ndarray
    everything: object

    @property
    def released(self) -> np.ndarray:
        """Whether each row of :attr:`points` has a released row."""
        return self.where >= 0


def _text(values) -> np.ndarray:
    """Keys as text: ``10``, ``10.0`` and ``"10"`` name one id, ``"010"`` another."""
    import pandas as pd

    series = pd.Series(values).reset_index(drop=True)
    if pd.api.types.is_float_dtype(series.dtype) and series.notna().all() and (series == series.round()).all():
        series = series.astype(np.int64)
    return series.astype(str).to_numpy(dtype=object)


def input_keys(points) -> list:
    """``[uid, trajectory, point]`` of every row of ``points``, as :func:`tracs.io.batch_files.released_table`
    writes them (text, text, int)."""
    from ..io.batch_files import trajectory_ids

    ids = trajectory_ids(points)
    traj = np.searchsorted(points.offsets, np.arange(int(points.offsets[-1])), side="right") - 1
    ids = ids[traj] if isinstance(ids, np.ndarray) else ids.take(traj).to_numpy()
    return [_text(points.keys.to_numpy()), _text(ids), points.point_index()]


def release_keys(release, name: str) -> list:
    """``[uid, trajectory, point]`` of every released row (a frame of :func:`tracs.io.release.read_release`)."""
    missing = [c for c in KEYS if c not in release.columns]
    if missing:
        raise CLIError(f"{name} lacks the column(s) {', '.join(missing)} that pair its rows with the input's: "
                       "make it again with this version of 'tracs perturb'")
    point = np.asarray(release["point"], dtype=np.int64)
    return [_text(release["uid"].to_numpy()), _text(release["trajectory"].to_numpy()), point]


def match(points, release, name: str) -> np.ndarray:
    """For each row of ``points``, the row of ``release`` with its key, or -1."""
    import pandas as pd

    theirs = pd.MultiIndex.from_arrays(release_keys(release, name))
    if not theirs.is_unique:
        first = theirs[theirs.duplicated()][0]
        raise CLIError(f"{name}: several rows have the uid, trajectory and point {first}: "
                       "not a file 'tracs perturb' wrote")
    where = theirs.get_indexer(pd.MultiIndex.from_arrays(input_keys(points)))
    unmatched = np.setdiff1d(np.arange(len(release)), where[where >= 0])
    if len(unmatched):
        row = unmatched[0]
        raise CLIError(f"{name}: {len(unmatched):,} of its {len(release):,} rows have no row of the input with "
                       f"their uid, trajectory and point (the first: {tuple(theirs[row])}): give the file "
                       "'tracs perturb' wrote for this input, with the same --split-gap")
    return where


def pair(source, release, name: str, args, sidecar: dict | None) -> Paired:
    """Read ``source`` as ``tracs perturb`` did and pair its rows with ``release``'s.

    ``sidecar`` (:func:`tracs.estimate.sidecar.read_sidecar`, or None) gives the
    ``--split-gap`` and the region of the release: when the release has fewer rows
    than the input, the rows outside that region are left out first, as ``--drop`` did.
    """
    from ..io.batch_files import read_points, to_metric
    from . import _columns
    from ..release.area import keep_rows

    gap = args.split_gap if args.split_gap is not None else (sidecar or {}).get("split_gap")
    everything = read_points(source, split_gap=gap, **_columns.read_options(args))
    points, outside = everything, np.empty(0, np.int64)
    if sidecar is not None and len(release) < points.n_points:
        inside = np.asarray(sidecar["region"].contains(to_metric(points, sidecar["crs"]).coords), dtype=bool)
        if not inside.all():
            outside = np.flatnonzero(~inside)
            points = keep_rows(points, inside)[0]
    return Paired(points, match(points, release, name), outside, everything)
