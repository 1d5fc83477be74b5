"""The public parameters a release carries, and the checks that tie them to its rows.

A release's parameters (:func:`tracs.estimate.sidecar.sidecar_data`) travel two ways:

* **inside the file**, in every format that holds metadata: GeoParquet / Parquet
  key-value metadata under the key ``tracs``; a GeoPackage's standard metadata table
  ``gpkg_metadata`` (one row of ``md_standard_uri`` :data:`GPKG_URI`, MIME type
  ``application/json``, referenced from ``gpkg_metadata_reference`` with the
  ``geopackage`` scope); GPX ``<metadata><extensions><tracs:parameters>``; GeoJSON the
  foreign member ``tracs`` of its feature collection.  CSV and TSV hold none;
* **in the sidecar** beside the file (``released.csv.tracs.json``), which also records
  ``rows_sha256``, the digest of the release's rows (:func:`rows_digest`).

:func:`release_parameters` is what every reader of a release uses: the embedded
parameters when the file has them (the sidecar, when there is one, must say the same),
else the sidecar's; a sidecar whose digest differs from the rows beside it, or whose ε
differs from the release's own ε columns, is refused, naming both files.

The digest (:func:`rows_digest`) is SHA-256 over a canonical form of the released rows,
the same in every format that stores them exactly (CSV, TSV, Parquet, GeoPackage, GPX,
the properties of GeoJSON): the columns ``uid``, ``trajectory``, ``datetime``, ``lat``,
``lng`` present in the file as :func:`tracs.io.release.read_release` reads them; ``lat``
and ``lng`` as integers of 10⁻⁷ degrees (round half to even; missing: ``-2⁶³``),
``datetime`` as int64 nanoseconds UTC (missing: ``-2⁶³``), ids as their text; rows sorted
by these columns in this order (so the order of the file does not matter).  The hash
takes ``tracs-rows-1\\n``, then for each present column its name and a line feed, then
for an id column its sorted distinct texts joined by ``\\x1f`` and a line feed followed by
each row's little-endian int64 index into them, for the others each row's little-endian
int64 value.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

__all__ = ["KEY", "GPKG_URI", "ReleaseParametersError", "rows_digest", "embedded_parameters",
           "gpkg_embed", "gpx_metadata", "release_parameters", "write_release_sidecar"]

#: the key of the parameters in Parquet metadata
KEY = "tracs"
#: ``md_standard_uri`` of the parameters' row in a GeoPackage's ``gpkg_metadata``
GPKG_URI = "urn:tracs:release-parameters:1"
#: the columns the digest covers, in its order
DIGEST_COLUMNS = ("uid", "trajectory", "datetime", "lat", "lng")
_MISSING = np.iinfo(np.int64).min
_GPX_NS = "https://tracs.invalid/gpx/1"
_HEAD = 1 << 20


class ReleaseParametersError(ValueError):
    """A release's parameters disagree with its rows or with each other (names both files)."""


def rows_digest(frame) -> str:
    """The hex SHA-256 of a release's rows in the canonical form of the module docstring.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows as :func:`tracs.io.release.read_release` gives them.
    """
    import pandas as pd

    names, keys, texts = [], [], {}
    for name in DIGEST_COLUMNS:
        if name not in frame.columns:
            continue
        column = frame[name].reset_index(drop=True)
        if name in ("lat", "lng"):
            values = column.to_numpy(dtype=float, na_value=np.nan)
            finite = np.isfinite(values)
            key = np.full(len(values), _MISSING, dtype=np.int64)
            key[finite] = np.rint(values[finite] * 1e7).astype(np.int64)
        elif name == "datetime":
            stamps = pd.to_datetime(column, utc=True, errors="coerce")
            key = stamps.array.as_unit("ns").asi8.astype(np.int64) if hasattr(stamps.array, "as_unit") \
                else stamps.array.asi8.astype(np.int64)
        else:
            key, uniques = pd.factorize(column.astype(str), sort=True)
            key = key.astype(np.int64)
            texts[name] = "\x1f".join(uniques.tolist()).encode("utf-8")
        names.append(name)
        keys.append(key)
    order = _canonical_order(names, keys)
    digest = hashlib.sha256(b"tracs-rows-1\n")
    for name, key in zip(names, keys):
        digest.update(name.encode() + b"\n")
        if name in texts:
            digest.update(texts[name] + b"\n")
        digest.update(np.ascontiguousarray(key[order]).astype("<i8").tobytes())
    return digest.hexdigest()


def _canonical_order(names, keys) -> np.ndarray:
    """The order of ``np.lexsort`` by ``keys`` in turn, in fewer sort passes: the id codes make
    one key, and ``lat`` / ``lng`` one (each fits 32 bits)."""
    cols = dict(zip(names, keys))
    sort = []
    ids = [cols[name] for name in ("uid", "trajectory") if name in cols]
    if ids:
        key = ids[0]
        for more in ids[1:]:
            key = key * (int(more.max(initial=0)) + 1) + more
        sort.append(key)
    if "datetime" in cols:
        sort.append(cols["datetime"])
    if "lat" in cols and "lng" in cols:
        sort.append((_unsigned32(cols["lat"]) << np.uint64(32)) | _unsigned32(cols["lng"]))
    else:
        sort.extend(cols[name] for name in ("lat", "lng") if name in cols)
    return np.lexsort(sort[::-1]) if sort else np.zeros(0, np.int64)


def _unsigned32(key: np.ndarray) -> np.ndarray:
    """10⁻⁷-degree integers in their order as unsigned 32-bit values (missing first; values
    beyond ±214.7° are held at the ends, a file no release is)."""
    shifted = np.clip(key, -(2 ** 31) + 1, 2 ** 31 - 1) + 2 ** 31
    return np.where(key == _MISSING, 0, shifted).astype(np.uint64)


# ----------------------------------------------------------------------------- inside the file

def gpkg_embed(path, text: str) -> None:
    """Write ``text`` (the parameters' JSON) into the GeoPackage ``path``'s ``gpkg_metadata``
    (the tables and their extension rows are created when missing)."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE IF NOT EXISTS gpkg_extensions (table_name TEXT, column_name TEXT, "
            "extension_name TEXT NOT NULL, definition TEXT NOT NULL, scope TEXT NOT NULL, "
            "CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));"
            "CREATE TABLE IF NOT EXISTS gpkg_metadata (id INTEGER CONSTRAINT m_pk PRIMARY KEY ASC NOT NULL, "
            "md_scope TEXT NOT NULL DEFAULT 'dataset', md_standard_uri TEXT NOT NULL, "
            "mime_type TEXT NOT NULL DEFAULT 'text/xml', metadata TEXT NOT NULL DEFAULT '');"
            "CREATE TABLE IF NOT EXISTS gpkg_metadata_reference (reference_scope TEXT NOT NULL, "
            "table_name TEXT, column_name TEXT, row_id_value INTEGER, timestamp DATETIME NOT NULL "
            "DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), md_file_id INTEGER NOT NULL, md_parent_id INTEGER, "
            "CONSTRAINT crmr_mfi_fk FOREIGN KEY (md_file_id) REFERENCES gpkg_metadata(id), "
            "CONSTRAINT crmr_mpi_fk FOREIGN KEY (md_parent_id) REFERENCES gpkg_metadata(id));")
        for table in ("gpkg_metadata", "gpkg_metadata_reference"):
            db.execute("INSERT OR IGNORE INTO gpkg_extensions VALUES (?, NULL, 'gpkg_metadata', "
                       "'http://www.geopackage.org/spec/#extension_metadata', 'read-write')", (table,))
        db.execute("DELETE FROM gpkg_metadata WHERE md_standard_uri = ?", (GPKG_URI,))
        row = db.execute("INSERT INTO gpkg_metadata (md_scope, md_standard_uri, mime_type, metadata) "
                         "VALUES ('dataset', ?, 'application/json', ?)", (GPKG_URI, text)).lastrowid
        db.execute("INSERT INTO gpkg_metadata_reference (reference_scope, timestamp, md_file_id) "
                   "VALUES ('geopackage', '1970-01-01T00:00:00.000Z', ?)", (row,))


def gpx_metadata(text: str):
    """The ``<tracs:parameters>`` element of a GPX ``<metadata><extensions>`` holding ``text``."""
    import xml.etree.ElementTree as ET

    element = ET.Element(f"{{{_GPX_NS}}}parameters")
    element.text = text
    return element, {"tracs": _GPX_NS}


def embedded_parameters(path):
    """The parameters embedded in a release (a dict as written), or None when it holds none."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if path.is_dir():
            return None
        if suffix in (".parquet", ".geoparquet", ".pq"):
            import pyarrow.parquet as pq

            text = (pq.read_schema(path).metadata or {}).get(KEY.encode())
        elif suffix == ".gpkg":
            text = _gpkg_text(path)
        elif suffix == ".gpx":
            with open(path, "rb") as fh:
                head = fh.read(_HEAD).decode("utf-8", errors="replace")
            match = re.search(r"<(?:\w+:)?parameters\b[^>]*>(.*?)</(?:\w+:)?parameters>", head, re.S)
            if match is None:
                return None
            import html

            text = html.unescape(match.group(1))
        elif suffix in (".geojson", ".json"):
            text = _geojson_member(path)
        else:
            return None
    except OSError:
        return None
    if text is None:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseParametersError(f"the parameters embedded in {path.name} are not valid JSON: {exc}") from None


def _geojson_member(path: Path):
    """The JSON text of the collection's foreign member ``tracs`` (written before its features)."""
    with open(path, "rb") as fh:
        head = fh.read(_HEAD).decode("utf-8", errors="replace")
    match = re.search(r'^\s*"tracs"\s*:\s*', head[:head.find('"features"')] if '"features"' in head else head,
                      re.M)
    if match is None:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(head, match.end())
    except json.JSONDecodeError:
        return None
    return json.dumps(value)


def _gpkg_text(path: Path):
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'gpkg_metadata'").fetchone() is None:
            return None
        row = db.execute("SELECT metadata FROM gpkg_metadata WHERE md_standard_uri = ? ORDER BY id DESC",
                         (GPKG_URI,)).fetchone()
    except sqlite3.DatabaseError:
        return None
    finally:
        db.close()
    return None if row is None else row[0]


# ----------------------------------------------------------------------------- the checks

def release_parameters(release, frame) -> tuple[dict, list]:
    """``(parameters, notes)`` of a release whose rows are ``frame``, checked against them.

    Parameters
    ----------
    release : path-like
        The released file.
    frame : pandas.DataFrame
        Its rows (:func:`tracs.io.release.read_release`).

    Returns
    -------
    tuple
        The parameters as :func:`tracs.estimate.sidecar.read_sidecar` gives them, and notes
        to show (an older sidecar name was read; a sidecar without a digest).

    Raises
    ------
    FileNotFoundError
        Neither embedded parameters nor a sidecar.
    ReleaseParametersError
        The sidecar's digest or ε differs from the rows, or it differs from the embedded
        parameters; the message names the release and the sidecar.
    """
    from ..estimate.sidecar import legacy_sidecar_path, parse_parameters, read_sidecar, sidecar_path

    release = Path(release)
    notes = []
    embedded = embedded_parameters(release)
    try:
        side = read_sidecar(release)
    except FileNotFoundError:
        if embedded is None:
            raise
        side = None
    legacy = side is not None and side["sidecar"] == legacy_sidecar_path(release) != sidecar_path(release)
    if legacy and embedded is not None:
        # a file with embedded parameters was written with its own sidecar name: the shared older
        # name belongs to another release of the same stem
        notes.append(f"{side['sidecar'].name} (the sidecar name of older releases, shared by every release "
                     f"named {release.stem}.*) is not read: {release.name} carries its own parameters")
        side = None
    elif legacy:
        notes.append(f"read the parameters of {release.name} from {side['sidecar'].name}, the sidecar name "
                     f"of older releases (shared by every release named {release.stem}.*; now "
                     f"{sidecar_path(release).name})")
    data = side
    if embedded is not None:
        data = parse_parameters(embedded, f"the parameters embedded in {release.name}")
        if side is not None:
            differ = _differences(side, data)
            if differ:
                raise ReleaseParametersError(
                    f"{side['sidecar'].name} disagrees with the parameters embedded in {release.name} "
                    f"({', '.join(differ)}): one of the two files was changed or replaced")
    if side is not None:
        recorded = side.get("rows_sha256")
        if recorded is None:
            notes.append(f"{side['sidecar'].name} records no digest of the rows (written by an older tracs): "
                         f"it cannot be checked to belong to {release.name}")
        elif recorded != rows_digest(frame):
            raise ReleaseParametersError(
                f"{side['sidecar'].name} does not belong to {release.name}: the digest of the rows it records "
                "differs from the rows of the file (the release or the sidecar was changed, or the release "
                "was written again without its sidecar)")
    where = side["sidecar"].name if embedded is None else f"the parameters embedded in {release.name}"
    _check_epsilon(frame, data, release, where)
    return data, notes


def _differences(side: dict, embedded: dict) -> list:
    from ..estimate.sidecar import _region_json

    names = (set(side) | set(embedded)) - {"rows_sha256", "sidecar"}

    def value(data, name):
        v = data.get(name)
        return _region_json(v) if name == "region" and v is not None else v

    return sorted(name for name in names if value(side, name) != value(embedded, name))


def _check_epsilon(frame, data: dict, release: Path, where: str) -> None:
    """The release's own ε column must hold the ε of its parameters."""
    column = "epsilon_trajectory" if data["per_trajectory"] else "epsilon_point"
    if column not in frame.columns or len(frame) == 0:
        return
    values = frame[column].to_numpy(dtype=float, na_value=np.nan)
    epsilon = float(data["epsilon"])
    bad = ~np.isclose(values, epsilon, rtol=1e-9, atol=0.0)
    if bad.any():
        seen = ", ".join(f"{v:g}" for v in np.unique(values[bad])[:3])
        per = "per trajectory" if data["per_trajectory"] else "per point"
        raise ReleaseParametersError(
            f"{where} says ε = {epsilon:g} {per}, but {int(bad.sum()):,} of {len(values):,} rows of "
            f"{release.name} hold {column} = {seen}: the parameters are not those of this release")


def write_release_sidecar(release, data: dict, *, rows_from=None, rows=None) -> Path:
    """Write the sidecar of ``release``: the parameters ``data``
    (:func:`tracs.estimate.sidecar.sidecar_data`) and the digest of its rows.

    The one writer of a release's sidecar.  The rows are read back from ``rows_from``
    (default: ``release``; give the temporary file before it is renamed to ``release``, so
    the sidecar is in place first) or given as a frame ``rows``.  The sidecar is written to
    a temporary name and renamed.
    """
    from ..estimate.sidecar import write_sidecar_data

    if rows is None:
        rows = _digest_rows(Path(release if rows_from is None else rows_from))
    return write_sidecar_data(release, data, digest=rows_digest(rows))


def _digest_rows(path: Path):
    """The columns of the digest of a written release, as :func:`tracs.io.release.read_release`
    gives them: a Parquet file of points straight from its columns (no geometry decoded),
    any other file through the reader."""
    from .release import read_release

    if path.suffix.lower() in (".parquet", ".geoparquet", ".pq"):
        import pyarrow.parquet as pq

        names = pq.read_schema(path).names
        if {"lat", "lng"} <= set(names):
            return pq.read_table(path, columns=[c for c in DIGEST_COLUMNS if c in names]).to_pandas()
    return read_release(path, need=("lat", "lng"))
