"""A partitioned (Geo)Parquet folder released on Dask into a folder of GeoParquet parts — ``tracs perturb
--engine dask`` as one call.

Each partition holds whole users (:func:`tracs.dask.map_users` shuffles by user id
when a user spans files) and is released by the steps of :func:`tracs.release.release_file`
(:mod:`tracs.dask.partition_release`): the same reader and checks, the public region and
its projection, rows outside the region, trajectories split at ``split_gap``, one keyed
stream per user id from the seed and the generator (``secure_rng``: ChaCha20), the ε
columns, the GeoParquet writer.  Every released row therefore equals the in-process
output for the same input, parameters and seed.  The user column's type is read from
every file's footer first (:func:`check_id_types`); the folder is written beside the
target and renamed into place, the leftovers of a killed run to that target removed
first (:func:`write_folder`); the sidecar is that of the in-process release.

Differences from the in-process release: ``source_row`` (with ``keep_lines``) is the
row's position in the whole input (files in the order of
:func:`tracs.io.parquet_folder.parquet_parts`, as every command reads the folder), rows
left out by the checks or by ``outside="drop"`` are counted but not listed line by line,
and no average error is computed (the true points stay on the workers).  Trajectory ids
are numbered within each user (or are the input's own), as in process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError, MissingExtraError
from ..io.digest import combine
from ..io.parquet_folder import parquet_parts
from ..methods import Method
from ..release import area, perturb_parameters, sidecar_pois, write_perturb_sidecar
from ..release.files import OUTSIDE, read_arguments, releasing_method
from ..release.notes import printer
from ..release.paths import TEMPORARY, check_pois_not_input, remove_stale
from . import partition_release as parts
from .partitions import map_users, with_row_numbers

__all__ = ["release_file", "FolderRelease", "API_FLAGS", "check_id_types", "client", "write_folder"]

#: how messages name the parameters of :func:`release_file` besides :data:`tracs.release.area.API_FLAGS`
#: (the command gives its options)
API_FLAGS = {"engine": "tracs.dask.release_file", "local": "tracs.release.release_file", "seed": "seed=",
             "lines": "geometry='lines'", "user": "columns={'user': NAME}"}


@dataclass(frozen=True)
class FolderRelease:
    """What :func:`release_file` wrote: the numbers of its summary line.

    Attributes
    ----------
    method : tracs.methods.Method
        The registered method released with.
    output, sidecar : pathlib.Path
        The folder of GeoParquet parts and its sidecar (``OUTPUT.tracs.json``).
    points, rows : int
        Rows released; rows of the input (the difference was invalid or outside the region).
    epsilon : float
        The budget as given (per point, or per trajectory with ``per_trajectory``).
    per_trajectory : bool
        Whether ``epsilon`` was a trajectory's budget.
    parameters : dict
        The public parameters written in the sidecar.
    digest : str
        The digest of the released rows, as in the sidecar.
    seconds : float
        The time on the cluster (reading, releasing and writing).
    """

    method: Method
    output: Path
    sidecar: Path
    points: int
    rows: int
    epsilon: float
    per_trajectory: bool
    parameters: dict
    digest: str
    seconds: float


def _files(source: Path) -> list:
    """The Parquet files of the input folder (:func:`tracs.io.parquet_folder.parquet_parts`: the
    order every command reads the folder in), or the input file."""
    files = parquet_parts(source) if source.is_dir() else [source]
    if not files:
        raise InputError(f"{source}: no .parquet files to read")
    return files


def _arrow_kind(kind) -> str | None:
    """The type of ids an Arrow column type holds, as the messages say it (None: no ids)."""
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
    holds one type per column, as the in-process release reads it.
    """
    first = {}  # type of ids -> the first file holding it
    for path in files:
        schema = pq.read_schema(path)
        if user in schema.names:
            kind = _arrow_kind(schema.field(user).type)
            if kind is not None:
                first.setdefault(kind, path.name)
    if len(first) > 1:
        (a, file_a), (b, file_b) = list(first.items())[:2]
        raise InputError(f"{source}: the user ids of column {user!r} are {a} in {file_a} and {b} in {file_b}; "
                         "ids of different types would draw the same noise: write every id with one type")


def _read(files):
    """The input files as one Dask frame with ``lat`` / ``lng`` columns."""
    import dask.dataframe as dd

    if b"geo" not in (pq.read_schema(files[0]).metadata or {}):
        return dd.read_parquet([str(f) for f in files])
    import dask_geopandas

    gdf = dask_geopandas.read_parquet([str(f) for f in files])
    return gdf.map_partitions(_point_columns, meta=_point_columns(gdf._meta))


def _point_columns(part):
    """A GeoDataFrame partition of points as a frame with ``lat`` / ``lng`` columns (WGS84)."""
    points = part.to_crs("EPSG:4326") if part.crs is not None else part
    out = pd.DataFrame(part.drop(columns=part.geometry.name))
    out["lat"], out["lng"] = points.geometry.y.to_numpy(), points.geometry.x.to_numpy()
    return out


def client(scheduler=None, workers=None):
    """The Dask client of a run: ``scheduler``'s, or a local cluster of ``workers`` processes."""
    import distributed

    if scheduler:
        return distributed.Client(scheduler)
    return distributed.Client(distributed.LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                                       threads_per_worker=1, dashboard_address=None))


def write_folder(output: Path, write, say=None) -> None:
    """Call ``write(tmp)`` on a temporary folder beside ``output``, then rename it to ``output``.

    The temporary folder is ``.NAME.tracs-tmp-XXXXXXXX``, the pattern of the local
    path's temporaries (:data:`tracs.release.paths.TEMPORARY`): the leftover of a killed
    run is removed by the next run to the same target, with a note to ``say`` naming it
    (:func:`tracs.release.paths.remove_stale`).  A failure leaves ``output`` as it was
    (absent or an empty folder) and no ``part.*`` file under its name; the temporary
    folder is removed.
    """
    parent = output.parent if str(output.parent) else Path(".")
    remove_stale(output, printer() if say is None else say)
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


def _check_paths(source: Path, output: Path) -> None:
    """Refuse a missing input and an output that is not an empty folder (or absent)."""
    if not source.exists():
        raise InputError(f"no such file or directory: {source}")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InputError(f"{output} exists and is not an empty directory")


def release_file(source, output, *, method, epsilon: float, region=None, region_from_data: bool = False,
                 pad: float = 0.0, pois=None, outside=None, per_trajectory: bool = False,
                 round_to_pois: bool = False, anchor="center", split_gap=None, seed=None, secure_rng: bool = False,
                 scheduler=None, workers=None, geometry: str = "points", keep_lines: bool = False,
                 budget_columns: bool = True, columns=None, input_format: str = "auto", time_format=None,
                 dayfirst: bool = False, id_type: str = "text", tz: str = "UTC", ambiguous: str = "earlier",
                 no_time: bool = False, say=None, flags=None, on_ready=None) -> FolderRelease:
    """Release every point of a (Geo)Parquet file or folder on Dask; write a folder of GeoParquet parts
    with its sidecar.

    The guarantee and the released columns are those of :func:`tracs.release.release_file`
    (see the module docstring for what differs); the parameters are its parameters,
    with these restrictions: a public ``region`` and a ``seed`` are required (every
    worker derives the same keys; keep the seed secret), ``geometry`` is ``"points"``,
    and the output is a folder (absent or empty).  The folder is written beside
    ``output`` and renamed into place after its sidecar ``OUTPUT.tracs.json``; an error
    leaves no output.  ``tracs perturb --engine dask`` is this call.

    Parameters
    ----------
    source, output : str or pathlib.Path
        A Parquet or GeoParquet file or a folder of them; the folder to write.
    method, epsilon, region, pois, outside, per_trajectory, round_to_pois, anchor, split_gap
        As :func:`tracs.release.release_file`; ``region_from_data`` and ``pad`` are refused.
    seed : int
        The seed of every user's keyed stream (required).
    secure_rng : bool
        ChaCha20 instead of Philox.
    scheduler : str, optional
        The Dask scheduler's address (default: a local cluster of ``workers`` processes).
    workers : int, optional
        The processes of the local cluster (default: every core).
    geometry : {"points"}
        Lines are written by :func:`tracs.release.release_file` only.
    keep_lines, budget_columns
        Also write ``source_row``, each row's position in the whole input; write the ε spent
        per point and trajectory.
    columns, input_format, time_format, dayfirst, id_type, tz, ambiguous, no_time
        How to read the rows (as :func:`tracs.release.release_file`).
    say : callable, optional
        Gets every note and warning as one line (default: printed on standard error
        after ``tracs:``); the notes of a partition are said on its worker, so a
        ``say`` given here must pickle.
    flags : dict, optional
        How messages name the parameters (default :data:`API_FLAGS`,
        :data:`tracs.release.area.API_FLAGS` and :data:`tracs.io.columns.API_FLAGS`).
    on_ready : callable, optional
        Called once the parameters are checked, before the cluster starts.

    Returns
    -------
    FolderRelease

    Raises
    ------
    tracs.errors.MissingExtraError
        Dask, distributed or dask-geopandas is not installed (``pip install 'tracs[dask]'``).
    tracs.errors.InputError
        A bad or missing parameter, a missing input or one without Parquet files, user
        ids of two types in different files, an output that is not an empty folder, no
        rows left.
    """
    say = printer() if say is None else say
    f = {**area.API_FLAGS, **API_FLAGS, **(flags or {})}
    method = releasing_method(method)
    source, output = Path(source), Path(output)
    check_pois_not_input(pois, source, f["pois"])
    try:
        import dask
        import distributed  # noqa: F401 - the extra's presence
    except ImportError:
        raise MissingExtraError(f"{f['engine']} needs the dask extra: pip install 'tracs[dask]'") from None
    if outside not in OUTSIDE:
        raise InputError(f"outside must be None, 'clip' or 'drop', got {outside!r}")
    box = area.as_box(region)
    if box is None:
        raise InputError(f"{f['engine']} needs a public {f['region']} (partitions cannot share a region "
                         "computed from the data)")
    if seed is None:
        raise InputError(f"{f['engine']} needs {f['seed']} (every worker must derive the same key); keep it secret")
    area.check_public(box, region_from_data=region_from_data, pad=pad, pois=pois, split_gap=split_gap,
                      method=method.name, discrete=method.discrete, round_to_pois=round_to_pois, flags=flags, say=say)
    if geometry != "points":
        raise InputError(f"{f['engine']} writes points (a GeoParquet folder): {f['lines']} needs {f['local']}")
    _check_paths(source, output)
    files = _files(source)
    reading = read_arguments(columns, dict(time_format=time_format, dayfirst=bool(dayfirst),
                                           id_type=id_type or "text", tz=tz or "UTC", ambiguous=ambiguous or "earlier",
                                           no_time=bool(no_time), input_format=input_format or "auto"), flags)
    user = reading["user"] or "uid"
    check_id_types(source, files, user)
    crs = area.metric_crs(box, None)

    def from_data(*_):
        raise InputError(f"{f['engine']} takes nothing from the data")

    public = area.public_parameters(box, crs, from_data, from_data, pois=pois, pad=pad,
                                    pois_needed=method.discrete or round_to_pois, flags=flags, say=say)
    options = parts.PartitionOptions(
        method=method.name, epsilon=epsilon, per_trajectory=bool(per_trajectory), round_to_pois=bool(round_to_pois),
        anchor=anchor, split_gap=split_gap, seed=seed, secure_rng=bool(secure_rng), keep_lines=bool(keep_lines),
        budget=bool(budget_columns), box=box, outside=outside, reading=reading, flags=flags, say=say)
    _, model = parts.build_model(method, options, public)  # for the sidecar; each worker builds the same
    parameters = perturb_parameters(method.name, epsilon, model, public.region, crs, per_trajectory=per_trajectory,
                                    split_gap=split_gap, round_to_pois=round_to_pois,
                                    anchor_given=isinstance(anchor, tuple), from_data=public.from_data,
                                    pois_used=public.pois is not None)
    if on_ready is not None:
        on_ready()
    start = time.perf_counter()
    written = {}
    with client(scheduler, workers):
        frame = with_row_numbers(_read(files))
        if user not in frame.columns:
            raise InputError(f"{source}: no {user!r} column (columns: {', '.join(map(str, frame.columns))}); "
                             f"name it with {f['user']}")
        released = map_users(frame, parts.release_partition, user=user, meta=parts.empty_release(frame, user, options),
                             args=(options, public, crs))

        def write(folder):
            with dask.config.set({"dataframe.convert-string": False}):
                done = dask.compute(*[dask.delayed(parts.write_partition)(part, folder / f"part.{i}.parquet")
                                      for i, part in enumerate(released.to_delayed())])
            written["points"] = sum(n for n, _, _ in done)
            if written["points"] == 0:
                raise InputError(f"{source}: no points left to perturb")
            written["digest"] = combine(done[0][1], np.concatenate([hashes for _, _, hashes in done]))
            # the sidecar before the folder is renamed into place, as the in-process release does
            written["sidecar"] = write_perturb_sidecar(output, parameters, digest=written["digest"],
                                                       pois=sidecar_pois(public))

        write_folder(output, write, say)
    rows = sum(pq.read_metadata(path).num_rows for path in files)
    return FolderRelease(method=method, output=output, sidecar=written["sidecar"], points=written["points"],
                         rows=rows, epsilon=epsilon, per_trajectory=bool(per_trajectory), parameters=parameters,
                         digest=written["digest"], seconds=time.perf_counter() - start)
