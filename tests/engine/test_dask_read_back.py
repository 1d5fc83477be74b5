"""What tracs perturb --engine dask writes is read back by every other command, and a killed run's
temporary folder is removed by the next run to the same target.

The Dask runs use the synchronous scheduler in this process (tiny inputs).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

from tracs.cli import main
from tracs.dask import folders as dask_files

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")
pytest.importorskip("dask_geopandas", reason="tracs[dask] is not installed")
pq = pytest.importorskip("pyarrow.parquet")

OPTIONS = ["-m", "tracs-c", "-e", "2", "--region", "tky", "--seed", "4", "--engine", "dask", "-q"]


def run(*args) -> int:
    return main([str(a) for a in args])


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setattr(dask_files, "client", lambda *args: contextlib.nullcontext())
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def source(tmp_path):
    """Two Parquet files of 30 rows of five users ("007" and "7" two of them)."""
    rng = np.random.default_rng(0)
    n = 30
    frame = pd.DataFrame({
        "uid": np.array(["007", "7", "12", "x", "0"], dtype=object)[rng.integers(0, 5, n)],
        "datetime": pd.Timestamp("2012-04-03", tz="UTC") + pd.to_timedelta(rng.integers(0, 10**6, n), unit="s"),
        "lat": rng.uniform(35.55, 35.75, n), "lng": rng.uniform(139.55, 139.85, n)})
    folder = tmp_path / "in"
    folder.mkdir()
    frame.iloc[:12].to_parquet(folder / "part.0.parquet", index=False)
    frame.iloc[12:].to_parquet(folder / "part.1.parquet", index=False)
    return folder


def test_read_release_reads_the_folder_in_the_order_of_its_parts(source, tmp_path):
    from tracs.io.release import read_release

    out = tmp_path / "many"
    assert run("perturb", source, "-o", out, *OPTIONS) == 0
    parts = sorted(out.glob("part.*.parquet"), key=lambda p: int(p.name.split(".")[1]))
    expected = pd.concat([pq.read_table(p).to_pandas() for p in parts], ignore_index=True)
    frame = read_release(out)
    assert len(frame) == 30
    np.testing.assert_array_equal(frame["lat"].to_numpy(), expected["lat"].to_numpy())
    assert frame["uid"].tolist() == expected["uid"].tolist()  # ids as written: "007" stays


def test_estimate_and_map_read_a_dask_release(source, tmp_path, capsys):
    out = tmp_path / "many"
    assert run("perturb", source, "-o", out, *OPTIONS, "--keep-lines") == 0
    capsys.readouterr()
    assert run("estimate", out, "--grid", "4", "-o", tmp_path / "density.csv") == 0
    assert "30 reports" in capsys.readouterr().out
    assert run("map", source, out, "-o", tmp_path / "map.html") == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert (tmp_path / "map.html").stat().st_size > 0 and "no released row" not in err


def test_a_folder_without_parquet_parts_is_refused_plainly(source, tmp_path, capsys):
    folder = tmp_path / "many"
    assert run("perturb", source, "-o", folder, *OPTIONS) == 0
    for part in folder.iterdir():
        part.unlink()  # the sidecar stays
    capsys.readouterr()
    assert run("estimate", folder, "--grid", "4", "-o", tmp_path / "d.csv") == 1
    err = capsys.readouterr().err
    assert "is not a file, nor a folder of Parquet parts" in err and "Traceback" not in err


def test_parts_are_read_in_the_order_of_their_numbers(tmp_path):
    from tracs.io.parquet_folder import parquet_parts

    for name in ("part.10.parquet", "part.2.parquet", "part.0.parquet", "extra.parquet", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in parquet_parts(tmp_path)] == ["part.0.parquet", "part.2.parquet", "part.10.parquet",
                                                           "extra.parquet"]


def test_a_killed_runs_temporary_folder_is_removed_with_a_note(source, tmp_path, capsys):
    out = tmp_path / "many"
    left = tmp_path / ".many.tracs-tmp-k1ll3d_x"  # as write_folder names it
    left.mkdir()
    (left / "part.0.parquet").write_bytes(b"half written")
    others = [tmp_path / ".many.backup", tmp_path / ".manyx.tracs-tmp-abcdefgh", tmp_path / "many.tracs-tmp-abcdefgh"]
    for other in others:
        other.mkdir()
    assert run("perturb", source, "-o", out, *OPTIONS) == 0
    err = capsys.readouterr().err
    assert f"tracs perturb: note: removed {left.name}, left by an interrupted run writing many" in err
    assert not left.exists() and all(other.exists() for other in others)  # only this target's own pattern
    assert sorted(p.name for p in out.iterdir()) == ["part.0.parquet", "part.1.parquet"]
