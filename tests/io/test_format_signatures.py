"""Formats are told by content as their entries declare: magic bytes (``signature``) or a sniff of
the first bytes, for the shipped formats and for a format registered by another package."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pyarrow as pa
import pytest

import data_loaders as dl
from tracs import _plugins
from tracs.io import formats
from tracs.io.raw import RawColumns
from tracs.io.formats import Format, container_of, format_of

MAGIC = b"TOYB\x01"


def read_toy(path, request):
    """A toy binary format: MAGIC, then ``uid lat lng time`` records of text, one a line."""
    rows = [line.split(" ") for line in path.read_bytes()[len(MAGIC):].decode().splitlines() if line]
    names = ["uid", "lat", "lng", "datetime"]
    include, convert = request.plan(names)
    table = pa.table({n: pa.array([r[i] for r in rows], pa.string()) for i, n in enumerate(names) if n in include})
    table = pa.table({c: convert[c](table.column(c)) if c in convert else table.column(c) for c in include})
    return RawColumns(table, np.arange(table.num_rows, dtype=np.int64), "row", "toy binary")


TOY = Format("Toy binary", "toy-binary", (".toyb",), read=read_toy, signature=(MAGIC,))
RECORDS = MAGIC + b"007 35.70 139.70 2012-04-03T18:00:00Z\n7 35.71 139.71 2012-04-03T19:00:00Z\n"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(formats.FORMATS, TOY.key, TOY)
    return TOY


@pytest.mark.parametrize("name", ["points.toyb", "points.csv", "points.dat", "points"])
def test_a_registered_signature_is_detected_whatever_the_extension(toy, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(RECORDS)
    assert container_of(path) == format_of(path).key == "toy-binary"
    assert dl.detect_format(path) == "table"
    frame = dl.load_any(path)
    assert frame["uid"].tolist() == ["007", "7"]  # ids as written
    assert frame.attrs["report"].format == "toy binary"


def test_without_the_entry_the_bytes_are_no_format(tmp_path):
    path = tmp_path / "points.dat"
    path.write_bytes(RECORDS.replace(b" ", b""))
    with pytest.raises(formats.UnsupportedFormatError, match="no delimiter"):
        container_of(path)


def test_a_format_of_an_installed_package_is_detected_by_its_signature(tmp_path, monkeypatch):
    """Registered through the entry-point group ``tracs.formats``, as ``examples/extending`` is."""
    real = metadata.entry_points
    monkeypatch.setattr(metadata, "entry_points", lambda **sel: [
        metadata.EntryPoint("toy-binary", f"{__name__}:TOY", "tracs.formats")]
        if sel.get("group") == "tracs.formats" else real(**sel))
    monkeypatch.setattr(_plugins, "loaded", set())
    monkeypatch.delitem(formats.FORMATS, TOY.key, raising=False)
    path = tmp_path / "points"
    path.write_bytes(RECORDS)
    try:
        assert container_of(path) == "toy-binary"
        assert dl.load_any(path)["uid"].tolist() == ["007", "7"]
    finally:
        formats.FORMATS.pop(TOY.key, None)


@pytest.mark.parametrize("content, name, key", [
    (b"PAR1" + bytes(16), "data.csv", "parquet"),          # the signature wins over the extension
    (b"fgb\x03" + bytes(16), "data.bin", "fgb"),
    (b"\xef\xbb\xbf<?xml version='1.0'?>\n<gpx version='1.1'></gpx>", "track.txt", "gpx"),
    (b"<kml xmlns='http://www.opengis.net/kml/2.2'></kml>", "places", "kml"),
    (b'  {"type": "FeatureCollection", "features": []}', "points", "geojson"),
    (b'{"type": "FeatureCollection", "features": []}', "points.txt", "geojson"),  # text: sniffed
    (b"uid,datetime,lat,lng\n", "points", "csv"),
    (b"uid\tdatetime\tlat\tlng\n", "points.tsv", "tsv"),
    (b"{not json, but the extension says GeoPackage", "points.gpkg", "gpkg"),
])
def test_shipped_signatures_and_sniffs(tmp_path, content, name, key):
    path = tmp_path / name
    path.write_bytes(content)
    assert container_of(path) == key


@pytest.mark.parametrize("bad", [
    Format("No reader", "no-reader", signature=(b"NOPE",)),  # a signature without a reader is not asked
])
def test_an_entry_without_a_reader_is_never_detected(monkeypatch, tmp_path, bad):
    monkeypatch.setitem(formats.FORMATS, bad.key, bad)
    path = tmp_path / "x.csv"
    path.write_bytes(b"NOPE,a,b\n1,2,3\n")
    assert container_of(path) == "csv"


# ----------------------------------------------------------------------------- files under a wrong name


def _points_frame():
    import geopandas as gpd
    import shapely

    return gpd.GeoDataFrame({"uid": ["007", "7"], "datetime": ["2012-04-03T18:00:00Z", "2012-04-03T19:00:00Z"]},
                            geometry=[shapely.Point(139.70, 35.70), shapely.Point(139.71, 35.71)], crs=4326)


def _parquet(path):
    _points_frame().to_parquet(path)


def _geopackage(path):
    written = path.parent / "written.gpkg"
    _points_frame().to_file(written, driver="GPKG")
    written.rename(path)


def _gpx(path):
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="tests" '
                    'xmlns="http://www.topografix.com/GPX/1/1"><trk><name>007</name><trkseg>'
                    '<trkpt lat="35.70" lon="139.70"><time>2012-04-03T18:00:00Z</time></trkpt>'
                    '<trkpt lat="35.71" lon="139.71"><time>2012-04-03T19:00:00Z</time></trkpt>'
                    "</trkseg></trk></gpx>\n")


def _toy(path):
    path.write_bytes(RECORDS)


@pytest.mark.parametrize("write, key, report_format", [
    (_parquet, "parquet", "parquet"),
    (_geopackage, "gpkg", "gpkg"),
    (_gpx, "gpx", "gpx"),
    (_toy, "toy-binary", "toy binary"),
], ids=["parquet", "geopackage", "gpx", "toy"])
@pytest.mark.parametrize("name", ["points.csv", "points.txt", "points"])
def test_detection_asks_the_table_whatever_the_name(toy, tmp_path, write, key, report_format, name):
    """``data_loaders.detect_format``, ``load_any`` and the commands' reader tell a file by the one rule of
    ``container_of`` (signature, extension, sniff), never by sniffing it as text: a Parquet file, a
    GeoPackage, a GPX file and a registered binary format named like text are read by their own reader."""
    path = tmp_path / name
    write(path)
    assert container_of(path) == format_of(path).key == key
    assert dl.detect_format(path) == "table"
    frame = dl.load_any(path)
    users = ["points", "points"] if key == "gpx" else ["007", "7"]  # a GPX track without a user: the file's
    assert sorted(frame["uid"].astype(str)) == users  # ids as written
    assert len(frame) == 2 and frame.attrs["report"].rows_kept == 2
    assert frame.attrs["report"].format.endswith(report_format)
    assert formats.FORMATS[key].reader().__name__ == {"parquet": "read_parquet", "gpkg": "read_vector",
                                                       "gpx": "read_gpx", "toy-binary": "read_toy"}[key]


def test_an_sqlite_file_that_is_no_geopackage_is_refused(tmp_path):
    """Only GeoPackage's application id makes an SQLite file a GeoPackage."""
    import sqlite3

    path = tmp_path / "store.db"
    with sqlite3.connect(path) as db:
        db.execute("create table t (a)")
    db.close()
    with pytest.raises(formats.UnsupportedFormatError, match="binary file"):
        container_of(path)
