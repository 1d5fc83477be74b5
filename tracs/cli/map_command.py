"""``tracs map``: draw true and released trajectories on an interactive map (HTML)."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # for the annotations only: the command imports geopandas when it runs
    import geopandas

from ..errors import TracsError
from ._common import CLIError, check_release_path, positive_float, positive_int, seed_int, writable_file

DESCRIPTION = """\
Draw the check-ins of INPUT as trajectories on an interactive map (one layer per
user), and, when given, the released points of PERTURBED (a file written by
'tracs perturb' for INPUT, any format and order: each released row is paired
with its input row by its uid, trajectory and point columns) with the
displacement of every point, a heat map of the reports and a legend; input rows
the release left out (--drop) are drawn as "not released".

Without PERTURBED, --epsilon perturbs INPUT on the fly with --method (TraCS-D by
default).  The page embeds Leaflet and its plugins, so it opens without a network;
when the background tiles cannot load it says so and draws the trajectories on a
plain background (--tiles none draws none; --online links Leaflet from its CDN
for a smaller file).
"""


def add_parser(subparsers) -> None:
    """Add the ``map`` subcommand to ``subparsers``."""
    p = subparsers.add_parser("map", help="draw true and perturbed trajectories on an HTML map",
                              description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT",
                   help="check-in file: Foursquare / Gowalla (CSV or tab-separated) or any CSV, TSV, "
                        "Parquet, GeoParquet, GeoJSON or GPX with user, time and coordinates")
    p.add_argument("perturbed", metavar="PERTURBED", nargs="?", default=None,
                   help="released file from 'tracs perturb' (any format it writes)")
    p.add_argument("-o", "--output", required=True, metavar="MAP.html", help="HTML file to write")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--users", nargs="+", metavar="UID", help="user ids to draw (default: all)")
    who.add_argument("--first", type=positive_int, metavar="N", help="draw the first N users")
    p.add_argument("--pois", metavar="FILE",
                   help="points of interest to draw: CSV with lat/lng columns or a vector file")
    p.add_argument("--input-pois", action="store_true", help="draw the venues of INPUT as POIs")
    p.add_argument("-e", "--epsilon", type=positive_float, metavar="E",
                   help="ε per point: perturbs INPUT when PERTURBED is not given, else only labels "
                        "the legend (default: read from PERTURBED's epsilon_point column)")
    p.add_argument("-m", "--method", default=None, metavar="METHOD",
                   help="method for --epsilon (default: tracs-d); with PERTURBED only a label")
    p.add_argument("--split-gap", default=None, metavar="GAP",
                   help="start a new trajectory after a gap longer than GAP (e.g. 3h)")
    p.add_argument("--max-points", type=positive_int, default=None, metavar="N",
                   help="most points drawn (default: 50,000; a note says what was left out)")
    p.add_argument("--max-users", type=positive_int, default=None, metavar="N",
                   help="most users drawn (default: 200; a note says what was left out)")
    p.add_argument("--tiles", default=None, metavar="NAME",
                   help="background tiles: a folium tile name (default: OpenStreetMap) or none")
    p.add_argument("--offline", action="store_true",
                   help="embed Leaflet and plugins in the page (the default; kept for scripts)")
    p.add_argument("--online", action="store_true",
                   help="link Leaflet from its CDN instead of embedding it (needs a network to view)")
    p.add_argument("--estimate-grid", type=positive_int, default=None, metavar="G",
                   help="add a layer with the density of the true points estimated from PERTURBED "
                        "and its sidecar (as 'tracs estimate') on G × G cells")
    p.add_argument("--seed", type=seed_int, default=None, help="seed for --epsilon (default: fresh)")
    from . import _columns

    _columns.add_input_arguments(p)


def _read_checkins(path: Path, args):
    """Check-ins of INPUT, any supported format, with the column options of ``args``."""
    from . import _columns

    return _columns.read_input(args, path)


def _lat_lng_columns(columns) -> tuple[str, str]:
    lower = {str(c).lower(): c for c in columns}
    lat = next((lower[k] for k in ("lat", "latitude") if k in lower), None)
    lng = next((lower[k] for k in ("lng", "lon", "long", "longitude") if k in lower), None)
    if lat is None or lng is None:
        raise CLIError(f"no lat/lng columns among {list(columns)}")
    return lat, lng


def read_points(path) -> geopandas.GeoDataFrame:
    """Rows of a point file, in file order, in any format of the table (:mod:`tracs.io.formats`):
    lat/lng columns (or latitude/longitude, ...) or point geometry."""
    import geopandas as gpd
    import pandas as pd

    from ..io.release import read_rows

    path = Path(path)
    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    frame = read_rows(path)
    lat, lng = _lat_lng_columns(frame.columns)
    lat_v, lng_v = pd.to_numeric(frame[lat], errors="coerce"), pd.to_numeric(frame[lng], errors="coerce")
    return gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(lng_v, lat_v), crs=4326)


def _read_release(path: Path):
    """The rows of a file 'tracs perturb' wrote, any format (:func:`tracs.io.release.read_release`)."""
    import geopandas as gpd

    from ..io.release import read_release

    check_release_path(path)
    frame = read_release(path)
    out = gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(frame["lng"], frame["lat"]), crs=4326)
    out.attrs["order"] = frame.attrs.get("order", "input")
    return out


def _perturb(trajs, method: str, epsilon: float, seed):
    from ..engine import perturb_many
    from ..methods import MethodContext
    from ._common import release_methods

    METHODS = release_methods()
    if method not in METHODS:
        raise CLIError(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    spec = METHODS[method]
    if not spec.ldp:
        raise CLIError(f"method {method!r} is not ε-LDP and is kept only for 'tracs evaluate'; "
                       "choose an ε-LDP method to draw released points")
    # an illustration, not a release: the region and POIs are the data's own bounds (say so)
    print("tracs map: note: perturbing for the picture over the data's own bounding box and venues "
          "(not private); publish data with 'tracs perturb --region ...' and map that file",
          file=sys.stderr)
    ctx = MethodContext(region=trajs.region(), pois=np.asarray(trajs.pois().coords, dtype=float))
    # the users' keyed streams of --seed, as 'tracs perturb --seed' draws them (tracs.Batch.stream_keys)
    released = perturb_many(spec.build(ctx, epsilon), trajs.to_batch(key="uid"), rng=seed, keyed=spec.keyed)
    return released.coords, spec.label


def _trajectories(source: Path, args, *, quiet: bool):
    """INPUT as trajectories (the loaders' path), its dropped rows reported."""
    import data_loaders

    from ._output import report_drops

    checkins = _read_checkins(source, args)
    report = checkins.attrs.get("report")
    if report is not None and report.n_dropped and not quiet:  # the rows the map cannot draw, and why
        report_drops("map", report, strict=False, quiet=True)
    if len(checkins) == 0:
        raise CLIError(f"{source} holds no usable check-ins")
    return data_loaders.to_trajectories(checkins, split_gap=args.split_gap,
                                        by=checkins.attrs.get("trajectory_column"))


def _released_rows(source: Path, release: Path, args, *, warn: bool):
    """``(true rows, their released rows, input rows not released or None)`` as GeoDataFrames,
    paired by key (:mod:`tracs.cli._pairing`)."""
    import geopandas as gpd

    from ..io.batch_files import trajectory_ids
    from ._output import report_drops
    from ._pairing import pair

    frame = _read_release(release)
    sidecar = _check_parameters(release, frame, warn=warn)
    paired = pair(source, frame, str(release), args, sidecar)
    report_drops("map", paired.everything.attrs["report"], strict=False, quiet=True)
    points, rows = paired.points, paired.released
    ids = trajectory_ids(points)
    traj = np.searchsorted(points.offsets, np.arange(points.n_points), side="right") - 1
    ids = ids[traj] if isinstance(ids, np.ndarray) else ids.take(traj).to_numpy()

    def frame_of(p, keep, lonlat, **columns):
        import pandas as pd

        data = {"uid": p.keys.to_numpy()[keep], **columns,
                "datetime": pd.to_datetime(p.column("time")[keep]).tz_localize("UTC")}
        return gpd.GeoDataFrame(data, geometry=gpd.points_from_xy(lonlat[:, 0], lonlat[:, 1]), crs=4326)

    original = frame_of(points, rows, points.coords[rows], trajectory=ids[rows])
    reports = frame.iloc[paired.where[rows]].reset_index(drop=True)
    perturbed = gpd.GeoDataFrame({"uid": original["uid"].to_numpy(), "trajectory": ids[rows],
                                  **{c: reports[c].to_numpy() for c in ("epsilon_point",) if c in reports}},
                                 geometry=gpd.points_from_xy(reports["lng"], reports["lat"]), crs=4326)
    missing = np.r_[paired.everything.coords[paired.outside], points.coords[~rows]].reshape(-1, 2)
    if len(missing):
        from .._text import counted

        print(f"tracs map: note: {counted(len(missing), 'row')} of {source.name} "
              f"{'has' if len(missing) == 1 else 'have'} no released row (left out of the release, "
              "as --drop leaves the rows outside the region): drawn as 'not released'", file=sys.stderr)
    if not rows.any():
        raise CLIError(f"no row of {release} is a released row of {source}")
    unreleased = gpd.GeoSeries(gpd.points_from_xy(missing[:, 0], missing[:, 1]), crs=4326) if len(missing) else None
    return original, perturbed, unreleased


def _check_parameters(release: Path, frame, *, warn: bool) -> dict | None:
    """The parameters of a release (embedded or sidecar), None when it has none (it is drawn as
    it is); refuse them when they disagree with its rows, warn when they were computed from the data."""
    from .estimate import release_parameters, warn_data_derived

    try:
        data = release_parameters(release, frame, "map")
    except FileNotFoundError:
        return None  # a file without a sidecar (or not a tracs release): nothing is known of its parameters
    if warn:
        warn_data_derived("map", data)
    return data


def _epsilon_of(released) -> float | None:
    if "epsilon_point" not in getattr(released, "columns", ()):
        return None
    values = np.unique(np.asarray(released["epsilon_point"], dtype=float))
    return float(values[0]) if len(values) == 1 and values[0] > 0 else None


def _add_density(fmap, args) -> None:
    """The estimated-density layer of ``--estimate-grid`` (collector side: the release and its sidecar)."""
    if args.perturbed is None:
        raise CLIError("--estimate-grid needs PERTURBED: the file 'tracs perturb' wrote, with its sidecar")
    from ..maps.density import density_layer
    from .estimate import estimate_release

    est, data, _ = estimate_release(Path(args.perturbed), args.estimate_grid, command="map")
    density_layer(est, data["crs"], name=f"estimated density ({data['method']}, ε = {data['epsilon']:g})",
                  min_share=0.0).add_to(fmap)


def run(args) -> int:
    """Write the map; return 0, or print a one-line error and return 1."""
    try:
        if args.online and args.offline:
            raise CLIError("--online and --offline contradict each other: give one")
        return _run(args)
    except (TracsError, OSError) as exc:
        message = " ".join((str(exc) or type(exc).__name__).split())
        print(f"tracs map: error: {message}", file=sys.stderr)
        return 1


def _run(args) -> int:
    source = Path(args.input)
    from . import _columns

    _columns.check_input(source, args)
    output = writable_file(args.output)
    from ._output import check_html_output, check_not_input

    check_html_output(output)
    check_not_input(output, source, args.perturbed)
    from ..maps import DEFAULT_MAX_POINTS, DEFAULT_MAX_USERS, DEFAULT_TILES, save_map, trajectory_map

    perturbed, unreleased, epsilon, method, trajs = None, None, args.epsilon, args.method, None
    if args.perturbed is not None:
        # (with --estimate-grid the estimate warns of parameters computed from the data)
        original, perturbed, unreleased = _released_rows(source, Path(args.perturbed), args,
                                                         warn=args.estimate_grid is None)
        if epsilon is None:
            epsilon = _epsilon_of(perturbed)
    if args.perturbed is None or args.input_pois:
        trajs = _trajectories(source, args, quiet=args.perturbed is not None)
    if args.perturbed is None:
        original = trajs.frame
    if args.perturbed is None and args.epsilon is not None:
        perturbed, method = _perturb(trajs, args.method or "tracs-d", args.epsilon, args.seed)
        perturbed = trajs.with_coords(perturbed).frame

    pois = None
    if args.pois is not None:
        pois = read_points(args.pois)
    elif args.input_pois:
        pois = np.asarray(trajs.pois().coords, dtype=float)
    tiles = DEFAULT_TILES if args.tiles is None else (None if args.tiles.lower() == "none" else args.tiles)
    users = args.users if args.users else args.first

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        fmap = trajectory_map(original, perturbed, pois=pois, users=users, tiles=tiles,
                              epsilon=epsilon, method=method, unreleased=unreleased,
                              max_points=args.max_points or DEFAULT_MAX_POINTS,
                              max_users=args.max_users or DEFAULT_MAX_USERS)
    for warning in caught:
        print(f"tracs map: note: {warning.message}", file=sys.stderr)
    if args.estimate_grid is not None:
        _add_density(fmap, args)
    save_map(fmap, output, offline=not args.online)
    from .._text import significant

    print(f"wrote {output} ({significant(output.stat().st_size / 1e6)} MB)")
    return 0
