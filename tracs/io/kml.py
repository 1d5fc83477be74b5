"""KML tracks in (read as GPX is: :mod:`tracs.io.gpx`).

What is read, in the file's order:

* every ``<gx:Track>`` (also inside ``<gx:MultiTrack>``) is one trajectory: its
  ``<when>`` times and ``<gx:coord>`` positions (``lon lat [alt]``), pair by pair;
* every ``<LineString>`` is one trajectory of points without times (like GPX points
  without ``<time>``: they keep the line's order and are written without a time);
* the ``<Point>`` placemarks together are one more trajectory, each point timed by
  its placemark's ``<TimeStamp><when>`` (or untimed without one).

The user is the file's name (one KML file holds one person's recordings, as GPX);
trajectories are numbered from 0 in that order.  Other geometries (polygons, models)
are not read, and the "not released" message names them.  The file is parsed by
:mod:`xml.etree.ElementTree`, one element at a time, as gpxpy parses GPX.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .formats import unsupported
from .gpx import points_table
from ..errors import InputError

__all__ = ["read_kml", "read_kml_table"]


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse(path: Path):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, UnicodeDecodeError) as exc:
        raise unsupported(path, f"not a readable KML file: {exc}") from None
    if _local(root.tag) != "kml":
        raise unsupported(path, f"not a KML file: its root element is <{_local(root.tag)}>")
    return root


def _children(element, name: str) -> list:
    return [e for e in element if _local(e.tag) == name]


def _lonlat(tokens, sep, source: str, where: str) -> np.ndarray:
    """``(n, 3)`` lon, lat, altitude (NaN when absent) of coordinate tuples; a tuple that is not
    numbers raises naming the element."""
    out = np.full((len(tokens), 3), np.nan)
    for k, token in enumerate(tokens):
        parts = token.split(sep) if sep else token.split()
        try:
            values = [float(v) for v in parts[:3]]
        except ValueError:
            values = []
        if len(values) < 2:
            raise InputError(f"{source}: {where}: coordinate {k + 1} ({token!r}) is not lon,lat[,alt]")
        out[k, :len(values)] = values
    return out


def read_kml_table(path):
    """The points of a KML file as a :class:`~tracs.io.raw.RawColumns` (the columns of
    :func:`tracs.io.gpx.read_gpx_table`); see the module docstring."""
    import pandas as pd

    path = Path(path)
    root = _parse(path)
    parts, times, others = [], [], {}
    points, point_times = [], []
    for number, placemark in enumerate((e for e in root.iter() if _local(e.tag) == "Placemark"), 1):
        stamp = next((w.text for t in placemark.iter() if _local(t.tag) == "TimeStamp"
                      for w in _children(t, "when")), None)
        for geometry in placemark.iter():
            kind = _local(geometry.tag)
            where = f"placemark {number} <{kind}>"
            if kind == "Track":
                whens = [w.text or "" for w in _children(geometry, "when")]
                coords = [c.text or "" for c in _children(geometry, "coord")]
                if len(whens) != len(coords) and whens:
                    raise InputError(f"{path.name}: {where}: {len(whens)} <when> for {len(coords)} <gx:coord>: "
                                     "a track gives one time per position")
                parts.append(_lonlat(coords, None, path.name, where))
                times.append(whens or [None] * len(coords))
            elif kind == "LineString":
                text = " ".join(c.text or "" for c in _children(geometry, "coordinates"))
                parts.append(_lonlat(text.split(), ",", path.name, where))
                times.append([None] * len(parts[-1]))
            elif kind == "Point":
                tokens = " ".join(c.text or "" for c in _children(geometry, "coordinates")).split()
                if len(tokens) != 1:
                    raise InputError(f"{path.name}: {where}: {len(tokens)} coordinates: a point has one lon,lat[,alt]")
                points.append(_lonlat(tokens, ",", path.name, where))
                point_times.append(stamp)
            elif kind in ("Polygon", "Model"):
                others[kind] = others.get(kind, 0) + 1
    if points:
        parts.append(np.vstack(points))
        times.append(point_times)
    lengths = [len(p) for p in parts]
    if not sum(lengths):
        raise InputError(f"{path.name} holds no <gx:Track>, <LineString> or <Point> positions")
    xyz = np.vstack(parts)
    traj = np.repeat(np.arange(len(parts), dtype=np.int64), lengths)
    time = pd.to_datetime(pd.Series([t for ts in times for t in ts], dtype=object), utc=True, errors="coerce",
                          format="ISO8601")
    tracks = len(parts) - bool(points)
    notes = [f"KML: {tracks:,} track(s) or line(s) read as trajectories"
             + (f", {len(points):,} point placemark(s) as one more" if points else "")]
    unread = [f"{n:,} <{kind}>" for kind, n in sorted(others.items())]
    return points_table(path.stem, traj, time, xyz[:, 1], xyz[:, 0], xyz[:, 2], notes=notes, unread=unread,
                        fmt="kml")


def read_kml(path, request=None):
    """The reader of the format table (:mod:`tracs.io.formats`): :func:`read_kml_table`, whose
    ``uid``, ``time`` and ``trajectory`` columns are the user, time and trajectory."""
    raw = read_kml_table(path)
    raw.roles, raw.profile = {"user": "uid", "time": "time", "traj": "trajectory"}, "checkins"
    return raw
