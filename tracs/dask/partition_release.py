"""One partition of whole users released and written as the in-process release does it (the worker's side
of :func:`tracs.dask.release_file`).

Each function takes the public parameters of the release as one :class:`PartitionOptions`
(frozen, pickled to the workers) and goes through the steps of
:func:`tracs.release.release_file`: the same reader and its checks (:func:`read_partition`,
the one read of a partition), rows outside the region, the keyed streams of the user ids
(:func:`tracs.release.release_points`), the released table and the GeoParquet writer.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..io.batch_files import read_points, released_table, to_metric, to_wgs84
from ..io.columns import resolve_columns
from ..io.digest import frame_columns, row_hashes
from ..io.write import bounds, write_geoparquet
from ..methods import MethodContext, get
from ..public import into_region
from ..release import area, release_points
from ..release.files import random_argument

__all__ = ["COLUMNS", "PartitionOptions", "build_model", "read_partition", "release_partition", "write_partition",
           "empty_release"]

#: the released columns written, in order
COLUMNS = ("uid", "trajectory", "point", "datetime", "source_row", "lat", "lng", "epsilon_point", "epsilon_trajectory")


@dataclass(frozen=True)
class PartitionOptions:
    """The public parameters of a release on Dask, as every partition needs them (pickled to the workers).

    Attributes
    ----------
    method : str
        The registered method's name.
    epsilon : float
        The budget per point (per trajectory with ``per_trajectory``).
    per_trajectory, round_to_pois, anchor, split_gap
        As :func:`tracs.release.release_file` takes them.
    seed : int
        The seed every worker derives the users' keys from.
    secure_rng : bool
        ChaCha20 instead of Philox.
    keep_lines, budget : bool
        Write ``source_row``; write the ε spent per point and trajectory.
    box : tracs.public.LonLatBox
        The public region.
    outside : {None, "clip", "drop"}
        Rows outside the region: refused, moved to its edge, or left out.
    reading : dict
        The keyword arguments of :func:`tracs.io.batch_files.read_points` (:func:`tracs.release.files.read_arguments`).
    flags : dict or None
        How messages name the parameters.
    say : callable
        Gets the notes of a partition (on the worker that releases it).
    """

    method: str
    epsilon: float
    per_trajectory: bool
    round_to_pois: bool
    anchor: object
    split_gap: object
    seed: int
    secure_rng: bool
    keep_lines: bool
    budget: bool
    box: object
    outside: object
    reading: dict
    flags: object
    say: object


def build_model(method, options: PartitionOptions, public):
    """The method's context and model from the public parameters (on the client and on each worker)."""
    ctx = MethodContext(region=public.region, anchor=options.anchor, _poi_space=public.pois,
                        pois=None if public.pois is None else public.pois.points)
    return ctx, method.build(ctx, options.epsilon, per_trajectory=options.per_trajectory)


def read_partition(part, options: PartitionOptions):
    """The rows of one partition of whole users, read as the in-process release reads a file.

    The one call of the reader on the Dask path: the partition goes through a
    temporary Parquet file to :func:`tracs.io.batch_files.read_points`, so its checks,
    its grouping and its reading of times (decided from each user's own rows) are
    those of :func:`tracs.release.release_file`.
    """
    with tempfile.TemporaryDirectory(prefix="tracs-partition-") as folder:
        path = Path(folder) / "part.parquet"
        part.reset_index(drop=True).to_parquet(path, index=False)
        return read_points(path, split_gap=options.split_gap, **options.reading)


def release_partition(part, options: PartitionOptions, public, crs):
    """Release one partition of whole users as :func:`tracs.release.release_file` releases a file.

    ``part``'s index is each row's position in the whole input; the result keeps the
    rows that are released, with that index, in input order.
    """
    method = get(options.method)
    points, _ = area.points_in_region(read_partition(part, options), options.box, outside=options.outside,
                                      flags=options.flags, say=options.say)
    metres = to_metric(points, crs)
    coords = metres.coords
    if public.box is not None:  # the points of the box outside its inscribed rectangle: onto it
        coords = into_region(coords, public.region)[0]
    ctx, model = build_model(method, options, public)
    # as in process: keys from the ids' exact values, chunks of whole users through the engine
    done = release_points(model, metres.with_coords(coords), rng=random_argument(options.seed, options.secure_rng),
                          seed=options.seed, workers=1,
                          round_to=ctx.poi_space if options.round_to_pois and not method.discrete else None)
    table = released_table(points, to_wgs84(np.asarray(done.coords, dtype=np.float64), crs), done.epsilon_point,
                           done.epsilon_trajectory, text_times=False, keep_lines=True,
                           budget=options.budget).to_pandas()
    rows = part.index.to_numpy()[table.pop("source_row").to_numpy()]
    if options.keep_lines:
        table.insert(3, "source_row", rows)
    out = table[[c for c in COLUMNS if c in table.columns]]
    out.index = pd.Index(rows, name=part.index.name)
    return out


def write_partition(part, path: Path):
    """Write one partition's released rows as the in-process release writes its file (GeoParquet
    of points, :func:`tracs.io.write.write_geoparquet`); an empty partition writes nothing.

    Returns ``(rows written, the names of the digest's columns, their row digests)``
    (:func:`tracs.io.digest.row_hashes`: the sidecar's digest combines every partition's).
    """
    columns = frame_columns(part)
    if not len(part):
        return 0, list(columns), np.empty((0, 4), dtype=np.uint64)
    table = pa.Table.from_pandas(part, preserve_index=False)
    write_geoparquet([table], path, bbox=bounds(np.column_stack([part["lng"], part["lat"]])))
    return len(part), list(columns), row_hashes(columns, workers=1)


def _trajectory_dtype(frame, options: PartitionOptions):
    """The type of the released ``trajectory`` column: the input's trajectory column's (found
    as the reader finds it) when trajectories are the input's own, else int64 (numbered)."""
    if options.split_gap is None:
        reading = options.reading
        try:
            found = resolve_columns(list(frame.columns), **{k: reading[k] for k in ("user", "time", "lat", "lon",
                                                                                   "traj")},
                                    need_coords=False, flags=reading["flags"])
        except ValueError:
            found = None
        if found is not None and found.traj is not None:
            return frame._meta[found.traj].dtype
    return "int64"


def empty_release(frame, user: str, options: PartitionOptions):
    """The empty output frame of the Dask frame ``frame``: the released columns asked for and their types."""
    empty = pd.DataFrame({
        "uid": pd.Series([], dtype=frame._meta[user].dtype),
        "trajectory": pd.Series([], dtype=_trajectory_dtype(frame, options)),
        "point": pd.Series([], dtype="int64"),
        "datetime": pd.Series([], dtype="datetime64[ns, UTC]"),
        **({"source_row": pd.Series([], dtype="int64")} if options.keep_lines else {}),
        **{name: pd.Series([], dtype="float64")
           for name in ("lat", "lng", *(("epsilon_point", "epsilon_trajectory") if options.budget else ()))},
    })
    empty.index.name = frame._meta.index.name
    return empty
