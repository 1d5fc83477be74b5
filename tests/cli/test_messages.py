"""Nothing vanishes without a word: every drop names its column, rule and lines; counts add up.

Small files written here (New York, so every longitude is negative): each bad row of
a table is dropped with a message naming the file's column, the rule it broke and
its line; the message about rows outside the region counts the rows dropped
before it; GPX segments and trajectories left empty are counted; the progress bars
count each point once.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

NYC = "-74.3,40.45,-73.65,41"
GOOD = "{uid},2024-03-01T{h:02d}:00:00Z,{lat},{lng}\n"


def _file(path, header, bad_row, n_good=5):
    rows = [GOOD.format(uid=1, h=8 + i, lat=40.70 + 0.01 * i, lng=-74.00 + 0.01 * i) for i in range(n_good)]
    rows.insert(2, bad_row)  # line 4
    path.write_text(header + "".join(rows))
    return path


@pytest.mark.parametrize("header, bad_row, message", [
    ("uid,datetime,lat,lng\n", "1,2024-03-01T20:00:00Z,95.5,-74.0\n",
     "dropped 1 row(s): latitude outside [-90, 90] or longitude outside [-180, 180] in columns 'lat', 'lng': line 4"),
    ("user,timestamp,latitude,longitude\n", "1,2024-03-01T20:00:00Z,40.7,-190\n",
     "dropped 1 row(s): latitude outside [-90, 90] or longitude outside [-180, 180] in columns 'latitude', "
     "'longitude': line 4"),
    ("uid,datetime,lat,lng\n", "1,2024-03-01T20:00:00Z,,-74.0\n",
     "dropped 1 row(s): latitude or longitude is empty, not a number, NaN or infinite in columns 'lat', 'lng': "
     "line 4"),
    ("user,timestamp,latitude,longitude\n", "1,someday,40.7,-74.0\n",
     "dropped 1 row(s): the time is empty or cannot be parsed in column 'timestamp': line 4"),
    ("user,timestamp,latitude,longitude\n", ",2024-03-01T20:00:00Z,40.7,-74.0\n",
     "dropped 1 row(s): the user id is empty (or, for Foursquare and Gowalla, not an integer) in column 'user': "
     "line 4"),
], ids=["latitude-range", "longitude-range-renamed", "empty-latitude", "bad-time", "empty-user"])
def test_a_dropped_row_names_its_column_rule_and_line(cli, tmp_path, header, bad_row, message):
    source = _file(tmp_path / "in.csv", header, bad_row)
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region", NYC, "-q")
    assert result.returncode == 0, result.stderr
    assert f"tracs perturb: {message}" in result.stderr
    assert "read 6 rows: dropped 1 for bad values; 5 kept" in result.stderr
    assert len(pd.read_csv(tmp_path / "out.csv")) == 5


def test_the_report_summary_names_the_columns_too(tmp_path):
    from tracs.io import read_checkins

    source = _file(tmp_path / "in.csv", "user,timestamp,latitude,longitude\n", "1,2024-03-01T20:00:00Z,95,-74\n")
    report = read_checkins(source).attrs["report"]
    assert report.columns == {"user": "user", "time": "timestamp", "lat": "latitude", "lon": "longitude"}
    assert ("dropped 1 out_of_range (latitude outside [-90, 90] or longitude outside [-180, 180] in columns "
            "'latitude', 'longitude'): lines 4") in report.summary()


EIGHT = ("uid,datetime,lat,lng\n"
         "1,2024-03-01 08:00,40.70,-74.00\n"
         "1,2024-03-01 09:00,40.71,-73.99\n"
         "1,2024-03-01 10:00,95.0,-73.98\n"  # line 4: latitude out of range
         "2,2024-03-01 08:00,,-73.97\n"  # line 5: no latitude
         "2,2024-03-01 09:00,40.73,-73.96\n"
         "2,bad,40.74,-73.95\n"  # line 7: bad time
         ",2024-03-01 11:00,40.75,-73.94\n"  # line 8: no user
         "2,2024-03-01 12:00,42.5,-73.93\n")  # line 9: north of the region


def test_counts_add_up_across_messages(cli, tmp_path):
    source = tmp_path / "eight.csv"
    source.write_text(EIGHT)
    out = tmp_path / "out.csv"
    refused = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--region", NYC, "-q")
    assert refused.returncode == 1
    assert "note: times without a timezone were read as UTC" in refused.stderr  # -q hides progress only
    lines = [line for line in refused.stderr.strip().splitlines() if ": note: " not in line]
    # the four rows dropped for bad values come first, each with its line, then the total, then the error
    assert [line.rsplit(": ", 1)[-1] for line in lines[:4]] == ["line 8", "line 7", "line 5", "line 4"]
    assert lines[4] == "tracs perturb: read 8 rows: dropped 4 for bad values; 4 kept"
    assert lines[5].startswith("tracs perturb: error: 1 of the 4 rows left (4 of the file's 8 dropped for bad "
                               f"values, listed above) lie outside the region {NYC} (line 9); pass --clip")
    assert not out.exists()
    dropped = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--region", NYC, "-q", "--drop")
    assert dropped.returncode == 0, dropped.stderr
    assert "read 8 rows: dropped 4 for bad values, dropped 1 outside the region; 3 kept" in dropped.stderr
    assert "3 points in 2 trajectories" in dropped.stdout
    assert len(pd.read_csv(out)) == 3


@pytest.mark.parametrize("command", ["evaluate", "map"])
def test_evaluate_and_map_report_the_rows_they_drop(cli, tmp_path, command):
    source = tmp_path / "eight.csv"
    source.write_text(EIGHT)
    if command == "evaluate":
        argv = ("evaluate", "--dataset", source, "--methods", "tracs-d", "--epsilons", "2", "--repetitions", "1",
                "--format", "json", "--no-progress", "--region", NYC, "--drop")
        summary = "read 8 rows: dropped 4 for bad values, dropped 1 outside the region; 3 kept"
    else:
        argv = ("map", source, "-o", tmp_path / "m.html", "-q")
        summary = "read 8 rows: dropped 4 for bad values; 4 kept"
    result = cli(*argv)
    assert result.returncode == 0, result.stderr
    assert (f"tracs {command}: dropped 1 row(s): latitude outside [-90, 90] or longitude outside [-180, 180] in "
            "columns 'lat', 'lng': line 4") in result.stderr
    assert f"tracs {command}: dropped 1 row(s): the time is empty or cannot be parsed in column 'datetime': line 7" in (
        result.stderr)
    assert f"tracs {command}: {summary}" in result.stderr


def test_evaluate_counts_the_rows_dropped_before_the_region(cli, tmp_path):
    source = tmp_path / "eight.csv"
    source.write_text(EIGHT)
    result = cli("evaluate", "--dataset", source, "--methods", "tracs-d", "--epsilons", "2", "--repetitions", "1",
                 "--format", "json", "--no-progress", "--region", NYC)
    assert result.returncode == 1
    assert ("tracs evaluate: error: 1 of the 4 rows left (4 of the file's 8 dropped for bad values, listed above) "
            "lie outside the region") in result.stderr
    assert result.stderr.index("read 8 rows: dropped 4") < result.stderr.index("error:")


def _gpx(path):
    """3 tracks: 8 segments, one empty (track 2, segment 2), one north of the region (track 3, segment 2)."""
    import gpxpy.gpx

    gpx = gpxpy.gpx.GPX()
    for t in range(3):
        track = gpxpy.gpx.GPXTrack(name=f"walk {t}")
        for s in range(3 if t < 2 else 2):
            segment = gpxpy.gpx.GPXTrackSegment()
            if (t, s) != (1, 1):
                for k in range(4):
                    lat = 42.5 if (t, s) == (2, 1) else 40.7 + 0.01 * k
                    segment.points.append(gpxpy.gpx.GPXTrackPoint(
                        lat, -74.0 + 0.01 * s, time=dt.datetime(2024, 3, 1, 8 + t, 10 * s + k, tzinfo=dt.timezone.utc)))
            track.segments.append(segment)
        gpx.tracks.append(track)
    path.write_text(gpx.to_xml())
    return path


def test_gpx_segments_and_emptied_trajectories_are_counted(cli, tmp_path):
    source = _gpx(tmp_path / "walk.gpx")
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region", NYC,
                 "--drop", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert ("note: GPX: 7 track segment(s) read as trajectories; 1 empty track segment(s) without points left "
            "out (track 2 segment 2)") in result.stderr
    assert "dropped 4 row(s) outside the region: row 24, row 25, row 26, row 27" in result.stderr
    assert "note: 1 trajectory had every row outside the region: not released" in result.stderr
    assert "24 points in 6 trajectories" in result.stdout  # 7 read, 1 emptied


def test_progress_bars_count_each_point_once(cli, tmp_path, monkeypatch):
    from tracs._progress import ENVIRONMENT

    source = tmp_path / "eight.csv"
    source.write_text(EIGHT)
    monkeypatch.setenv(ENVIRONMENT, "always")
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region", NYC,
                 "--drop")
    assert result.returncode == 0, result.stderr
    bars = result.stderr.replace("\r", "\n")
    assert "perturb:" in bars and "write out.csv:" in bars
    assert "/3.00" in bars or "/3 " in bars
    assert "/6.00" not in bars and "/6 " not in bars  # once per point, not twice
