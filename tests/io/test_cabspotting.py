"""Cabspotting taxi traces in their published layout (``new_<cab>.txt``, ``lat lon occupancy epoch``)."""

from __future__ import annotations

import pandas as pd
import pytest

import data_loaders
from tracs.io import read_checkins
from tracs.io.formats import format_of, input_formats
from tracs.io.layouts import detect_track_format
from track_samples import write_cabspotting


def test_a_folder_is_detected_and_read(tmp_path):
    folder = write_cabspotting(tmp_path / "cabspottingdata")
    assert detect_track_format(folder) == "cabspotting" and format_of(folder).key == "cabspotting"
    frame = read_checkins(folder)
    assert sorted(frame["uid"].unique()) == ["007", "abboip"]  # new_abboip.txt is cab abboip
    abboip = frame[frame["uid"] == "abboip"]
    assert abboip["datetime"].tolist() == [pd.Timestamp(1213084659, unit="s", tz="UTC"),
                                           pd.Timestamp(1213084687, unit="s", tz="UTC")]  # in time order
    assert abboip["source_line"].tolist() == [2, 1]
    report = frame.attrs["report"]
    assert report.dropped == {"bad_time": [3]}
    notes = " ".join(report.notes)
    assert "new_abboip.txt line 3" in notes and "_cabs.txt (the index of the cabs) not read" in notes
    assert "1 empty file" in notes


def test_one_file_and_the_loader(tmp_path):
    folder = write_cabspotting(tmp_path / "cabs")
    path = folder / "new_abboip.txt"
    assert detect_track_format(path) == "cabspotting"
    frame = data_loaders.load_cabspotting(path)
    assert frame["uid"].tolist() == ["abboip", "abboip"] and frame["occupancy"].tolist() == [1.0, 0.0]
    assert "cabspotting" in input_formats()


def test_the_command_reads_a_folder(tmp_path, capsys):
    from tracs.cli import main

    folder = write_cabspotting(tmp_path / "cabs")
    out = tmp_path / "released.csv"
    assert main(["perturb", str(folder), "-o", str(out), "-m", "tracs-d", "-e", "2", "--region", "san-francisco",
                 "--seed", "1", "-q"]) == 0
    assert sorted(pd.read_csv(out, dtype={"uid": str})["uid"].unique()) == ["007", "abboip"]


@pytest.mark.parametrize("line, layout", [
    ("37.75134 -122.39488 0 1213084687", "cabspotting"),
    ("37.75134,-122.39488,0,1213084687", None),        # commas: a table, not this layout
    ("37.75134 -122.39488 2 1213084687", None),        # occupancy is 0 or 1
    ("1,2008-02-02 15:36:08,116.51172,39.92123", "tdrive"),
])
def test_detection_by_the_first_line(line, layout, tmp_path):
    path = tmp_path / "new_x.txt"
    path.write_text(line + "\n")
    assert detect_track_format(path) == layout
