"""The public parameters a release carries, and the checks that tie them to its rows.

A release's parameters (:func:`tracs.estimate.sidecar.sidecar_data`) travel two ways:

* **inside the file**, in every format that holds metadata: GeoParquet / Parquet
  key-value metadata under the key ``tracs``; a GeoPackage's standard metadata table
  ``gpkg_metadata`` (one row of ``md_standard_uri`` :data:`GPKG_URI`, MIME type
  ``application/json``, referenced from ``gpkg_metadata_reference`` with the
  ``geopackage`` scope); GPX ``<metadata><extensions><tracs:parameters>``; GeoJSON the
  foreign member ``tracs`` of its feature collection.  CSV and TSV hold none;
* **in the sidecar** beside the file (``released.csv.tracs.json``), which also records
  ``rows_sha256``, the digest of the release's rows (:func:`rows_digest`), and for a
  release made with public POIs ``pois_sha256`` and ``pois_count``, the digest and size of
  its POI space (:meth:`tracs.POISpace.digest`): the sidecar's records
  (:data:`tracs.estimate.sidecar.RECORDS`), never embedded.

:func:`release_parameters` is what every reader of a release uses: the embedded
parameters when the file has them (the sidecar, when there is one, must say the same),
else the sidecar's, with the sidecar's records of the POIs; a sidecar whose digest differs from the rows beside it, or whose ε
differs from the release's own ε columns, is refused, naming both files.

The digest (:func:`rows_digest`) is :mod:`tracs.io.digest`'s: SHA-256 of the sorted
BLAKE2b digests of the rows' canonical form, the same in every format that stores the
rows exactly; ``tracs perturb`` computes it from the columns it gives the writer
(:func:`tracs.io.batch_files.released_digest`), readers from the rows they read.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import TracsError
from ..estimate.sidecar import (POI_RECORDS, RECORDS, legacy_sidecar_path, parse_parameters, read_sidecar, region_json,
                                sidecar_path, write_sidecar_data)
from .release import read_release

__all__ = ["KEY", "GPKG_URI", "ReleaseParametersError", "rows_digest", "embedded_parameters",
           "gpkg_embed", "gpx_metadata", "release_parameters", "write_release_sidecar"]

#: the key of the parameters in Parquet metadata
KEY = "tracs"
#: ``md_standard_uri`` of the parameters' row in a GeoPackage's ``gpkg_metadata``
GPKG_URI = "urn:tracs:release-parameters:1"
from .gpx import NAMESPACE as _GPX_NS  # one namespace for every tracs element of a GPX file
from .formats import installed
_HEAD = 1 << 20


class ReleaseParametersError(TracsError, ValueError):
    """A release's parameters disagree with its rows or with each other (names both files)."""


def rows_digest(frame) -> str:
    """The digest of a release's rows (:mod:`tracs.io.digest`), in any order.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows as :func:`tracs.io.release.read_release` gives them.
    """
    from .digest import columns_digest, frame_columns

    return columns_digest(frame_columns(frame))


# ----------------------------------------------------------------------------- inside the file

def gpkg_embed(path, text: str) -> None:
    """Write ``text`` (the parameters' JSON) into the GeoPackage ``path``'s ``gpkg_metadata``
    (the tables and their extension rows are created when missing)."""
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
            text = html.unescape(match.group(1))
        elif suffix in (".geojson", ".json"):
            text = _geojson_member(path)
        else:  # a format of the table that says how its files embed them (an extension's)
            fmt = next((f for f in installed().values() if suffix in f.suffixes and f.parameters is not None), None)
            if fmt is None:
                return None
            text = fmt.embedded(path)
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
            data.update({name: side[name] for name in POI_RECORDS if name in side})
    if side is not None:
        recorded = side.get("rows_sha256")
        if recorded is None:
            notes.append(f"{side['sidecar'].name} records no digest of the rows (a release of an older "
                         f"tracs): it cannot be checked to belong to {release.name}")
        elif recorded != rows_digest(frame):
            raise digest_error(side["sidecar"].name, release.name)
    where = side["sidecar"].name if embedded is None else f"the parameters embedded in {release.name}"
    _check_epsilon(frame, data, release, where)
    return data, notes


def _differences(side: dict, embedded: dict) -> list:
    names = (set(side) | set(embedded)) - {*RECORDS, "sidecar"}

    def value(data, name):
        v = data.get(name)
        return region_json(v) if name == "region" and v is not None else v

    return sorted(name for name in names if value(side, name) != value(embedded, name))


def _check_epsilon(frame, data: dict, release: Path, where: str) -> None:
    """The release's own ε column must hold the ε of its parameters."""
    column = epsilon_column(data)
    if column not in frame.columns or len(frame) == 0:
        return
    bad, seen = epsilon_mismatches(frame[column], data)
    if bad:
        raise epsilon_error(where, data, bad, len(frame), release.name, seen)


def epsilon_column(data: dict) -> str:
    """The released column that holds the ε of the parameters ``data``."""
    return "epsilon_trajectory" if data["per_trajectory"] else "epsilon_point"


def epsilon_mismatches(values, data: dict) -> tuple[int, list]:
    """``(count, up to three distinct values)`` of the ε column ``values`` that differ from the
    parameters' ε."""
    import pandas as pd

    values = pd.Series(values).to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isclose(values, float(data["epsilon"]), rtol=1e-9, atol=0.0)
    return int(bad.sum()), np.unique(values[bad])[:3].tolist()


def epsilon_error(where: str, data: dict, bad: int, total: int, release: str, seen) -> ReleaseParametersError:
    """The error of ``bad`` of ``total`` rows of ``release`` whose ε column holds ``seen``, not
    the ε of the parameters read from ``where``."""
    per = "per trajectory" if data["per_trajectory"] else "per point"
    shown = ", ".join(f"{v:g}" for v in sorted(seen)[:3])
    return ReleaseParametersError(
        f"{where} says ε = {float(data['epsilon']):g} {per}, but {bad:,} of {total:,} rows of "
        f"{release} hold {epsilon_column(data)} = {shown}: the parameters are not those of this release")


def digest_error(sidecar: str, release: str) -> ReleaseParametersError:
    """The error of a sidecar whose digest is not that of the rows of ``release``."""
    return ReleaseParametersError(
        f"{sidecar} does not belong to {release}: the digest of the rows it records differs from the rows "
        "of the file (the release or the sidecar was changed, or the release was written again without its "
        "sidecar)")


def write_release_sidecar(release, data: dict, *, digest: str | None = None, rows=None, pois=None) -> Path:
    """Write the sidecar of ``release``: the parameters ``data``
    (:func:`tracs.estimate.sidecar.sidecar_data`), the digest of its rows and, given the public
    POI space ``pois`` it used, that space's digest and count.

    The one writer of a release's sidecar.  The digest is ``digest`` (computed from the
    columns the writer was given: :func:`tracs.io.batch_files.released_digest`), else that of
    the frame ``rows``, else that of ``release`` read back.  The sidecar is written to a
    temporary name and renamed.
    """
    if digest is None:
        if rows is None:
            rows = read_release(release, need=("lat", "lng"))
        digest = rows_digest(rows)
    return write_sidecar_data(release, data, digest=digest, pois=pois)
