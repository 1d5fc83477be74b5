"""Released rows are paired with input rows by key (uid, trajectory, point), never by position.

Inputs in the real layouts, written here: a CSV whose users ``10`` and ``2`` sort
differently as text and as numbers (its GPX release names tracks ``"10 0"`` and
``"2 0"``), the same with a row outside the region left out by ``--drop``, with
``--keep-lines``, a Geolife folder (rows of several files) and the Porto CSV (one
line per trip, several points each).  Every writer × every input: ``tracs map``
succeeds and every released row is paired with the input row of its own time and
user; ``tracs evaluate`` reads each input.  One method (TraCS-D), seed 5.
"""

from __future__ import annotations

from argparse import Namespace

import numpy as np
import pandas as pd
import pytest

from track_samples import write_geolife, write_porto
from tracs.io.formats import FORMATS
from tracs.io.release import read_release

OUTPUTS = [(f.key, g) for f in FORMATS.values() if f.write is not None for g in f.geometry]
TOKYO = "--region=139.6,35.6,139.8,35.8"
BEIJING = "--region=116.2,39.8,116.7,40.1"
PORTO = "--region=-8.8,41.0,-8.5,41.3"
ROWS = """uid,datetime,lat,lng
10,2024-01-01T11:00:00Z,35.66,139.72
2,2024-01-01T10:00:00Z,35.68,139.70
10,2024-01-01T11:05:00Z,35.67,139.73
2,2024-01-01T10:05:00Z,35.69,139.71
2,2024-01-01T10:10:00Z,35.70,139.69
10,2024-01-01T11:10:00Z,35.65,139.74
a,2024-01-01T12:00:00Z,35.71,139.75
"""
OUTSIDE = "2,2024-01-01T10:07:00Z,35.95,139.71\n"  # north of the region: left out by --drop
#: input name -> (how to write it, region, options of tracs perturb)
INPUTS = {
    "plain": (lambda folder: _csv(folder, ROWS), TOKYO, ()),
    "drop": (lambda folder: _csv(folder, ROWS + OUTSIDE), TOKYO, ("--drop",)),
    "keep-lines": (lambda folder: _csv(folder, ROWS), TOKYO, ("--keep-lines",)),
    "folder": (lambda folder: write_geolife(folder / "geolife"), BEIJING, ("--keep-lines",)),
    "porto": (lambda folder: write_porto(folder / "train.csv"), PORTO, ("--keep-lines",)),
}


def _csv(folder, text):
    path = folder / "in.csv"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairing")
    out = {}
    for name, (write, region, options) in INPUTS.items():
        (folder / name).mkdir()
        out[name] = (write(folder / name), region, options)
    return out


def _keys_and_times(points):
    from tracs.cli._pairing import input_keys

    return input_keys(points), points.column("time")


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize(("key", "geometry"), OUTPUTS, ids=[f"{k}-{g}" for k, g in OUTPUTS])
def test_every_writer_and_input_pairs_every_row(cli, inputs, tmp_path, name, key, geometry):
    from tracs.cli._pairing import pair
    from tracs.estimate.sidecar import read_sidecar

    source, region, options = inputs[name]
    release = tmp_path / f"released{FORMATS[key].suffixes[0]}"
    result = cli("perturb", source, "-o", release, "-m", "tracs-d", "-e", "2", region, "--seed", "5", "-q",
                 "--geometry", geometry, *options)
    assert result.returncode == 0, result.stderr
    result = cli("map", source, release, "-o", tmp_path / "map.html", "--tiles", "none")
    assert result.returncode == 0, result.stderr
    assert ("not released" in result.stderr) == (name == "drop")

    frame = read_release(release)
    args = Namespace(split_gap=None, **{k: None for k in ("user_col", "time_col", "lat_col", "lon_col", "traj_col",
                                                           "time_format", "id_type", "timezone")},
                     dayfirst=False, input_format="auto")
    paired = pair(source, frame, release.name, args, read_sidecar(release))
    where = paired.where
    assert (where >= 0).all() and sorted(where) == list(range(len(frame)))  # every row, once
    assert len(paired.outside) == (1 if name == "drop" else 0)
    uid = frame["uid"].astype(str).to_numpy()[where]
    assert (uid == paired.points.keys.astype(str).to_numpy()).all()
    times = pd.to_datetime(frame["datetime"], utc=True).to_numpy()[where] if "datetime" in frame else None
    if times is not None:  # every released row is the input row of its own time (times are distinct)
        timed = ~pd.isna(times)
        truth = pd.to_datetime(paired.points.column("time")).tz_localize("UTC").to_numpy()
        assert timed.any() and (times[timed] == truth[timed]).all()


@pytest.mark.parametrize("name", list(INPUTS))
def test_evaluate_reads_every_input_and_counts_rows_left_out(cli, inputs, name):
    source, region, options = inputs[name]
    extra = ["--drop"] if name == "drop" else []
    result = cli("evaluate", "--dataset", source, region, *extra, "--methods", "tracs-d", "--epsilons", "2",
                 "--repetitions", "1", "--no-progress", "--no-figure", "--output-dir", source.parent / "results")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert ("(1 row outside the region left out)" in first) == (name == "drop"), first
    assert "continuous methods not rounded (a trace: no venue column)" in first


@pytest.mark.parametrize("command", ["perturb", "evaluate"])
def test_rows_of_a_folder_outside_the_region_are_named_by_file(cli, inputs, tmp_path, command):
    # user 010's rows (latitude 40.0) lie outside
    result = _refused(cli, command, inputs["folder"][0], "--region=116.2,39.8,116.7,39.99", tmp_path)
    assert ("(000/Trajectory/20081024010000.plt line 8, "
            "010/Trajectory/20081024020000.plt line 7, 010/Trajectory/20081024020000.plt line 12);"
            in result.stderr), result.stderr


def test_folder_rows_come_back_file_by_file_line_by_line(cli, inputs, tmp_path):
    source, region, _ = inputs["folder"]
    release = tmp_path / "released.csv"
    result = cli("perturb", source, "-o", release, "-m", "tracs-d", "-e", "2", region, "--seed", "5", "-q",
                 "--keep-lines")
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(release, dtype={"uid": str})
    assert list(frame.columns[:4]) == ["uid", "trajectory", "point", "datetime"]
    where = list(zip(frame["source_file"], frame["source_line"]))
    assert where == sorted(where) and len(set(where)) == len(where)  # input order, each row named once
    assert where[0] == ("000/Trajectory/20081023025304.plt", 7)


def _refused(cli, command, source, region, folder):
    """``tracs perturb`` or ``tracs evaluate`` of ``source`` over ``region``, which must refuse it."""
    result = (cli("perturb", source, "-o", folder / "r.csv", "-m", "tracs-d", "-e", "2", region, "--seed", "5")
              if command == "perturb" else
              cli("evaluate", "--dataset", source, region, "--methods", "tracs-d", "--epsilons", "2",
                  "--repetitions", "1", "--no-progress", "--no-figure", "--output-dir", folder))
    assert result.returncode == 1
    return result


@pytest.mark.parametrize("command", ["perturb", "evaluate"])
def test_rows_outside_the_region_are_named_by_trip_and_point(cli, inputs, tmp_path, command):
    result = _refused(cli, command, inputs["porto"][0], "--region=-8.619,41.0,-8.5,41.3", tmp_path)
    # lines 5 and 2 hold several points each (one trip per line); line 3 one
    assert ("(line 5 (trajectory 1372637091620000337 point 0), line 5 (trajectory 1372637091620000337 point 1), "
            "line 2 (trajectory 1372636858620000589 point 2), line 3);" in result.stderr), result.stderr


@pytest.mark.parametrize("preset", ["tky", "nyc", "chi", "beijing", "porto", "san-francisco", "rome"])
def test_every_preset_releases_inside_its_box_and_reads_back(cli, tmp_path, preset):
    from tracs.public import CITY_BOXES

    box = CITY_BOXES[preset]
    t = np.linspace(0.0, 1.0, 9)
    lon, lat = np.meshgrid(box.min_lon + t * (box.max_lon - box.min_lon), box.min_lat + t * (box.max_lat - box.min_lat))
    keep = box.contains(lon.ravel(), lat.ravel())
    lon, lat = lon.ravel()[keep], lat.ravel()[keep]
    rows = pd.DataFrame({"uid": np.arange(len(lon)) % 4, "lat": lat, "lng": lon,
                         "datetime": pd.date_range("2024-01-01", periods=len(lon), freq="min", tz="UTC")})
    source, release = tmp_path / "in.csv", tmp_path / "out.csv"
    rows.to_csv(source, index=False)
    for method in ("tracs-d", "tracs-c", "planar-laplace"):  # ε small: releases reach the region's edges
        result = cli("perturb", source, "-o", release, "-m", method, "-e", "0.2", f"--region={preset}", "--seed", "1",
                     "-q")
        assert result.returncode == 0, result.stderr
        out = read_release(release)
        tol = 1e-5  # degrees: about 1 m
        assert ((out["lng"] >= box.min_lon - tol) & (out["lng"] <= box.max_lon + tol)
                & (out["lat"] >= box.min_lat - tol) & (out["lat"] <= box.max_lat + tol)).all(), method
        again = cli("perturb", release, "-o", tmp_path / "again.csv", "-m", "tracs-d", "-e", "1",
                    f"--region={preset}", "--seed", "2", "-q")
        assert again.returncode == 0, again.stderr
