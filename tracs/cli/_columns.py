"""Command-line options for reading users' files: column names, time layout, margin, quiet.

``add_input_arguments`` adds ``--user-col``, ``--time-col``, ``--lat-col``,
``--lon-col``, ``--traj-col``, ``--time-format``, ``--dayfirst``, ``--timezone``,
``--ambiguous``, ``--no-time`` (and, where the
command builds a region from the data, ``--pad``); ``read_options`` turns them
into the keyword arguments of :func:`tracs.io.read_checkins` /
:func:`tracs.io.batch_files.read_points`, with the option names used in messages.
"""

from __future__ import annotations

import argparse
import math

#: the option naming each parameter of the reading and of the release, for messages
FLAGS = {"user": "--user-col", "time": "--time-col", "lat": "--lat-col", "lon": "--lon-col",
         "traj": "--traj-col", "time_format": "--time-format", "dayfirst": "--dayfirst", "tz": "--timezone",
         "ambiguous": "--ambiguous", "no_time": "--no-time", "split_gap": "--split-gap",
         "region": "--region", "region_from_data": "--region-from-data", "pad": "--pad", "pois": "--pois",
         "clip": "--clip", "drop": "--drop", "strict": "--strict", "round_to_pois": "--round-to-pois"}
#: what ``--input-format`` accepts (``tracs.io.formats.input_formats()``)
INPUT_FORMAT_HELP = ("how to read INPUT: checkins (columns uid, datetime, lat, lng; also GeoJSON / GeoParquet), "
                     "foursquare, gowalla, geolife (a folder of Data/<user>/Trajectory/*.plt or one .plt file), "
                     "tdrive (headerless taxi_id,datetime,lon,lat files, or their folder), porto (the ECML/PKDD "
                     "2015 taxi CSV with POLYLINE), cabspotting (headerless 'lat lon occupancy epoch' files "
                     "new_<cab>.txt, or their folder), or auto (default: detected from the layout)")


def _metres(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of metres, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of metres >= 0, got {text!r}")
    return value


def add_input_arguments(parser, *, pad: bool = False, quiet: bool = False) -> None:
    """Add the column, time and (optionally) ``--pad`` / ``--quiet`` options to ``parser``."""
    g = parser.add_argument_group(
        "columns and times of INPUT",
        "Columns are found by name (case, spaces, '_' and '-' ignored): user: uid, user_id, user; "
        "time: datetime, time, timestamp; latitude: lat, latitude, y; longitude: lng, lon, long, "
        "longitude, x; trajectory (optional): trajectory, traj, trip, track.  Name others here.  "
        "Each user's times are read by the layout, day/month order and epoch unit of that user's own "
        "values (or by --time-format).")
    g.add_argument("--user-col", metavar="NAME", help="column of user ids")
    g.add_argument("--time-col", metavar="NAME",
                   help="column of times, or DATE,TIME: a date column and a time-of-day column joined "
                        "(a file without one is refused unless --no-time)")
    g.add_argument("--no-time", action="store_true",
                   help="read no time: points keep the file's order within each user and are written "
                        "without a time (a file without a time column needs it)")
    g.add_argument("--lat-col", metavar="NAME", help="column of latitudes (degrees, WGS84)")
    g.add_argument("--lon-col", metavar="NAME", help="column of longitudes (degrees, WGS84)")
    g.add_argument("--traj-col", metavar="NAME",
                   help="column of trajectory ids: a new trajectory starts where it changes within a user")
    g.add_argument("--time-format", metavar="FMT",
                   help="strftime layout of the times, e.g. '%%d/%%m/%%Y %%H:%%M', or epoch-s, epoch-ms, "
                        "epoch-us, epoch-ns (%%s: epoch-s) for Unix epoch numbers (default: ISO 8601 or the "
                        "Foursquare layout; epoch numbers by their magnitude and other common layouts are "
                        "recognised and reported)")
    g.add_argument("--dayfirst", action="store_true",
                   help="read a user's dates that read both ways, such as 01/02/2024, day first (default: "
                        "month first)")
    g.add_argument("--id-type", choices=("text", "infer"), default="text",
                   help="user ids of text files: text (default: exactly as written, so 007 and 7 are two "
                        "users) or infer (numbers when every id is an integer: 007 becomes 7)")
    g.add_argument("--timezone", metavar="ZONE", default=None,
                   help="zone of times written without one: a name such as Europe/Lisbon or a constant "
                        "offset such as +01:00 (default: UTC); a time the zone skips (clocks jump forward) "
                        "is dropped as bad_time with its reason")
    g.add_argument("--ambiguous", choices=("earlier", "later"), default="earlier",
                   help="a time the zone repeats (clocks go back) is read as its earlier occurrence "
                        "(default: earlier, summer time, zoneinfo fold=0) or its later one (later, fold=1)")
    if not any("--input-format" in a.option_strings for a in parser._actions):
        from ..io.formats import input_formats

        g.add_argument("--input-format", default="auto", choices=input_formats(), help=INPUT_FORMAT_HELP)
    if pad:
        parser.add_argument("--pad", type=_metres, default=0.0, metavar="METRES",
                            help="margin added on every side of the data's bounding region (default: 0)")
    if quiet:
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="no progress bar (there is none either when standard error is not a terminal)")


def read_options(args) -> dict:
    """The reading keyword arguments named by the options of ``args``."""
    return dict(user=getattr(args, "user_col", None), time=getattr(args, "time_col", None),
                lat=getattr(args, "lat_col", None), lon=getattr(args, "lon_col", None),
                traj=getattr(args, "traj_col", None), time_format=getattr(args, "time_format", None),
                dayfirst=bool(getattr(args, "dayfirst", False)), flags=FLAGS,
                id_type=getattr(args, "id_type", None) or "text",
                tz=getattr(args, "timezone", None) or "UTC",
                ambiguous=getattr(args, "ambiguous", None) or "earlier",
                no_time=bool(getattr(args, "no_time", False)),
                input_format=_input_format(getattr(args, "input_format", "auto")))


def _input_format(value) -> str:
    return "auto" if value in (None, "auto") else value


def check_input(source, args) -> None:
    """Refuse an INPUT that is neither a file nor a folder of a public trajectory data set
    (:func:`tracs.release.paths.check_input`)."""
    from ..release.paths import check_input as check

    check(source, _input_format(getattr(args, "input_format", "auto")))


def read_input(args, path):
    """Read ``path`` as check-ins (the loaders' GeoDataFrame) with the options of ``args``."""
    from ..io import read_checkins

    return read_checkins(path, **read_options(args))


def progress_bar(total: int, *, quiet: bool, desc: str):
    """A bar of points (:func:`tracs._progress.progress_bar`: after 2 s, on a terminal, unless quiet)."""
    from .._progress import progress_bar as bar

    return bar(total, desc=desc, unit="pt", unit_scale=True, enabled=not quiet)
