"""Check-in and trajectory data for tracs: Foursquare, Gowalla, Geolife, T-Drive, Porto taxis,
any table, synthetic cities.

Every loader returns the same form: a WGS84 :class:`geopandas.GeoDataFrame` with
``uid``, ``datetime`` (UTC), ``poi_id`` (where known) and point geometry, sorted
by (uid, datetime) with ties in input order, and ``attrs["report"]`` (a
:class:`LoadReport`) listing every dropped row with its reason and line number.
:func:`to_trajectories` groups such a frame into a :class:`tracs.Trajectories`
in metres.

Dropped rows: a row is dropped only for one of the reasons of
:data:`DROP_REASONS` (a line with too many fields, a missing or bad user id, a
missing or unparsable time, missing or non-numeric coordinates, latitude outside
[-90, 90] or longitude outside [-180, 180], or a duplicate dropped on request),
and always listed with its line number; ``strict=True`` raises
:class:`DroppedRowsError` instead.

Duplicates: an *exact duplicate* repeats an earlier row in every column read; a
*repeated time* repeats the (user, time) pair of an earlier row with other
values (e.g. two venues in the same second: TKY has 33 exact duplicates and 14
such rows).  Both are kept by default (``duplicates="keep"``: nothing is lost,
and ties keep their file order) and always listed in the report;
``duplicates="drop_exact"`` drops exact duplicates, ``"drop_user_time"`` keeps
only the first row of each (user, time) pair.

>>> import data_loaders as dl
>>> checkins = dl.synthetic_checkins(users=20, seed=1)
>>> trajectories = dl.to_trajectories(checkins, split_gap="3h")
>>> trajectories.crs.to_string()
'EPSG:32654'
"""

from tracs._lazy import lazy_names

# public name -> module that defines it (of this package, or of tracs.io, which this package
# builds on through public names only), imported on first use
_EXPORTS = {
    "SOURCE_COLUMNS": "tracs.io.checkins",
    **dict.fromkeys(("DROP_REASONS", "DroppedRowsError", "LoadReport"), "tracs.io.report"),
    "GroupingReport": "grouping_report",
    **dict.fromkeys(("DATASETS", "data_dirs", "dataset_path", "detect_format", "load_any", "load_dataset"),
                    "datasets"),
    **dict.fromkeys(("load_foursquare", "parse_foursquare_time"), "foursquare"),
    "load_checkins": "generic",
    **dict.fromkeys(("iter_porto", "load_cabspotting", "load_geolife", "load_porto", "load_tdrive"),
                    "trajectory_sets"),
    **dict.fromkeys(("load_gowalla", "parse_iso_time"), "gowalla"),
    "to_trajectories": "grouping",
    "synthetic_checkins": "synthetic",
}
__all__ = sorted(_EXPORTS)


_SUBMODULES = {"datasets", "foursquare", "generic", "gowalla", "grouping", "grouping_report", "synthetic",
               "trajectory_sets"}


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, _SUBMODULES)
