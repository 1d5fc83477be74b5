"""tracs perturb --engine dask writes the in-process command's rows bit for bit (ids 007 and 7, text trajectory ids).

Marked slow (a two-process cluster, about 20 s); the API's Dask tests cover every method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracs.cli import main

dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
distributed = pytest.importorskip("distributed", reason="tracs[dask] is not installed")
gpd = pytest.importorskip("geopandas")


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask-cli")
    rng = np.random.default_rng(0)
    n = 900
    ids = np.array([f"{k:03d}" for k in range(15)] + [str(k) for k in range(15)])  # 007 and 7: two users
    frame = pd.DataFrame({
        "uid": ids[rng.integers(0, 30, n)],
        "trip": rng.choice(["01", "1"], n),  # the input's own trajectory ids, kept as written
        "datetime": pd.Timestamp("2012-04-03", tz="UTC") + pd.to_timedelta(rng.integers(0, 10**6, n), unit="s"),
        "lat": rng.uniform(35.5, 35.8, n), "lng": rng.uniform(139.5, 139.9, n)})
    frame.to_parquet(root / "all.parquet", index=False)
    (root / "parts").mkdir()
    for i, start in enumerate(range(0, n, 250)):  # users span the files
        frame.iloc[start:start + 250].to_parquet(root / "parts" / f"part.{i}.parquet", index=False)
    pd.DataFrame({"lat": rng.uniform(35.5, 35.8, 80), "lng": rng.uniform(139.5, 139.9, 80)}).to_csv(
        root / "pois.csv", index=False)
    return root


CASES = {
    "tracs-d": ["--method", "tracs-d", "--split-gap", "3h"],
    "tracs-c per trajectory": ["--method", "tracs-c", "--per-trajectory", "--epsilon", "8"],
    "em": ["--method", "em", "--pois", "{pois}"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_dask_engine_equals_in_process(name, data, scheduler, tmp_path, capsys):
    options = [a.replace("{pois}", str(data / "pois.csv")) for a in CASES[name]]
    common = ["--region", "tky", "--seed", "5", "--keep-lines", *options]
    if "--epsilon" not in common:
        common += ["--epsilon", "2"]
    assert main(["perturb", str(data / "all.parquet"), "-o", str(tmp_path / "one.parquet"), *common]) == 0
    import dask

    with dask.config.set({"dataframe.shuffle.method": "tasks"}):  # quicker than p2p on tiny data
        assert main(["perturb", str(data / "parts"), "-o", str(tmp_path / "many"), "--engine", "dask",
                     "--scheduler", scheduler, *common]) == 0
    assert "on Dask" in capsys.readouterr().out
    one = gpd.read_parquet(tmp_path / "one.parquet").sort_values("source_row")
    many = gpd.read_parquet(tmp_path / "many").sort_values("source_row")
    assert len(one) == len(many) == 900
    assert many["source_row"].tolist() == one["source_row"].tolist()
    for column in ("uid", "trajectory", "lat", "lng", "epsilon_point", "epsilon_trajectory"):
        assert np.array_equal(one[column].to_numpy(), many[column].to_numpy()), column
    assert many.crs == one.crs


@pytest.mark.parametrize("extra, fragment", [
    (["--region-from-data"], "needs a public --region"),
    (["--region", "tky"], "needs --seed"),
])
def test_dask_engine_refuses(extra, fragment, data, tmp_path, capsys):
    code = main(["perturb", str(data / "parts"), "-o", str(tmp_path / "x"), "--engine", "dask",
                 "--method", "tracs-d", "--epsilon", "2", *extra])
    assert code != 0 and fragment in capsys.readouterr().err


def test_scheduler_needs_the_dask_engine(data, tmp_path, capsys):
    code = main(["perturb", str(data / "all.parquet"), "-o", str(tmp_path / "x.parquet"), "--region", "tky",
                 "--seed", "1", "--method", "tracs-d", "--epsilon", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert code != 0 and "--scheduler goes with --engine dask" in capsys.readouterr().err


def test_worker_count_does_not_change_the_release(data, tmp_path, monkeypatch):
    from tracs.engine import _pool

    monkeypatch.setattr(_pool, "MIN_CHUNK_POINTS", 16)  # really cut the 900 rows into chunks
    outputs = []
    for workers in ("1", "2", "3"):
        out = tmp_path / f"w{workers}.parquet"
        assert main(["perturb", str(data / "all.parquet"), "-o", str(out), "--region", "tky", "--seed", "5",
                     "--method", "tracs-d", "--epsilon", "2", "--split-gap", "3h", "--workers", workers,
                     "--round-to-pois", "--pois", str(data / "pois.csv")]) == 0
        outputs.append(gpd.read_parquet(out))
    for other in outputs[1:]:
        for column in ("uid", "trajectory", "lat", "lng", "epsilon_point", "epsilon_trajectory"):
            assert np.array_equal(outputs[0][column].to_numpy(), other[column].to_numpy()), column


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_bad_worker_counts_are_refused(value, data, tmp_path, capsys):
    code = main(["perturb", str(data / "all.parquet"), "-o", str(tmp_path / "x.parquet"), "--workers", value])
    assert code == 2 and "workers" in capsys.readouterr().err
