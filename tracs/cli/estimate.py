"""``tracs estimate``: the density of the true points from a released file and its sidecar."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .._text import significant, whole
from . import _release_checks
from ._common import CLIError, check_release_path, workers_arg, writable_file
from . import _dask_reading
from ._dask_reading import ordering_ids

#: the largest --grid (cells a side): larger grids are refused up front (:func:`check_grid`)
MAX_GRID = 512
#: bytes held per cell by the estimate (θ, its update, the smoothing's and the E-step's arrays)
CELL_BYTES = 8 * 8
#: seconds of one EM pass per 1,000 reports on a MAX_GRID × MAX_GRID grid (TraCS-D, one core; measured
#: 0.27 s a pass for 29,114 reports on 128 × 128 cells, scaled by the number of cells)
PASS_SECONDS = 0.15
DESCRIPTION = """\
Estimate, on the collector's side, the density of the true points from a file
released by 'tracs perturb' (any format it writes: uid, trajectory, datetime and lat/lng)
and its public parameters (method, ε, region, CRS, split, anchor): those stored in the
file (Parquet, GeoPackage, GPX, GeoJSON) or the JSON sidecar written next to it
(RELEASED.tracs.json).  A sidecar whose digest of the rows or ε does not match the file,
and reports off the method's public lattice or outside the region, are refused (see
--clip-reports).  Only public information is read.  The output follows the extension: .csv (one row
per cell: bounds in WGS84 and probability), .geojson (cell polygons) or .html (a
map with Leaflet embedded, so it opens without a network; when the background
tiles cannot load it says so and draws the cells on a plain background).  With --queries (a CSV of boxes min_lng,min_lat,max_lng,max_lat) the
estimated share of points in every box is written next to the output as
<output>.queries.csv.  A discrete baseline's release (EM, L-SRR, NGram: its reports are
POIs) needs --pois FILE, the public POIs given to 'tracs perturb' (refused when its POI
space is not the one whose digest the sidecar records, pois_sha256): the output is a .csv
of the estimated share of true points at every POI (lat, lng, probability; EM over the
method's exact report law, tracs.estimate.frequencies); ATP and TP have no estimator.
A release with ε per trajectory is estimated at every report's per-point ε (the budget
over its trajectory's length, which must be the release's epsilon_point).
"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("estimate", help="estimate the density of the true points from a release",
                              description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", metavar="RELEASED", help="file written by 'tracs perturb' (any format it writes)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help=".csv, .geojson or .html")
    p.add_argument("--grid", type=int, default=32, metavar="G",
                   help=f"G × G cells (default 32, at most {MAX_GRID}: larger grids are refused with the "
                        "memory and time they would need)")
    p.add_argument("--clip-reports", action="store_true",
                   help="estimate even when reports are off the method's public lattice or outside the "
                        "region (clipped into it, with a note of the count); default: refuse such a file, "
                        "which is not a release of its parameters")
    p.add_argument("--tiles", default="OpenStreetMap", metavar="NAME",
                   help="with .html: background tiles, a folium tile name that needs no API key "
                        "(default: OpenStreetMap) or none")
    p.add_argument("--queries", default=None, metavar="BOXES",
                   help="CSV of boxes (min_lng, min_lat, max_lng, max_lat) to answer")
    p.add_argument("--pois", default=None, metavar="FILE",
                   help="a discrete baseline's release: its public POIs (CSV with lat and lng columns, the file "
                        "given to 'tracs perturb', checked against the sidecar's pois_sha256); writes the POI "
                        "frequencies as .csv")
    p.add_argument("--smoothing", choices=("auto", "none", "ems", "cv"), default="auto",
                   help="EMS smoothing after every EM step: auto (the estimator's default: the weight "
                        "chosen on held-out reports for TraCS-C from ε = 2, else none), none, ems, "
                        "cv (default auto)")
    p.add_argument("--edge-decay", type=float, default=None, metavar="K",
                   help="TraCS-C: how the mass of each edge zone (cells the reports cannot tell "
                        "apart, next to the region's edge) is split: a density falling as "
                        "exp(-K·u) across the zone; 0 splits it evenly (default 4, the estimator's)")
    p.add_argument("--memory", default=None, metavar="SIZE",
                   help="budget of the estimator's working memory, e.g. 2GB or 500MB (TraCS-D and "
                        "the Strawman keep their per-row runs when they fit, else recompute them on "
                        "every EM pass; a grid that cannot fit is refused before any work; a discrete "
                        "baseline's POI frequencies: N-gram's normalisers and, with ε per trajectory, EM's and "
                        "L-SRR's rows). With --engine dask: per partition. Default: no budget")
    add_engine_arguments(p, "threads over chunks of reports",
                         "the reports stay in their partitions and every EM pass maps the E-step over them")


def add_engine_arguments(p, threads: str, dask: str) -> None:
    """--workers (``threads``: what runs on them locally), --engine (``dask``: what runs on Dask) and --scheduler."""
    p.add_argument("--workers", type=workers_arg, default=1, metavar="N",
                   help=f"{threads} (same result for every N; default 1); with --engine dask and no --scheduler: "
                        "local worker processes")
    p.add_argument("--engine", choices=("local", "dask"), default="local",
                   help=f"local (default) or dask: {dask} (docs/cluster.md)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --engine dask: the Dask scheduler, e.g. tcp://host:8786 (default: a local "
                        "cluster of --workers processes)")


def warn_data_derived(command: str, data: dict) -> None:
    """Say on standard error when a release was shaped by parameters computed from the data."""
    import sys

    from ..estimate.sidecar import data_derived

    derived = data_derived(data)
    if derived:
        print(f"tracs {command}: warning: the release used parameters computed from the data "
              f"({', '.join(derived)}; 'tracs perturb --region-from-data'): it is NOT private, and these "
              "parameters reveal the true points (e.g. the region's edges are users' true coordinates)",
              file=sys.stderr)


def _read_frame(path: Path):
    """The released rows of ``path`` (:func:`tracs.io.release.read_release`)."""
    from ..io.release import NotAReleaseError, read_release

    try:
        frame = read_release(path, need=("lat", "lng", "trajectory"))
    except NotAReleaseError as exc:
        raise CLIError(str(exc)) from None
    if len(frame) == 0:
        raise CLIError(f"{path.name} holds no released points")
    return frame


def release_parameters(release: Path, frame, command: str) -> dict:
    """The parameters of a release whose rows are ``frame``, checked against them
    (:func:`tracs.io.parameters.release_parameters`); its notes on standard error."""
    import sys

    from ..io.parameters import release_parameters as checked

    data, notes = checked(release, frame)
    for note in notes:
        print(f"tracs {command}: note: {note}", file=sys.stderr)
    return data


def _release_points(frame, crs):
    """Released points in the sidecar's CRS, in trajectory order, with offsets, and the release's
    rows in that order (their index: the row's position in the file).

    A trajectory is the rows of one ``(uid, trajectory)`` pair (trajectory ids are
    numbered within each user), ids read exactly as written; users and trajectories
    are ordered like the loaders order them, the points of each by time.
    """
    import pandas as pd
    import pyproj

    from ..io.checkins import user_order_keys

    sort = [user_order_keys(ordering_ids(frame["uid"]))] if "uid" in frame.columns else []
    sort.append(user_order_keys(ordering_ids(frame["trajectory"])))
    if "datetime" in frame.columns:
        ns = frame["datetime"].array.asi8 if hasattr(frame["datetime"].array, "asi8") else \
            pd.factorize(frame["datetime"].astype(str), sort=True)[0]
        sort.append(np.where(frame["datetime"].isna().to_numpy(), np.iinfo(np.int64).max, ns))  # no time: last
    order = np.lexsort(sort[::-1])  # the order the points were perturbed in (ties: file order)
    frame = frame.set_axis(np.arange(len(frame))).iloc[order]
    to_metric = pyproj.Transformer.from_crs(4326, crs, always_xy=True)
    x, y = to_metric.transform(frame["lng"].to_numpy(float), frame["lat"].to_numpy(float))
    ukey, tkey = sort[0][order], sort[-2 if "datetime" in frame.columns else -1][order]
    new = tkey[1:] != tkey[:-1]
    if "uid" in frame.columns:
        new |= ukey[1:] != ukey[:-1]
    starts = np.flatnonzero(np.r_[True, new])
    offsets = np.r_[starts, len(frame)].astype(np.int64)
    return np.column_stack([x, y]), offsets, frame


def check_grid(grid: int) -> None:
    """Refuse a grid below 2 or above :data:`MAX_GRID` cells a side, up front, with the memory
    and time it would need."""
    if grid < 2:
        raise CLIError(f"--grid must be >= 2, got {grid}")
    if grid > MAX_GRID:
        cells = grid * grid
        raise CLIError(f"--grid {grid} asks for {cells:,} cells: the estimate would hold at least "
                       f"{significant(cells * CELL_BYTES / 1e9)} GB of per-cell arrays and each EM pass would "
                       f"take about {significant(cells / MAX_GRID ** 2 * PASS_SECONDS)} s per 1,000 reports "
                       f"(hundreds of passes); at most --grid {MAX_GRID} ({MAX_GRID ** 2:,} cells)")


def _metric_crs(data: dict, release: Path):
    """The CRS of the parameters, or a one-line error naming it."""
    import pyproj

    crs = data.get("crs")
    if crs is None:
        raise CLIError("the sidecar names no CRS for its region")
    try:
        return pyproj.CRS.from_user_input(crs)
    except (pyproj.exceptions.CRSError, TypeError, ValueError):
        raise CLIError(f"the parameters of {release.name} name the CRS {str(crs)[:80]!r}, which is not a "
                       "coordinate reference system") from None


def public_model(release: Path, data: dict, command: str):
    """``(crs, perturber)`` of a release's parameters ``data``: a warning when they were computed from the
    data; a release rounded to points of interest refused."""
    from ..estimate.sidecar import perturber_from_sidecar

    warn_data_derived(command, data)
    if data.get("round_to_pois"):
        raise CLIError("the release was rounded to points of interest: its references are not public")
    return _metric_crs(data, release), perturber_from_sidecar(data)


def estimate_release(release: Path, grid: int, smoothing="auto", edge_decay=None, *, memory=None,
                     workers: int = 1, engine: str = "local", scheduler=None, command="estimate",
                     clip_reports: bool = False):
    """``(density, parameters, reports)`` of a file written by 'tracs perturb', from the
    parameters it carries or its sidecar, checked against its rows."""
    from .._validation import check_memory_budget
    from ..estimate.grid_density import density
    from ..estimate.sidecar import read_sidecar

    if not release.exists():
        raise CLIError(f"no such file: {release}")
    check_grid(grid)
    if scheduler is not None and engine != "dask":
        raise CLIError("--scheduler goes with --engine dask")
    if edge_decay is not None:
        from ..estimate.edge_zones import check_edge_decay

        try:
            check_edge_decay(edge_decay)
        except ValueError:
            raise CLIError(f"--edge-decay must be a finite number >= 0, got {edge_decay:g}") from None
    try:
        memory = check_memory_budget(memory)
    except ValueError as exc:
        raise CLIError(f"--memory: {exc}") from None
    if engine != "dask":
        check_release_path(release)
    frame = None if engine == "dask" else _read_frame(release)
    data = read_sidecar(release) if frame is None else release_parameters(release, frame, command)
    crs, perturber = public_model(release, data, command)
    options = {} if edge_decay is None else {"edge_decay": edge_decay}
    options.update(grid=(grid, grid), smoothing=smoothing, memory=memory)
    try:
        if engine == "dask":
            return _estimate_dask(release, data, perturber, options, workers, scheduler, clip=clip_reports,
                                  command=command)
        points, offsets, _ = _release_points(frame, crs)
        points = _release_checks.checked_reports(points, offsets, perturber, data, release, clip=clip_reports,
                                                 command=command)
        est = density(points, perturber, offsets=offsets, workers=workers, **options)
    except MemoryError as exc:
        raise CLIError(f"--memory: {exc}") from None
    return est, data, len(points)


def _estimate_dask(release: Path, data, perturber, options, workers, scheduler, *, clip: bool, command: str):
    """The estimate on Dask: a release CSV (or a directory of Parquet files) read in partitions,
    checked partition by partition (:func:`tracs.cli._release_checks.check_partitions`)."""
    from ..dask import estimate
    from ._release_checks import check_partitions

    with _dask_reading.dask_client(workers, scheduler), _dask_reading.round_trip_floats():
        frame = _dask_reading.dask_reports(release, data, perturber)
        time = "datetime" if "datetime" in frame.columns else None
        frame, shuffle, n = check_partitions(frame, data, perturber, release, time=time, clip=clip, command=command)
        est = estimate(_dask_reading.clipped_reports(frame, perturber.region), perturber, user="__user",
                       trajectory="__tid", time=time, x="__x", y="__y", shuffle=shuffle, **options)
    return est, data, n


def run(args) -> int:
    from ._discrete import release_entry

    release = Path(args.release)
    if not release.exists():
        raise CLIError(f"no such file: {release}")
    output = writable_file(args.output)
    kind = output.suffix.lower()
    entry = release_entry(release)
    if entry is not None and entry.discrete:
        return _poi_frequencies(args, release, output, entry)
    if args.pois is not None:
        raise CLIError("--pois goes with a discrete baseline's release (its POI frequencies)")
    if kind not in (".csv", ".geojson", ".json", ".html"):
        raise CLIError(f"cannot tell the output format of {output.name}: use .csv, .geojson or .html")
    if kind == ".html":
        from ..maps import check_tiles

        if args.tiles.lower() != "none":
            check_tiles(args.tiles)
    est, data, n = estimate_release(release, args.grid, None if args.smoothing == "none" else args.smoothing,
                                    args.edge_decay, memory=args.memory, workers=args.workers,
                                    engine=args.engine, scheduler=args.scheduler,
                                    clip_reports=args.clip_reports)
    if kind == ".csv":
        est.to_table(data["crs"]).to_csv(output, index=False)
    elif kind == ".html":
        from ..maps import save_map
        from ..maps.density import density_map

        tiles = None if args.tiles.lower() == "none" else args.tiles
        save_map(density_map(est, data["crs"], tiles=tiles, name=f"{data['method']}, ε = {data['epsilon']:g}"),
                 output)
    else:
        if output.exists():
            output.unlink()
        est.to_geodataframe(crs=data["crs"]).to_crs(4326).to_file(output, driver="GeoJSON")
    if args.queries:
        _answer_queries(Path(args.queries), est, data["crs"], output)
    from .._text import given

    print(f"{data['method']} at ε = {given(data['epsilon'])}: {whole(n)} reports, {args.grid}×{args.grid} "
          f"grid, {whole(est.iterations)} EM passes -> {output}")
    return 0


def _answer_queries(path: Path, est, crs, output: Path) -> None:
    import pandas as pd
    import pyproj

    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    boxes = pd.read_csv(path)
    cols = ["min_lng", "min_lat", "max_lng", "max_lat"]
    if any(c not in boxes.columns for c in cols):
        raise CLIError(f"{path.name} needs the columns {', '.join(cols)}")
    to_metric = pyproj.Transformer.from_crs(4326, crs, always_xy=True)
    x0, y0 = to_metric.transform(boxes.min_lng.to_numpy(float), boxes.min_lat.to_numpy(float))
    x1, y1 = to_metric.transform(boxes.max_lng.to_numpy(float), boxes.max_lat.to_numpy(float))
    boxes["estimate"] = est.range_queries(np.column_stack([x0, y0, x1, y1]))
    target = output.with_name(output.stem + ".queries.csv")
    boxes.to_csv(target, index=False)


def discrete_reports(release: Path, pois: Path, command: str):
    """A discrete baseline's release read with its parameters, checked against its rows, and the POIs of
    ``pois``: ``(data, rows, offsets, space, baseline, indices)``, the rows in trajectory order (their
    index: their positions in the file) and every report's POI index (:func:`tracs.cli._discrete.on_pois`)."""
    frame = _read_frame(release)
    data = release_parameters(release, frame, command)
    warn_data_derived(command, data)
    return (data, *reports_on_pois(release, pois, frame, data, command))


def reports_on_pois(release: Path, pois: Path, frame, data: dict, command: str):
    """``(rows, offsets, space, baseline, indices)`` of a discrete baseline's release already read
    (``frame``, its parameters ``data``): :func:`discrete_reports` after the reading."""
    from ._discrete import check_point_epsilons, on_pois

    points, offsets, rows = _release_points(frame, _metric_crs(data, release))
    space, baseline, indices = on_pois(release, pois, data, points, rows.index.to_numpy(), command)
    check_point_epsilons(baseline, offsets, rows, release)
    return rows, offsets, space, baseline, indices


def _poi_frequencies(args, release: Path, output: Path, entry) -> int:
    """A discrete baseline's release: the estimated share of true points at every POI of --pois
    (:func:`tracs.estimate.frequencies`), written as a CSV (lat, lng, probability)."""
    import pandas as pd

    from .._validation import check_memory_budget
    from ..estimate import frequencies
    from ..geo import transform_xy
    from . import _discrete

    if args.pois is None:
        raise _discrete.missing_pois(entry, release, "estimate", "the estimate of its POI frequencies")
    if output.suffix.lower() != ".csv":
        raise CLIError(f"the POI frequencies of a discrete baseline's release are written as .csv, not "
                       f"{output.name}")
    if args.engine != "local" or args.queries:
        raise CLIError(f"{'--engine dask' if args.engine != 'local' else '--queries'} goes with a density "
                       f"estimate; {release.name} was released by {entry.name} ({entry.label}), a discrete baseline")
    check_release_path(release)
    try:
        memory = check_memory_budget(args.memory)
    except ValueError as exc:
        raise CLIError(f"--memory: {exc}") from None
    data, _, offsets, space, baseline, indices = discrete_reports(release, Path(args.pois), "estimate")
    crs = data["crs"]
    try:
        fit = _discrete.estimated(lambda: frequencies(indices, baseline, offsets=offsets, memory=memory), entry,
                                  release, "POI frequencies")
    except MemoryError as exc:
        raise CLIError(f"--memory: {exc}") from None
    lng, lat = transform_xy(space.points[:, 0], space.points[:, 1], crs, 4326)
    pd.DataFrame({"lat": lat, "lng": lng, "probability": fit.probabilities}).to_csv(output, index=False)
    print(f"{data['method']} at {_discrete.budget(data)}: {whole(len(indices))} reports, {whole(len(space))} "
          f"POIs, {whole(fit.iterations)} EM passes -> {output}")
    return 0
