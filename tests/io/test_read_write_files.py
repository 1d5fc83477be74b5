"""tracs.io on real files: every container, any column names, streamed batches, line
numbers of dropped rows, GPX both ways, Arrow writers, the numba cache folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tracs.io.arrow_text as io_read
from tracs.io import SUPPORTED, UnsupportedFormatError, read_checkins
from tracs.io.columns import MissingColumnsError
from tracs import Batch
from tracs.io.batch_files import read_points
from tracs.io.write import wkb_points
from tracs.io.write import _times_as_text

ROWS = pd.DataFrame({
    "person": ["a", "a", "b", "b", "a"],
    "when": ["2024-01-02T08:00:00Z", "2024-01-02T09:00:00Z", "2024-01-02T08:30:00Z",
             "2024-01-02T10:00:00Z", "2024-01-02T07:00:00Z"],
    "north": [35.60, 35.61, 35.70, 35.71, 35.62],
    "east": [139.60, 139.61, 139.70, 139.71, 139.62],
})
NAMES = dict(user="person", time="when", lat="north", lon="east")


@pytest.fixture
def text_file(tmp_path):
    def write(text, name="data.csv"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def test_csv_with_custom_names(tmp_path):
    path = tmp_path / "custom.csv"
    ROWS.to_csv(path, index=False)
    frame = read_checkins(path, **NAMES)
    assert frame["uid"].tolist() == ["a", "a", "a", "b", "b"]  # (user, time) order
    assert frame["source_line"].tolist() == [6, 2, 3, 4, 5]
    assert "columns used" in " ".join(frame.attrs["report"].notes)


def test_parquet_with_custom_names_keeps_other_columns(tmp_path):
    path = tmp_path / "custom.parquet"
    ROWS.assign(note=list("pqrst")).to_parquet(path)
    frame = read_checkins(path, **NAMES, keep_columns=True)
    assert frame.attrs["report"].format == "parquet" and frame["note"].tolist() == list("tpqrs")
    assert frame["source_row"].tolist() == [4, 0, 1, 2, 3]


def test_geoparquet_geometry_and_crs(tmp_path):
    import geopandas as gpd

    path = tmp_path / "points.parquet"
    gdf = gpd.GeoDataFrame(ROWS[["person", "when"]], geometry=gpd.points_from_xy(ROWS.east, ROWS.north),
                           crs=4326).to_crs(32654)
    gdf.to_parquet(path)
    frame = read_checkins(path, user="person", time="when")
    np.testing.assert_allclose(np.sort(frame.geometry.y.to_numpy()), np.sort(ROWS.north), atol=1e-9)
    assert any("converted from EPSG:32654" in n for n in frame.attrs["report"].notes)


def test_geojson(tmp_path):
    import geopandas as gpd

    path = tmp_path / "points.geojson"
    gpd.GeoDataFrame(ROWS[["person", "when"]], geometry=gpd.points_from_xy(ROWS.east, ROWS.north),
                     crs=4326).to_file(path, driver="GeoJSON")
    assert len(read_checkins(path, user="person", time="when")) == 5


def test_bad_and_blank_lines_keep_their_numbers(text_file, monkeypatch):
    monkeypatch.setattr(io_read, "BLOCK_BYTES", 64)  # many small batches
    body = ["uid,datetime,lat,lng"]
    for i in range(40):
        body.append(f"{i % 3},2024-01-02T{i % 24:02d}:00:00Z,35.{i:02d},139.5")
    body[10] = "7,2024-01-02T01:00:00Z,35.1,139.5,extra"        # line 11: too many fields
    body[20] = ""                                                # line 21: blank
    body[30] = "7,not a time,35.1,139.5"                         # line 31: bad time
    path = text_file("\n".join(body) + "\n")
    frame = read_checkins(path)
    report = frame.attrs["report"]
    assert report.dropped == {"bad_fields": [11], "bad_time": [31]}
    assert report.blank_lines == [21]
    assert report.rows_read == report.rows_kept + report.n_dropped == 39
    whole = read_checkins(path)  # the same with one block
    monkeypatch.setattr(io_read, "BLOCK_BYTES", 2 << 20)
    assert read_checkins(path)["datetime"].equals(whole["datetime"])


def test_headerless_foursquare_tsv(text_file):
    line = "1\tv1\tc1\tCafe\t35.7\t139.7\t540\tSat Dec 08 05:56:34 +0000 2012"
    frame = read_checkins(text_file(line + "\n" + line.replace("05:56", "06:56") + "\n", "fsq.txt"))
    assert frame.attrs["report"].format == "foursquare-tsv" and frame["poi_id"].tolist() == ["v1", "v1"]


def test_foursquare_parquet(tmp_path):
    path = tmp_path / "fsq.parquet"
    pd.DataFrame({"User ID": [1, 1], "Venue ID": ["v1", "v2"], "Latitude": [35.7, 35.8],
                  "Longitude": [139.7, 139.8],
                  "UTC Time": ["Sat Dec 08 05:56:34 +0000 2012", "Sat Dec 08 06:56:34 +0000 2012"]}
                 ).to_parquet(path)
    frame = read_checkins(path, input_format="foursquare")
    assert frame.attrs["report"].format == "foursquare-parquet"
    assert frame["datetime"].iloc[0] == pd.Timestamp("2012-12-08 05:56:34", tz="UTC")


@pytest.mark.parametrize("content, name, error, fragment", [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "image.png", UnsupportedFormatError, SUPPORTED),
    (b"PK\x03\x04spreadsheet", "table.xlsx", UnsupportedFormatError, "supported formats: CSV, TSV"),
    (b"just some words\nand more\n", "notes.txt", UnsupportedFormatError, "supported formats"),
    (b"<?xml version='1.0'?><kml></kml>", "x.kml", ValueError, r"x\.kml holds no <gx:Track>, <LineString> or <Point>"),
    (b"<?xml version='1.0'?><svg></svg>", "x.xml", UnsupportedFormatError, "XML file that is neither GPX nor KML"),
    (b"a,b,c\n1,2,3\n", "abc.csv", MissingColumnsError, "Columns found: a, b, c"),
    (b"<?xml version='1.0'?><gpx version='1.1'></gpx>", "empty.gpx", ValueError, "no track or route points"),
])
def test_bad_files(tmp_path, content, name, error, fragment):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(error, match=fragment):
        read_checkins(path)


GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
<trk><name>morning</name>
<trkseg>
<trkpt lat="48.10" lon="11.50"><time>2024-05-01T08:00:00Z</time></trkpt>
<trkpt lat="48.11" lon="11.51"><time>2024-05-01T08:01:00Z</time></trkpt>
</trkseg>
<trkseg>
<trkpt lat="48.20" lon="11.60"></trkpt>
<trkpt lat="48.21" lon="11.61"></trkpt>
<trkpt lat="48.22" lon="11.62"></trkpt>
</trkseg>
</trk>
</gpx>
"""


def test_gpx_segments_are_trajectories_and_untimed_points_keep_order(text_file):
    path = text_file(GPX, "walk.gpx")
    points = read_points(path)
    assert points.lengths.tolist() == [2, 3]
    assert points.column("source").tolist() == [0, 1, 2, 3, 4]  # file order
    assert points.attrs["report"].untimed == [2, 3, 4]
    assert np.isnat(points.column("time")).tolist() == [False, False, True, True, True]
    frame = read_checkins(path)
    assert frame.attrs["trajectory_column"] == "trajectory"
    assert frame["source_row"].tolist() == [0, 1, 2, 3, 4]
    assert frame["datetime"].isna().tolist() == [False, False, True, True, True]
    assert "3 points without a time (kept in the file's order, time left empty): rows 2, 3, 4" in \
        frame.attrs["report"].summary()


def test_untimed_points_between_timed_ones_keep_their_place(text_file):
    """An untimed point sorts right after the previous timed point; it is never a repeated time."""
    import data_loaders as dl

    path = text_file(GPX.replace('<trkpt lat="48.11" lon="11.51"><time>2024-05-01T08:01:00Z</time></trkpt>',
                                 '<trkpt lat="48.105" lon="11.505"></trkpt>'
                                 '<trkpt lat="48.11" lon="11.51"><time>2024-05-01T08:01:00Z</time></trkpt>'),
                     "between.gpx")
    frame = read_checkins(path)
    assert frame["source_row"].tolist() == [0, 1, 2, 3, 4, 5]
    report = frame.attrs["report"]
    assert report.untimed == [1, 3, 4, 5] and report.repeated_times == [] and report.exact_duplicates == []
    trajectories = dl.to_trajectories(frame, by="trajectory", split_gap="1min")
    assert np.diff(trajectories.offsets).tolist() == [3, 3]
    assert trajectories.frame["datetime"].isna().sum() == 4


def test_gpx_written_and_read_back(tmp_path, text_file):
    import gpxpy

    from tracs.io.gpx import write_gpx

    out = tmp_path / "out.gpx"
    times = pd.to_datetime(["2024-05-01T08:00Z", "2024-05-01T08:01Z", None], utc=True)
    write_gpx(out, lat=[48.1, 48.2, 48.3], lon=[11.5, 11.6, 11.7], times=times, trajectory=[0, 0, 1],
              names=["u", "u", "u"])
    gpx = gpxpy.parse(out.read_text())
    assert [len(t.segments[0].points) for t in gpx.tracks] == [2, 1]
    assert gpx.tracks[0].segments[0].points[1].time.isoformat() == "2024-05-01T08:01:00+00:00"
    assert gpx.tracks[1].segments[0].points[0].time is None


def test_times_as_text_match_pandas():
    import pyarrow as pa

    rng = np.random.default_rng(3)
    seconds = rng.integers(-2_000_000_000, 4_000_000_000, 500)
    stamps = pd.to_datetime(seconds, unit="s", utc=True)
    text = _times_as_text(pa.array(stamps)).to_pylist()
    assert text == [t.strftime("%Y-%m-%d %H:%M:%S+00:00") for t in stamps]
    fractional = _times_as_text(pa.array(pd.to_datetime(["2024-01-01 00:00:00.25"], utc=True))).to_pylist()
    assert fractional == ["2024-01-01 00:00:00.250000000+00:00"]


def test_wkb_points_round_trip():
    import shapely

    xy = np.array([[139.7, 35.6], [-0.1, 51.5]])
    geoms = shapely.from_wkb(np.asarray(wkb_points(xy).to_pylist(), dtype=object))
    np.testing.assert_array_equal(shapely.get_coordinates(geoms), xy)


def test_numba_cache_folder(monkeypatch, tmp_path):
    import numba.core.config

    import tracs._numba_cache as cache

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", numba.core.config.CACHE_DIR)  # restored after
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cache, "_writable", lambda folder: True)
    assert cache.configure(tmp_path, "9.9") is None
    monkeypatch.setattr(cache, "_writable", lambda folder: False)
    chosen = cache.configure(tmp_path, "9.9")
    assert chosen is not None and Path(chosen).parts[-2:] == ("tracs", "numba-9.9")
    import os

    assert os.environ[cache.ENV] == chosen == numba.core.config.CACHE_DIR
    monkeypatch.setenv(cache.ENV, "/elsewhere")
    assert cache.configure(tmp_path, "9.9") is None  # the user's choice wins


def test_batches_built_ahead_keep_order_and_errors():
    from tracs.io.batch_files import _ahead

    assert list(_ahead(iter(range(7)), depth=2)) == list(range(7))

    def broken():
        yield 1
        raise ValueError("batch 2 failed")

    with pytest.raises(ValueError, match="batch 2 failed"):
        list(_ahead(broken()))


def test_read_points_gives_a_batch_with_ids_as_written(text_file):
    path = text_file("uid,datetime,lat,lng,venue\n"
                     "007,2024-01-01 10:00,35.6,139.7,a\n"
                     "7,2024-01-01 09:00,35.7,139.8,b\n"
                     "007,2024-01-01 08:00,35.5,139.6,c\n", "in.csv")
    points = read_points(path)
    assert isinstance(points, Batch) and points.crs == "EPSG:4326"
    assert points.keys.tolist() == ["007", "007", "7"]  # text stays text: two users
    assert points.offsets.tolist() == [0, 2, 3] and points.first_of_key().tolist() == [True, True]
    np.testing.assert_array_equal(points.coords, [[139.6, 35.5], [139.7, 35.6], [139.8, 35.7]])
    assert list(points.columns) == ["time", "source"]
    assert points.column("source").tolist() == [4, 2, 3]  # lines of the file, in time order per user
    assert points.attrs["position"] == "line" and points.attrs["others"] == ("venue",)
    assert points.attrs["report"].rows_kept == 3
