"""Gowalla (SNAP and CSV) and the generic loader (files, frames, GeoDataFrames, times)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from checkin_samples import FOURSQUARE_TSV, GOWALLA_TSV

import data_loaders as dl


def test_gowalla_snap_original(write, report_of):
    frame = dl.load_gowalla(write("loc-gowalla_totalCheckins.txt", GOWALLA_TSV))
    assert list(frame.columns) == ["uid", "datetime", "poi_id", "source_line", "geometry"]
    assert frame["uid"].tolist() == [0, 0, 1]
    assert frame["poi_id"].tolist() == [420315, 22847, 316637]  # user 0 put in time order
    assert frame["datetime"].iloc[0] == pd.Timestamp("2010-10-18 22:17:43", tz="UTC")
    assert frame.geometry.iloc[0].x == pytest.approx(-97.7493953705, abs=0)
    report = report_of(frame)
    assert report.format == "gowalla-tsv" and report.rows_kept == 3


def test_gowalla_csv_with_other_column_order(write):
    text = "User ID,Latitude,Longitude,Timestamp,Location ID\n" + "".join(
        f"{u},{lat},{lng},{t.replace('T', ' ').rstrip('Z')},{loc}\n"
        for u, t, lat, lng, loc in (line.split("\t") for line in GOWALLA_TSV.splitlines()))
    csv = dl.load_gowalla(write("chi.csv", text))
    tsv = dl.load_gowalla(write("snap.txt", GOWALLA_TSV))
    pd.testing.assert_frame_equal(csv.drop(columns=["geometry", "source_line"]),
                                  tsv.drop(columns=["geometry", "source_line"]))
    assert csv.geometry.equals(tsv.geometry)
    assert (csv["source_line"] - tsv["source_line"] == 1).all()  # the header line


def _frame():
    return pd.DataFrame({
        "uid": ["b", "a", "b", "a", "a"],
        "datetime": ["2012-01-01T10:00:00Z", "2012-01-01T09:00:00+09:00",
                     "2012-01-01T08:00:00Z", "2012-01-01T00:00:00Z", "2012-01-01T00:00:00Z"],
        "lat": [1.0, 2.0, 3.0, 4.0, 5.0], "lng": [10.0, 20.0, 30.0, 40.0, 50.0],
        "poi_id": [7, 8, 9, 10, 11], "note": ["p", "q", "r", "s", "t"]})


def test_generic_frame_defaults(report_of):
    frame = dl.load_checkins(_frame())
    assert list(frame.columns) == ["uid", "datetime", "poi_id", "note", "source_row", "geometry"]
    # "a" at 00:00 (rows 1 and 3 once converted to UTC: 09:00+09:00 == 00:00Z, row 4 also)
    assert frame["uid"].tolist() == ["a", "a", "a", "b", "b"]
    assert frame["note"].tolist() == ["q", "s", "t", "r", "p"]  # ties in input order
    report = report_of(frame)
    assert report.position == "row" and report.repeated_times == [3, 4]
    assert any("mixed UTC offsets" in n for n in report.notes)


def test_generic_custom_names_and_no_poi():
    renamed = _frame().rename(columns={"uid": "user", "datetime": "t", "lat": "y", "lng": "x"})
    frame = dl.load_checkins(renamed.drop(columns="poi_id"), user="user", time="t", lat="y", lng="x")
    assert "poi_id" not in frame.columns and len(frame) == 5
    with pytest.raises(ValueError, match="POI column 'venue'"):
        dl.load_checkins(_frame(), poi="venue")
    assert "poi_id" not in dl.load_checkins(_frame(), poi=None).columns


def test_generic_geodataframe_in_another_crs():
    base = dl.load_checkins(_frame())
    projected = base.drop(columns=[]).to_crs(3857)
    again = dl.load_checkins(projected)
    np.testing.assert_allclose(np.c_[again.geometry.x, again.geometry.y],
                               np.c_[base.geometry.x, base.geometry.y], atol=1e-9)
    assert any("EPSG:3857" in n for n in again.attrs["report"].notes)
    with pytest.raises(ValueError, match="no CRS"):
        dl.load_checkins(base.set_crs(None, allow_override=True))


def test_generic_times_naive_local_and_epoch():
    naive = _frame().assign(datetime=pd.to_datetime(["2012-01-01 09:00"] * 5))
    tokyo = dl.load_checkins(naive, tz="Asia/Tokyo")
    assert (tokyo["datetime"] == pd.Timestamp("2012-01-01 00:00", tz="UTC")).all()
    utc = dl.load_checkins(naive)
    assert any("read as UTC" in n for n in utc.attrs["report"].notes)
    epoch = dl.load_checkins(_frame().assign(datetime=[0, 60, 120, 180, 240]))
    assert epoch["datetime"].min() == pd.Timestamp("1970-01-01", tz="UTC")
    fmt = dl.load_checkins(_frame().assign(datetime=["01/02/2012 10:00"] * 5),
                           time_format="%d/%m/%Y %H:%M")
    assert (fmt["datetime"] == pd.Timestamp("2012-02-01 10:00", tz="UTC")).all()


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_generic_delimited_files(write, sep):
    path = write("checkins.txt", _frame().to_csv(index=False, sep=sep))
    frame = dl.load_checkins(path)
    assert len(frame) == 5 and frame.attrs["report"].position == "line"
    assert frame["note"].tolist() == ["q", "s", "t", "r", "p"]


def test_generic_parquet_and_geoparquet(tmp_path):
    pytest.importorskip("pyarrow")
    plain = tmp_path / "c.parquet"
    _frame().to_parquet(plain)
    assert len(dl.load_checkins(plain)) == 5
    geo = tmp_path / "g.parquet"
    base = dl.load_checkins(_frame())
    base.drop(columns=[]).to_parquet(geo)
    again = dl.load_checkins(geo)
    assert again.geometry.equals(base.geometry)


def test_load_any_detects_formats(write):
    assert dl.detect_format(write("a.txt", FOURSQUARE_TSV)) == "foursquare"
    assert dl.detect_format(write("b.txt", GOWALLA_TSV)) == "gowalla"
    assert dl.detect_format(write("c.csv", _frame().to_csv(index=False))) == "table"
    assert dl.load_any(write("d.txt", GOWALLA_TSV)).attrs["report"].format == "gowalla-tsv"
    assert len(dl.load_any(_frame())) == 5


def test_dataset_path_needs_a_folder(monkeypatch, tmp_path, no_data_dirs):
    with pytest.raises(FileNotFoundError, match="TRACS_DATA_DIR") as info:
        dl.dataset_path("tky")
    assert "no-checkout-data" in str(info.value) and "empty-cache" in str(info.value)
    with pytest.raises(FileNotFoundError, match="not found"):
        dl.dataset_path("chi", tmp_path)
    with pytest.raises(ValueError, match="unknown data set"):
        dl.load_dataset("paris")
    (tmp_path / dl.DATASETS["chi"][0]).write_text(GOWALLA_TSV)
    monkeypatch.setenv("TRACS_DATA_DIR", str(tmp_path))
    assert len(dl.load_dataset("chi")) == 3
    assert isinstance(dl.load_dataset("synthetic", users=3), gpd.GeoDataFrame)


def test_data_is_found_where_tracs_looks_in_order(monkeypatch, tmp_path, no_data_dirs):
    """TRACS_DATA_DIR first, then the checkout's shared/datasets, then the user cache folder."""
    import data_loaders.datasets as datasets

    folders = {name: tmp_path / name for name in ("env", "checkout", "cache/tracs/datasets")}
    for folder in folders.values():
        folder.mkdir(parents=True)
        (folder / dl.DATASETS["chi"][0]).write_text(GOWALLA_TSV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert dl.dataset_path("chi").parent == folders["cache/tracs/datasets"]
    monkeypatch.setattr(datasets, "CHECKOUT_DATA_DIR", folders["checkout"])
    assert dl.dataset_path("chi").parent == folders["checkout"]
    monkeypatch.setenv("TRACS_DATA_DIR", str(folders["env"]))
    assert dl.dataset_path("chi").parent == folders["env"]
    assert dl.data_dirs() == [folders["env"], folders["checkout"], folders["cache/tracs/datasets"]]
