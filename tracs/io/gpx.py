"""GPX tracks in and out (through gpxpy).

Reading: every segment of every track (or, in a file without tracks, every
route) is one trajectory; the user is the file's name (one GPX file holds one
person's recordings).  A file tracs wrote carries the user and trajectory id of
every track in its ``<extensions>`` (``<tracs:uid>``, ``<tracs:trajectory>``, the
namespace :data:`NAMESPACE`): when every track has them, they are the ids, exactly
as written (the track names are for display only).  Each point keeps its ``<time>``.  Points without
``<time>`` keep no time (none is invented: their ``datetime`` is missing) and
keep the file's order: for ordering only, they sort just after the previous
timed point of their segment (before the next one at the start of a segment;
after the previous segment when their segment has no time at all), so
the stable (user, trajectory, time) order of the loaders leaves them where they
were.  The report lists them (``LoadReport.untimed``) and its summary says how
many there were.

Writing: one ``<trk>`` per trajectory (one ``<trkseg>``), its points in the rows'
order, each with its ``<time>``, or none when its time is missing; its name is
``"<uid> <trajectory>"`` and its ``<extensions>`` hold both ids, every character
but letters, digits, ``.``, ``-`` and ``_`` written as a character reference, so
tabs, line breaks, carriage returns and surrounding spaces read back exactly.  An
id holding a character XML 1.0 cannot hold (a control character other than tab,
line feed and carriage return) is refused with a :class:`GPXIdError` naming it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .raw import RawColumns
from .formats import unsupported
from ..errors import InputError, TracsError

__all__ = ["GPXIdError", "NAMESPACE", "points_table", "read_gpx", "read_gpx_table", "track_ids", "track_names",
           "write_gpx"]

#: the XML namespace of the ids tracs writes in a track's ``<extensions>``
NAMESPACE = "urn:tracs:gpx:1"
_ID_TAGS = ("uid", "trajectory")
#: characters XML 1.0 cannot hold, even as a character reference
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
#: characters of an id written as they are; every other one is a character reference
_PLAIN = re.compile(r"[^\w.-]|_")


class GPXIdError(TracsError, ValueError):
    """An id GPX (XML 1.0) cannot hold."""

#: what a point may hold besides its position and time, as gpxpy names it -> the GPX element
_POINT_PARTS = {"elevation": "ele", "speed": "speed", "course": "course", "magnetic_variation": "magvar",
                "geoid_height": "geoidheight", "name": "name", "comment": "cmt", "description": "desc",
                "source": "src", "symbol": "sym", "type": "type", "type_of_gpx_fix": "fix",
                "satellites": "sat", "horizontal_dilution": "hdop", "vertical_dilution": "vdop",
                "position_dilution": "pdop", "age_of_dgps_data": "ageofdgpsdata", "dgps_id": "dgpsid",
                "link": "link", "extensions": "extensions"}


def _parse(path: Path):
    import gpxpy
    import gpxpy.gpx

    try:
        with open(path, encoding="utf-8") as fh:
            return gpxpy.parse(fh)
    except (gpxpy.gpx.GPXException, ValueError) as exc:
        raise unsupported(path, f"not a readable GPX file: {exc}") from None


def read_gpx_table(path):
    """The points of a GPX file as a :class:`~tracs.io.raw.RawColumns` (uid, trajectory, time, lat, lon,
    and elevation when the file has ``<ele>``).

    ``time`` is the ordering time (see the module docstring); ``untimed`` marks the
    points that have no ``<time>``, whose time the loaders leave missing.
    """
    import pandas as pd

    path = Path(path)
    gpx = _parse(path)
    lat, lon, ele, times, traj = [], [], [], [], []
    segments = [seg.points for trk in gpx.tracks for seg in trk.segments] or \
        [route.points for route in gpx.routes]
    where = [f"track {t + 1} segment {s + 1}" for t, trk in enumerate(gpx.tracks)
             for s in range(len(trk.segments))] or [f"route {r + 1}" for r in range(len(gpx.routes))]
    for k, points in enumerate(segments):
        for p in points:
            lat.append(p.latitude)
            lon.append(p.longitude)
            ele.append(np.nan if p.elevation is None else p.elevation)
            times.append(p.time)
            traj.append(k)
    if not lat:
        raise InputError(f"{path.name} holds no track or route points")
    unread = _unread(gpx, segments)
    time = pd.to_datetime(pd.Series(times, dtype=object), utc=True)
    notes = [_segments_note(segments, where, "track segment" if gpx.tracks else "route")]
    uid, traj = path.stem, np.asarray(traj, dtype=np.int64)
    ids = _ids_of(gpx)
    if ids is not None:  # the ids tracs wrote, per segment
        per_segment = [pair for trk, pair in zip(gpx.tracks, ids) for _ in trk.segments]
        uid = np.array([u for u, _ in per_segment], dtype=object)[traj]
        traj = np.array([t for _, t in per_segment], dtype=object)[traj]
        notes.append("GPX: user and trajectory ids read from the tracks' <extensions>")
    return points_table(uid, traj, time, lat, lon, ele, notes=notes, unread=unread, fmt="gpx")


def points_table(uid, traj, time, lat, lon, ele, *, notes: list, unread: list, fmt: str):
    """The points of a track file (GPX, KML) as a :class:`~tracs.io.raw.RawColumns`: ``uid``
    (one id or one per point), ``trajectory``, ``time`` (UTC; missing ones get the ordering time of
    the module docstring and are marked ``untimed``), ``lat``, ``lon`` and ``elevation`` when some
    point has one."""
    import pandas as pd

    missing = time.isna().to_numpy()
    if missing.any():  # an ordering time only: the loaders set these points' time back to missing
        by_traj = time.groupby(np.asarray(traj))
        filled = by_traj.ffill()
        filled = filled.fillna(filled.groupby(np.asarray(traj)).bfill())
        time = filled.ffill().bfill().fillna(pd.Timestamp(0, tz="UTC"))  # segments with no time at all
    frame = pd.DataFrame({"uid": uid, "trajectory": traj, "time": time,
                          "lat": np.asarray(lat, float), "lon": np.asarray(lon, float)})
    ele = np.asarray(ele, float)
    if not np.isnan(ele).all():  # a column only when the file has heights
        frame["elevation"] = ele
    return RawColumns(frame, np.arange(len(frame), dtype=np.int64), "row", fmt, notes=notes,
                      untimed=missing if missing.any() else None, unread=unread)


def read_gpx(path, request=None):
    """The reader of the format table (:mod:`tracs.io.formats`): :func:`read_gpx_table`, whose
    ``uid``, ``time`` and ``trajectory`` columns are the user, time and trajectory."""
    raw = read_gpx_table(path)
    raw.roles, raw.profile = {"user": "uid", "time": "time", "traj": "trajectory"}, "checkins"
    return raw


def _ids_of(gpx):
    """``[(uid, trajectory), ...]`` of every track, from the ``<extensions>`` tracs writes, or None
    when some track has none (a GPX file of another program: the file's name and the positions)."""
    ids = []
    for trk in gpx.tracks:
        found = {e.tag.rsplit("}", 1)[-1]: e.text or "" for e in trk.extensions or ()
                 if e.tag.startswith("{" + NAMESPACE + "}")}
        if not all(tag in found for tag in _ID_TAGS):
            return None
        ids.append((found["uid"], found["trajectory"]))
    return ids or None


def track_ids(path):
    """The ``(uid, trajectory)`` ids tracs wrote of every track of a GPX file, or None (see
    :func:`_ids_of`)."""
    return _ids_of(_parse(Path(path)))


def _unread(gpx, segments) -> list:
    """The parts of a GPX file that are not read (``"<ele>"``, ``"3 waypoints"``, ...), for the
    "not released" message: every point element besides position and time, waypoints, and
    routes or tracks left aside."""
    out = []
    points = [p for points in segments for p in points]
    for attribute, element in _POINT_PARTS.items():
        if attribute == "elevation":
            continue  # a column of the table (``elevation``), listed with the columns
        if attribute == "extensions":
            tags = {e.tag.rsplit("}", 1)[-1] for p in points for e in (p.extensions or ())}
            out.extend(f"<extensions>/{tag}" for tag in sorted(tags))
        elif any(getattr(p, attribute, None) not in (None, [], "") for p in points):
            out.append(f"<{element}>")
    if gpx.waypoints:
        out.append(f"{len(gpx.waypoints):,} waypoint(s)")
    if gpx.tracks and gpx.routes:
        out.append(f"{len(gpx.routes):,} route(s)")
    return out


def _segments_note(segments, where, kind: str) -> str:
    """How many segments (routes) became trajectories, and which were empty (left out)."""
    empty = [w for w, points in zip(where, segments) if not points]
    note = f"GPX: {len(segments) - len(empty):,} {kind}(s) read as trajectories"
    if empty:
        shown = ", ".join(empty[:5]) + (", ..." if len(empty) > 5 else "")
        note += f"; {len(empty):,} empty {kind}(s) without points left out ({shown})"
    return note


def write_gpx(path, *, lat, lon, times, trajectory, names=None, users=None, metadata=None) -> None:
    """Write points as GPX tracks: one ``<trk>`` per distinct ``trajectory`` value (per distinct
    ``(users, trajectory)`` pair when ``users`` is given: trajectory ids numbered within each
    user), in first-seen order.

    ``times`` are UTC ``datetime64`` values (``NaT``: no ``<time>``); ``names``
    optionally labels each trajectory (the user id).  With ``users``, each track's
    ``<extensions>`` hold its user and trajectory ids (see the module docstring);
    ``metadata``, an ``(element, namespaces)`` pair, is written in ``<metadata><extensions>``.

    Raises
    ------
    GPXIdError
        An id holding a character XML 1.0 cannot hold (nothing is written).
    """
    import gpxpy.gpx
    import pandas as pd

    traj = np.asarray(trajectory)
    owners = None
    if users is None:
        codes, uniques = pd.factorize(traj)
    else:
        codes, pairs = pd.factorize(pd.MultiIndex.from_arrays([np.asarray(users), traj]))
        owners, uniques = pairs.get_level_values(0), pairs.get_level_values(1)
    stamps = pd.DatetimeIndex(pd.Series(times)).tz_localize(None) if not isinstance(
        pd.Series(times).dtype, pd.DatetimeTZDtype) else pd.DatetimeIndex(pd.Series(times)).tz_convert(None)
    gpx = gpxpy.gpx.GPX()
    if owners is not None:
        gpx.nsmap["tracs"] = NAMESPACE
        _check_ids(owners, "user id")
        _check_ids(uniques, "trajectory id")
    if metadata is not None:
        element, namespaces = metadata
        gpx.name = "tracs release"  # gpxpy writes <metadata> (and its extensions) when a field of it is set
        gpx.metadata_extensions.append(element)
        gpx.nsmap.update(namespaces)
    order = np.argsort(codes, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(codes, minlength=len(uniques)))]
    lat, lon = np.asarray(lat, float), np.asarray(lon, float)
    for k in range(len(uniques)):
        rows = order[bounds[k]:bounds[k + 1]]
        name = f"{names[rows[0]]} {uniques[k]}" if names is not None else str(uniques[k])
        track = gpxpy.gpx.GPXTrack(name=name)
        if owners is not None:
            for tag, value in zip(_ID_TAGS, (owners[k], uniques[k])):
                element = ET.Element(f"{{{NAMESPACE}}}{tag}")
                element.text = _PLAIN.sub(lambda m: f"&#{ord(m.group())};", str(value))
                track.extensions.append(element)
        segment = gpxpy.gpx.GPXTrackSegment()
        for i in rows:
            t = stamps[i]
            segment.points.append(gpxpy.gpx.GPXTrackPoint(
                float(lat[i]), float(lon[i]),
                time=None if pd.isna(t) else t.to_pydatetime().replace(tzinfo=__import__("datetime").timezone.utc)))
        track.segments.append(segment)
        gpx.tracks.append(track)
    Path(path).write_text(gpx.to_xml(), encoding="utf-8")


def _check_ids(values, what: str) -> None:
    """Refuse ids XML 1.0 cannot hold, naming the first and its character."""
    for value in values:
        bad = _NOT_XML.search(str(value))
        if bad:
            raise GPXIdError(f"GPX cannot hold the {what} {str(value)!r}: its character U+{ord(bad.group()):04X} "
                             f"(at position {bad.start()}) is not allowed in XML 1.0; write the release as CSV, "
                             "TSV or GeoParquet, which keep every id")


def track_names(path) -> list:
    """The name of the track of every segment (the trajectories of :func:`read_gpx_table`), in order."""
    gpx = _parse(Path(path))
    return [trk.name for trk in gpx.tracks for _ in trk.segments] or [route.name for route in gpx.routes]
