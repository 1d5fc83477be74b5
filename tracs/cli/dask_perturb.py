"""``tracs perturb --engine dask``: partitioned (Geo)Parquet in, partitioned GeoParquet out.

Each partition holds whole users (:func:`tracs.dask.map_users` shuffles by user id
when a user spans files) and is released by the steps of the in-process command
(:mod:`tracs.cli._fast`): the same reader and checks (the partition is read back
from a temporary Parquet file with :func:`tracs.io.table.read_points`), the public
region and its projection, rows outside the region, trajectories split at
``--split-gap``, one keyed stream per user id, the ε columns.  Every released row
therefore equals the in-process output for the same input, options and seed.

Differences from the in-process command: ``source_row`` (with ``--keep-lines``) is
the row's position in the whole input (files in name order), rows left out by the
checks or by ``--drop`` are counted but not listed line by line, and no average
error is printed (the true points stay on the workers).  Trajectory ids are
numbered within each user (or are the input's own), as in process.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ._common import CLIError

#: the released columns written, in order
COLUMNS = ("uid", "trajectory", "point", "datetime", "source_row", "lat", "lng", "epsilon_point", "epsilon_trajectory")


def _read(source: Path):
    """The input directory (or file) as a Dask frame with ``lat`` / ``lng`` columns."""
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    files = sorted(source.glob("*.parquet")) if source.is_dir() else [source]
    if not files:
        raise CLIError(f"{source}: no .parquet files to read")
    if b"geo" not in (pq.read_schema(files[0]).metadata or {}):
        return dd.read_parquet([str(f) for f in files])
    import dask_geopandas

    gdf = dask_geopandas.read_parquet([str(f) for f in files])

    def to_columns(part):
        import pandas as pd

        points = part.to_crs("EPSG:4326") if part.crs is not None else part
        out = pd.DataFrame(part.drop(columns=part.geometry.name))
        out["lat"], out["lng"] = points.geometry.y.to_numpy(), points.geometry.x.to_numpy()
        return out

    return gdf.map_partitions(to_columns, meta=to_columns(gdf._meta))


def release_partition(part, method: str, options: argparse.Namespace, public, crs):
    """Release one partition of whole users as :func:`tracs.cli._fast.run` releases a file.

    ``part``'s index is each row's position in the whole input; the result keeps the
    rows that are released, with that index, in input order.
    """
    import pandas as pd

    from ..engine import perturb_many
    from ..io.table import read_points, released_table, to_wgs84
    from ..methods import MethodContext, get
    from . import _columns, _public
    from ._fast import released_columns, user_keys

    method = get(method)
    with tempfile.TemporaryDirectory(prefix="tracs-partition-") as folder:
        path = Path(folder) / "part.parquet"
        part.reset_index(drop=True).to_parquet(path, index=False)
        points = read_points(path, split_gap=options.split_gap, **_columns.read_options(options))
    points, _ = _public.points_in_region(points, options)
    coords = points.to_metric(crs)
    if public.box is not None:  # the points of the box outside its inscribed rectangle: onto it
        from ..public import into_region

        coords = into_region(coords, public.region)[0]
    offsets = points.offsets
    ctx = MethodContext(region=public.region, anchor=options.anchor, _poi_space=public.pois,
                        pois=None if public.pois is None else public.pois.points)
    keys = user_keys(points.trajectory_users())  # as in process: from the ids' exact values
    model = method.build(ctx, options.epsilon, per_trajectory=options.per_trajectory)
    released = perturb_many(model, coords, offsets, rng=options.seed, keys=keys, workers=1)
    if options.round_to_pois and not method.discrete:
        released = ctx.poi_space.round(released)[0]
    lengths = np.diff(offsets)
    eps_point = np.repeat(model.epsilon_per_point(lengths), lengths)
    eps_traj = np.repeat(np.add.reduceat(eps_point, offsets[:-1]), lengths)
    columns = released_columns(options)
    table = released_table(points, to_wgs84(np.asarray(released, dtype=np.float64), crs), eps_point, eps_traj,
                           text_times=False, keep_lines=True, budget=columns["budget"]).to_pandas()
    rows = part.index.to_numpy()[table.pop("source_row").to_numpy()]
    if columns["keep_lines"]:
        table.insert(3, "source_row", rows)
    out = table[[c for c in COLUMNS if c in table.columns]]
    out.index = pd.Index(rows, name=part.index.name)
    return out


def _meta(uid_dtype, traj_dtype, index_name, columns):
    """The empty output frame: the released columns asked for (``columns``) and their types."""
    import pandas as pd

    frame = pd.DataFrame({
        "uid": pd.Series([], dtype=uid_dtype),
        "trajectory": pd.Series([], dtype=traj_dtype),
        "point": pd.Series([], dtype="int64"),
        "datetime": pd.Series([], dtype="datetime64[ns, UTC]"),
        **({"source_row": pd.Series([], dtype="int64")} if columns["keep_lines"] else {}),
        **{name: pd.Series([], dtype="float64")
           for name in ("lat", "lng", *(("epsilon_point", "epsilon_trajectory") if columns["budget"] else ()))},
    })
    frame.index.name = index_name
    return frame


def _trajectory_dtype(frame, args):
    """The type of the released ``trajectory`` column: the input's trajectory column's (found
    as the reader finds it) when trajectories are the input's own, else int64 (numbered)."""
    from ..io.columns import resolve_columns
    from . import _columns

    if args.split_gap is None:
        options = _columns.read_options(args)
        try:
            found = resolve_columns(list(frame.columns), **{k: options[k] for k in ("user", "time", "lat", "lon",
                                                                                   "traj")},
                                    need_coords=False, flags=options["flags"])
        except ValueError:
            found = None
        if found is not None and found.traj is not None:
            return frame._meta[found.traj].dtype
    return "int64"


def run_dask(args, method) -> int:
    """Perturb a Parquet directory on Dask; write a GeoParquet directory (see the module docstring)."""
    from . import _public

    try:
        import dask
        import distributed
    except ImportError:
        raise CLIError("--engine dask needs the dask extra: pip install 'tracs[dask]'") from None
    if getattr(args, "region", None) is None:
        raise CLIError("--engine dask needs a public --region (partitions cannot share a region "
                       "computed from the data)")
    _public.check_region_file(args, "perturb")
    if args.seed is None:
        raise CLIError("--engine dask needs --seed (every worker must derive the same key); keep it secret")
    source, output = Path(args.input), Path(args.output)
    if not source.exists():
        raise CLIError(f"no such file or directory: {source}")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise CLIError(f"{output} exists and is not an empty directory")
    crs = _public.metric_crs(args, None)

    def from_data(*_):
        raise CLIError("--engine dask takes nothing from the data")

    public = _public.public_parameters(args, crs, from_data, from_data,
                                       pois_needed=method.discrete or args.round_to_pois)
    options = argparse.Namespace(**vars(args))
    start = time.perf_counter()
    client = (distributed.Client(args.scheduler) if args.scheduler else
              distributed.Client(distributed.LocalCluster(n_workers=args.workers or os.cpu_count() or 1,
                                                          threads_per_worker=1, dashboard_address=None)))
    try:
        import dask.dataframe as dd
        import dask_geopandas

        from ..dask import map_users, with_row_numbers

        frame = with_row_numbers(_read(source))
        user = getattr(args, "user_col", None) or "uid"
        if user not in frame.columns:
            raise CLIError(f"{source}: no {user!r} column (columns: {', '.join(map(str, frame.columns))}); "
                           "name it with --user-col")
        from ._fast import released_columns

        meta = _meta(frame._meta[user].dtype, _trajectory_dtype(frame, args), frame._meta.index.name,
                     released_columns(args))
        released = map_users(frame, release_partition, user=user, meta=meta,
                             args=(args.method, options, public, crs))

        def to_geo(part):
            import geopandas as gpd

            return gpd.GeoDataFrame(part, geometry=gpd.points_from_xy(part["lng"], part["lat"]), crs="EPSG:4326")

        with dask.config.set({"dataframe.convert-string": False}):
            dask_geopandas.from_dask_dataframe(released.map_partitions(to_geo, meta=to_geo(meta))).to_parquet(
                output, write_index=False)
        n_in, n_out = len(frame), len(dd.read_parquet(output, columns=["lat"]))
    finally:
        client.close()
    from .._text import counted, given, significant

    dropped = n_in - n_out
    note = f", {dropped:,} rows left out (invalid or outside the region)" if dropped else ""
    print(f"{method.label}: {counted(n_out, 'row')} released from {n_in:,}{note}, ε = {given(args.epsilon)} "
          f"{'per trajectory' if args.per_trajectory else 'per point'}, on Dask in "
          f"{significant(time.perf_counter() - start)} s -> {output}/ (GeoParquet)")
    return 0
