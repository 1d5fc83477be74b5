"""Every file 'tracs perturb' writes is read by every command: the format table × the commands.

One tiny input (three users, one of them with a single point, given in an order that is not the users' order, so
reading a release back must restore the order by its source column or its
trajectories), one method (TraCS-D), seed 7.  Each output of
:data:`tracs.io.formats.FORMATS` (points, and lines where the format holds them)
is written, then read by ``tracs map``,
``tracs estimate``, ``tracs evaluate --dataset`` and ``tracs perturb``.  The
same seed gives the same release in every format, so the estimate from each
format is byte for byte the estimate from the CSV release, and the released
points read back agree with the CSV's to 1e-9 degrees.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tracs.io.formats import FORMATS
from tracs.io.release import read_release

WRITTEN = [f for f in FORMATS.values() if f.write is not None]
#: every output of tracs perturb: (format key, --geometry)
OUTPUTS = [(f.key, geometry) for f in WRITTEN for geometry in f.geometry]
IDS = [f"{key}-{geometry}" for key, geometry in OUTPUTS]
REGION = "--region=139.6,35.6,139.8,35.8"
ROWS = """uid,datetime,lat,lng,speed
b,2024-01-01T11:00:00Z,35.66,139.72,5
a,2024-01-01T10:00:00Z,35.68,139.70,3
b,2024-01-01T11:05:00Z,35.67,139.73,6
a,2024-01-01T10:05:00Z,35.69,139.71,4
a,2024-01-01T10:10:00Z,35.70,139.69,2
b,2024-01-01T11:10:00Z,35.65,139.74,7
c,2024-01-01T12:00:00Z,35.71,139.75,1
"""


def test_every_writer_has_a_reader():
    assert WRITTEN, "the format table has no writer"
    for fmt in WRITTEN:
        assert fmt.read is not None, f"{fmt.name} is written by tracs perturb but read by no command"


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """``{(format key, geometry): released path}`` for every output, from one input and one seed."""
    from tracs.cli import main

    folder = tmp_path_factory.mktemp("releases")
    source = folder / "in.csv"
    source.write_text(ROWS)
    out = {}
    for key, geometry in OUTPUTS:
        path = folder / f"released-{geometry}{FORMATS[key].suffixes[0]}"
        assert main(["perturb", str(source), "-o", str(path), "-m", "tracs-d", "-e", "2", REGION,
                     "--seed", "7", "-q", "--geometry", geometry]) == 0, (key, geometry)
        assert path.is_file() and path.with_name(path.name + ".tracs.json").is_file(), (key, geometry)
        out[key, geometry] = path
    return source, out


def _in_perturbation_order(frame):
    keys = [c for c in ("uid", "trajectory", "datetime") if c in frame.columns]  # ids within each user
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("key", OUTPUTS, ids=IDS)
def test_read_release_gives_the_released_points(releases, key):
    _, paths = releases
    expected = _in_perturbation_order(read_release(paths["csv", "points"]))
    got = _in_perturbation_order(read_release(paths[key], need=("lat", "lng", "trajectory")))
    assert len(got) == 7
    np.testing.assert_allclose(got[["lat", "lng"]].to_numpy(), expected[["lat", "lng"]].to_numpy(), atol=1e-9, rtol=0)
    assert got["trajectory"].tolist() == expected["trajectory"].tolist()


@pytest.mark.parametrize("key", OUTPUTS, ids=IDS)
def test_map_draws_the_release(cli, releases, key, tmp_path):
    source, paths = releases
    page = tmp_path / "map.html"
    result = cli("map", source, paths[key], "-o", page, "--tiles", "none")
    assert result.returncode == 0, result.stderr
    assert page.stat().st_size > 10_000


@pytest.mark.parametrize("key", OUTPUTS, ids=IDS)
def test_estimate_reads_the_release(cli, releases, key, tmp_path):
    _, paths = releases
    reference, got = tmp_path / "from_csv.csv", tmp_path / "got.csv"
    assert cli("estimate", paths["csv", "points"], "-o", reference, "--grid", "4").returncode == 0
    result = cli("estimate", paths[key], "-o", got, "--grid", "4")
    assert result.returncode == 0, result.stderr
    assert "7 reports" in result.stdout
    assert got.read_bytes() == reference.read_bytes()


@pytest.mark.parametrize("key", OUTPUTS, ids=IDS)
def test_evaluate_reads_the_release(cli, releases, key, tmp_path):
    _, paths = releases
    result = cli("evaluate", "--dataset", paths[key], "--methods", "tracs-d", "--epsilons", "2",
                 "--repetitions", "1", "--format", "json", "--no-progress", "--no-round-to-pois")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["method"] == "tracs-d"


@pytest.mark.parametrize("key", OUTPUTS, ids=IDS)
def test_perturb_reads_the_release(cli, releases, key, tmp_path):
    _, paths = releases
    again = tmp_path / "again.csv"
    # a released point may lie just outside the lon/lat box (the region is its metric rectangle): --clip
    result = cli("perturb", paths[key], "-o", again, "-m", "tracs-d", "-e", "2", REGION, "--seed", "1", "-q", "--clip")
    assert result.returncode == 0, result.stderr
    assert len(pd.read_csv(again)) == 7


GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
<trk><name>ride</name>
<trkseg>
<trkpt lat="35.70" lon="139.70"><time>2024-05-01T08:00:00Z</time></trkpt>
<trkpt lat="35.71" lon="139.71"><time>2024-05-01T08:01:00Z</time></trkpt>
</trkseg>
<trkseg>
<trkpt lat="35.72" lon="139.72"><time>2024-05-01T09:00:00Z</time></trkpt>
<trkpt lat="35.73" lon="139.73"><time>2024-05-01T09:01:00Z</time></trkpt>
<trkpt lat="35.74" lon="139.74"><time>2024-05-01T09:02:00Z</time></trkpt>
</trkseg>
</trk>
</gpx>
"""


def test_a_gpx_track_and_its_gpx_release(cli, tmp_path):
    """'tracs map in.gpx released.gpx' said the release had 0 rows; 'tracs estimate released.gpx'
    said it was not a tracs release."""
    source, released = tmp_path / "in.gpx", tmp_path / "released.gpx"
    source.write_text(GPX)
    assert cli("perturb", source, "-o", released, "-m", "tracs-d", "-e", "2", REGION, "--seed", "3",
               "-q").returncode == 0
    back = read_release(released)
    assert back["trajectory"].tolist() == [0, 0, 1, 1, 1] and back["uid"].tolist() == ["in"] * 5
    result = cli("map", source, released, "-o", tmp_path / "map.html", "--tiles", "none")
    assert result.returncode == 0, result.stderr
    result = cli("estimate", released, "-o", tmp_path / "density.csv", "--grid", "4")
    assert result.returncode == 0 and "5 reports" in result.stdout, result.stderr
