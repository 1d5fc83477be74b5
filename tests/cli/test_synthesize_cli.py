"""``tracs synthesize`` end to end on a tiny release written by ``tracs perturb``."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.io.formats import FORMATS
from tracs.io.release import read_release

WRITTEN = [f for f in FORMATS.values() if f.write is not None]
#: every output of tracs perturb: (format key, --geometry)
OUTPUTS = [(f.key, geometry) for f in WRITTEN for geometry in f.geometry]


@pytest.fixture(scope="module")
def release(tmp_path_factory, checkins_csv):
    from tracs.cli import main

    out = tmp_path_factory.mktemp("synth") / "released.csv"
    assert main(["perturb", str(checkins_csv), "-o", str(out), "-m", "tracs-c", "-e", "4", "--region", "tky",
                 "--seed", "1", "-q"]) == 0
    return out


@pytest.mark.parametrize("suffix", [f.suffixes[0] for f in WRITTEN if "points" in f.geometry])
def test_synthesize_writes_n_trajectories_read_back(cli, release, suffix):
    """Every format with a writer: 25 trajectories read back, inside Tokyo's box."""
    out = release.with_name("synthetic" + suffix)
    result = cli("synthesize", release, "-n", 25, "-o", out, "--grid", 8, "--seed", 3)
    assert result.returncode == 0, result.stderr
    assert "25 trajectories" in result.stdout and "(em)" in result.stdout
    frame = read_release(out, need=("lat", "lng", "trajectory"))
    assert frame["uid"].nunique() == 25
    lon_lat = frame[["lng", "lat"]].to_numpy(float)
    assert np.all((lon_lat[:, 0] > 139) & (lon_lat[:, 0] < 140.5) & (lon_lat[:, 1] > 35) & (lon_lat[:, 1] < 36.5))


@pytest.mark.parametrize("key", OUTPUTS, ids=[f"{k}-{g}" for k, g in OUTPUTS])
def test_synthesize_reads_every_release_format(cli, checkins_csv, release, tmp_path, key):
    """The release written in any format (and geometry) gives the CSV release's model: the same
    synthetic file for the same seed."""
    from tracs.cli import main

    fmt, geometry = key
    path = tmp_path / f"released-{geometry}{FORMATS[fmt].suffixes[0]}"
    assert main(["perturb", str(checkins_csv), "-o", str(path), "-m", "tracs-c", "-e", "4", "--region", "tky",
                 "--seed", "1", "-q", "--geometry", geometry]) == 0
    mine, reference = tmp_path / "mine.csv", tmp_path / "reference.csv"
    assert cli("synthesize", path, "-n", 20, "-o", mine, "--seed", 4, "--grid", 8).returncode == 0
    assert cli("synthesize", release, "-n", 20, "-o", reference, "--seed", 4, "--grid", 8).returncode == 0
    assert mine.read_bytes() == reference.read_bytes()


@pytest.mark.parametrize("method, fit, options", [("tracs-d", "em", ()), ("strawman", "em", ()),
                                                  ("tracs-d-paper", "em", ()), ("planar-laplace", "em", ()),
                                                  ("tracs-d", "binned", ("--binned",)),
                                                  ("tracs-c", "binned", ("--binned",))])
def test_every_perturber_with_a_density_estimator(cli, checkins_csv, tmp_path, method, fit, options):
    from tracs.cli import main

    path = tmp_path / "released.csv"
    assert main(["perturb", str(checkins_csv), "-o", str(path), "-m", method, "-e", "4", "--region", "tky",
                 "--seed", "1", "-q"]) == 0
    result = cli("synthesize", path, "-n", 7, "-o", tmp_path / "synthetic.csv", "--seed", 1, "--grid", 8, *options)
    assert result.returncode == 0, result.stderr
    assert f"({fit})" in result.stdout
    assert read_release(tmp_path / "synthetic.csv")["uid"].nunique() == 7


@pytest.mark.parametrize("suffix", [f.suffixes[0] for f in WRITTEN if "lines" in f.geometry])
def test_synthesize_writes_lines(cli, release, suffix):
    """--geometry lines: one line per trajectory, read back as the same points as the point file."""
    lines, points = release.with_name("lines" + suffix), release.with_name("points.csv")
    assert cli("synthesize", release, "-n", 9, "-o", lines, "--seed", 5, "--geometry", "lines").returncode == 0
    assert cli("synthesize", release, "-n", 9, "-o", points, "--seed", 5).returncode == 0
    got, expected = read_release(lines, need=("lat", "lng", "trajectory")), read_release(points)
    assert len(got) == len(expected) and got["uid"].nunique() == 9
    np.testing.assert_allclose(np.sort(got["lat"].to_numpy(float)), np.sort(expected["lat"].to_numpy(float)),
                               atol=1e-9, rtol=0)


def test_same_seed_same_file(cli, release):
    a, b = release.with_name("a.csv"), release.with_name("b.csv")
    for out in (a, b):
        assert cli("synthesize", release, "-n", 10, "-o", out, "--seed", 7).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_bad_inputs(cli, release, tmp_path):
    cases = [
        (("synthesize", tmp_path / "none.csv", "-n", 3, "-o", tmp_path / "o.csv"), "no such file"),
        (("synthesize", release, "-n", 0, "-o", tmp_path / "o.csv"), "must be an integer >= 1"),
        (("synthesize", release, "-n", 3, "-o", tmp_path / "o.csv", "--grid", 1), "must be an integer >= 2"),
        (("synthesize", release, "-n", 3, "-o", tmp_path / "o.csv", "--grid", 30), "grid sides up to 24"),
        (("synthesize", release, "-n", 3, "-o", release), "would overwrite the release"),
        (("synthesize", release, "-n", 3, "-o", tmp_path / "o.xyz"), "xyz"),
        (("synthesize", release, "-n", 3, "-o", tmp_path / "o.csv", "--geometry", "lines"), "lines"),
    ]
    lone = tmp_path / "lone.csv"
    lone.write_bytes(release.read_bytes())
    cases.append((("synthesize", lone, "-n", 3, "-o", tmp_path / "o.csv"), "no sidecar"))
    cases.append((("synthesize", release, "-n", 3, "-o", tmp_path / "o.csv", "--seed", -1),
                  "must be a non-negative integer"))
    for args, message in cases:
        result = cli(*args)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)
