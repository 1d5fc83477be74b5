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
