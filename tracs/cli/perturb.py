"""``tracs perturb``: perturb every point of a check-in file and write the released file."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import numpy as np

from . import _columns, _output, _public
from ._common import CLIError, anchor_arg, positive_float, seed_int, workers_arg

DESCRIPTION = """\
Perturb every point of a check-in file on the user's side and write the released
points.  Each point is ε-LDP over the public region given with --region (or, with
--per-trajectory, each trajectory is ε-LDP in total: its n points get ε/n each).
Coordinates are perturbed in metres (the UTM zone of the region's centre) and
written in WGS84.  A user's released rows depend only on that user's rows, the
public parameters (region, POI file, method, ε) and the seed: each user draws from
a random stream keyed by the user id.

The output keeps the user id (exactly as written: 007 and 7 are two users), the
trajectory id (the input's own, or 0, 1, ... within each user) and the time of
every row, in the input's order, with the released latitude/longitude and the ε
spent per point and per trajectory (epsilon_point, epsilon_trajectory: with a
budget per point a trajectory of n points spends n times it, with a budget per
trajectory each point 1/n of it, so these columns reveal each trajectory's
length; --no-budget-columns leaves them out).  --keep-lines adds source_line
(source_row), each row's position in the input file, which reveals how many rows
of other users precede it.  The true coordinates and venue ids are never written, and the
input's other columns and GPX elements are named on stderr ("not released: ...").
The format follows the extension: .csv, .tsv, .geojson/.json, .parquet/.geoparquet,
.gpkg or .gpx; with --geometry lines, one LineString per released trajectory
(.geojson, .parquet or .gpkg).  Every command reads every one of these files back.

The public parameters (method, ε, region, CRS, split, anchor, lattice) are written
beside the output as OUTPUT.tracs.json (e.g. released.csv.tracs.json), with a
SHA-256 digest of the released rows (and, with --pois, of the POI space the release used,
pois_sha256, which 'tracs denoise', 'estimate' and 'synthesize' check their --pois file
against); Parquet, GeoPackage, GPX and GeoJSON outputs also carry the parameters inside.  The summary line names no figure computed from the true points:
--report-error adds the average error (AE), which is NOT private.
"""


def add_parser(subparsers) -> None:
    from ._common import method_help, release_methods

    METHODS = release_methods()

    p = subparsers.add_parser("perturb", help="perturb a check-in or track file (any format of tracs.io)",
                              description=DESCRIPTION, epilog="methods: " + method_help(),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    from ..io.formats import input_formats, supported, written

    p.add_argument("input", metavar="INPUT",
                   help="check-in or track file with user, time and coordinates (Foursquare and Gowalla files "
                        f"recognised), or a public trajectory data set; formats: {supported()}")

    p.add_argument("--input-format", default="auto", choices=input_formats(), help=_columns.INPUT_FORMAT_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                   help=f"file to write ({written('points')})")
    p.add_argument("--geometry", choices=("points", "lines"), default="points",
                   help="points (default): one released row per input row; lines: one LineString per "
                        f"released trajectory, with the time of every vertex ({written('lines')})")
    p.add_argument("-m", "--method", required=True, choices=list(METHODS), metavar="METHOD",
                   help=f"one of {', '.join(METHODS)} (methods that are not ε-LDP, "
                        f"{', '.join(m for m in METHODS if not METHODS[m].ldp)}, are refused here)")
    p.add_argument("-e", "--epsilon", required=True, type=positive_float, metavar="E",
                   help="privacy parameter per point (per trajectory with --per-trajectory), > 0")
    p.add_argument("--per-trajectory", action="store_true",
                   help="E is the budget of a whole trajectory, split evenly over its points")
    p.add_argument("--round-to-pois", action="store_true",
                   help="round released points to the nearest point of interest of --pois "
                        "(post-processing: the guarantee is unchanged)")
    p.add_argument("--anchor", type=anchor_arg, default="center",
                   help="TraCS-D's public first reference: center (default), corner or X,Y in metres")
    p.add_argument("--split-gap", default=None, metavar="GAP",
                   help="start a new trajectory after a gap longer than GAP (e.g. 3h); "
                        "default: one trajectory per user")
    p.add_argument("--workers", type=workers_arg, default=None, metavar="N",
                   help="threads (with --engine dask: local worker processes) to use; default: every "
                        "core.  The output is the same for any N")
    p.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="local (default): this process.  dask: INPUT and OUTPUT are partitioned "
                        "(Geo)Parquet directories, released on a Dask cluster (pip install "
                        "'tracs[dask]'); see docs/cluster.md")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --engine dask: the Dask scheduler, e.g. tcp://host:8786 (default: a local "
                        "cluster of --workers processes)")
    p.add_argument("--seed", type=seed_int, default=None,
                   help="seed for a reproducible run (default: fresh OS entropy hashed to a 64-bit Philox key; "
                        "for deployment add --secure-rng)")
    p.add_argument("--secure-rng", action="store_true",
                   help="draw from ChaCha20, a cryptographically secure generator (keyed from the OS, or "
                        "from --seed, which must then stay secret): for releases an attacker may observe "
                        "many times or seeds that may leak; same lattice, same law, about 3-4x slower")
    p.add_argument("--keep-lines", action="store_true",
                   help="also write source_line (source_row): each row's line in INPUT.  It reveals the "
                        "file position, which depends on the rows of the users above it")
    p.add_argument("--report-error", action="store_true",
                   help="also print the average error (AE, metres) between the true and the released "
                        "points.  NOT private: it is computed from the true points (for a single user "
                        "with one point it is the exact distance to the true point); keep it to yourself")
    p.add_argument("--no-budget-columns", action="store_true",
                   help="leave out epsilon_point and epsilon_trajectory (the ε spent; they reveal each "
                        "trajectory's length)")
    _columns.add_input_arguments(p, pad=True, quiet=True)
    _public.add_arguments(p)
    _output.add_arguments(p)


def _output_format(path: Path, geometry: str = "points"):
    """The writer of the format table (:mod:`tracs.io.formats`) that the output's extension names."""
    from ..io.formats import UnsupportedFormatError, output_format

    try:
        return output_format(path, geometry=geometry)
    except UnsupportedFormatError as exc:
        raise CLIError(str(exc)) from None


#: the option names of the messages of :func:`tracs.dask.release_file` (besides those of reading and the region)
DASK_FLAGS = {"engine": "--engine dask", "local": "--engine local", "seed": "--seed", "lines": "--geometry lines"}


def _local_options(args) -> dict:
    """The keywords of :func:`tracs.release.release_file` that ``--engine dask`` has not."""
    if args.scheduler is not None:
        raise CLIError("--scheduler goes with --engine dask")
    return dict(report_error=args.report_error, strict=args.strict, quiet=args.quiet, flags=_columns.FLAGS)


def _dask_options(args) -> dict:
    """The keywords of :func:`tracs.dask.release_file` that the local engine has not."""
    return dict(scheduler=args.scheduler, flags={**_columns.FLAGS, **DASK_FLAGS})


def _local_summary(done) -> str:
    """The summary line of a :class:`tracs.release.FileRelease`."""
    from .._text import counted, given, significant

    low, high = done.epsilon_point if done.per_trajectory else done.epsilon_trajectory
    budget = (f"ε = {given(done.epsilon)} per trajectory ({significant(low)}–{significant(high)} per point)"
              if done.per_trajectory else f"ε = {given(done.epsilon)} per point ({given(low)}–{given(high)} "
              "per trajectory)")
    rounded = ", rounded to POIs" if done.rounded else ""
    error = "" if done.average_error is None else f", AE = {significant(done.average_error)} m (not private)"
    return (f"{done.method.label}{rounded}: {counted(done.points, 'point')} in "
            f"{counted(done.trajectories, 'trajectory')}, {budget}{error} -> {done.output} ({done.format.name})")


def _dask_summary(done) -> str:
    """The summary line of a :class:`tracs.dask.FolderRelease`."""
    from .._text import counted, given, significant

    dropped = done.rows - done.points
    note = f", {dropped:,} rows left out (invalid or outside the region)" if dropped else ""
    return (f"{done.method.label}: {counted(done.points, 'row')} released from {done.rows:,}{note}, "
            f"ε = {given(done.epsilon)} {'per trajectory' if done.per_trajectory else 'per point'}, on Dask in "
            f"{significant(done.seconds)} s -> {done.output}/ (GeoParquet)")


#: ``--engine`` -> (the module whose ``release_file`` releases, its own keywords, its summary line)
ENGINES = {"local": ("tracs.release.files", _local_options, _local_summary),
           "dask": ("tracs.dask.folders", _dask_options, _dask_summary)}


def run(args) -> int:
    """Release ``args.input`` by the ``release_file`` of ``--engine`` (:func:`tracs.release.release_file`,
    :func:`tracs.dask.release_file`) with the options of ``args``; print the summary line."""
    from ..release.notes import printer
    from . import _startup

    module, own, summary = ENGINES[args.engine]
    keywords = own(args)
    options = _columns.read_options(args)
    done = importlib.import_module(module).release_file(
        args.input, args.output, method=args.method, epsilon=args.epsilon, region=args.region,
        region_from_data=args.region_from_data, pad=args.pad, pois=args.pois,
        outside="clip" if args.clip else "drop" if args.drop else None, per_trajectory=args.per_trajectory,
        round_to_pois=args.round_to_pois, anchor=args.anchor, split_gap=args.split_gap, seed=args.seed,
        secure_rng=args.secure_rng, workers=args.workers, geometry=args.geometry, keep_lines=args.keep_lines,
        budget_columns=not args.no_budget_columns,
        columns={role: options.pop(role) for role in ("user", "time", "lat", "lon", "traj")},
        **{k: options[k] for k in ("input_format", "time_format", "dayfirst", "id_type", "tz", "ambiguous",
                                   "no_time")},
        say=printer("tracs perturb"), on_ready=_startup.resume,  # imports done: collect normally from there
        **keywords)
    print(summary(done))
    return 0


def released_frame(trajs, released, eps_point, eps_traj, *, keep_lines: bool = False):
    """The rows to publish: ids and times of the input, released WGS84 points, ε spent.

    As ``tracs perturb`` writes them: trajectory ids numbered within each user, rows in
    the input's order, the source line or row only with ``keep_lines``.
    """
    import geopandas as gpd
    from data_loaders import SOURCE_COLUMNS
    from ..io.checkins import user_order_keys

    wgs = trajs.with_coords(released).to_wgs84()
    source = wgs.frame
    keep = [c for c in ("uid", "trajectory", "datetime", *SOURCE_COLUMNS) if c in source.columns]
    frame = gpd.GeoDataFrame(source[keep].reset_index(drop=True),
                             geometry=gpd.GeoSeries(source.geometry.to_numpy(), crs=source.crs))
    if "trajectory" in frame.columns and "uid" in frame.columns:  # 0, 1, ... within each user
        from ..io.batch_files import within_runs

        users = user_order_keys(frame["uid"].iloc[np.asarray(trajs.offsets[:-1])].reset_index(drop=True))
        frame["trajectory"] = np.repeat(within_runs(np.r_[True, users[1:] != users[:-1]]), np.diff(trajs.offsets))
    frame.insert(len(keep), "lat", frame.geometry.y.to_numpy())
    frame.insert(len(keep) + 1, "lng", frame.geometry.x.to_numpy())
    frame["epsilon_point"] = eps_point
    frame["epsilon_trajectory"] = eps_traj
    frame.attrs = {}  # the loader's report stays with the input, not in the published file
    # perturbation runs in (user, time) order; publish the rows in the input's order
    position = next((c for c in SOURCE_COLUMNS if c in frame.columns), None)
    if position is not None:
        frame = frame.iloc[np.argsort(frame[position].to_numpy(), kind="stable")].reset_index(drop=True)
        if not keep_lines:
            frame = frame.drop(columns=position)
    return frame


def write_frame(frame, path: Path, fmt: str) -> None:
    """Write the released rows as CSV / TSV (no geometry column), GeoJSON, GeoParquet or GPX."""
    from ..io.write import write_points

    write_points(frame, path, fmt)
