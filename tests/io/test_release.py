"""read_release: a released file back in any format; what it refuses, and ids kept as written."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.io.formats import UnsupportedFormatError
from tracs.io.release import NotAReleaseError, read_release, read_rows


@pytest.mark.parametrize("name, content, error, message", [
    ("checkins.csv", b"uid,datetime,lat,lng\n1,2024-01-01T10:00:00Z,35.6,139.7\n", NotAReleaseError,
     r"checkins.csv \(CSV\) lacks the column\(s\) trajectory: not a file written by 'tracs perturb'"),
    ("names.tsv", b"uid\tname\n1\ta\n", NotAReleaseError,
     r"names.tsv \(TSV\) lacks the column\(s\) lat, lng, trajectory"),
    ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00", UnsupportedFormatError, r"cannot read image.png .*supported formats"),
    ("empty.csv", b"", UnsupportedFormatError, r"cannot read empty.csv \(the file is empty\)"),
])
def test_what_is_not_a_release(tmp_path, name, content, error, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(error, match=message):
        read_release(path, need=("lat", "lng", "trajectory"))


def test_ids_that_are_not_integers_stay_as_written(tmp_path):
    path = tmp_path / "released.csv"
    path.write_text("uid,trajectory,datetime,lat,lng\n007,trip-7,2024-01-01 10:00:00+00:00,35.68,139.70\n"
                    "007,trip-7,,35.69,139.71\n")
    frame = read_release(path)
    assert frame["uid"].tolist() == ["007", "007"]
    assert frame["trajectory"].tolist() == ["trip-7", "trip-7"]
    assert frame["lat"].tolist() == [35.68, 35.69]
    assert frame["datetime"].isna().tolist() == [False, True]


def test_read_rows_takes_points_from_geometry(tmp_path):
    import geopandas as gpd
    from shapely.geometry import Point

    path = tmp_path / "pois.geojson"
    gpd.GeoDataFrame({"name": ["a", "b"]}, geometry=[Point(139.7, 35.6), Point(139.8, 35.7)], crs=4326).to_file(path)
    frame = read_rows(path)
    assert frame["lat"].tolist() == [35.6, 35.7] and frame["lng"].tolist() == [139.7, 139.8]
    assert frame["name"].tolist() == ["a", "b"]


@pytest.mark.parametrize("column, text, expected", [
    ("trajectory", ["9007199254740993", "9007199254740993"], [9007199254740993] * 2),  # beyond 2^53: exact
    ("trajectory", ["01", "01"], ["01", "01"]),  # kept as written
    ("trajectory", ["trip-7", "trip-7"], ["trip-7", "trip-7"]),
    ("lat", ["35.60000000000001", "35.7"], [35.60000000000001, 35.7]),
    ("lat", ["35.6", "abc"], [35.6, np.nan]),  # not a number: missing, as pandas' to_numeric gives
])
def test_numbers_are_read_back_exactly(column, text, expected, tmp_path):
    rows = {"uid": ["a", "a"], "trajectory": ["0", "0"], "lat": ["35.6", "35.7"], "lng": ["139.6", "139.7"]}
    rows[column] = text
    path = tmp_path / "rel.csv"
    path.write_text("uid,trajectory,lat,lng\n" + "".join(",".join(r) + "\n" for r in zip(*rows.values())))
    got = read_release(path)[column].tolist()
    if column == "lat":
        np.testing.assert_array_equal(np.array(got, float), np.array(expected, float))
    else:
        assert got == expected
