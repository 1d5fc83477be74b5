"""``tracs perturb --engine dask``: partitioned (Geo)Parquet in, partitioned GeoParquet out.

Each user's rows are perturbed by the same code as the in-process command
(loading and validation, the public region and projection, trajectories split at
``--split-gap``, keyed streams per user id, the ε columns), on partitions that
hold whole users (:func:`tracs.dask.map_users`), so every released row equals the
in-process output for the same input, options and seed.  Differences: the output
has no ``trajectory`` column (in-process trajectory ids number the whole file),
rows left out by the loader or by ``--drop`` are counted but not listed line by
line, and no average error is printed (the true points stay on the workers).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ._common import CLIError

#: columns written, in order (those present)
COLUMNS = ("uid", "datetime", "source_row", "lat", "lng", "epsilon_point", "epsilon_trajectory")


def _read(source: Path):
    """The input directory (or file) as a Dask frame with ``lat`` / ``lng`` columns."""
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    files = sorted(source.glob("*.parquet")) if source.is_dir() else [source]
    if not files:
        raise CLIError(f"{source}: no .parquet files to read")
    geo = b"geo" in (pq.read_schema(files[0]).metadata or {})
    if not geo:
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


def _release(part, spec_name, ctx, args_view):
    """Perturb one partition of whole users exactly as the in-process command does."""
    import data_loaders

    from ..evaluation import METHODS
    from . import _public
    from .perturb import perturb_trajectories, released_frame

    spec = METHODS[spec_name]
    frame = part.reset_index(drop=True)
    checkins = data_loaders.load_checkins(frame, strict=args_view.strict)
    global_rows = part.index.to_numpy()
    checkins["source_row"] = global_rows[checkins["source_row"].to_numpy()]
    checkins, _ = _public.rows_outside(checkins, args_view)
    trajs = data_loaders.to_trajectories(checkins, split_gap=args_view.split_gap,
                                         crs=_public.metric_crs(args_view))
    coords = np.asarray(trajs.coords, dtype=np.float64)
    offsets = np.asarray(trajs.offsets, dtype=np.int64)
    keys = trajs.frame["uid"].to_numpy()[offsets[:-1]]
    released, eps_point = perturb_trajectories(spec, ctx, coords, offsets, args_view.epsilon,
                                               per_trajectory=args_view.per_trajectory,
                                               rng=args_view.seed, keys=[str(k) for k in keys])
    if args_view.round_to_pois and not spec.discrete:
        released = ctx.poi_space.round(released)[0]
    lengths = np.diff(offsets)
    eps_traj = np.repeat(np.add.reduceat(eps_point, offsets[:-1]), lengths)
    out = released_frame(trajs, np.asarray(released, dtype=np.float64), eps_point, eps_traj)
    out = out[[c for c in COLUMNS if c in out.columns]]
    import pandas as pd

    result = pd.DataFrame(out)
    result.index = pd.Index(result["source_row"].to_numpy(), name=part.index.name)
    return result


def _meta(input_meta):
    """The empty output frame: the loader's uid and time types, the released columns."""
    import pandas as pd

    return pd.DataFrame({
        "uid": pd.Series([], dtype=input_meta["uid"].dtype),
        "datetime": pd.Series([], dtype="datetime64[ns, UTC]"),
        "source_row": pd.Series([], dtype="int64"),
        **{name: pd.Series([], dtype="float64")
           for name in ("lat", "lng", "epsilon_point", "epsilon_trajectory")},
    })


class _ArgsView:
    """The options a worker needs (plain values: they travel to every worker)."""

    def __init__(self, args):
        for name in ("region", "clip", "drop", "split_gap", "epsilon", "per_trajectory", "seed",
                     "round_to_pois", "strict", "method", "region_from_data", "pois"):
            setattr(self, name, getattr(args, name, None))


def run_dask(args, spec) -> int:
    """Perturb a Parquet directory on Dask; write a GeoParquet directory (see the module docstring)."""
    from . import _public

    try:
        import dask.dataframe  # noqa: F401
        import distributed
    except ImportError:
        raise CLIError("--engine dask needs the dask extra: pip install 'tracs[dask]'") from None
    if args.region is None:
        raise CLIError("--engine dask needs a public --region (partitions cannot share a region "
                       "computed from the data)")
    if args.seed is None:
        raise CLIError("--engine dask needs --seed (every worker must derive the same key); "
                       "keep it secret")
    source, output = Path(args.input), Path(args.output)
    if not source.exists():
        raise CLIError(f"no such file or directory: {source}")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise CLIError(f"{output} exists and is not an empty directory")
    crs = args.region.metric_crs()
    from ..evaluation import MethodContext
    from ..public import read_pois

    region = args.region.to_region(crs)
    pois = read_pois(args.pois, args.region, crs) if args.pois is not None else None
    ctx = MethodContext(region=region, anchor=args.anchor, pois=None if pois is None else pois.points,
                        _poi_space=pois)
    start = time.perf_counter()
    client = (distributed.Client(args.scheduler) if args.scheduler else
              distributed.Client(distributed.LocalCluster(n_workers=args.workers or os.cpu_count() or 1, threads_per_worker=1,
                                                          dashboard_address=None)))
    try:
        from ..dask import map_users, with_row_numbers

        frame = with_row_numbers(_read(source))
        if "uid" not in frame.columns:
            raise CLIError(f"{source}: no 'uid' column (columns: {', '.join(map(str, frame.columns))})")
        meta = _meta(frame._meta)
        meta.index.name = frame._meta.index.name
        released = map_users(frame, _release, user="uid", meta=meta,
                             args=(args.method, ctx, _ArgsView(args)))
        n_in = len(frame)
        import dask_geopandas

        def to_geo(part):
            import geopandas as gpd

            return gpd.GeoDataFrame(part, geometry=gpd.points_from_xy(part["lng"], part["lat"]),
                                    crs="EPSG:4326")

        geo = dask_geopandas.from_dask_dataframe(released.map_partitions(to_geo, meta=to_geo(meta)))
        geo.to_parquet(output, write_index=False)
        import dask.dataframe as dd

        n_out = len(dd.read_parquet(output, columns=["uid"]))
    finally:
        client.close()
    dropped = n_in - n_out
    note = f", {dropped:,} rows left out (invalid or outside the region)" if dropped else ""
    print(f"{spec.label}: {n_out:,} rows released from {n_in:,}{note}, ε = {args.epsilon:g} "
          f"{'per trajectory' if args.per_trajectory else 'per point'}, on Dask in "
          f"{time.perf_counter() - start:.1f} s -> {output}/ (GeoParquet)")
    return 0
