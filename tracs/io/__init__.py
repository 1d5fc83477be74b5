"""Reading and writing check-in and track files: CSV/TSV with any column names, Parquet,
GeoParquet, GeoJSON, GeoPackage, Shapefile, GPX, KML, lines as trajectories, and the
layouts of the public trajectory data sets (Geolife, T-Drive, Porto, Cabspotting).

* :data:`FORMATS` — the one table of readers and writers (:mod:`tracs.io.formats`);
  :func:`register_format` adds a :class:`Format` (its module plus one entry).
* :func:`read_checkins` — any supported file, any column names (aliases and
  explicit names, :mod:`tracs.io.columns`), times with an explicit format or
  detected (:mod:`tracs.io.times`), through Arrow; validated and reported by
  :mod:`tracs.io.checkins` and :mod:`tracs.io.report` (one implementation of drops
  and line numbers, which ``data_loaders`` builds on).
* :func:`tracs.io.records.read_records` — every column of a file of any format of the
  table as a pandas frame, types as pandas infers them (the reading path of ``data_loaders``).
* :func:`write_points` — released rows in any format of the table;
  :func:`read_release` — a released file back, in any format.
* :class:`ColumnMap`, :func:`resolve_columns`, :data:`ALIASES`.
* :func:`parse_times`.

Importing this package imports none of its modules (and no pandas, pyarrow or
gpxpy) until a name is used.
"""

from __future__ import annotations

from .._lazy import lazy_names

_EXPORTS = {
    "ALIASES": "columns", "CLI_FLAGS": "columns", "API_FLAGS": "columns", "ColumnMap": "columns",
    "MissingColumnsError": "columns", "resolve_columns": "columns",
    "SUPPORTED": "formats", "UnsupportedFormatError": "formats", "container_of": "formats",
    "output_format": "formats", "FORMATS": "formats", "Format": "formats", "register_format": "formats",
    "format_of": "formats", "input_formats": "formats",
    "read_release": "release", "NotAReleaseError": "release",
    "LoadReport": "report", "DroppedRowsError": "report", "DROP_REASONS": "report",
    "build_checkins": "checkins", "SOURCE_COLUMNS": "checkins",
    "TimeFormatError": "times", "parse_times": "times",
    "read_checkins": "checkin_files", "PROFILES": "profiles",
    "write_points": "write",
    "read_gpx_table": "gpx", "write_gpx": "gpx", "GPXIdError": "gpx",
    "read_kml_table": "kml",
}
__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
