"""Geolife, T-Drive and Porto loaders on small files written here in each set's real layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data_loaders as dl
from data_loaders import DroppedRowsError
from tracs.io.layouts import detect_track_format

from track_samples import PORTO_HEADER, porto_row, write_geolife, write_porto, write_porto_many, write_tdrive


# ----------------------------------------------------------------------------- Geolife


def test_geolife_users_trajectories_and_drops(tmp_path):
    root = write_geolife(tmp_path / "geolife")
    frame = dl.load_geolife(root)
    report = frame.attrs["report"]
    assert frame["uid"].tolist() == ["000"] * 5 + ["010"] * 2  # folder names as written, not 0 / 10
    assert frame["trajectory_id"].tolist() == ["20081023025304"] * 3 + ["20081024010000"] * 2 + \
        ["20081024020000"] * 2
    assert frame.attrs["trajectory_column"] == "trajectory_id"
    assert frame["source_line"].tolist() == [7, 8, 9, 7, 8, 7, 12]
    assert frame["datetime"].iloc[0] == pd.Timestamp("2008-10-23 02:53:04", tz="UTC")
    assert frame["altitude_ft"].tolist()[3] == -777
    assert (report.rows_read, report.rows_kept) == (11, 7)
    assert report.dropped == {"bad_fields": [9], "bad_time": [10], "bad_coords": [8], "out_of_range": [11]}
    notes = "\n".join(report.notes)
    for fragment in ("1 row dropped as bad_time is at: 010/Trajectory/20081024020000.plt line 10",
                     "1 line dropped as bad_fields is at: 010/Trajectory/20081024020000.plt line 9",
                     "3 .plt files of 2 users", "labels.txt (transport modes) of 1 user not read",
                     "not kept: the third field"):
        assert fragment in notes, notes
    trajs = dl.to_trajectories(frame, by="trajectory_id")
    assert np.diff(trajs.offsets).tolist() == [3, 2, 2]  # one trajectory per file


@pytest.mark.parametrize("where", ["root", "Data", "user", "file"])
def test_geolife_roots(tmp_path, where):
    root = write_geolife(tmp_path / "g")
    path = {"root": root, "Data": root / "Data", "user": root / "Data" / "000",
            "file": root / "Data" / "000" / "Trajectory" / "20081024010000.plt"}[where]
    frame = dl.load_geolife(path)
    assert set(frame["uid"]) == ({"000", "010"} if where in ("root", "Data") else {"000"})
    assert len(frame) == {"root": 7, "Data": 7, "user": 5, "file": 2}[where]
    assert "source_file" in frame.columns or where == "file"


# ----------------------------------------------------------------------------- T-Drive


def test_tdrive_duplicates_reported_with_files(tmp_path):
    folder = write_tdrive(tmp_path / "taxi_log")
    frame = dl.load_tdrive(folder)
    report = frame.attrs["report"]
    assert frame["uid"].tolist() == ["007", "007", "1", "1", "1", "1"]
    assert report.dropped == {"bad_coords": [5]}
    assert sorted(report.exact_duplicates) == [2, 3] and report.repeated_times == [4]
    notes = "\n".join(report.notes)
    for fragment in ("2 exact duplicate rows (the same user, time and position as an earlier row; kept unless "
                     "duplicates='drop_exact' or 'drop_user_time'): 1.txt line 3, 7.txt line 2",
                     "1 row with the user and time of an earlier row at another position",
                     "1 empty file (taxis without a point)", "1 file holds taxi ids other than their name",
                     "1 row dropped as bad_coords is at: 1.txt line 5", "times without a timezone were read as UTC"):
        assert fragment in notes, notes
    dropped = dl.load_tdrive(folder, duplicates="drop_exact")
    assert len(dropped) == 4 and sorted(dropped.attrs["report"].dropped["duplicate"]) == [2, 3]


def test_tdrive_single_file_and_zone(tmp_path):
    folder = write_tdrive(tmp_path / "t")
    frame = dl.load_tdrive(folder / "7.txt", tz="Asia/Shanghai")
    assert frame["datetime"].iloc[0] == pd.Timestamp("2008-02-02 05:30:44", tz="UTC")
    assert "source_file" not in frame.columns
    assert any("line 2" in n and "exact duplicate" in n for n in frame.attrs["report"].notes)


# ----------------------------------------------------------------------------- Porto


def test_porto_points_times_and_notes(tmp_path):
    frame = dl.load_porto(write_porto(tmp_path / "train.csv"))
    report = frame.attrs["report"]
    first = frame[frame["trip_id"] == "1372636858620000589"]
    assert first["datetime"].tolist() == [pd.Timestamp(1372636858 + 15 * k, unit="s", tz="UTC") for k in range(3)]
    assert first["source_line"].tolist() == [2, 2, 2]
    assert frame.loc[frame["trip_id"] == "0001", "uid"].tolist() == ["00042"]  # ids as written
    assert frame.attrs["trajectory_column"] == "trip_id"
    assert report.dropped == {"bad_fields": [9], "bad_time": [6], "bad_coords": [7], "out_of_range": [8]}
    assert (report.rows_read, report.rows_kept) == (11, 7)
    notes = "\n".join(report.notes)
    for fragment in ("1 trip with an empty POLYLINE (no point to read): lines 4",
                     "1 trip flagged MISSING_DATA=True", "lines 5",
                     "1 trip whose POLYLINE is not a list of [lon,lat] pairs (one bad_coords row each): lines 7",
                     "not kept: CALL_TYPE, ORIGIN_CALL, ORIGIN_STAND, DAY_TYPE"):
        assert fragment in notes, notes
    trajs = dl.to_trajectories(frame, by="trip_id")
    assert sorted(np.diff(trajs.offsets).tolist()) == [1, 1, 2, 3]  # one trajectory per trip


def test_porto_chunks_equal_whole(tmp_path):
    path, points = write_porto_many(tmp_path / "train.csv", 600)
    whole = dl.load_porto(path)
    chunks = list(dl.iter_porto(path, chunk_bytes=1 << 13))
    assert len(chunks) > 10 and sum(len(c) for c in chunks) == len(whole) == points
    joined = pd.concat(chunks, ignore_index=True)
    keys = np.lexsort((joined["datetime"].array.asi8, pd.factorize(joined["uid"], sort=True)[0]))
    joined = joined.iloc[keys].reset_index(drop=True)
    cols = ["uid", "datetime", "trip_id", "source_line"]
    pd.testing.assert_frame_equal(joined[cols].astype(str), whole[cols].astype(str))
    np.testing.assert_array_equal(joined.geometry.x.to_numpy(), whole.geometry.x.to_numpy())
    np.testing.assert_array_equal(joined.geometry.y.to_numpy(), whole.geometry.y.to_numpy())
    assert sum(c.attrs["report"].rows_read for c in chunks) == whole.attrs["report"].rows_read


def test_porto_line_numbers_after_skipped_lines_across_chunks(tmp_path):
    rows = [porto_row(f"{k:04d}", "1", 1372636858 + k, [[-8.6, 41.1]]) for k in range(400)]
    rows[150] = '"x","C"\n'
    path = tmp_path / "train.csv"
    path.write_text(PORTO_HEADER + "".join(rows))
    for chunk_bytes in (1 << 12, 1 << 20):
        frame = dl.load_porto(path, chunk_bytes=chunk_bytes)
        assert frame.attrs["report"].dropped == {"bad_fields": [152]}
        got = dict(zip(frame["trip_id"], frame["source_line"]))
        assert got["0149"] == 151 and got["0151"] == 153 and got["0399"] == 401


# ----------------------------------------------------------------------------- detection and bad inputs


def test_detect_track_format(tmp_path):
    write_geolife(tmp_path / "g")
    write_tdrive(tmp_path / "t")
    write_porto(tmp_path / "p.csv")
    (tmp_path / "other.csv").write_text("uid,datetime,lat,lng\n1,2024-01-01,1,2\n")
    cases = {tmp_path / "g": "geolife", tmp_path / "g" / "Data": "geolife",
             tmp_path / "g" / "Data" / "000" / "Trajectory" / "20081023025304.plt": "geolife",
             tmp_path / "t": "tdrive", tmp_path / "t" / "1.txt": "tdrive", tmp_path / "p.csv": "porto",
             tmp_path / "other.csv": None, tmp_path / "missing.csv": None}
    assert {p: detect_track_format(p) for p in cases} == cases


def _header_only_plt(tmp_path):
    path = tmp_path / "Data" / "000" / "Trajectory" / "1.plt"
    path.parent.mkdir(parents=True)
    path.write_text("a\nb\nc\nd\ne\nf\n")
    return tmp_path


BAD = [
    ("geolife missing", lambda p: dl.load_geolife(p / "nowhere"), FileNotFoundError, "no such file"),
    ("geolife empty folder", lambda p: dl.load_geolife(p), ValueError,
     "holds no Geolife trajectories: expected Data/<user>/Trajectory/*.plt"),
    ("geolife header only", lambda p: dl.load_geolife(_header_only_plt(p)), ValueError,
     "no point in 1 .plt file(s) (each has only its 6 header lines)"),
    ("geolife not plt", lambda p: dl.load_geolife(write_porto(p / "x.csv")), ValueError,
     "x.csv is not a Geolife .plt file"),
    ("geolife strict", lambda p: dl.load_geolife(write_geolife(p), strict=True), DroppedRowsError,
     "strict=True and rows would be dropped"),
    ("geolife duplicates policy", lambda p: dl.load_geolife(write_geolife(p), duplicates="merge"), ValueError,
     "duplicates must be one of"),
    ("tdrive missing", lambda p: dl.load_tdrive(p / "nowhere"), FileNotFoundError, "no such file"),
    ("tdrive no txt", lambda p: dl.load_tdrive(p), ValueError, "holds no T-Drive file (<taxi id>.txt)"),
    ("tdrive all empty", lambda p: (p / "1.txt").write_text("") and None or dl.load_tdrive(p), ValueError,
     "no point in 1 T-Drive file (all empty)"),
    ("porto no POLYLINE", lambda p: dl.load_porto(write_tdrive(p) / "1.txt"), ValueError,
     "1.txt is not a Porto taxi file: no column TRIP_ID, TAXI_ID, TIMESTAMP, MISSING_DATA, POLYLINE"),
    ("porto missing", lambda p: dl.load_porto(p / "train.csv"), FileNotFoundError, "no such file"),
    ("porto chunk", lambda p: list(dl.iter_porto(write_porto(p / "t.csv"), chunk_bytes=10)), ValueError,
     "chunk_bytes must be an int >= 4096, got 10"),
    ("porto only empty trips", lambda p: (p / "t.csv").write_text(PORTO_HEADER + porto_row("1", "2", 3, []))
     and dl.load_porto(p / "t.csv"), ValueError, "has no check-in rows"),
    ("porto strict", lambda p: dl.load_porto(write_porto(p / "t.csv"), strict=True), DroppedRowsError,
     "dropped 1 bad_time"),
]


@pytest.mark.parametrize("case, call, error, message", BAD, ids=[c[0] for c in BAD])
def test_bad_inputs(tmp_path, case, call, error, message):
    with pytest.raises(error) as info:
        call(tmp_path)
    assert message in str(info.value), str(info.value)


@pytest.mark.parametrize("load, write, advice", [
    (dl.load_porto, lambda p: write_porto(p / "train.csv"), "read it in blocks (data_loaders.iter_porto"),
    (dl.load_geolife, lambda p: write_geolife(p / "g"), "read fewer users at a time"),
    (dl.load_tdrive, lambda p: write_tdrive(p / "t"), "read fewer taxis at a time"),
])
def test_whole_reads_that_cannot_fit_are_refused_up_front(tmp_path, monkeypatch, load, write, advice):
    import tracs.io.tracks as tracks

    path = write(tmp_path)
    monkeypatch.setattr(tracks, "available_memory", lambda: 1000)  # bytes: nothing fits
    with pytest.raises(tracks.NotEnoughMemoryError) as info:
        load(path)
    message = str(info.value)
    assert "GB of memory to be read whole, and 0.0 GB is available" in message and advice in message, message
    assert len(list(dl.iter_porto(write_porto(tmp_path / "p.csv")))) == 1  # blocks are never refused
    monkeypatch.setattr(tracks, "available_memory", lambda: None)  # unknown: read
    assert len(load(path)) > 0
