"""tracs denoise --engine dask writes the local engine's output (TraCS-C and TraCS-D, per point, per
trajectory, onto POIs; a CSV in partitions of about 1 kB, a Parquet file, a folder of Parquet parts), and
refuses what it does not take with the command's messages.

Byte for byte, but for one documented floating-point difference: TraCS-D's prior on Dask adds the E-step's
per-cell sums partition by partition (tracs.dask.estimate, equal to the local fit to 1e-9), so with more
than one partition its denoised lat/lng agree to 1e-9 degrees on these small releases (measured: below
1e-13; docs/estimation.md gives 1.6e-9 on 3,000 TKY check-ins and a 64×64 prior) and every other column is
identical; given the same prior, every partition's points are the local ones bit for bit
(tests/engine/test_dask_denoise.py).  TraCS-C's prior adds counts: exact.

The Dask runs use the synchronous scheduler in this process (tiny releases); one, marked slow, a cluster of
two worker processes.
"""

from __future__ import annotations

import contextlib
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tracs.cli import main

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")

from tracs.cli import _dask_reading  # noqa: E402 - after the skips

_READ_CSV = dd.read_csv
_CLIENT = _dask_reading.dask_client


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """No cluster: the synchronous scheduler; CSV partitions of about 1 kB, so trajectories span them."""
    monkeypatch.setattr(_dask_reading, "dask_client", lambda *args: contextlib.nullcontext())
    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda *args, **kwargs: read_csv(*args, blocksize=1000, **kwargs))
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def releases(tmp_path_factory, checkins_csv, venues_csv):
    """The 60 check-ins of three users released by TraCS-C and TraCS-D (ε = 2, seed 1) as CSV, as a Parquet
    file and as a folder of two Parquet parts (trajectories span them); by EM onto their 25 venues."""
    folder = tmp_path_factory.mktemp("denoise-dask")
    shutil.copy(venues_csv, folder / "pois.csv")
    for method in ("tracs-c", "tracs-d"):
        common = ["-m", method, "-e", "2", "--seed", "1", "--region", "139.5,35.5,140.0,35.9", "-q"]
        assert main(["perturb", str(checkins_csv), *common, "-o", str(folder / f"{method}.csv")]) == 0
        assert main(["perturb", str(checkins_csv), *common, "-o", str(folder / f"{method}.parquet")]) == 0
        parts = folder / f"{method}-parts"
        parts.mkdir()
        whole = pq.read_table(folder / f"{method}.parquet")  # its GeoParquet metadata kept in the parts
        for i, rows in enumerate((whole.slice(0, 25), whole.slice(25))):
            pq.write_table(rows, parts / f"part.{i}.parquet")
        shutil.copy(folder / f"{method}.parquet.tracs.json", folder / f"{method}-parts.tracs.json")
    rng = np.random.default_rng(5)  # users 1 to 12, 20 check-ins each: text order (1, 10, 11, 12, 2, ...) is not theirs
    pd.DataFrame({"uid": np.repeat(np.arange(1, 13), 20),
                  "datetime": pd.Timestamp("2012-04-03", tz="UTC") + pd.to_timedelta(np.tile(np.arange(20), 12),
                                                                                     unit="h"),
                  "lat": rng.uniform(35.55, 35.85, 240), "lng": rng.uniform(139.55, 139.95, 240)}).to_csv(
        folder / "ids.csv", index=False)
    assert main(["perturb", str(folder / "ids.csv"), "-m", "tracs-d", "-e", "2", "--seed", "1", "--region",
                 "139.5,35.5,140.0,35.9", "-q", "-o", str(folder / "tracs-d-ids.csv")]) == 0
    budget = ["-m", "tracs-c", "--per-trajectory", "-e", "8", "--seed", "1", "--region", "139.5,35.5,140.0,35.9", "-q"]
    assert main(["perturb", str(checkins_csv), *budget, "-o", str(folder / "tracs-c-per-trajectory.csv")]) == 0
    em = ["-m", "em", "-e", "2", "--seed", "1", "--region", "139.5,35.5,140.0,35.9", "--pois",
          str(folder / "pois.csv"), "-q"]
    assert main(["perturb", str(checkins_csv), *em, "-o", str(folder / "em.csv")]) == 0
    return folder


def _denoised(release, output, *options):
    assert main(["denoise", str(release), "--grid", "6", "-o", str(output), "-q", *options]) == 0
    return output.read_bytes()


def _read(path):
    return pd.read_parquet(path).astype(str) if path.suffix == ".parquet" else \
        pd.read_csv(path, dtype=str, keep_default_na=False, sep="\t" if path.suffix == ".tsv" else ",")


def assert_same_output(local, dask_output, method):
    """Byte for byte, or (TraCS-D, see the module's text) every column but lat/lng as written and lat/lng to
    1e-9 degrees."""
    if local.read_bytes() == dask_output.read_bytes():
        return
    assert method == "tracs-d", f"{method}: the Dask output differs from the local output"
    one, other = _read(local), _read(dask_output)
    assert list(one.columns) == list(other.columns) and len(one) == len(other)
    for column in one.columns:
        if column in ("lat", "lng"):
            np.testing.assert_allclose(other[column].astype(float), one[column].astype(float), rtol=0, atol=1e-9)
        else:
            assert other[column].tolist() == one[column].tolist(), column


CASES = {
    "per point": [],
    "per trajectory": ["--trajectory"],
    "onto the POIs": ["--pois", "{pois}"],
    "onto the POIs given the trajectory": ["--pois", "{pois}", "--trajectory", "--rule", "mode"],
}


@pytest.mark.parametrize("method", ["tracs-c", "tracs-d"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dask_engine_writes_the_local_output(releases, tmp_path, capsys, method, case):
    options = [a.replace("{pois}", str(releases / "pois.csv")) for a in CASES[case]]
    release = releases / f"{method}.csv"
    _denoised(release, tmp_path / "local.csv", *options)
    local_line = capsys.readouterr().out
    _denoised(release, tmp_path / "dask.csv", *options, "--engine", "dask")
    assert capsys.readouterr().out.replace("dask.csv", "local.csv") == local_line
    assert_same_output(tmp_path / "local.csv", tmp_path / "dask.csv", method)
    assert pd.read_csv(tmp_path / "dask.csv").shape[0] == 60


@pytest.mark.parametrize("options", [[], ["--trajectory"]])
def test_a_budget_per_trajectory(releases, tmp_path, options):
    """ε per trajectory: every report's ε follows its trajectory's length, whole in its partition."""
    release = releases / "tracs-c-per-trajectory.csv"
    local = _denoised(release, tmp_path / "local.csv", *options)
    assert _denoised(release, tmp_path / "dask.csv", *options, "--engine", "dask") == local


def test_estimate_reads_a_budget_per_trajectory_in_partitions(releases, tmp_path):
    """ε per trajectory is whole in some CSV blocks (8) and not in others: read as floats in every partition."""
    release = releases / "tracs-c-per-trajectory.csv"
    for engine in ("local", "dask"):
        assert main(["estimate", str(release), "--grid", "6", "-o", str(tmp_path / f"{engine}.csv"),
                     "--engine", engine]) == 0
    assert (tmp_path / "dask.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()


@pytest.mark.parametrize("command, options", [("estimate", []), ("denoise", []), ("denoise", ["--trajectory"])])
def test_trajectories_in_the_local_order(releases, tmp_path, monkeypatch, command, options):
    """Users 1 to 12 are fitted in that order (not the text order 1, 10, 11, 12, 2, ...): one partition is the
    local output byte for byte (TraCS-D: the E-step's sums are added in trajectory order)."""
    monkeypatch.setattr(dd, "read_csv", _READ_CSV)
    release = releases / "tracs-d-ids.csv"
    for engine in ("local", "dask"):
        assert main([command, str(release), "--grid", "16", "-o", str(tmp_path / f"{engine}.csv"), "-q",
                     "--engine", engine, *options]) == 0
    assert (tmp_path / "dask.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()


def test_local_workers_fit_the_same_prior(releases, tmp_path):
    local = _denoised(releases / "tracs-d.csv", tmp_path / "one.csv", "--trajectory")
    assert _denoised(releases / "tracs-d.csv", tmp_path / "two.csv", "--trajectory", "--workers", "2") == local


def test_one_partition_is_byte_for_byte(releases, tmp_path, monkeypatch):
    """TraCS-D's release in one partition: the prior is the local one, and so is every byte."""
    monkeypatch.setattr(dd, "read_csv", _READ_CSV)
    local = _denoised(releases / "tracs-d.csv", tmp_path / "local.csv", "--trajectory")
    assert _denoised(releases / "tracs-d.csv", tmp_path / "dask.csv", "--trajectory", "--engine", "dask") == local


@pytest.mark.parametrize("method", ["tracs-c", "tracs-d"])
@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_a_folder_of_parquet_parts_and_a_parquet_file(releases, tmp_path, method, suffix):
    _denoised(releases / f"{method}.parquet", tmp_path / f"local{suffix}", "--trajectory")
    for release in (releases / f"{method}.parquet", releases / f"{method}-parts"):
        _denoised(release, tmp_path / f"dask{suffix}", "--trajectory", "--engine", "dask")
        assert_same_output(tmp_path / f"local{suffix}", tmp_path / f"dask{suffix}", method)


BAD = [
    ("tracs-c.csv", ["--scheduler", "tcp://127.0.0.1:1"], "--scheduler goes with --engine dask"),
    ("em.csv", ["--pois", "{pois}", "--engine", "dask"],
     "tracs denoise --engine dask supports TraCS-C, TraCS-D, Strawman and planar Laplace releases; em.csv was "
     "released by em (EM), a discrete baseline (leave out --engine dask)"),
    ("tracs-c.csv", ["--engine", "spark"], "argument --engine: invalid choice: 'spark'"),
    ("tracs-c.csv", ["--engine", "dask", "--grid", "1"], "--grid must be >= 2, got 1"),
    ("tracs-c.csv", ["--workers", "0"], "--workers"),
]


@pytest.mark.parametrize("release, options, message", BAD)
def test_bad_inputs(releases, tmp_path, capsys, release, options, message):
    options = [a.replace("{pois}", str(releases / "pois.csv")) for a in options]
    with contextlib.suppress(SystemExit):  # argparse's own errors exit
        assert main(["denoise", str(releases / release), "-o", str(tmp_path / "out.csv"), "-q", *options]) != 0
    assert message in capsys.readouterr().err


def test_a_missing_dask_extra_is_named(releases, tmp_path, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.undo()
    monkeypatch.setattr(builtins, "__import__", no_distributed)
    assert main(["denoise", str(releases / "tracs-c.csv"), "-o", str(tmp_path / "out.csv"), "-q",
                 "--engine", "dask"]) != 0
    assert "--engine dask needs the dask extra: pip install 'tracs[dask]'" in capsys.readouterr().err


@pytest.mark.slow  # a cluster of two worker processes, about 10 s
def test_on_a_cluster_of_worker_processes(releases, tmp_path, monkeypatch):
    """The model and the partitions pickled to two worker processes (--scheduler): the same output."""
    import distributed

    monkeypatch.setattr(_dask_reading, "dask_client", _CLIENT)
    local = _denoised(releases / "tracs-c.csv", tmp_path / "local.csv", "--trajectory")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, dask.config.set(scheduler=None):
        assert _denoised(releases / "tracs-c.csv", tmp_path / "dask.csv", "--trajectory", "--engine", "dask",
                         "--scheduler", cluster.scheduler_address) == local
        assert cluster.scheduler.task_prefixes  # the work ran on the cluster
