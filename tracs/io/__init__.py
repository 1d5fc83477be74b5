"""Reading and writing check-in and track files: CSV/TSV with any column names, Parquet,
GeoParquet, GeoJSON, GPX.

* :func:`read_checkins` — any supported file, any column names (aliases and
  explicit names, :mod:`tracs.io.columns`), times with an explicit format or
  detected (:mod:`tracs.io.times`), through Arrow; validated and reported by
  ``data_loaders`` (one implementation of drops and line numbers).
* :func:`write_points` — released rows to CSV / TSV / Parquet / GeoParquet
  (Arrow), GeoJSON or GPX.
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
    "output_format": "formats",
    "TimeFormatError": "times", "parse_times": "times",
    "read_checkins": "read", "PROFILES": "read", "INPUT_FORMATS": "read",
    "write_points": "write",
    "read_gpx_table": "gpx", "write_gpx": "gpx",
}
__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
