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

from ._common import CLIError, positive_float, positive_int, seed_int, writable_file

DESCRIPTION = """\
Draw the check-ins of INPUT as trajectories on an interactive map (one layer per
user), and, when given, the released points of PERTURBED (a file written by
'tracs perturb', one row per input row in the same order) with the displacement
of every point, a heat map of the reports and a legend.

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

    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    frame = read_release(path)
    out = gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(frame["lng"], frame["lat"]), crs=4326)
    out.attrs["order"] = frame.attrs.get("order", "input")
    return out


def _perturb(trajs, method: str, epsilon: float, seed):
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
    offsets = np.asarray(trajs.offsets, dtype=np.int64)
    keys = [str(k) for k in trajs.frame["uid"].to_numpy()[offsets[:-1]]]  # one stream per user
    released = spec.build(ctx, epsilon).perturb_many(np.asarray(trajs.coords, dtype=float), offsets,
                                                      rng=np.random.default_rng(seed), keys=keys)
    return np.asarray(released, dtype=float), spec.label


def _align(released, original, name):
    """Put the released rows in the order of ``original`` (the loaders' (user, time) order).

    'tracs perturb' publishes rows in the input file's order; with ``--keep-lines`` it
    also writes the loaders' ``source_line`` / ``source_row``, which then matches the
    rows one by one.  Without it, the i-th released row is the i-th row of the input,
    which ``original``'s own source column orders.
    """
    import pandas as pd

    from data_loaders import SOURCE_COLUMNS

    position = next((c for c in SOURCE_COLUMNS if c in released.columns and c in original.columns), None)
    order = released.attrs.get("order", "input")
    if position is None and order == "perturbation":  # lines: already in (user, trajectory, time) order
        return released.reset_index(drop=True)
    if position is None and order == "tracks":  # GPX: one track per trajectory, points in time order
        keys = [c for c in ("uid", "trajectory", "datetime") if c in released.columns]
        return released.sort_values(keys, kind="stable").reset_index(drop=True) if keys else released
    if position is None:  # rows in the input's order: the i-th is the input's i-th row
        own = next((c for c in SOURCE_COLUMNS if c in original.columns), None)
        if own is None:
            return released
        where = np.empty(len(original), dtype=np.int64)
        where[np.argsort(original[own].to_numpy(), kind="stable")] = np.arange(len(original))
        return released.iloc[where].reset_index(drop=True)
    where = pd.Index(released[position].to_numpy()).get_indexer(original[position].to_numpy())
    if (where < 0).any() or len(np.unique(where)) != len(where):
        raise CLIError(f"{name}: its {position} column does not match the rows of the input file")
    return released.iloc[where].reset_index(drop=True)


def _check_parameters(release: Path, frame, *, warn: bool) -> None:
    """Refuse a release whose parameters (embedded or sidecar) disagree with its rows; warn when
    they were computed from the data.  A file without parameters is drawn as it is."""
    from .estimate import release_parameters, warn_data_derived

    try:
        data = release_parameters(release, frame, "map")
    except FileNotFoundError:
        return  # a file without a sidecar (or not a tracs release): nothing is known of its parameters
    if warn:
        warn_data_derived("map", data)


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
    except (CLIError, ValueError, TypeError, OSError, ImportError, KeyError) as exc:
        message = " ".join((str(exc) or type(exc).__name__).split())
        print(f"tracs map: error: {message}", file=sys.stderr)
        return 1


def _run(args) -> int:
    source = Path(args.input)
    from . import _columns

    _columns.check_input(source, args)
    output = writable_file(args.output)
    from ._output import check_html_output, check_not_input, report_drops

    check_html_output(output)
    check_not_input(output, source, args.perturbed)
    import data_loaders

    from ..maps import DEFAULT_MAX_POINTS, DEFAULT_MAX_USERS, DEFAULT_TILES, save_map, trajectory_map

    checkins = _read_checkins(source, args)
    report = checkins.attrs.get("report")
    if report is not None and report.n_dropped:  # the rows the map cannot draw, and why
        report_drops("map", report, strict=False, quiet=True)
    if len(checkins) == 0:
        raise CLIError(f"{source} holds no usable check-ins")
    trajs = data_loaders.to_trajectories(checkins, split_gap=args.split_gap,
                                         by=checkins.attrs.get("trajectory_column"))
    original = trajs.frame
    perturbed, epsilon, method = None, args.epsilon, args.method
    if args.perturbed is not None:
        perturbed = _read_release(Path(args.perturbed))
        # (with --estimate-grid the estimate warns of parameters computed from the data)
        _check_parameters(Path(args.perturbed), perturbed, warn=args.estimate_grid is None)
        if len(perturbed) != len(original):
            raise CLIError(f"{args.perturbed} has {len(perturbed):,} rows but {source} has "
                           f"{len(original):,}: give the file 'tracs perturb' wrote for this input")
        perturbed = _align(perturbed, original, args.perturbed)
        if "trajectory" in perturbed.columns:  # draw the trajectories the release was made with
            original = original.assign(trajectory=perturbed["trajectory"].to_numpy())
        if epsilon is None:
            epsilon = _epsilon_of(perturbed)
    elif args.epsilon is not None:
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
                              epsilon=epsilon, method=method,
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
