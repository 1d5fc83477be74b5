"""``tracs perturb --engine dask``: partitioned (Geo)Parquet in, partitioned GeoParquet out.

Each partition holds whole users (:func:`tracs.dask.map_users` shuffles by user id
when a user spans files) and is released by the steps of the in-process command
(:mod:`tracs.cli._release_files`): the same reader and checks (:func:`read_partition`, the one
read of a partition), the public region and its projection, rows outside the region,
trajectories split at ``--split-gap``, one keyed stream per user id from the seed
and the generator (``--secure-rng``: ChaCha20), the ε columns, the GeoParquet writer.
Every released row therefore equals the in-process output for the same input,
options and seed.  The user column's type is read from every file's footer first
(:func:`check_id_types`); the folder is written beside the target and renamed into
place, the leftovers of a killed run to that target removed first (:func:`write_folder`);
the sidecar is that of the in-process command.

Differences from the in-process command: ``source_row`` (with ``--keep-lines``) is
the row's position in the whole input (files in the order of
:func:`tracs.io.parquet_folder.parquet_parts`, as every command reads the folder), rows left out by the
checks or by ``--drop`` are counted but not listed line by line, and no average
error is printed (the true points stay on the workers).  Trajectory ids are
numbered within each user (or are the input's own), as in process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from ._common import CLIError

#: the released columns written, in order
COLUMNS = ("uid", "trajectory", "point", "datetime", "source_row", "lat", "lng", "epsilon_point", "epsilon_trajectory")


def _files(source: Path) -> list:
    """The Parquet files of the input directory (:func:`tracs.io.parquet_folder.parquet_parts`: the
    order every command reads the folder in), or the input file."""
    from ..io.parquet_folder import parquet_parts

    files = parquet_parts(source) if source.is_dir() else [source]
    if not files:
        raise CLIError(f"{source}: no .parquet files to read")
    return files


def _rows(files) -> int:
    """The number of rows of Parquet files, from their footers."""
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(path).num_rows for path in files)


def _arrow_kind(kind) -> str | None:
    """The type of ids an Arrow column type holds, as the messages say it (None: no ids)."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_null(kind):
        return None
    if pa.types.is_integer(kind):
        return "integer"
    if pa.types.is_floating(kind):
        return "floating"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    return str(kind)


def check_id_types(source: Path, files, user: str) -> None:
    """Refuse, before anything is read or written, user ids of different types in different files.

    Ids of different types are different users (``7`` and ``"7"``, ``7`` and
    ``"007"``), but the keyed stream of an id is named by its value
    (:func:`tracs.random.stream_ids`), so they would draw the same noise; a file
    holds one type per column, as the in-process command reads it.
    """
    import pyarrow.parquet as pq

    first = {}  # type of ids -> the first file holding it
    for path in files:
        schema = pq.read_schema(path)
        if user in schema.names:
            kind = _arrow_kind(schema.field(user).type)
            if kind is not None:
                first.setdefault(kind, path.name)
    if len(first) > 1:
        (a, file_a), (b, file_b) = list(first.items())[:2]
        raise CLIError(f"{source}: the user ids of column {user!r} are {a} in {file_a} and {b} in {file_b}; "
                       "ids of different types would draw the same noise: write every id with one type")


def _read(files):
    """The input files as one Dask frame with ``lat`` / ``lng`` columns."""
    import dask.dataframe as dd
    import pyarrow.parquet as pq

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


def build_model(method, options: argparse.Namespace, public):
    """The method's context and model from the public parameters (on the client and on each worker)."""
    from ..methods import MethodContext

    ctx = MethodContext(region=public.region, anchor=options.anchor, _poi_space=public.pois,
                        pois=None if public.pois is None else public.pois.points)
    return ctx, method.build(ctx, options.epsilon, per_trajectory=options.per_trajectory)


def read_partition(part, options: argparse.Namespace):
    """The rows of one partition of whole users, read as the in-process command reads a file.

    The one call of the reader on the Dask path: the partition goes through a
    temporary Parquet file to :func:`tracs.io.batch_files.read_points`, so its checks,
    its grouping and its reading of times (decided from each user's own rows) are
    those of :func:`tracs.release.release_file`.
    """
    from ..io.batch_files import read_points
    from . import _columns

    with tempfile.TemporaryDirectory(prefix="tracs-partition-") as folder:
        path = Path(folder) / "part.parquet"
        part.reset_index(drop=True).to_parquet(path, index=False)
        return read_points(path, split_gap=options.split_gap, **_columns.read_options(options))


def released_columns(args) -> dict:
    """The optional released columns asked for: ``--keep-lines``, ``--no-budget-columns``."""
    return dict(keep_lines=bool(getattr(args, "keep_lines", False)),
                budget=not getattr(args, "no_budget_columns", False))


def release_parameters(args, model, crs, public) -> dict:
    """The public parameters of the release ``args`` asks for (:func:`tracs.release.perturb_parameters`):
    the sidecar's data."""
    from ..release import perturb_parameters

    return perturb_parameters(args.method, args.epsilon, model, public.region, crs,
                              per_trajectory=args.per_trajectory, split_gap=args.split_gap,
                              round_to_pois=getattr(args, "round_to_pois", False),
                              anchor_given=isinstance(getattr(args, "anchor", None), tuple),
                              from_data=public.from_data, pois_used=public.pois is not None)


def release_partition(part, method: str, options: argparse.Namespace, public, crs):
    """Release one partition of whole users as :func:`tracs.release.release_file` releases a file.

    ``part``'s index is each row's position in the whole input; the result keeps the
    rows that are released, with that index, in input order.
    """
    import pandas as pd

    from ..io.batch_files import released_table, to_metric, to_wgs84
    from ..methods import get
    from ..release import release_points
    from . import _public
    from ..release.files import random_argument

    method = get(method)
    points, _ = _public.points_in_region(read_partition(part, options), options)
    metres = to_metric(points, crs)
    coords = metres.coords
    if public.box is not None:  # the points of the box outside its inscribed rectangle: onto it
        from ..public import into_region

        coords = into_region(coords, public.region)[0]
    ctx, model = build_model(method, options, public)
    # as in process: keys from the ids' exact values, chunks of whole users through the engine
    done = release_points(model, metres.with_coords(coords),
                          rng=random_argument(options.seed, getattr(options, "secure_rng", False)), seed=options.seed, workers=1,
                          round_to=ctx.poi_space if options.round_to_pois and not method.discrete else None)
    released, eps_point, eps_traj = done.coords, done.epsilon_point, done.epsilon_trajectory
    columns = released_columns(options)
    table = released_table(points, to_wgs84(np.asarray(released, dtype=np.float64), crs), eps_point, eps_traj,
                           text_times=False, keep_lines=True, budget=columns["budget"]).to_pandas()
    rows = part.index.to_numpy()[table.pop("source_row").to_numpy()]
    if columns["keep_lines"]:
        table.insert(3, "source_row", rows)
    out = table[[c for c in COLUMNS if c in table.columns]]
    out.index = pd.Index(rows, name=part.index.name)
    return out


def write_partition(part, path: Path):
    """Write one partition's released rows as the in-process command writes its file (GeoParquet
    of points, :func:`tracs.io.write.write_geoparquet`); an empty partition writes nothing.
    Returns ``(rows written, the names of the digest's columns, their row digests)``
    (:func:`tracs.io.digest.row_hashes`: the sidecar's digest combines every partition's)."""
    import pyarrow as pa

    from ..io.digest import frame_columns, row_hashes
    from ..io.write import bounds, write_geoparquet

    columns = frame_columns(part)
    if not len(part):
        return 0, list(columns), np.empty((0, 4), dtype=np.uint64)
    table = pa.Table.from_pandas(part, preserve_index=False)
    write_geoparquet([table], path, bbox=bounds(np.column_stack([part["lng"], part["lat"]])))
    return len(part), list(columns), row_hashes(columns, workers=1)


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


def client(args):
    """The Dask client of a run: ``--scheduler``'s, or a local cluster of ``--workers`` processes."""
    import distributed

    if args.scheduler:
        return distributed.Client(args.scheduler)
    return distributed.Client(distributed.LocalCluster(n_workers=args.workers or os.cpu_count() or 1,
                                                       threads_per_worker=1, dashboard_address=None))


def write_folder(output: Path, write) -> None:
    """Call ``write(tmp)`` on a temporary folder beside ``output``, then rename it to ``output``.

    The temporary folder is ``.NAME.tracs-tmp-XXXXXXXX``, the pattern of the local
    path's temporaries (:data:`tracs.release.paths.TEMPORARY`): the leftover of a killed
    run is removed by the next run to the same target, with a note naming it
    (:func:`tracs.release.paths.remove_stale`).  A failure leaves ``output`` as it was
    (absent or an empty folder) and no ``part.*`` file under its name; the temporary
    folder is removed.
    """
    from ..release.paths import TEMPORARY
    from ._output import remove_stale

    parent = output.parent if str(output.parent) else Path(".")
    remove_stale("perturb", output)
    folder = Path(tempfile.mkdtemp(prefix=f".{output.name}{TEMPORARY}", dir=parent))
    try:
        write(folder)
        mask = os.umask(0)
        os.umask(mask)
        folder.chmod(0o777 & ~mask)  # a folder as mkdir makes it (mkdtemp's is private)
        os.replace(folder, output)  # atomic; an empty folder of that name is replaced
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def run_dask(args, method) -> int:
    """Perturb a Parquet directory on Dask; write a GeoParquet directory (see the module docstring)."""
    from ..release import write_perturb_sidecar
    from . import _public
    try:
        import dask
        import distributed  # noqa: F401 - the extra's presence
    except ImportError:
        raise CLIError("--engine dask needs the dask extra: pip install 'tracs[dask]'") from None
    if getattr(args, "region", None) is None:
        raise CLIError("--engine dask needs a public --region (partitions cannot share a region "
                       "computed from the data)")
    if args.seed is None:
        raise CLIError("--engine dask needs --seed (every worker must derive the same key); keep it secret")
    _public.check_options(args, discrete=method.discrete)  # those of the in-process command
    if getattr(args, "geometry", "points") != "points":
        raise CLIError("--engine dask writes points (a GeoParquet folder): --geometry lines needs --engine local")
    source, output = Path(args.input), Path(args.output)
    if not source.exists():
        raise CLIError(f"no such file or directory: {source}")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise CLIError(f"{output} exists and is not an empty directory")
    files = _files(source)
    user = getattr(args, "user_col", None) or "uid"
    check_id_types(source, files, user)
    crs = _public.metric_crs(args, None)

    def from_data(*_):
        raise CLIError("--engine dask takes nothing from the data")

    public = _public.public_parameters(args, crs, from_data, from_data,
                                       pois_needed=method.discrete or args.round_to_pois)
    _, model = build_model(method, args, public)  # for the sidecar; each worker builds the same
    options = argparse.Namespace(**vars(args))
    start = time.perf_counter()
    with client(args):
        from ..dask import map_users, with_row_numbers

        frame = with_row_numbers(_read(files))
        if user not in frame.columns:
            raise CLIError(f"{source}: no {user!r} column (columns: {', '.join(map(str, frame.columns))}); "
                           "name it with --user-col")
        meta = _meta(frame._meta[user].dtype, _trajectory_dtype(frame, args), frame._meta.index.name,
                     released_columns(args))
        released = map_users(frame, release_partition, user=user, meta=meta,
                             args=(args.method, options, public, crs))

        counts = {}

        def write(folder):
            from ..io.digest import combine

            with dask.config.set({"dataframe.convert-string": False}):
                written = dask.compute(*[dask.delayed(write_partition)(part, folder / f"part.{i}.parquet")
                                         for i, part in enumerate(released.to_delayed())])
            counts["out"] = sum(n for n, _, _ in written)
            if counts["out"] == 0:
                raise CLIError(f"{source}: no points left to perturb")
            digest = combine(written[0][1], np.concatenate([hashes for _, _, hashes in written]))
            # the sidecar before the folder is renamed into place, as the in-process command does
            write_perturb_sidecar(output, release_parameters(args, model, crs, public), digest=digest)

        write_folder(output, write)
    from .._text import counted, given, significant

    n_in, n_out = _rows(files), counts["out"]
    dropped = n_in - n_out
    note = f", {dropped:,} rows left out (invalid or outside the region)" if dropped else ""
    print(f"{method.label}: {counted(n_out, 'row')} released from {n_in:,}{note}, ε = {given(args.epsilon)} "
          f"{'per trajectory' if args.per_trajectory else 'per point'}, on Dask in "
          f"{significant(time.perf_counter() - start)} s -> {output}/ (GeoParquet)")
    return 0
