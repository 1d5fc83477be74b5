"""``tracs.release.release_file``: the whole of ``tracs perturb`` as one library call.

The call writes, byte for byte, the files the command writes (release and sidecar)
for several methods and formats; bad parameters are refused before anything is
written, each with its error class and message, naming the parameters as the call
spells them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tracs.errors import InputError, InputTypeError
from tracs.io.formats import UnsupportedFormatError
from tracs.release import FileRelease, release_file

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # one command per case, in a new interpreter


@pytest.fixture(scope="module")
def checkins(tmp_path_factory) -> Path:
    """Six users in Tokyo (ids 007 and 7 are two users), 20 check-ins each, an hour apart (seed 3)."""
    rng = np.random.default_rng(3)
    users = np.repeat(["007", "7", "a", "b", "c", "d"], 20)
    times = pd.Timestamp("2012-04-03T00:00:00Z") + pd.to_timedelta(np.tile(np.arange(20), 6), unit="h")
    frame = pd.DataFrame({"uid": users, "datetime": times.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "lat": np.round(35.6 + rng.random(120) * 0.1, 6),
                          "lng": np.round(139.65 + rng.random(120) * 0.1, 6), "venue": "v"})
    path = tmp_path_factory.mktemp("in") / "checkins.csv"
    frame.to_csv(path, index=False)
    return path


def command(*args, cwd) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "tracs.cli", "perturb", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done


#: (command-line options, the same as keyword arguments, output name)
CASES = [
    (["-m", "tracs-d", "-e", "2"], dict(method="tracs-d", epsilon=2.0), "d.csv"),
    (["-m", "tracs-c", "-e", "1.5", "--workers", "2"], dict(method="tracs-c", epsilon=1.5, workers=2), "c.parquet"),
    (["-m", "strawman", "-e", "3", "--per-trajectory", "--split-gap", "5h"],
     dict(method="strawman", epsilon=3.0, per_trajectory=True, split_gap="5h"), "s.geojson"),
    (["-m", "planar-laplace", "-e", "2", "--keep-lines"], dict(method="planar-laplace", epsilon=2.0, keep_lines=True),
     "pl.gpx"),
    (["-m", "tracs-d", "-e", "2", "--secure-rng", "--no-budget-columns"],
     dict(method="tracs-d", epsilon=2.0, secure_rng=True, budget_columns=False), "dsec.tsv"),
]


@pytest.mark.parametrize("options, keywords, name", CASES, ids=[c[2] for c in CASES])
def test_the_call_writes_the_files_the_command_writes(checkins, tmp_path, options, keywords, name):
    (tmp_path / "cli").mkdir()
    (tmp_path / "lib").mkdir()
    command(checkins, "-o", tmp_path / "cli" / name, "--region", "tky", "--seed", "11", "-q", *options, cwd=tmp_path)
    lines = []
    done = release_file(checkins, tmp_path / "lib" / name, region="tky", seed=11, quiet=True, say=lines.append,
                        **keywords)
    assert isinstance(done, FileRelease) and done.points == 120 and done.output == tmp_path / "lib" / name
    for written in (name, name + ".tracs.json"):
        assert (tmp_path / "lib" / written).read_bytes() == (tmp_path / "cli" / written).read_bytes(), written
    assert done.sidecar == tmp_path / "lib" / (name + ".tracs.json")
    assert "not released: venue" in lines and lines[-1] == "read 120 rows: dropped 0 for bad values; 120 kept"


def test_ids_are_kept_as_written(checkins, tmp_path):
    out = tmp_path / "r.csv"
    release_file(checkins, out, method="tracs-c", epsilon=2.0, region="tky", seed=1, quiet=True, say=lambda _: None)
    users = pd.read_csv(out, dtype={"uid": str})["uid"]
    assert sorted(users.unique()) == ["007", "7", "a", "b", "c", "d"]


def _bad_row(tmp_path, checkins) -> Path:
    frame = pd.read_csv(checkins, dtype={"uid": str})
    frame.loc[3, "lat"] = 99.0  # not a latitude
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    return path


def _outside_row(tmp_path, checkins) -> Path:
    frame = pd.read_csv(checkins, dtype={"uid": str})
    frame.loc[5, "lng"] = 141.0  # outside the tky box
    path = tmp_path / "outside.csv"
    frame.to_csv(path, index=False)
    return path


BASE = dict(method="tracs-d", epsilon=2.0, region="tky", seed=1)
#: (id, changes to BASE, the input (None: the check-ins), error class, the message's start)
BAD = [
    ("no region", dict(region=None), None, InputError,
     "give the public region: region= MINLON,MINLAT,MAXLON,MAXLAT (degrees) or a preset ("),
    ("both regions", dict(region_from_data=True), None, InputError,
     "give either region= or region_from_data=True, not both"),
    ("unknown preset", dict(region="atlantis"), None, InputError, "unknown region preset 'atlantis'; choose from"),
    ("not LDP", dict(method="lsrr-thresholds"), None, InputError,
     "method 'lsrr-thresholds' is not ε-LDP (its group sizes depend on the true location)"),
    ("unknown method", dict(method="tracs-e"), None, InputError, "unknown method 'tracs-e'; choose from"),
    ("outside", dict(outside="keep"), None, InputError, "outside must be None, 'clip' or 'drop', got 'keep'"),
    ("geometry", dict(geometry="polygons"), None, InputError, "geometry must be 'points' or 'lines', got 'polygons'"),
    ("lines in CSV", dict(geometry="lines"), None, UnsupportedFormatError,
     "CSV cannot hold lines: for lines use .geojson, .parquet or .gpkg"),
    ("workers", dict(workers=0), None, InputError,
     "workers must be a positive int, or -1 / None for all cores, got 0"),
    ("anchor", dict(anchor="middle"), None, InputError,
     "anchor must be 'center', 'corner' or a point (x, y), got 'middle'"),
    ("seed", dict(seed=-1), None, InputError, "rng seed must be non-negative, got -1"),
    ("pad", dict(pad=5.0), None, InputError,
     "pad= applies to region_from_data=True only (a region= box is used as given)"),
    ("pois unused", dict(pois="pois.csv"), None, InputError,
     "pois= is used by the discrete methods and round_to_pois only, not by 'tracs-d' without round_to_pois"),
    ("pois missing", dict(method="em"), None, InputError, "method 'em' needs the public points of interest: pois= FILE"),
    ("split gap", dict(split_gap="soon"), None, InputError,
     "split_gap= 'soon' is not a time span: give e.g. 3h, 90min or 1d"),
    ("split gap negative", dict(split_gap="-1h"), None, InputError,
     "split_gap= must be a positive time span such as 3h, got '-1h'"),
    ("columns", dict(columns={"uid": "user"}), None, InputError,
     "columns names the roles user, time, lat, lon, traj, got 'uid'"),
    ("epsilon", dict(epsilon=0.0), None, InputError, "epsilon must be"),
    ("epsilon type", dict(epsilon="2"), None, InputTypeError, "epsilon must be"),
    ("no input", {}, "missing.csv", InputError, "no such file: "),
    ("rows outside", {}, "outside", InputError, "1 of 120 rows lie outside the region"),
    ("strict", dict(strict=True), "bad", InputError,
     "strict=True: 1 row(s) dropped for bad values and 0 outside the region (listed above); nothing was written"),
]


@pytest.mark.parametrize("changes, source, error, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_parameters(checkins, tmp_path, changes, source, error, message):
    source = {None: checkins, "bad": _bad_row(tmp_path, checkins),
              "outside": _outside_row(tmp_path, checkins)}.get(source, tmp_path / str(source))
    out = tmp_path / "out.csv"
    with pytest.raises(error) as caught:
        release_file(source, out, quiet=True, say=lambda _: None, **{**BASE, **changes})
    assert str(caught.value).startswith(message), str(caught.value)
    assert not out.exists() and not (tmp_path / "out.csv.tracs.json").exists()


@pytest.mark.parametrize("name, error, message", [
    ("out.xyz", UnsupportedFormatError, "cannot tell the output format of out.xyz: use"),
    ("checkins.csv", InputError, "the output {out} is the input file {source}"),
])
def test_bad_outputs(checkins, name, error, message):
    out = checkins.parent / name
    with pytest.raises(error) as caught:
        release_file(checkins, out, quiet=True, say=lambda _: None, **BASE)
    assert str(caught.value).startswith(message.format(out=out, source=checkins)), str(caught.value)


def test_rows_outside_are_dropped_when_asked_and_named(checkins, tmp_path):
    lines = []
    done = release_file(_outside_row(tmp_path, checkins), tmp_path / "r.csv", outside="drop", quiet=True,
                        say=lines.append, **BASE)
    assert done.points == 119
    assert "dropped 1 row(s) outside the region: line 7" in lines
