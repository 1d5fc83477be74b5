"""Lines in: LineString / MultiLineString features are trajectories, one per line part, with
times from the M coordinate, a time-list property, or none (file order, with a note)."""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import shapely
from shapely.geometry import LineString, MultiLineString, MultiPoint, Point, Polygon

from tracs.io import read_checkins
from tracs.io.formats import UnsupportedFormatError, output_format
from tracs.io.batch_files import read_points

TIMES_A = ["2024-01-01T10:00:00Z", "2024-01-01T10:01:00Z", "2024-01-01T10:02:00Z"]
TIMES_B = ["2024-01-01T11:00:00Z", "2024-01-01T11:01:00Z", "2024-01-01T11:02:00Z", "2024-01-01T11:03:00Z"]
LINE_A = LineString([(139.70, 35.68), (139.71, 35.69), (139.72, 35.70)])
LINE_B = MultiLineString([[(139.73, 35.66), (139.74, 35.67)], [(139.75, 35.65), (139.76, 35.64)]])


def _frame(**columns):
    return gpd.GeoDataFrame(columns, geometry=[LINE_A, LINE_B], crs=4326)


def test_one_trajectory_per_line_part_with_a_time_list(tmp_path):
    path = tmp_path / "tracks.geojson"
    _frame(driver=["ann", "bob"], coordTimes=[json.dumps(TIMES_A), json.dumps(TIMES_B)]).to_file(path)
    points = read_points(path, user="driver")
    assert points.lengths.tolist() == [3, 2, 2]          # LINE_A, then the two parts of LINE_B
    assert points.keys.tolist() == ["ann"] * 3 + ["bob"] * 4
    expected = pd.to_datetime(TIMES_A + TIMES_B).tz_localize(None).to_numpy()
    np.testing.assert_array_equal(points.column("time"), expected)
    np.testing.assert_allclose(points.coords[:3], np.asarray(LINE_A.coords), atol=1e-12)
    assert "times of the line vertices read from the property 'coordTimes'" in points.attrs["report"].notes
    assert "3 line part(s) read as trajectories" in points.attrs["report"].notes


def test_lines_without_times_keep_their_order_and_say_so(tmp_path):
    path = tmp_path / "tracks.gpkg"
    _frame(name=["a", "b"]).to_file(path, driver="GPKG")
    points = read_points(path)
    assert points.lengths.tolist() == [3, 2, 2]
    assert np.isnat(points.column("time")).all()
    assert points.keys.tolist() == ["tracks"] * 7
    notes = " ".join(points.attrs["report"].notes)
    assert "3 line part(s) without times" in notes and "named after the file ('tracks')" in notes
    assert points.attrs["others"] == ("name",)


def test_m_coordinates_are_epoch_seconds(tmp_path):
    line = shapely.from_wkt("LINESTRING M (139.70 35.68 1704103200, 139.71 35.69 1704103260)")
    geo = {"version": "1.0.0", "primary_column": "geometry",
           "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["LineString M"]}}}
    table = pa.table({"uid": ["007"], "geometry": [shapely.to_wkb(line, flavor="iso")]})
    path = tmp_path / "m.parquet"
    pq.write_table(table.replace_schema_metadata({b"geo": json.dumps(geo).encode()}), path)
    frame = read_checkins(path)
    assert frame["datetime"].tolist() == [pd.Timestamp("2024-01-01 10:00", tz="UTC"),
                                          pd.Timestamp("2024-01-01 10:01", tz="UTC")]
    assert "M coordinate" in " ".join(frame.attrs["report"].notes)


def test_a_feature_without_geometry_is_a_dropped_row(tmp_path):
    path = tmp_path / "gap.geojson"
    gpd.GeoDataFrame({"uid": [1, 1]}, geometry=[LINE_A, None], crs=4326).to_file(path)
    points = read_points(path)
    assert points.lengths.tolist() == [3]
    assert list(points.attrs["report"].dropped["bad_coords"]) == [3]   # the fourth vertex row: the empty feature


@pytest.mark.parametrize("geometry, name, error, message", [
    (Polygon([(0, 0), (1, 0), (1, 1)]), "poly.geojson", ValueError,
     r"poly.geojson: row 1 holds a Polygon: tracs reads points \(one check-in per feature\) or LineStrings / "
     r"MultiLineStrings \(one trajectory per line part\); convert the other geometries first"),
    # a GeoPackage layer of points and multipoints holds multipoints only: row 0 is one too
    (MultiPoint([(0, 0), (1, 1)]), "multi.gpkg", ValueError, r"multi.gpkg: row 0 holds a MultiPoint"),
])
def test_other_geometries_are_refused_with_file_row_and_type(tmp_path, geometry, name, error, message):
    path = tmp_path / name
    gpd.GeoDataFrame({"uid": [1, 1], "datetime": ["2024-01-01T10:00:00Z"] * 2},
                     geometry=[Point(0.5, 0.5), geometry], crs=4326).to_file(path)
    with pytest.raises(error, match=message):
        read_checkins(path)


def test_a_time_list_of_the_wrong_length_is_refused(tmp_path):
    path = tmp_path / "short.geojson"
    _frame(uid=[1, 2], times=[json.dumps(TIMES_A[:2]), json.dumps(TIMES_B)]).to_file(path)
    with pytest.raises(ValueError, match=r"short.geojson: row 0 has 2 times for 3 vertices"):
        read_checkins(path)


@pytest.mark.parametrize("name, message", [
    ("out.csv", "CSV cannot hold lines: for lines use .geojson, .parquet or .gpkg"),
    ("out.gpx", "GPX cannot hold lines: for lines use .geojson, .parquet or .gpkg"),
    ("out.xyz", "cannot tell the output format of out.xyz: use .geojson, .parquet or .gpkg"),
])
def test_lines_need_a_format_that_holds_them(name, message):
    with pytest.raises(UnsupportedFormatError, match=message):
        output_format(name, geometry="lines")


@pytest.mark.parametrize("columns, shown", [
    ({"driver": ["ann", "bob"], "coordTimes": [json.dumps(TIMES_A), json.dumps(TIMES_B[:1] + ["soon"] * 3)]},
     "'coordTimes'"),
    ({"driver": ["ann", "bob"]}, None),
])
def test_notes_name_the_users_columns_never_the_added_ones(tmp_path, columns, shown):
    path = tmp_path / "tracks.geojson"
    _frame(**columns).to_file(path)
    points = read_points(path, user="driver")
    text = " ".join(points.attrs["report"].notes) + " " + points.attrs["report"].summary()
    assert "point_time" not in text and "line_user" not in text and "line_part" not in text, text
    if shown is not None:
        assert f"the time is empty or cannot be parsed in column {shown}" in points.attrs["report"].summary()
        assert f"columns used: 'driver' as user, {shown} as time" in points.attrs["report"].notes
