"""Column profiles: the names a kind of check-in file gives its columns (``--input-format``).

A profile changes which column names are taken for the user, the time and the
venue (Foursquare's ``venueid`` / ``utctime``, Gowalla's ``userid`` /
``locationid``), whatever the container; :func:`headerless_profile` recognises the
original headerless Foursquare and Gowalla text files by their first line.
"""

from __future__ import annotations

from .columns import normalise
from .times import ISO_TIME as GOWALLA

__all__ = ["HEADERLESS", "PROFILES", "find_poi", "headerless_profile", "profile_of"]

#: profile -> role -> aliases replacing the generic ones
PROFILES = {
    "checkins": {},
    "foursquare": {"user": ("userid", "user", "uid"), "time": ("utctime", "utctimestamp", "time", "timestamp"),
                   "poi": ("venueid", "venue")},
    "gowalla": {"user": ("userid", "user", "uid"), "time": ("timestamp", "checkintime", "time", "utctime"),
                "poi": ("locationid", "location", "spotid")},
}
#: the column names of the headerless original files
HEADERLESS = {"foursquare": ("user", "venue", "category_id", "category", "lat", "lng", "offset", "time"),
              "gowalla": ("user", "time", "lat", "lng", "location")}


def profile_of(names) -> str:
    """The profile a header implies: ``"foursquare"``, ``"gowalla"`` or ``"checkins"``."""
    keys = {normalise(n) for n in names}
    if {"venueid", "utctime"} <= keys:
        return "foursquare"
    if {"userid", "locationid"} <= keys:
        return "gowalla"
    return "checkins"


def find_poi(names, profile) -> str | None:
    """The venue column among ``names`` for ``profile``, or None."""
    by_key = {normalise(n): n for n in names}
    for alias in PROFILES.get(profile, {}).get("poi", ()) + ("poiid",):
        if alias in by_key:
            return by_key[alias]
    return None


def headerless_profile(head, input_format) -> str | None:
    """``"foursquare"`` / ``"gowalla"`` for the original headerless files (``head``: the
    first line, :class:`tracs.io.delimited_text.Head`), else None."""
    from .foursquare_time import FOURSQUARE_TIME as FOURSQUARE

    fields = head.fields
    if input_format in ("auto", "foursquare") and len(fields) == 8 and FOURSQUARE.match(fields[7]):
        return "foursquare"
    if input_format in ("auto", "gowalla") and len(fields) == 5 and GOWALLA.match(fields[1]):
        return "gowalla"
    return None
