"""Which column of a table holds the user, the time, the coordinates, the trajectory.

A :class:`ColumnMap` names the columns of one table.  :func:`resolve_columns`
builds it from the names a user gave (any of them may be omitted) and, for the
others, from common aliases matched case-insensitively, ignoring spaces, ``_``
and ``-`` (``User ID`` = ``user_id`` = ``userid``):

========  =====================================================================
user      uid, user_id, userid, user, user id, individual-local-identifier
          (Movebank), MMSI (AIS), TaxiID
time      datetime, time, timestamp, utc_time, checkin_time, tracked_at
          (trackintel, Posmo), BaseDateTime (AIS)
lat       lat, latitude, y, location-lat (Movebank)
lon       lng, lon, long, longitude, x, location-long (Movebank)
traj      trajectory, trajectory_id, traj, traj_id, trip_id, trip, track
========  =====================================================================

:data:`ALIASES` is the one table of these names (``docs/data.md`` lists it).

Every missing column is reported at once, with the aliases looked for, the
columns found and the option that names it (``--lat-col`` on the command line,
``lat=`` in Python: the caller chooses through ``flags``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import column_key as normalise
from ..errors import TracsError

__all__ = ["ALIASES", "API_FLAGS", "CLI_FLAGS", "ColumnMap", "MissingColumnsError", "resolve_columns"]

#: role -> aliases in order of preference (normalised: lower case, letters and digits)
ALIASES = {
    "user": ("uid", "userid", "user", "individuallocalidentifier", "mmsi", "taxiid"),
    "time": ("datetime", "time", "timestamp", "utctime", "checkintime", "trackedat", "basedatetime"),
    "lat": ("lat", "latitude", "y", "locationlat"),
    "lon": ("lng", "lon", "long", "longitude", "x", "locationlong"),
    "traj": ("trajectory", "trajectoryid", "traj", "trajid", "tripid", "trip", "track"),
}
#: how each role is described in messages
ROLE_NAMES = {"user": "user id", "time": "time", "lat": "latitude", "lon": "longitude",
              "traj": "trajectory id"}
#: the options naming each column, for messages: command line and Python
CLI_FLAGS = {"user": "--user-col", "time": "--time-col", "lat": "--lat-col", "lon": "--lon-col",
             "traj": "--traj-col"}
API_FLAGS = {"user": "user=", "time": "time=", "lat": "lat=", "lon": "lng=", "traj": "traj="}


class MissingColumnsError(TracsError, ValueError):
    """Some columns could not be found; ``missing`` lists their roles, ``found`` the columns."""

    def __init__(self, message: str, missing, found):
        super().__init__(message)
        self.missing = tuple(missing)
        self.found = list(found)


@dataclass(frozen=True)
class ColumnMap:
    """The column holding each role in one table (``None``: not present / not needed).

    ``lat`` / ``lon`` are ``None`` when the coordinates come from a geometry column.
    """

    user: str
    time: str | None
    lat: str | None
    lon: str | None
    traj: str | None = None

    def used(self) -> list:
        """The column names in use, in role order."""
        return [c for c in (self.user, self.time, self.lat, self.lon, self.traj) if c is not None]


def _find(role: str, by_key, aliases) -> str | None:
    for alias in aliases.get(role, ()):
        if alias in by_key:
            return by_key[alias]
    return None


def resolve_columns(columns, *, user=None, time=None, lat=None, lon=None, traj=None,
                    need_time: bool = True, need_coords: bool = True, flags=None,
                    source: str = "the input", aliases=None) -> ColumnMap:
    """Find the columns of ``columns`` for each role.

    Parameters
    ----------
    columns : sequence of str
        The table's column names.
    user, time, lat, lon, traj : str, optional
        Names given by the user; they must exist (exactly, or up to case and
        punctuation).  Omitted ones are looked up among :data:`ALIASES`; ``traj``
        is optional.
    need_time, need_coords : bool
        Whether a time column and latitude/longitude columns are required
        (coordinates are not when the table has point geometry; without
        ``need_time`` a time column is still looked for, and ``time`` is None
        when there is none).
    flags : dict, optional
        Role -> option name for messages (:data:`CLI_FLAGS` or :data:`API_FLAGS`,
        the default).
    source : str
        The table's name, for messages.
    aliases : dict, optional
        Role -> aliases (normalised) replacing those of :data:`ALIASES` for a
        known format (Foursquare's ``UTC Time``, Gowalla's ``Location ID``, ...).

    Raises
    ------
    MissingColumnsError
        Every required role without a column, in one message.
    """
    flags = API_FLAGS if flags is None else flags
    aliases = {**ALIASES, **(aliases or {})}
    columns = [str(c) for c in columns]
    by_key = {}
    for name in columns:
        by_key.setdefault(normalise(name), name)
    given = {"user": user, "time": time, "lat": lat, "lon": lon, "traj": traj}
    required = ["user"] + (["time"] if need_time else []) + (["lat", "lon"] if need_coords else [])
    found, problems = {}, []
    for role, name in given.items():
        if name is not None:
            hit = name if name in columns else by_key.get(normalise(name))
            if hit is None:
                problems.append((role, f"{ROLE_NAMES[role]}: no column {name!r} ({flags[role]} {name})"))
            found[role] = hit
        elif role in required or role in ("traj", "time") or (role in ("lat", "lon") and not need_coords):
            found[role] = _find(role, by_key, aliases)
            if found[role] is None and role in required:
                looked = ", ".join(aliases[role])
                problems.append((role, f"{ROLE_NAMES[role]}: none of {looked} (name it with "
                                       f"{flags[role]} NAME)"))
    if problems and not need_time and found.get("time") is None and time is None:
        # another column is missing too: the file is likely not what it seems, so name the time as well
        problems.append(("time", f"{ROLE_NAMES['time']}: none of {', '.join(aliases['time'])} (name it with "
                                 f"{flags['time']} NAME)"))
        order = list(ROLE_NAMES)
        problems.sort(key=lambda p: order.index(p[0]))
    if problems:
        raise MissingColumnsError(
            f"{source}: missing column(s) for " + "; ".join(text for _, text in problems)
            + f". Columns found: {', '.join(columns) if columns else '(none)'}",
            [role for role, _ in problems], columns)
    return ColumnMap(user=found["user"], time=found.get("time"), lat=found.get("lat"),
                     lon=found.get("lon"), traj=found.get("traj"))
