"""Check-in data for tracs: Foursquare, Gowalla, any table, synthetic cities.

Every loader returns the same form: a WGS84 :class:`geopandas.GeoDataFrame` with
``uid``, ``datetime`` (UTC), ``poi_id`` (where known) and point geometry, sorted
by (uid, datetime) with ties in input order, and ``attrs["report"]`` (a
:class:`LoadReport`) listing every dropped row with its reason and line number.
:func:`to_trajectories` groups such a frame into a :class:`tracs.Trajectories`
in metres.
"""

from ._report import DROP_REASONS, DroppedRowsError, GroupingReport, LoadReport
from .foursquare import load_foursquare, parse_foursquare_time
from .generic import load_checkins
from .gowalla import load_gowalla
from .grouping import to_trajectories

__all__ = [
    "DROP_REASONS", "DroppedRowsError", "GroupingReport", "LoadReport",
    "load_checkins", "load_foursquare", "load_gowalla", "parse_foursquare_time", "to_trajectories",
]
