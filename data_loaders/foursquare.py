"""Foursquare TSMC2014 check-ins (Tokyo, New York).

Two forms are read, detected from the first line:

* the original ``dataset_TSMC2014_TKY.txt`` / ``..._NYC.txt``: tab-separated, no
  header, eight fields per line: user id, venue id, venue category id, venue
  category name, latitude, longitude, timezone offset (minutes), UTC time;
* the same columns as CSV (or TSV) with a header, such as ``User ID, Venue ID,
  Venue Category, Venue Name, Latitude, Longitude, Timezone, UTC Time``.  In that
  header "Venue Category" holds the category *id* and "Venue Name" the category
  *name* (the original data has no venue names); columns are matched by name, in
  any order.

The UTC time looks like ``Sat Dec 08 05:56:34 +0000 2012``; it is parsed
vectorised with that fixed layout (weekday ignored, numeric offset applied).
Source: D. Yang, D. Zhang, V. W. Zheng, Z. Yu, "Modeling User Activity Preference
by Leveraging User Spatial Temporal Characteristics in LBSNs", IEEE TSMC 2015.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from tracs.io.checkins import integer_ids
from tracs.io.foursquare_time import parse_foursquare_time

from ._fixed import load_known_format

__all__ = ["load_foursquare", "parse_foursquare_time"]

_COLUMNS = ("user", "venue", "category_id", "category", "lat", "lng", "offset", "time")
_ALIASES = {
    "userid": "user", "user": "user", "uid": "user",
    "venueid": "venue", "venue": "venue",
    "venuecategoryid": "category_id", "venuecategory": "category_id", "categoryid": "category_id",
    "venuecategoryname": "category", "venuename": "category", "categoryname": "category",
    "category": "category",
    "latitude": "lat", "lat": "lat",
    "longitude": "lng", "lng": "lng", "lon": "lng", "long": "lng",
    "timezone": "offset", "timezoneoffset": "offset", "timezoneoffsetinminutes": "offset",
    "utcoffset": "offset", "offset": "offset",
    "utctime": "time", "utctimestamp": "time", "time": "time", "timestamp": "time",
}
def _offsets(values: pd.Series) -> pd.Series:
    """Timezone offsets in minutes: int64, nullable Int64 when some are missing."""
    offset = pd.to_numeric(values, errors="coerce").astype("float64")
    offset[~np.isfinite(offset)] = np.nan
    if not (offset.dropna() % 1 == 0).all():
        return offset
    return offset.astype("Int64") if offset.isna().any() else offset.astype(np.int64)


def _columns(raw: pd.DataFrame, notes: list) -> dict:
    """Raw Foursquare columns -> the columns of the loaded frame."""
    time = parse_foursquare_time(raw["time"])
    offset = _offsets(raw["offset"])
    if offset.isna().any():
        notes.append(f"{int(offset.isna().sum())} rows have no valid timezone offset: "
                     "their local_time and utc_offset are missing")
    local = (time + pd.to_timedelta(offset.astype("float64"), unit="min")).dt.tz_localize(None)
    return dict(uid=integer_ids(raw["user"], notes), time=time, lat=raw["lat"], lng=raw["lng"],
                poi=raw["venue"], extra={"category": raw["category"],
                                         "category_id": raw["category_id"],
                                         "local_time": local, "utc_offset": offset})


def load_foursquare(path, *, strict: bool = False, duplicates: str = "keep",
                    encoding: str | None = None):
    """Load Foursquare TSMC2014 check-ins (original TSV or CSV with header).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    strict : bool, default False
        Raise :class:`~data_loaders.DroppedRowsError` instead of dropping any row.
    duplicates : {"keep", "drop_exact", "drop_user_time"}, default "keep"
        What to do with repeated rows (always listed in the report).
    encoding : str, optional
        Default: UTF-8 with a latin-1 fallback for bytes that are not UTF-8 (the
        original files are latin-1); an explicit encoding is used strictly.

    Returns
    -------
    geopandas.GeoDataFrame
        WGS84 points with columns ``uid`` (int; the text of every id, as written, when
        some id is written otherwise than as a plain integer, e.g. ``007``), ``datetime`` (UTC), ``poi_id``
        (venue id, str), ``category``, ``category_id``, ``local_time`` (naive local
        wall-clock time: UTC plus the offset), ``utc_offset`` (minutes),
        ``geometry``; sorted by (uid, datetime), ties in file order;
        ``attrs["report"]`` a :class:`~data_loaders.LoadReport`.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        Empty file, not a Foursquare file (field count or header), undecodable with
        an explicit encoding, no valid row left, or a drop with ``strict=True``.
    """
    return load_known_format(
        path, name="foursquare", parse=_columns, duplicates=duplicates, strict=strict,
        encoding=encoding, what="Foursquare TSMC2014", columns=_COLUMNS, aliases=_ALIASES,
        text=("user", "venue", "category_id", "category", "time"),
        describe="user, venue, category id, category, latitude, longitude, timezone offset, "
                 "UTC time",
        hints={5: " (it looks like Gowalla: use load_gowalla)"})
