"""The options of the public parameters (``--region``, ``--pois``, ``--clip`` / ``--drop``) and their
steps on parsed options.

The steps themselves are :mod:`tracs.release.area`'s (the region, its projection and
POI set, rows outside the region): these adapters give them the options of ``args``,
the command's option names for messages and a printer of its notes.
"""

from __future__ import annotations

import argparse

from ._columns import FLAGS


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


def _say(command: str):
    from ..release.notes import printer

    return printer(f"tracs {command}")


def _outside(args):
    return "clip" if getattr(args, "clip", False) else "drop" if getattr(args, "drop", False) else None




def check_projection(box) -> None:
    """Refuse, before any data is read, a region its projection cannot hold (too wide)."""
    from ..release.area import check_projection as check

    check(box)


def check_region_file(args, command: str) -> None:
    """Say how a region given as a polygon file was read (the bounds of its polygons)."""
    box = getattr(args, "region", None)
    if box is not None and getattr(box, "path", None) is not None:
        _say(command)(f"note: --region {box} is {box.source}")




def frame_in_region(frame, args, *, command: str):
    """:func:`tracs.release.area.outside_rows` on a loader's GeoDataFrame (WGS84): ``(frame, handled)``, the
    rows outside the region refused, dropped or clipped as ``args`` asks, and their labels."""
    from data_loaders import SOURCE_COLUMNS

    from ..io.batch_files import place_labels, with_points
    from ..release.area import dropped_before, outside_rows

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
    keep, new_lon, new_lat, handled = outside_rows(lon, lat, args.region, labels, outside=_outside(args),
                                                   before=dropped_before(frame.attrs.get("report")),
                                                   flags=FLAGS, say=_say(command))
    if not handled:
        return frame, handled
    if keep is not None:
        return frame[keep].reset_index(drop=True), handled
    import geopandas as gpd

    return frame.set_geometry(gpd.points_from_xy(new_lon, new_lat, crs=frame.crs)), handled
