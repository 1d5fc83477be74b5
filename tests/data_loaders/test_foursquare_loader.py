"""Foursquare TSMC2014: both file forms, schema, order, duplicates, encodings, times."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from checkin_samples import FOURSQUARE_HEADER, FOURSQUARE_TSV, to_csv

import data_loaders as dl


def test_original_tsv_schema_and_values(write, report_of):
    frame = dl.load_foursquare(write("dataset_TSMC2014_TKY.txt", FOURSQUARE_TSV))
    assert list(frame.columns) == ["uid", "datetime", "poi_id", "category", "category_id",
                                   "local_time", "utc_offset", "source_line", "geometry"]
    assert frame.crs.to_epsg() == 4326
    assert str(frame["datetime"].dtype) == "datetime64[ns, UTC]"
    assert frame["uid"].dtype == np.int64
    # sorted by (uid, time); user 1's tie (lines 4, 5, 6) keeps file order
    assert frame["uid"].tolist() == [1, 1, 1, 1, 2, 2]
    assert frame["poi_id"].tolist() == ["v-a0", "v-a1", "v-a2", "v-a1", "v-b0", "v-b1"]
    first = frame.iloc[4]
    assert first["datetime"] == pd.Timestamp("2012-12-08 05:56:34", tz="UTC")
    assert first["local_time"] == pd.Timestamp("2012-12-08 14:56:34")  # +540 min
    assert first["category"] == "Train Station" and first["category_id"] == "c-2"
    assert (first.geometry.x, first.geometry.y) == (139.76, 35.69)
    assert frame.iloc[2]["utc_offset"] == 600
    assert frame.iloc[2]["local_time"] == pd.Timestamp("2012-04-04 11:00:00")
    assert frame.index.equals(pd.RangeIndex(6))
    report = report_of(frame)
    assert (report.rows_read, report.rows_kept, report.dropped) == (6, 6, {})
    assert report.format == "foursquare-tsv" and report.position == "line"
    assert report.exact_duplicates == [6]
    assert report.repeated_times == [5]


def test_csv_with_header_equals_original(write):
    tsv = dl.load_foursquare(write("a.txt", FOURSQUARE_TSV))
    csv = dl.load_foursquare(write("a.csv", to_csv(FOURSQUARE_TSV, FOURSQUARE_HEADER)))
    pd.testing.assert_frame_equal(tsv.drop(columns=["geometry", "source_line"]),
                                  csv.drop(columns=["geometry", "source_line"]))
    assert tsv.geometry.equals(csv.geometry)
    assert (csv["source_line"] - tsv["source_line"] == 1).all()  # the header line
    assert csv.attrs["report"].format == "foursquare-csv"
    # line numbers count the header as line 1
    assert csv.attrs["report"].exact_duplicates == [7]


def test_header_columns_in_any_order(write):
    table = pd.read_csv(write("a.csv", to_csv(FOURSQUARE_TSV, FOURSQUARE_HEADER)), dtype=str)
    shuffled = table[list(reversed(table.columns))]
    path = write("b.csv", shuffled.to_csv(index=False))
    a = dl.load_foursquare(write("c.csv", to_csv(FOURSQUARE_TSV, FOURSQUARE_HEADER)))
    b = dl.load_foursquare(path)
    pd.testing.assert_frame_equal(a.drop(columns="geometry"), b[a.columns].drop(columns="geometry"))


@pytest.mark.parametrize("policy, dropped, kept", [
    ("keep", [], 6), ("drop_exact", [6], 5), ("drop_user_time", [5, 6], 4)])
def test_duplicate_policies(write, report_of, policy, dropped, kept):
    frame = dl.load_foursquare(write("a.txt", FOURSQUARE_TSV), duplicates=policy)
    report = report_of(frame)
    assert len(frame) == kept
    assert report.dropped.get("duplicate", []) == dropped
    # always reported, whatever the policy
    assert report.exact_duplicates == [6] and report.repeated_times == [5]
    assert report.duplicates == policy
    if policy == "drop_user_time":  # the first of the tie (line 4) stays
        assert frame["poi_id"].tolist()[:2] == ["v-a0", "v-a1"]


def test_strict_accepts_kept_duplicates_but_not_drops(write):
    path = write("a.txt", FOURSQUARE_TSV)
    assert len(dl.load_foursquare(path, strict=True)) == 6
    with pytest.raises(dl.DroppedRowsError, match="duplicate"):
        dl.load_foursquare(path, strict=True, duplicates="drop_exact")


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_encodings(write, encoding):
    path = write("a.txt", FOURSQUARE_TSV.encode(encoding))
    frame = dl.load_foursquare(path)
    assert "Café" in frame["category"].tolist()
    notes = frame.attrs["report"].notes
    assert any("latin-1" in n for n in notes) == (encoding == "latin-1")


def test_mixed_encodings_keep_every_character(write):
    lines = FOURSQUARE_TSV.splitlines(keepends=True)
    data = b"".join(line.encode("latin-1" if i % 2 else "utf-8") for i, line in enumerate(lines))
    frame = dl.load_foursquare(write("mixed.txt", data))
    assert len(frame) == 6
    assert frame["category"].str.contains("Café").sum() == 3
    assert not frame["category"].str.contains("Ã").any()  # no mojibake


def test_utf8_bom_is_ignored(write):
    frame = dl.load_foursquare(write("bom.txt", "\ufeff" + FOURSQUARE_TSV))
    assert frame.attrs["report"].n_dropped == 0 and len(frame) == 6


def test_numeric_looking_venue_ids_keep_their_text(write):
    text = FOURSQUARE_TSV
    for i, venue in enumerate(["v-b1", "v-b0", "v-a0", "v-a1", "v-a2"]):
        text = text.replace(f"\t{venue}\t", f"\t{i:024d}\t")
    frame = dl.load_foursquare(write("a.txt", text))
    assert frame["poi_id"].iloc[0] == "000000000000000000000002"


def _strptime(value):
    try:
        return pd.Timestamp(dt.datetime.strptime(value, "%a %b %d %H:%M:%S %z %Y")).tz_convert("UTC")
    except (TypeError, ValueError):
        return pd.NaT


def test_time_parser_agrees_with_strptime():
    rng = np.random.default_rng(5)
    seconds = rng.integers(-2_000_000_000, 4_000_000_000, 3000)
    offsets = rng.integers(-14 * 60, 14 * 60, 3000)
    values = []
    for s, off in zip(seconds, offsets):
        tz = dt.timezone(dt.timedelta(minutes=int(off)))
        values.append(dt.datetime.fromtimestamp(int(s), tz).strftime("%a %b %d %H:%M:%S %z %Y"))
    values += ["Thu Feb 29 23:59:59 +0000 2012", "Fri Feb 29 00:00:00 +0000 2013",
               "Sat Dec 08 24:00:00 +0000 2012", "Sat Dec 00 05:56:34 +0000 2012",
               "Sat Dcm 08 05:56:34 +0000 2012", "Sé Dec 08 05:56:34 +0000 2012",
               "Sat Dec 08 05:56:34 +0000 2012 ", " Sat Dec 08 05:56:34 +0000 2012",
               "Sat Dec 08 05:56:34 0000 2012", "2012-12-08T05:56:34Z", "", "nan"]
    expected = [_strptime(v) for v in values]
    for form in (pd.Series(values), pd.Series(values, dtype=object), np.array(values, dtype=object)):
        got = dl.parse_foursquare_time(form)
        assert str(got.dtype) == "datetime64[ns, UTC]"
        assert got.tolist() == expected
    assert dl.parse_foursquare_time(pd.Series([None, np.nan], dtype=object)).isna().all()
    assert len(dl.parse_foursquare_time([])) == 0
