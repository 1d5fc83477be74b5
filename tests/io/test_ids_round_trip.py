"""Ids exactly as written through every text and GPX writer and reader.

Every id below has broken once: NA words read as missing, a tab or a line break in a
TSV id not unquoted, a control character making a GPX file unreadable, a GPX track
name split at its last space, ``007`` read back as 7.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data_loaders

from tracs import Batch
from tracs.errors import InputError
from tracs.io import UnsupportedFormatError, read_checkins
from tracs.io.gpx import GPXIdError, read_gpx_table
from tracs.io.release import read_release
from tracs.io.write import write_points

#: ids that must come back exactly (no blank one: an empty or blank id is missing)
IDS = ["NA", "null", "N/A", "nan", "NULL", "#N/A", "None", "<NA>", "007", "7", "tab\there", "line\nbreak",
       "cr\rhere", 'say "hi"', '"quoted"', "a,b", " padded ", "Zürich 東京", "x y"]
REGION = "--region=139.6,35.6,139.8,35.8"


def _released(ids, trajectories=None):
    n = len(ids)
    return pd.DataFrame({
        "uid": pd.array(ids, dtype="string"),
        "trajectory": trajectories if trajectories is not None else np.zeros(n, np.int64),
        "datetime": pd.date_range("2024-01-01", periods=n, freq="min", tz="UTC"),
        "lat": 35.6 + 0.001 * np.arange(n), "lng": 139.6 + 0.001 * np.arange(n),
        "epsilon_point": np.full(n, 2.0), "epsilon_trajectory": np.full(n, 2.0)})


def _in_file_order(frame):
    return frame.sort_values(frame.columns[frame.columns.str.startswith("source_")][0]).reset_index(drop=True)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".gpx", ".parquet", ".geojson", ".gpkg"])
def test_written_ids_read_back_exactly(suffix, tmp_path):
    path = tmp_path / f"released{suffix}"
    write_points(_released(IDS), path)
    back = read_release(path)
    assert back["uid"].tolist() == IDS
    assert _in_file_order(read_checkins(path))["uid"].tolist() == IDS  # as an input, too


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".gpx"])
def test_a_batch_is_written_as_its_geodataframe_view(suffix, tmp_path):
    n = len(IDS)
    lonlat = np.column_stack([139.6 + 0.001 * np.arange(n), 35.6 + 0.001 * np.arange(n)])
    batch = Batch(lonlat, [0, 9, n], keys=pd.array(IDS, dtype="string"), crs="EPSG:4326",
                  columns={"datetime": pd.date_range("2024-01-01", periods=n, freq="min", tz="UTC")})
    path = tmp_path / f"released{suffix}"
    write_points(batch, path)
    back = read_release(path)
    assert back["uid"].tolist() == IDS
    assert back["trajectory"].astype(int).tolist() == [0] * 9 + [1] * (n - 9)
    np.testing.assert_allclose(back[["lng", "lat"]].to_numpy(float), lonlat)
    with pytest.raises(InputError, match="writes WGS84"):
        write_points(batch.with_coords(lonlat, crs="EPSG:32654"), path)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_na_words_are_ids_when_another_line_is_not_utf8(suffix, tmp_path):
    """``None`` and ``<NA>`` were missing only when the pandas reader took over for latin-1 bytes."""
    sep = "\t" if suffix == ".tsv" else ","
    rows = [sep.join([u, f"2024-01-01T00:0{k}:00Z", "35.6", "139.6"]) for k, u in enumerate(["None", "<NA>", "NA"])]
    path = tmp_path / f"in{suffix}"
    path.write_bytes((sep.join(["uid", "datetime", "lat", "lng"]) + "\n" + "\n".join(rows) + "\n").encode()
                     + sep.join(["caf\xe9", "2024-01-01T00:09:00Z", "35.6", "139.6"]).encode("latin-1") + b"\n")
    for frame in (read_checkins(path), data_loaders.load_checkins(path)):
        assert _in_file_order(frame)["uid"].tolist() == ["None", "<NA>", "NA", "café"]


def test_empty_id_is_the_only_missing_one(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("uid,datetime,lat,lng\n,2024-01-01T00:00:00Z,35.6,139.6\nNA,2024-01-01T00:01:00Z,NA,139.6\n"
                    "null,2024-01-01T00:02:00Z,35.6,139.6\n")
    frame = read_checkins(path)
    assert frame["uid"].tolist() == ["null"]  # "" missing; "NA" kept, its row dropped for its latitude NA
    assert frame.attrs["report"].dropped == {"bad_user": [2], "bad_coords": [3]}


def test_tsv_quoted_ids_are_unquoted(tmp_path):
    """A TSV release quotes an id holding a tab or a line break; the reader took the quotes as text."""
    path = tmp_path / "in.tsv"
    path.write_text('uid\tdatetime\tlat\tlng\n"a\tb"\t2024-01-01T00:00:00Z\t35.6\t139.6\n'
                    '"c\nd"\t2024-01-01T00:01:00Z\t35.6\t139.6\n'
                    'e"f\t2024-01-01T00:02:00Z\t35.6\t139.6\n', encoding="utf-8")
    assert _in_file_order(read_checkins(path))["uid"].tolist() == ["a\tb", "c\nd", 'e"f']


def test_gpx_ids_are_in_the_extensions_not_the_name(tmp_path):
    """User 7 with trajectory 'x y' read back as user '7 x'; trajectory 007 as 7; one odd name made every
    trajectory id positional."""
    path = tmp_path / "released.gpx"
    write_points(_released(["7", "7", "8", "8 1"], ["x y", "x y", "007", "1"]), path)
    back = read_release(path)
    assert back["uid"].tolist() == ["7", "7", "8", "8 1"]
    assert back["trajectory"].tolist() == ["x y", "x y", "007", "1"]
    text = path.read_text(encoding="utf-8")
    assert "<name>7 x y</name>" in text and "<tracs:uid>7</tracs:uid>" in text


def test_gpx_release_read_as_plain_gpx_keeps_its_users(tmp_path):
    """Read as an input, a GPX release took its file name as the one user."""
    path = tmp_path / "released.gpx"
    write_points(_released(["a", "a", "b"], [0, 0, 3]), path)
    raw = read_gpx_table(path)
    assert raw.table["uid"].tolist() == ["a", "a", "b"] and raw.table["trajectory"].tolist() == ["0", "0", "3"]
    assert _in_file_order(read_checkins(path))["uid"].tolist() == ["a", "a", "b"]


def test_plain_gpx_reads_as_before(tmp_path):
    path = tmp_path / "ride.gpx"
    path.write_text('<?xml version="1.0"?><gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1">'
                    '<trk><name>7 x</name><trkseg><trkpt lat="35.6" lon="139.6"><time>2024-01-01T00:00:00Z</time>'
                    '</trkpt></trkseg><trkseg><trkpt lat="35.7" lon="139.7"><time>2024-01-01T01:00:00Z</time>'
                    '</trkpt></trkseg></trk></gpx>')
    raw = read_gpx_table(path)
    assert raw.table["uid"].tolist() == ["ride", "ride"] and raw.table["trajectory"].tolist() == [0, 1]


@pytest.mark.parametrize("uid, trajectory, message", [
    ("a\x01b", 0, r"user id 'a\\x01b': its character U\+0001 \(at position 1\)"),
    ("a\x00", 0, r"user id 'a\\x00': its character U\+0000 \(at position 1\)"),
    ("ok", "t\x1b", r"trajectory id 't\\x1b': its character U\+001B \(at position 1\)"),
    ("\x0c", 0, r"user id '\\x0c': its character U\+000C \(at position 0\)"),
])
def test_gpx_refuses_ids_xml_cannot_hold(uid, trajectory, message, tmp_path):
    path = tmp_path / "released.gpx"
    with pytest.raises(GPXIdError, match=message + ".*write the release as CSV"):
        write_points(_released([uid], [trajectory]), path)
    assert not path.exists()


@pytest.mark.parametrize("suffix, sep, tail", [
    (".csv", ",", b""), (".tsv", "\t", b""),
    (".csv", ",", "caf\xe9,2024-01-01T00:09:00Z,35.6,139.6\n".encode("latin-1")),  # the pandas reader
])
def test_nul_byte_in_an_id_is_named_not_a_new_user(suffix, sep, tail, tmp_path):
    """A NUL byte past the first 64 KiB made a new user silently; the docs promise its byte offset and line."""
    rows = "".join(f"7{sep}2024-01-01T00:00:00Z{sep}35.6{sep}139.6\n" for _ in range(3000)).encode()
    path = tmp_path / f"in{suffix}"
    head = sep.join(["uid", "datetime", "lat", "lng"]).encode() + b"\n"
    path.write_bytes(head + rows + b"7\x00" + f"{sep}2024-01-01T00:00:00Z{sep}35.6{sep}139.6\n".encode() + tail)
    offset = len(head) + len(rows) + 1
    with pytest.raises(UnsupportedFormatError, match=rf"a binary file: NUL byte at byte offset {offset}, line 3002\)"):
        read_checkins(path)


@pytest.mark.parametrize("times, kept, dropped", [
    (["2024-01-01T00:00:00Z", "NA", "", "null"], 1, [3, 4, 5]),
    (["1709251200", "NA", "nan", "1709251260"], 2, [3, 4]),              # epoch seconds told by magnitude
    (["01/02/2024 08:00", "NA", "01/03/2024 08:00", "N/A"], 2, [3, 5]),  # a layout detected past the words
])
def test_na_words_in_a_time_column_are_missing_times(times, kept, dropped, tmp_path):
    """Only ids keep the NA words: in a time column they stay missing times, and the layout is found."""
    path = tmp_path / "in.csv"
    path.write_text("uid,datetime,lat,lng\n" + "".join(f"NA,{t},35.6,139.6\n" for t in times))
    frame = read_checkins(path)
    assert len(frame) == kept and frame.attrs["report"].dropped == {"bad_time": dropped}
    assert set(frame["uid"]) == {"NA"}
