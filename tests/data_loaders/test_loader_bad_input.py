"""Bad input: every case is a clear error or a drop listed in the report (with its line)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from checkin_samples import FOURSQUARE_HEADER, FOURSQUARE_TSV, GOWALLA_TSV, to_csv

import data_loaders as dl

LOADERS = [dl.load_foursquare, dl.load_gowalla, dl.load_checkins]
GOOD = "2\tv-b0\tc-2\tTrain Station\t35.69\t139.76\t540\tSat Dec 08 05:56:34 +0000 2012\n"


def with_line(field: int, value: str) -> str:
    """The good Foursquare line with one field replaced."""
    parts = GOOD.rstrip("\n").split("\t")
    parts[field] = value
    return "\t".join(parts) + "\n"


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_missing_file(loader, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        loader(tmp_path / "nope.txt")


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_directory_instead_of_file(loader, tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        loader(tmp_path)


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_path_of_wrong_type(loader):
    with pytest.raises(TypeError):
        loader(42)


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("content", [b"", b"\n\n  \n"], ids=["zero-bytes", "blank"])
def test_empty_file(loader, write, content):
    with pytest.raises(ValueError, match="empty"):
        loader(write("empty.txt", content))


def test_header_only(write):
    with pytest.raises(ValueError, match="no check-in rows"):
        dl.load_foursquare(write("h.csv", FOURSQUARE_HEADER))
    with pytest.raises(ValueError, match="no check-in rows"):
        dl.load_checkins(write("h.csv", "uid,datetime,lat,lng\n"))


def test_wrong_format_gowalla_given_to_foursquare(write):
    with pytest.raises(ValueError, match="not a Foursquare.*5 tab-separated fields.*load_gowalla"):
        dl.load_foursquare(write("g.txt", GOWALLA_TSV))


def test_wrong_format_foursquare_given_to_gowalla(write):
    with pytest.raises(ValueError, match="not a Gowalla.*expected 5.*load_foursquare"):
        dl.load_gowalla(write("f.txt", FOURSQUARE_TSV))


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("content, message", [
    (b"PAR1\x00\x01\x02\x00garbage", r"^x\.csv is not a readable Parquet file: its footer"),  # Parquet's magic bytes
    (b"\x01\x02\x00garbage", r"^cannot read x\.csv \(a binary file: NUL byte at byte offset 2, line 1\)"),
    (b"PK\x03\x04" + bytes(20), r"^cannot read x\.csv \(a binary file: a ZIP archive"),
], ids=["parquet-magic", "nul", "zip"])
def test_binary_file(loader, write, content, message):
    with pytest.raises(ValueError, match=message):
        loader(write("x.csv", content))


def test_text_without_delimiter(write):
    with pytest.raises(ValueError, match="no delimiter"):
        dl.load_foursquare(write("prose.txt", "just some words\nand more\n"))


def test_header_missing_columns(write):
    header = FOURSQUARE_HEADER.replace("UTC Time", "When")
    with pytest.raises(ValueError, match=r"lacks column\(s\) for \['time'\]"):
        dl.load_foursquare(write("f.csv", to_csv(FOURSQUARE_TSV, header)))


def test_generic_missing_columns(write):
    frame = pd.DataFrame({"user": [1], "datetime": ["2012-01-01"], "lat": [1.0], "lng": [2.0]})
    with pytest.raises(ValueError, match=r"missing column\(s\) \['uid'\].*available"):
        dl.load_checkins(frame)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['lng'\]"):
        dl.load_checkins(frame.drop(columns="lng"), user="user")
    with pytest.raises(TypeError, match="column name"):
        dl.load_checkins(frame, user=0)


def test_explicit_wrong_encoding(write):
    with pytest.raises(ValueError, match="cannot be decoded as ascii"):
        dl.load_foursquare(write("f.txt", FOURSQUARE_TSV), encoding="ascii")


def test_nothing_valid_left(write):
    text = with_line(4, "95.0") + with_line(7, "yesterday")
    with pytest.raises(ValueError, match="(?s)no valid check-in left.*bad_time.*out_of_range"):
        dl.load_foursquare(write("f.txt", text))


def test_bad_options(write):
    path = write("f.txt", FOURSQUARE_TSV)
    with pytest.raises(ValueError, match="duplicates must be one of"):
        dl.load_foursquare(path, duplicates="drop")
    with pytest.raises(TypeError, match="strict must be a bool"):
        dl.load_foursquare(path, strict="yes")
    with pytest.raises(TypeError):
        dl.load_checkins([1, 2, 3])


def test_geodataframe_problems():
    points = gpd.GeoDataFrame({"uid": [1, 2], "datetime": ["2012-01-01T00:00Z"] * 2},
                              geometry=gpd.points_from_xy([139.7, 139.8], [35.6, 35.7]))
    with pytest.raises(ValueError, match="no CRS"):
        dl.load_checkins(points)
    lines = points.set_geometry([shapely.LineString([(0, 0), (1, 1)])] * 2, crs=4326)
    with pytest.raises(ValueError, match="points"):
        dl.load_checkins(lines)


# ------------------------------------------------------------------- reported drops

@pytest.mark.parametrize("field, value, reason", [
    (4, "90.5", "out_of_range"),        # latitude above 90
    (4, "-91", "out_of_range"),         # latitude below -90
    (5, "180.01", "out_of_range"),      # longitude above 180
    (5, "-181", "out_of_range"),        # longitude below -180
    (4, "", "bad_coords"),              # empty latitude
    (5, "NaN", "bad_coords"),           # NaN longitude
    (4, "inf", "bad_coords"),           # infinite latitude
    (4, "north", "bad_coords"),         # not a number
    (7, "Sat Dec 08 25:56:34 +0000 2012", "bad_time"),  # hour 25
    (7, "2012-12-08 05:56:34", "bad_time"),             # another layout
    (7, "", "bad_time"),                # no time
    (0, "", "bad_user"),                # no user
    (0, "alice", "bad_user"),           # user ids are integers in TSMC2014
])
def test_bad_row_is_dropped_with_its_line(write, report_of, field, value, reason):
    text = GOOD + with_line(field, value) + GOOD.replace("05:56", "07:56")
    frame = dl.load_foursquare(write("f.txt", text))
    report = report_of(frame)
    assert report.dropped == {reason: [2]}
    assert len(frame) == 2 and report.rows_read == 3
    with pytest.raises(dl.DroppedRowsError, match=reason) as info:
        dl.load_foursquare(write("f.txt", text), strict=True)
    assert info.value.report.dropped == {reason: [2]}


def test_boundary_coordinates_are_kept(write):
    text = with_line(4, "90") + with_line(4, "-90").replace("139.76", "-180") + with_line(5, "180")
    frame = dl.load_foursquare(write("f.txt", text), strict=True)
    assert len(frame) == 3


def test_first_failing_reason_wins(write, report_of):
    text = GOOD + with_line(0, "").replace("35.69", "99")  # no user and out of range
    report = report_of(dl.load_foursquare(write("f.txt", text)))
    assert report.dropped == {"bad_user": [2]}


def test_wrong_field_counts(write, report_of):
    too_many = GOOD.rstrip("\n") + "\textra\n"
    too_few = "\t".join(GOOD.split("\t")[:5]) + "\n"
    text = GOOD + too_many + too_few + GOOD.replace("05:56", "09:00")
    report = report_of(dl.load_foursquare(write("f.txt", text)))
    assert report.dropped == {"bad_fields": [2], "bad_time": [3]}
    assert report.rows_read == 4 and report.rows_kept == 2


def test_blank_lines_keep_line_numbers_right(write, report_of):
    text = GOOD + "\n" + "\n" + with_line(4, "95") + GOOD.replace("05:56", "09:00") + "\n"
    report = report_of(dl.load_foursquare(write("f.txt", text)))
    assert report.blank_lines == [2, 3, 6]  # the last "\n" ends line 5, the next one is line 6
    assert report.dropped == {"out_of_range": [4]}
    assert report.rows_read == 3


def test_mixed_encodings_are_read_and_noted(write):
    data = GOOD.encode() + with_line(3, "Café").encode("latin-1") + with_line(3, "Café").encode()
    frame = dl.load_foursquare(write("f.txt", data))
    assert frame["category"].tolist().count("Café") == 2
    assert any("latin-1" in note for note in frame.attrs["report"].notes)


def test_generic_frame_drops_use_row_positions(report_of):
    frame = pd.DataFrame({"uid": [1, 1, None, 2], "datetime": ["2012-01-01T00:00Z", "never",
                                                               "2012-01-01T00:00Z", "2012-01-01T00:00Z"],
                          "lat": [1.0, 1.0, 1.0, np.inf], "lng": [2.0, 2.0, 2.0, 2.0]})
    report = report_of(dl.load_checkins(frame))
    assert report.dropped == {"bad_user": [2], "bad_time": [1], "bad_coords": [3]}
    assert report.position == "row"
    assert "bad_time" in report.summary() and "rows 1" in report.summary()


def test_report_is_json_and_pickle_friendly(write):
    import json
    import pickle

    frame = dl.load_foursquare(write("f.txt", GOOD + with_line(4, "95")))
    report = frame.attrs["report"]
    assert json.loads(json.dumps(report))["dropped"] == {"out_of_range": [2]}
    again = pickle.loads(pickle.dumps(report))
    assert again == report and again.n_dropped == 1
    assert frame.iloc[:1].attrs["report"] is report  # shared, not deep-copied, by pandas
