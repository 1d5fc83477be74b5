"""tracs estimate --engine dask checks a release as in one process, partition by partition: the
digest of the rows, the ε column, the region and the method's lattice (counts added over partitions)."""

from __future__ import annotations

import json

import pytest

from tracs.estimate import sidecar_path
from tracs.io.parameters import rows_digest
from tracs.io.release import read_release

dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
distributed = pytest.importorskip("distributed", reason="tracs[dask] is not installed")

REGION = ("--region", "139.5,35.5,140.0,35.9")


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(autouse=True)
def small_partitions(monkeypatch):
    """Partitions of about 1 kB: the 60 rows of a release span several."""
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *args, **kwargs: read_csv(*args, blocksize=1000, **kwargs))


@pytest.fixture(scope="module")
def releases(checkins_csv, tmp_path_factory):
    from tracs.cli import main

    folder = tmp_path_factory.mktemp("dask-releases")
    for name, method in (("rel-c.csv", "tracs-c"), ("rel-d.csv", "tracs-d")):
        assert main(["perturb", str(checkins_csv), "-o", str(folder / name), "-m", method, "-e", "2",
                     "--seed", "1", "--quiet", *REGION]) == 0
    return folder


def _copy(releases, tmp_path, name):
    for source in (releases / name, sidecar_path(releases / name)):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    return tmp_path / name


def _estimate(cli, release, scheduler, *options):
    return cli("estimate", release, "--grid", "4", "--engine", "dask", "--scheduler", scheduler, *options,
               "-o", release.parent / "est.csv")


@pytest.mark.parametrize("name", ["rel-c.csv", "rel-d.csv"])
def test_an_untouched_release_passes_on_several_partitions(name, releases, cli, scheduler, tmp_path):
    release = _copy(releases, tmp_path, name)
    assert dd.read_csv(release).npartitions > 1
    result = _estimate(cli, release, scheduler)
    assert result.returncode == 0, result.stderr
    assert "60 reports" in result.stdout


def _edit(release, change, *, digest=False):
    import pandas as pd

    frame = pd.read_csv(release, dtype=str)
    change(frame)
    frame.to_csv(release, index=False)
    if digest:  # record the changed rows' digest: only the other checks can tell
        _edit_sidecar(release, "rows_sha256", rows_digest(read_release(release)))


def _edit_sidecar(release, key, value):
    data = json.loads(sidecar_path(release).read_text())
    data[key] = value
    sidecar_path(release).write_text(json.dumps(data))


def _move(rows, by, column="lat"):
    def change(frame):
        for row in rows:
            frame.loc[row, column] = str(float(frame.loc[row, column]) + by)
    return change


@pytest.mark.parametrize("name, tamper, message", [
    ("rel-c.csv", lambda r: _edit(r, _move([3], 0.01)),
     "rel-c.csv.tracs.json does not belong to rel-c.csv: the digest of the rows it records differs"),
    ("rel-d.csv", lambda r: _edit(r, _move([59], 1e-7)), "rel-d.csv.tracs.json does not belong to rel-d.csv"),
    ("rel-c.csv", lambda r: _edit_sidecar(r, "epsilon", 0.1),
     "rel-c.csv.tracs.json says ε = 0.1 per point, but 60 of 60 rows of rel-c.csv hold epsilon_point = 2"),
    ("rel-c.csv", lambda r: _edit(r, _move([5, 50], 1.0, "epsilon_point"), digest=True),
     "rel-c.csv.tracs.json says ε = 2 per point, but 2 of 60 rows of rel-c.csv hold epsilon_point = 3"),
    ("rel-c.csv", lambda r: _edit(r, _move([3, 40], 1e-4), digest=True),
     "2 of 60 reports are off the lattice of tracs-c of rel-c.csv.tracs.json: rel-c.csv is not a release of "
     "these parameters"),
    ("rel-d.csv", lambda r: _edit(r, _move([7, 30, 58], 1e-4), digest=True),
     "of 60 reports are off the lattice of tracs-d of rel-d.csv.tracs.json"),
    ("rel-c.csv", lambda r: _edit(r, _move([10], 1.0), digest=True),
     "1 of 60 reports are outside the region of rel-c.csv.tracs.json"),
])
def test_a_tampered_release_is_refused_with_the_count(name, tamper, message, releases, cli, scheduler, tmp_path):
    release = _copy(releases, tmp_path, name)
    tamper(release)
    result = _estimate(cli, release, scheduler)
    assert result.returncode == 1
    assert message in " ".join(result.stderr.split()), result.stderr
    assert not (tmp_path / "est.csv").exists()


def test_clip_reports_estimates_with_a_note_of_the_count(releases, cli, scheduler, tmp_path):
    release = _copy(releases, tmp_path, "rel-c.csv")
    _edit(release, _move([3, 40], 1e-4), digest=True)
    result = _estimate(cli, release, scheduler, "--clip-reports")
    assert result.returncode == 0, result.stderr
    assert "note: --clip-reports: 2 of 60 reports are off the lattice of tracs-c" in result.stderr
