"""tracs.dask.release_file is tracs perturb --engine dask as one call: the same files, byte for byte; its own
checks name its parameters.

The Dask runs use the synchronous scheduler in this process (tiny inputs).
"""

from __future__ import annotations

import contextlib
import json
import pickle

import numpy as np
import pandas as pd
import pytest

from tracs.cli import main
from tracs.errors import InputError
from tracs.public import parse_box

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")
pytest.importorskip("dask_geopandas", reason="tracs[dask] is not installed")

from tracs.dask import FolderRelease, folders as dask_files, release_file  # noqa: E402 - after the skips
from tracs.dask.partition_release import PartitionOptions  # noqa: E402
from tracs.release.notes import printer  # noqa: E402


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setattr(dask_files, "client", lambda *args: contextlib.nullcontext())
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Two Parquet files of 40 rows of five users ("007" and "7" two of them), a POI file, an empty folder."""
    root = tmp_path_factory.mktemp("dask-release-file")
    rng = np.random.default_rng(3)
    users = np.array(["007", "7", "12", "x", "0"], dtype=object)[rng.integers(0, 5, 40)]
    seconds = pd.to_timedelta(rng.integers(0, 10**6, 40), unit="s")
    frame = pd.DataFrame({"uid": users, "datetime": pd.Timestamp("2012-04-03", tz="UTC") + seconds,
                          "lat": rng.uniform(35.5, 35.8, 40), "lng": rng.uniform(139.5, 139.95, 40)})
    first = frame.iloc[:15]
    for name, parts in {"in": (first, frame.iloc[15:]), "mixed": (first.assign(uid=np.arange(15) % 3),
                                                                   frame.iloc[15:])}.items():
        (root / name).mkdir()
        for i, part in enumerate(parts):  # integer ids beside text ids in "mixed"
            part.to_parquet(root / name / f"part.{i}.parquet", index=False)
    pd.DataFrame({"lat": rng.uniform(35.5, 35.8, 20), "lng": rng.uniform(139.5, 139.85, 20)}).to_csv(
        root / "pois.csv", index=False)
    (root / "empty").mkdir()
    (root / "full").mkdir()
    (root / "full" / "x.txt").write_text("x")
    return root


def _files(folder, sidecar):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}, sidecar.read_bytes()


#: (command options, the same release as keywords of tracs.dask.release_file)
SAME = {
    "tracs-d, rows outside dropped": (
        ["-m", "tracs-d", "--split-gap", "3h", "--keep-lines", "--drop", "--region", "139.5,35.5,139.8,35.8"],
        dict(method="tracs-d", split_gap="3h", keep_lines=True, outside="drop", region="139.5,35.5,139.8,35.8")),
    "em, ChaCha20, no budget columns": (
        ["-m", "em", "--pois", "{pois}", "--secure-rng", "--no-budget-columns", "--region", "tky"],
        dict(method="em", pois="{pois}", secure_rng=True, budget_columns=False, region="tky")),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_the_call_writes_the_commands_files_byte_for_byte(name, data, tmp_path, capsys):
    options, keywords = SAME[name]
    options = [a.replace("{pois}", str(data / "pois.csv")) for a in options]
    keywords = {k: str(data / "pois.csv") if v == "{pois}" else v for k, v in keywords.items()}
    assert main(["perturb", str(data / "in"), "-o", str(tmp_path / "command"), "--engine", "dask", "--seed", "9",
                 "-e", "2", *options]) == 0
    said = []
    done = release_file(data / "in", tmp_path / "call", epsilon=2.0, seed=9, say=said.append, **keywords)
    assert isinstance(done, FolderRelease)
    command = _files(tmp_path / "command", tmp_path / "command.tracs.json")
    call = _files(tmp_path / "call", tmp_path / "call.tracs.json")
    assert command == call and command[0]
    assert done.output == tmp_path / "call" and done.sidecar == tmp_path / "call.tracs.json"
    assert done.digest == json.loads(call[1])["rows_sha256"] and done.parameters["epsilon"] == 2.0
    assert ("pois_sha256" in json.loads(call[1])) == ("pois" in keywords)  # the digest of the public POIs
    assert done.rows == 40 and 0 < done.points <= 40
    summary = capsys.readouterr().out
    assert f"{done.points} rows released from 40" in summary
    if done.points < 40:  # the notes of the partitions went to the call's say
        assert any("note:" in line for line in said)


def test_the_options_of_the_partitions_pickle():
    options = PartitionOptions(method="tracs-d", epsilon=2.0, per_trajectory=False, round_to_pois=False,
                               anchor="center", split_gap="3h", seed=5, secure_rng=False, keep_lines=True,
                               budget=True, box=parse_box("tky"), outside="drop", reading={"user": None},
                               flags=None, say=printer("tracs perturb"))
    again = pickle.loads(pickle.dumps(options))
    assert again == options


#: the call's own checks: keywords (beside method tracs-d, epsilon 2, region tky, seed 5) -> error class, message
BAD = [
    (dict(region=None), InputError,
     "tracs.dask.release_file needs a public region= (partitions cannot share a region computed from the data)"),
    (dict(region=None, region_from_data=True), InputError, "tracs.dask.release_file needs a public region="),
    (dict(seed=None), InputError,
     "tracs.dask.release_file needs seed= (every worker must derive the same key); keep it secret"),
    (dict(geometry="lines"), InputError,
     "tracs.dask.release_file writes points (a GeoParquet folder): geometry='lines' needs tracs.release.release_file"),
    (dict(outside="keep"), InputError, "outside must be None, 'clip' or 'drop', got 'keep'"),
    (dict(source="{root}/nope"), InputError, "no such file or directory: {root}/nope"),
    (dict(source="{root}/empty"), InputError, "{root}/empty: no .parquet files to read"),
    (dict(output="{root}/full"), InputError, "{root}/full exists and is not an empty directory"),
    (dict(source="{root}/mixed"), InputError,
     "{root}/mixed: the user ids of column 'uid' are integer in part.0.parquet and text in part.1.parquet"),
    (dict(columns={"user": "who"}), InputError,
     "{root}/in: no 'who' column (columns: uid, datetime, lat, lng); name it with columns={'user': NAME}"),
    (dict(columns={"person": "uid"}), InputError, "columns names the roles user, time, lat, lon, traj, got 'person'"),
    (dict(method="ngram"), InputError, "method 'ngram' needs the public points of interest: pois= FILE"),
    (dict(flags={"engine": "--engine dask", "seed": "--seed"}, seed=None), InputError,
     "--engine dask needs --seed (every worker must derive the same key)"),
]


@pytest.mark.parametrize("keywords, error, message", BAD, ids=[m[:40] for _, _, m in BAD])
def test_bad_parameters_are_refused_before_anything_is_written(keywords, error, message, data, tmp_path):
    call = dict(source=data / "in", output=tmp_path / "out", method="tracs-d", epsilon=2.0, region="tky", seed=5)
    call.update({k: v.replace("{root}", str(data)) if isinstance(v, str) else v for k, v in keywords.items()})
    before = sorted(p.name for p in data.iterdir())
    with pytest.raises(error) as caught:
        release_file(call.pop("source"), call.pop("output"), **call)
    assert message.replace("{root}", str(data)) in str(caught.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.tracs.json").exists()
    assert sorted(p.name for p in data.iterdir()) == before
