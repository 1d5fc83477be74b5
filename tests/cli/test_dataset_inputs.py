"""tracs perturb / map / evaluate read Geolife folders, T-Drive files and the Porto CSV directly,
and epoch, split date/time and untimed CSVs; written files keep the ids as written."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from track_samples import write_geolife, write_porto, write_tdrive

BEIJING = "--region=116.2,39.8,116.7,40.1"
PORTO = "--region=-8.8,41.0,-8.5,41.3"


def perturb(cli, source, output, region, *extra):
    return cli("perturb", source, "-o", output, "-m", "tracs-c", "-e", "2", "--seed", "3", region, *extra)


@pytest.mark.parametrize("kind", ["geolife", "tdrive", "porto"])
@pytest.mark.parametrize("forced", [False, True])
def test_perturb_reads_the_data_sets(cli, tmp_path, kind, forced):
    source = {"geolife": lambda: write_geolife(tmp_path / "geolife"),
              "tdrive": lambda: write_tdrive(tmp_path / "taxi_log"),
              "porto": lambda: write_porto(tmp_path / "train.csv")}[kind]()
    out = tmp_path / "out.csv"
    region = PORTO if kind == "porto" else BEIJING
    result = perturb(cli, source, out, region, *(["--input-format", kind] if forced else []))
    assert result.returncode == 0, result.stderr
    released = pd.read_csv(out, dtype={"uid": str})
    expected = {"geolife": (7, ["000", "010"], "3 trajectories"), "tdrive": (6, ["007", "1"], "2 trajectories"),
                "porto": (7, ["00042", "20000337", "20000589", "20000596"], "4 trajectories")}[kind]
    assert len(released) == expected[0]
    assert sorted(released["uid"].unique()) == expected[1]  # "000" stays "000"
    assert expected[2] in result.stdout
    fragment = {"geolife": "1 row dropped as bad_time is at: 010/Trajectory/20081024020000.plt line 10",
                "tdrive": "2 exact duplicate rows", "porto": "1 trip with an empty POLYLINE"}[kind]
    assert fragment in result.stderr


def test_map_and_evaluate_read_a_geolife_folder(cli, tmp_path):
    root = write_geolife(tmp_path / "geolife")
    page = tmp_path / "map.html"
    result = cli("map", root, "-o", page, "-e", "2", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert page.stat().st_size > 10_000
    result = cli("evaluate", "--dataset", root, "--methods", "tracs-d", "--epsilons", "2", "--repetitions", "1",
                 "--format", "json", "--no-progress", "--no-figure")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(r["method"], r["epsilon"]) for r in rows] == [("tracs-d", 2.0)] and rows[0]["ae_mean"] > 0


def test_evaluate_reads_porto_forced(cli, tmp_path):
    source = write_porto(tmp_path / "trips.txt")
    result = cli("evaluate", "--dataset", source, "--input-format", "porto", "--methods", "tracs-c",
                 "--epsilons", "2", "--repetitions", "1", "--format", "json", "--no-progress", "--no-figure")
    assert result.returncode == 0, result.stderr
    assert [r["method"] for r in json.loads(result.stdout)] == ["tracs-c"]


@pytest.mark.parametrize("text, flags, note, first", [
    ("uid,time,lat,lng\n7,1709251200000,41.15,-8.61\n7,1709251260000,41.16,-8.62\n", [],
     "times read as Unix epoch milliseconds (UTC), told by their magnitude", "2024-03-01 00:00:00+00:00"),
    ("uid,time,lat,lng\n7,1709251200,41.15,-8.61\n7,1709251260,41.16,-8.62\n", ["--time-format", "%s"],
     "as given with --time-format epoch-s", "2024-03-01 00:00:00+00:00"),
    ("uid,day,clock,lat,lng\n7,2024-07-01,10:00:00,41.15,-8.61\n7,2024-07-01,10:01:00,41.16,-8.62\n",
     ["--time-col", "day,clock", "--timezone", "Europe/Lisbon"],
     "times from the columns 'day' (date) and 'clock' (time of day) joined", "2024-07-01 09:00:00+00:00"),
    ("uid,lat,lng\n7,41.15,-8.61\n7,41.16,-8.62\n", ["--no-time"],
     "no times (--no-time): points kept in the file's order and written without a time", None),
])
def test_time_layouts_on_the_command_line(cli, tmp_path, text, flags, note, first):
    source = tmp_path / "in.csv"
    source.write_text(text)
    out = tmp_path / "out.csv"
    result = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "1", "--seed", "1", PORTO, *flags)
    assert result.returncode == 0, result.stderr
    assert note in result.stderr
    assert "not released" not in result.stderr, result.stderr  # every column is used (a joined time of day too)
    released = pd.read_csv(out)
    assert (released["datetime"].iloc[0] if first else released["datetime"].isna().all()) == (first or True)


@pytest.mark.parametrize("args, message", [
    (["--input-format", "porto"], "is not a Porto taxi file: no column"),
    (["--timezone", "Mars/Base"], "--timezone Mars/Base: not a timezone"),
    (["--time-col", "day,clok"], "missing column(s) for time of day: no column 'clok' (--time-col DATE,clok)"),
    (["--time-col", "a,b,c"], "--time-col a,b,c: two names separated by a comma are a date column"),
    (["--time-format", "epoch-h"], "--time-format epoch-h: the epoch units are epoch-s, epoch-ms"),
])
def test_bad_time_and_format_options(cli, tmp_path, args, message):
    source = tmp_path / "in.csv"
    source.write_text("uid,day,clock,lat,lng\n7,2024-07-01,10:00:00,41.15,-8.61\n")
    result = cli("perturb", source, "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", "1", PORTO,
                 *(args if "--time-col" in args else ["--time-col", "day,clock", *args]))
    assert result.returncode == 1
    assert message in result.stderr, result.stderr


def test_folder_of_nothing_known(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    result = cli("perturb", tmp_path / "empty", "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", "1", PORTO)
    assert result.returncode == 1
    assert "is not a file: a folder, but not one of a known data set" in result.stderr
