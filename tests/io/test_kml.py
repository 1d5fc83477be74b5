"""KML read as GPX is: <gx:Track> with <when> / <gx:coord>, <LineString>, timed <Point> placemarks."""

from __future__ import annotations

import pandas as pd
import pytest

from tracs.io import UnsupportedFormatError, read_checkins
from tracs.io.formats import container_of, format_of

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2" '
        'xmlns:gx="http://www.google.com/kml/ext/2.2"><Document>\n')
TRACK = ("<Placemark><name>drive</name><gx:Track>"
         "<when>2024-05-01T08:00:00Z</when><when>2024-05-01T08:01:00Z</when>"
         "<gx:coord>11.50 48.10 520</gx:coord><gx:coord>11.51 48.11 521</gx:coord>"
         "</gx:Track></Placemark>\n")
LINE = ("<Placemark><LineString><coordinates>11.60,48.20,0 11.61,48.21\n 11.62,48.22,3"
        "</coordinates></LineString></Placemark>\n")
POINTS = ("<Placemark><TimeStamp><when>2024-05-01T10:00:00Z</when></TimeStamp>"
          "<Point><coordinates>11.70,48.30</coordinates></Point></Placemark>\n"
          "<Placemark><TimeStamp><when>2024-05-01T09:00:00Z</when></TimeStamp>"
          "<Point><coordinates>11.71,48.31,5</coordinates></Point></Placemark>\n")
POLYGON = ("<Placemark><Polygon><outerBoundaryIs><LinearRing><coordinates>11,48 11.1,48 11,48.1 11,48"
           "</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>\n")


def _kml(tmp_path, body, name="walk.kml"):
    path = tmp_path / name
    path.write_text(HEAD + body + "</Document></kml>\n", encoding="utf-8")
    return path


def test_tracks_lines_and_points(tmp_path):
    path = _kml(tmp_path, TRACK + LINE + POINTS + POLYGON)
    assert format_of(path).key == "kml"
    frame = read_checkins(path).sort_values("source_row")
    assert frame["uid"].unique().tolist() == ["walk"]  # the file's name, as GPX
    assert frame["trajectory"].tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert frame.geometry.y.tolist() == pytest.approx([48.10, 48.11, 48.20, 48.21, 48.22, 48.30, 48.31])
    assert frame["datetime"].iloc[0] == pd.Timestamp("2024-05-01T08:00:00Z")
    assert frame["datetime"].iloc[2:5].isna().all()  # a LineString has no times: kept untimed, in order
    assert frame["datetime"].iloc[5] == pd.Timestamp("2024-05-01T10:00:00Z")
    report = frame.attrs["report"]
    assert report.untimed == [2, 3, 4]
    assert "KML: 2 track(s) or line(s) read as trajectories, 2 point placemark(s) as one more" in report.notes


def test_detected_by_first_bytes(tmp_path):
    path = _kml(tmp_path, TRACK, name="export.xml")
    assert container_of(path) == "kml"
    assert len(read_checkins(path)) == 2


def test_the_command_reads_kml(tmp_path, capsys):
    from tracs.cli import main

    path = _kml(tmp_path, TRACK + POLYGON)
    out = tmp_path / "out.csv"
    assert main(["perturb", str(path), "-o", str(out), "-m", "tracs-d", "-e", "2", "--region=11.4,48.0,11.8,48.4",
                 "--seed", "1"]) == 0
    assert "not released: elevation, 1 <Polygon>" in capsys.readouterr().err
    assert len(pd.read_csv(out)) == 2


@pytest.mark.parametrize("body, error, message", [
    ("<Placemark><gx:Track><when>2024-05-01T08:00:00Z</when><gx:coord>11 48 0</gx:coord>"
     "<gx:coord>11 48 0</gx:coord></gx:Track></Placemark>", ValueError,
     r"walk\.kml: placemark 1 <Track>: 1 <when> for 2 <gx:coord>"),
    ("<Placemark><LineString><coordinates>11.6,north</coordinates></LineString></Placemark>", ValueError,
     r"walk\.kml: placemark 1 <LineString>: coordinate 1 \('11.6,north'\) is not lon,lat\[,alt\]"),
    ("<Placemark><name>unclosed</Placemark>", UnsupportedFormatError, r"cannot read walk\.kml \(not a readable KML"),
    (POLYGON, ValueError, r"walk\.kml holds no <gx:Track>, <LineString> or <Point> positions"),
    ("<Placemark><Point><coordinates> </coordinates></Point></Placemark>", ValueError,
     r"walk\.kml: placemark 1 <Point>: 0 coordinates: a point has one lon,lat\[,alt\]"),
])
def test_bad_kml(body, error, message, tmp_path):
    with pytest.raises(error, match=message):
        read_checkins(_kml(tmp_path, body))
