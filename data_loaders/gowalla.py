"""Gowalla check-ins (SNAP ``loc-gowalla_totalCheckins.txt`` and CSV extracts).

Two forms are read, detected from the first line:

* the SNAP original: tab-separated, no header, five fields per line: user id,
  check-in time (ISO 8601, ``2010-10-19T23:55:27Z``), latitude, longitude,
  location id;
* CSV (or TSV) with a header naming those columns in any order, such as
  ``User ID, Latitude, Longitude, Timestamp, Location ID`` with times like
  ``2010-09-01 17:25:27`` (UTC).

Times without an offset are UTC (as in the SNAP data).  Source: E. Cho,
S. A. Myers, J. Leskovec, "Friendship and Mobility: User Movement in
Location-Based Social Networks", KDD 2011.
"""

from __future__ import annotations

import pandas as pd

from tracs.io.checkins import integer_ids

from ._fixed import load_known_format

__all__ = ["load_gowalla", "parse_iso_time"]

_COLUMNS = ("user", "time", "lat", "lng", "location")
_ALIASES = {
    "userid": "user", "user": "user", "uid": "user",
    "checkintime": "time", "timestamp": "time", "time": "time", "datetime": "time",
    "utctime": "time", "date": "time",
    "latitude": "lat", "lat": "lat",
    "longitude": "lng", "lng": "lng", "lon": "lng", "long": "lng",
    "locationid": "location", "location": "location", "spotid": "location",
    "venueid": "location", "poiid": "location",
}


def parse_iso_time(values) -> pd.Series:
    """Parse ISO 8601 strings (``2010-10-19T23:55:27Z``, ``2010-09-01 17:25:27``) to UTC.

    Strings without an offset are taken as UTC; anything unparsable gives ``NaT``.
    Vectorised (pandas' ISO 8601 parser).
    """
    s = pd.Series(values, copy=False).reset_index(drop=True)
    if not (pd.api.types.is_string_dtype(s.dtype) or s.dtype == object):
        s = s.astype("string")
    return pd.to_datetime(s, format="ISO8601", utc=True, errors="coerce")


def _columns(raw: pd.DataFrame, notes: list) -> dict:
    """Raw Gowalla columns -> the columns of the loaded frame (integer location ids
    where every id is an integer)."""
    location = raw["location"]
    if not pd.api.types.is_integer_dtype(location.dtype):
        numeric = integer_ids(location)
        if isinstance(numeric.dtype, pd.Int64Dtype) and numeric.notna().sum() == location.notna().sum():
            location = numeric.astype("Int64") if numeric.isna().any() else numeric.astype("int64")
    return dict(uid=integer_ids(raw["user"], notes), time=parse_iso_time(raw["time"]), lat=raw["lat"],
                lng=raw["lng"], poi=location)


def load_gowalla(path, *, strict: bool = False, duplicates: str = "keep",
                 encoding: str | None = None):
    """Load Gowalla check-ins (SNAP tab-separated original or CSV with header).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    strict : bool, default False
        Raise :class:`~data_loaders.DroppedRowsError` instead of dropping any row.
    duplicates : {"keep", "drop_exact", "drop_user_time"}, default "keep"
        What to do with repeated rows (always listed in the report).
    encoding : str, optional
        Default: UTF-8 with a latin-1 fallback; an explicit encoding is strict.

    Returns
    -------
    geopandas.GeoDataFrame
        WGS84 points with columns ``uid`` (int; the text of every id, as written, when
        some id is written otherwise than as a plain integer, e.g. ``007``), ``datetime`` (UTC), ``poi_id``
        (location id), ``geometry``; sorted by (uid, datetime), ties in file order;
        ``attrs["report"]`` a :class:`~data_loaders.LoadReport`.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        Empty file, not a Gowalla file (field count or header), no valid row left,
        or a drop with ``strict=True``.
    """
    return load_known_format(
        path, name="gowalla", parse=_columns, duplicates=duplicates, strict=strict,
        encoding=encoding, what="Gowalla check-in", columns=_COLUMNS, aliases=_ALIASES,
        text=("user", "location"),
        describe="user, time, latitude, longitude, location id",
        hints={8: " (it looks like Foursquare: use load_foursquare)"})
