"""The public parameters of ``tracs perturb``: region, projection, POI set; rows outside the region.

Everything that shapes a release besides the user's own records and the seed comes
from the command line (``--region``, ``--pois``) or is derived from it (the UTM zone
of the region's centre).  ``--region-from-data`` keeps the data-derived region and POI
set as an explicit, warned opt-in: it is not private.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from .._text import counted
from ._common import CLIError

#: printed when no region is given
NO_REGION = (
    "give the public region: --region MINLON,MINLAT,MAXLON,MAXLAT (degrees) or a preset ({presets}), "
    "e.g. --region {example}.  The region shapes every release, so it must not come from the "
    "data: a region taken from the file's bounding box depends on every user's points (with one "
    "user, releases stay inside that user's own box).  --region-from-data keeps that behaviour "
    "anyway (not private)")
#: printed with --region-from-data
FROM_DATA_WARNING = (
    "warning: --region-from-data: the region{pois} and the projection are computed from the "
    "input file, so every release depends on all users' points; this is NOT private (use "
    "--region and --pois for a private release)")
#: a file wider than this (degrees of longitude or latitude) is warned about
WIDE_DEGREES = 20.0
_SHOW = 5


def region_arg(text: str):
    """argparse type: a preset name, MINLON,MINLAT,MAXLON,MAXLAT or a polygon file."""
    from ..public import parse_box

    try:
        return parse_box(text)
    except (TypeError, ValueError, OSError) as exc:
        raise argparse.ArgumentTypeError(" ".join(str(exc).split())) from None


#: the help of --region, shared by every command that takes one
REGION_HELP = ("public region: MINLON,MINLAT,MAXLON,MAXLAT in degrees (negative west of Greenwich "
               "and south of the equator: --region -74.3,40.45,-73.65,41), a preset ({presets}; "
               "'tracs regions' lists their boxes) or a polygon file (.geojson, .gpkg, .shp: the "
               "bounds of its polygons are used).  Boxes across the antimeridian are refused")


def region_help() -> str:
    """:data:`REGION_HELP` with the preset names."""
    from ..public import CITY_BOXES

    return REGION_HELP.format(presets=", ".join(CITY_BOXES))


def add_arguments(p) -> None:
    """The options of the public parameters (region, POIs, rows outside the region)."""
    p.add_argument("--region", type=region_arg, default=None, metavar="BOX",
                   help=region_help() + ".  Required (see --region-from-data)")
    p.add_argument("--region-from-data", action="store_true",
                   help="take the region, the projection and (for discrete methods) the POIs from "
                        "the input file, as older versions did: NOT private, prints a warning")
    if not any("--pad" in action.option_strings for action in p._actions):
        p.add_argument("--pad", type=float, default=0.0, metavar="METRES",
                       help="with --region-from-data: margin added around the data's bounding box")
    p.add_argument("--pois", default=None, metavar="FILE",
                   help="public points of interest (CSV with lat and lng columns) for the discrete "
                        "methods and --round-to-pois")
    add_outside_arguments(p)


def add_outside_arguments(p, when: str = "") -> None:
    """``--clip`` / ``--drop``: what to do with rows outside the region (``when`` prefixes the help)."""
    outside = p.add_mutually_exclusive_group()
    outside.add_argument("--clip", action="store_true",
                         help=f"{when}move rows outside the region to its nearest edge (reported)")
    outside.add_argument("--drop", action="store_true",
                         help=f"{when}leave rows outside the region out of the output (reported)")


@dataclass
class Public:
    """The resolved public parameters: region (metres), its CRS, the POI space or None."""

    region: object
    crs: object
    pois: object
    box: object
    from_data: bool


def check_options(args, *, discrete: bool) -> None:
    """Refuse contradictory or missing options before any data is read."""
    from ..public import CITY_BOXES

    if args.region is None and not args.region_from_data:
        raise CLIError(NO_REGION.format(presets=", ".join(CITY_BOXES), example="tky"))
    if args.region is not None and args.region_from_data:
        raise CLIError("give either --region or --region-from-data, not both")
    check_region_file(args, "perturb")
    check_projection(args.region)
    if args.pad:
        if not args.region_from_data:
            raise CLIError("--pad applies to --region-from-data only (a --region box is used as given)")
        if not np.isfinite(args.pad) or args.pad < 0:
            raise CLIError(f"--pad must be a finite number of metres >= 0, got {args.pad:g}")
    if args.region_from_data and args.pois is not None:
        raise CLIError("--pois goes with --region (a POI file needs a public region); "
                       "--region-from-data takes the POIs from the data")
    needs_pois = discrete or args.round_to_pois
    if needs_pois and args.region is not None and args.pois is None:
        what = f"method {args.method!r}" if discrete else "--round-to-pois"
        raise CLIError(f"{what} needs the public points of interest: --pois FILE (a CSV with lat and "
                       "lng columns).  They must not come from the check-ins: a venue visited by "
                       "one user would become public")
    if args.pois is not None and not needs_pois:
        raise CLIError(f"--pois is used by the discrete methods and --round-to-pois only, not by "
                       f"{args.method!r} without --round-to-pois")
    _check_split_gap(args.split_gap)


def check_projection(box) -> None:
    """Refuse, before any data is read, a region its projection cannot hold (too wide)."""
    if box is not None:
        try:
            box.to_region()
        except ValueError as exc:
            raise CLIError(str(exc)) from None


def check_region_file(args, command: str) -> None:
    """Say how a region given as a polygon file was read (the bounds of its polygons).

    :func:`tracs.public.read_region_file` refuses files of points or lines (records,
    not a public area), so a region file is never the data itself.
    """
    box = getattr(args, "region", None)
    if box is not None and getattr(box, "path", None) is not None:
        print(f"tracs {command}: note: --region {box} is {box.source}", file=sys.stderr)


def _check_split_gap(text) -> None:
    """The time gap that splits a user's rows into trajectories: a positive time span."""
    if text is None:
        return
    import pandas as pd

    try:
        gap = pd.Timedelta(text)
    except (TypeError, ValueError):
        raise CLIError(f"--split-gap {text!r} is not a time span: give e.g. 3h, 90min or 1d") from None
    if pd.isna(gap) or gap <= pd.Timedelta(0):
        raise CLIError(f"--split-gap must be a positive time span such as 3h, got {text!r}")


def outside_rows(lon, lat, args, labels, *, command: str = "perturb", before: str = ""):
    """Apply the region to WGS84 points given as arrays: what to keep, and where.

    Parameters
    ----------
    lon, lat : numpy.ndarray
        Degrees, one per row.
    args
        The parsed options (``region``, ``clip``, ``drop``).
    labels : callable
        ``labels(rows) -> list of str``: how to name rows (``"line 7"``) in messages.
    before : str
        What happened to the file's other rows (``"4 of the file's 8 dropped for bad
        values, listed above"``), so that the counts of the messages add up.

    Returns
    -------
    keep : numpy.ndarray of bool or None
        Rows to keep (``None``: all); only ``--drop`` leaves rows out.
    lon, lat : numpy.ndarray
        The coordinates to perturb (``--clip`` moves rows outside to the box's edge).
    handled : list of str
        Labels of the rows clipped or dropped (reported by
        :func:`tracs.cli._output.report_drops`).

    Without --clip or --drop any row outside is an error that names the rows.
    """
    box = args.region
    _warn_wide(lon, lat, box, command)
    if box is None:  # --region-from-data: nothing can lie outside
        return None, lon, lat, []
    outside = ~box.contains(lon, lat)
    if not outside.any():
        return None, lon, lat, []
    handled = labels(np.flatnonzero(outside))
    count = int(outside.sum())
    listed = ", ".join(handled[:_SHOW]) + (", ..." if count > _SHOW else "")
    rows = counted(len(lon), "row") if not before else f"the {counted(len(lon), 'row')} left ({before})"
    if not (args.clip or args.drop):
        raise CLIError(f"{count:,} of {rows} lie outside the region {box} ({listed}); "
                       "pass --clip to move them to the region's edge or --drop to leave them out, "
                       "or give a region that holds them")
    if args.drop:
        if count == len(lon):
            raise CLIError(f"all {rows} lie outside the region {box}: nothing left to perturb")
        return ~outside, lon, lat, handled
    new_lon, new_lat = box.clip(lon, lat)
    return None, new_lon, new_lat, handled


def points_in_region(points, args):
    """:func:`outside_rows` on the command line's batch (:func:`tracs.io.batch_files.read_points`).

    Returns the points to perturb (rows outside dropped or clipped as asked; a
    trajectory left empty by ``--drop`` disappears) and the labels of the rows handled.
    """
    from ..io.batch_files import row_labels

    keep, lon, lat, handled = outside_rows(points.coords[:, 0], points.coords[:, 1], args,
                                           lambda rows: row_labels(points, rows),
                                           before=dropped_before(points.attrs["report"]))
    if not handled:
        return points, handled
    if keep is None:
        return points.with_coords(np.column_stack([lon, lat])), handled
    kept, emptied = keep_rows(points, keep)
    if emptied:
        print(f"tracs perturb: note: {counted(emptied, 'trajectory')} had every row outside the region: "
              "not released", file=sys.stderr)
    return kept, handled


def keep_rows(points, keep):
    """``(points, emptied)``: the rows of ``points`` where ``keep`` is true (a trajectory left
    empty disappears; ``emptied`` counts them), as ``--drop`` leaves them."""
    kept = points.take_rows(keep)
    return kept, len(points) - len(kept)


def frame_in_region(frame, args, *, command: str):
    """:func:`outside_rows` on a loader's GeoDataFrame (WGS84): ``(frame, handled)``, the rows
    outside the region refused, dropped or clipped as ``args`` asks, and their labels."""
    from data_loaders import SOURCE_COLUMNS

    from ..io.batch_files import place_labels, with_points

    position = next((c for c in SOURCE_COLUMNS if c in frame.columns), None)
    word = "line" if position == "source_line" else "row"
    traj = frame.attrs.get("trajectory_column")

    def labels(rows):
        where = frame[position].to_numpy()[rows] if position is not None else rows
        text = place_labels(word, where, frame["source_file"].to_numpy()[rows] if "source_file" in frame else None)
        if position is None or traj not in frame.columns:
            return text
        place = frame[[c for c in ("source_file", position) if c in frame.columns]]
        shared = place.duplicated(keep=False).to_numpy()[rows]  # a line of several points (a Porto trip)
        point = frame.groupby(frame[traj].to_numpy(), sort=False).cumcount().to_numpy()[rows]
        return with_points(text, shared, frame[traj].to_numpy()[rows], point)

    lon, lat = frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()
    keep, new_lon, new_lat, handled = outside_rows(lon, lat, args, labels, command=command,
                                                   before=dropped_before(frame.attrs.get("report")))
    if not handled:
        return frame, handled
    if keep is not None:
        return frame[keep].reset_index(drop=True), handled
    import geopandas as gpd

    return frame.set_geometry(gpd.points_from_xy(new_lon, new_lat, crs=frame.crs)), handled


def dropped_before(report) -> str:
    """How many of the file's rows the loader dropped (for the message about rows outside)."""
    if report is None or not report.n_dropped:
        return ""
    return f"{report.n_dropped:,} of the file's {report.rows_read:,} dropped for bad values, listed above"


def _warn_wide(lon, lat, box=None, command: str = "perturb") -> None:
    """Warn when the rows span more than :data:`WIDE_DEGREES` (two continents, say); a span of
    longitude counts at the widest parallel of the rows (near a pole, 300° may be a few km).

    With ``--region`` the rows outside the box are still reported one by one
    (:func:`outside_rows`); this line says why there are so many.
    """
    finite = np.isfinite(lon) & np.isfinite(lat)
    if not finite.any():
        return
    lon, lat = lon[finite], lat[finite]
    # degrees of longitude shrink towards the poles: measure them at the widest parallel of the rows
    one_side = np.all(lat >= 0) or np.all(lat <= 0)
    widest = np.cos(np.radians(np.min(np.abs(lat)))) if one_side else 1.0
    if np.ptp(lon) * widest <= WIDE_DEGREES and np.ptp(lat) <= WIDE_DEGREES:
        return
    which = (f"the one region given with --region ({box}) and its projection are used for all rows, "
             "so the rows of the other area lie outside it (listed below)" if box is not None else
             "one region and one projection are used for all rows")
    print(f"tracs {command}: warning: the file spans {np.ptp(lon):.0f}° of longitude and "
          f"{np.ptp(lat):.0f}° of latitude: it seems to span two continents; {which}; split the file "
          "by area and give each part its own region for useful releases", file=sys.stderr)


def public_parameters(args, crs, data_region, data_pois, *, pois_needed: bool) -> Public:
    """The region (metres, in ``crs``) and POI space of a run.

    With ``--region``: the box's rectangle and the ``--pois`` file, nothing from the
    data.  With ``--region-from-data`` (warned): ``data_region(pad)`` and, when
    needed, the POI space of ``data_pois()`` — callables, so that nothing is taken from
    the data unless the user asked for it.
    """
    if args.region is not None:
        from ..public import read_pois

        region = args.region.to_region(crs)
        pois = read_pois(args.pois, args.region, crs) if args.pois is not None else None
        return Public(region, crs, pois, args.region, False)
    print("tracs perturb: " + FROM_DATA_WARNING.format(pois=", the POIs" if pois_needed else ""),
          file=sys.stderr)
    try:
        region = data_region(args.pad or 0.0)
    except ValueError as exc:
        raise CLIError(f"--region-from-data: {exc}; a single point or a line of points spans no "
                       "area: pass --pad METRES, or better --region") from None
    pois = None
    if pois_needed:
        from ..poi_space import POISpace

        pois = POISpace(data_pois(), region=region)
    return Public(region, crs, pois, None, True)


def metric_crs(args, data_crs):
    """The projection: the UTM zone of the region's centre, or ``data_crs()`` (--region-from-data)."""
    return args.region.metric_crs() if args.region is not None else data_crs()
