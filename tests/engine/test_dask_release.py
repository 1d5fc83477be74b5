"""tracs perturb --engine dask releases exactly what the in-process command releases.

Every release method x {Philox, ChaCha20 (--secure-rng)} x {1, 2, 3 files, ids of
two types}: the files' data read back are equal column for column (Arrow types,
values bit for bit, geometry bytes) and so are the sidecars.  The Dask runs use
the synchronous scheduler in this process (tiny inputs, about 0.3 s a run); the
two-process cluster is covered by ``test_cli_dask.py``.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd
import pytest

from tracs.cli import dask_perturb, main
from tracs.cli._common import release_methods

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")
pytest.importorskip("dask_geopandas", reason="tracs[dask] is not installed")
pq = pytest.importorskip("pyarrow.parquet")
pyproj = pytest.importorskip("pyproj")

#: text ids as written: "7" and "007" are two users, "x" is not a number
IDS = ["7", "12", "007", "x", "0"]
METHODS = sorted(name for name, method in release_methods().items() if method.ldp)
GENERATORS = {"philox": [], "chacha20": ["--secure-rng"]}


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """The Dask runs on the synchronous scheduler, without a cluster."""
    monkeypatch.setattr(dask_perturb, "client", lambda args: contextlib.nullcontext())
    with dask.config.set(scheduler="synchronous"):
        yield


def _points(n, users, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "uid": np.asarray(users, dtype=object)[rng.integers(0, len(users), n)],
        "datetime": pd.Timestamp("2012-04-03", tz="UTC") + pd.to_timedelta(rng.integers(0, 10**6, n), unit="s"),
        "lat": rng.uniform(35.55, 35.75, n), "lng": rng.uniform(139.55, 139.85, n)})


def _write(folder, parts):
    folder.mkdir()
    for i, part in enumerate(parts):
        part.to_parquet(folder / f"part.{i}.parquet", index=False)
    return folder


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask-release")
    frame = _points(60, IDS, 0)
    # the first file holds only ids that read as integers ("7", "12"): users span the other files
    simple = frame["uid"].isin(["7", "12"]).to_numpy()
    frame = pd.concat([frame[simple], frame[~simple]], ignore_index=True)
    frame.to_parquet(root / "all.parquet", index=False)
    cut = int(simple.sum())
    _write(root / "1", [frame])
    _write(root / "2", [frame.iloc[:35], frame.iloc[35:]])
    _write(root / "3", [frame.iloc[:cut], frame.iloc[cut:cut + 20], frame.iloc[cut + 20:]])
    numbers = frame.iloc[:30].assign(uid=lambda f: np.arange(len(f)) % 4)
    _write(root / "mixed", [numbers, frame.iloc[30:]])  # integer ids beside text ids
    rng = np.random.default_rng(1)
    pd.DataFrame({"lat": rng.uniform(35.55, 35.75, 30), "lng": rng.uniform(139.55, 139.85, 30)}).to_csv(
        root / "pois.csv", index=False)
    return root


def _options(method, generator, data):
    from tracs.methods import get

    pois = ["--pois", str(data / "pois.csv")] if get(method).discrete else []
    return ["--region", "tky", "--seed", "5", "--epsilon", "2", "--keep-lines", "--method", method, *pois,
            *GENERATORS[generator]]


def _assert_same_release(local, folder):
    """The two releases read back: same columns, Arrow types and values (floats bit for bit)."""
    one, many = pq.read_table(local), pq.read_table(folder)
    assert one.schema.names == many.schema.names
    for name in one.schema.names:
        a, b = one.column(name).combine_chunks(), many.column(name).combine_chunks()
        assert a.type == b.type, name
        if a.type.equals(b.type) and str(a.type) == "double":
            assert np.array_equal(a.to_numpy().view(np.int64), b.to_numpy().view(np.int64)), name
        else:
            assert a.equals(b), name
    geo = [json.loads(t.schema.metadata[b"geo"])["columns"]["geometry"] for t in (one, many)]
    for key in ("encoding", "geometry_types"):  # (the bounding box is each file's own)
        assert geo[0][key] == geo[1][key], key
    assert pyproj.CRS.from_json_dict(geo[0]["crs"]) == pyproj.CRS.from_json_dict(geo[1]["crs"]) == "EPSG:4326"


_LOCAL = {}


def _local(method, generator, data, tmp_path_factory):
    """The in-process release of ``all.parquet`` (once per method and generator)."""
    if (method, generator) not in _LOCAL:
        out = tmp_path_factory.mktemp("local") / "one.parquet"
        assert main(["perturb", str(data / "all.parquet"), "-o", str(out), *_options(method, generator, data)]) == 0
        _LOCAL[method, generator] = out
    return _LOCAL[method, generator]


@pytest.mark.parametrize("layout", ["1", "2", "3", "mixed"])
@pytest.mark.parametrize("generator", sorted(GENERATORS))
@pytest.mark.parametrize("method", METHODS)
def test_dask_releases_what_the_local_engine_releases(method, generator, layout, data, tmp_path,
                                                      tmp_path_factory, capsys):
    target = tmp_path / "many"
    code = main(["perturb", str(data / layout), "-o", str(target), "--engine", "dask",
                 *_options(method, generator, data)])
    if layout == "mixed":  # no file can hold both types: refused before anything is read or written
        assert code == 1
        assert "are integer in part.0.parquet and text in part.1.parquet" in capsys.readouterr().err
        assert sorted(p.name for p in tmp_path.iterdir()) == []
        return
    assert code == 0
    local = _local(method, generator, data, tmp_path_factory)
    _assert_same_release(local, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many", "many.tracs.json"]
    sidecar = json.loads((tmp_path / "many.tracs.json").read_text())
    assert sidecar == json.loads(local.with_name("one.tracs.json").read_text())
    assert pq.read_table(target).column("uid").to_pylist().count("007") == \
        pq.read_table(local).column("uid").to_pylist().count("007") > 0  # "007" stays text


def test_secure_rng_is_not_philox(data, tmp_path):
    common = ["--engine", "dask", *_options("planar-laplace", "philox", data)]
    assert main(["perturb", str(data / "2"), "-o", str(tmp_path / "philox"), *common]) == 0
    assert main(["perturb", str(data / "2"), "-o", str(tmp_path / "chacha"), *common, "--secure-rng"]) == 0
    philox, chacha = pq.read_table(tmp_path / "philox"), pq.read_table(tmp_path / "chacha")
    assert not np.array_equal(philox.column("lat").to_numpy(), chacha.column("lat").to_numpy())


@pytest.mark.parametrize("first, second, types", [
    ([7, 8], ["7", "8"], "integer in part.0.parquet and text in part.1.parquet"),
    ([7, 8], ["007", "8"], "integer in part.0.parquet and text in part.1.parquet"),
    ([7, 8], ["x", "8"], "integer in part.0.parquet and text in part.1.parquet"),
    (["7", "8"], [7.0, 8.0], "text in part.0.parquet and floating in part.1.parquet"),
])
def test_ids_of_two_types_are_refused_before_writing(first, second, types, tmp_path, capsys):
    parts = [_points(10, first, 1), _points(10, second, 2)]
    source = _write(tmp_path / "in", parts)
    target = tmp_path / "out"
    code = main(["perturb", str(source), "-o", str(target), "--engine", "dask", "--region", "tky", "--seed", "5",
                 "--method", "planar-laplace", "--epsilon", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert f"the user ids of column 'uid' are {types}; ids of different types would draw the same noise" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_a_failed_write_leaves_the_target_as_it_was(data, tmp_path, monkeypatch, capsys):
    release = dask_perturb.release_partition

    def fail(part, *args):  # some partitions are written, then one fails
        if (part["uid"] == "x").any():
            raise RuntimeError("worker lost")
        return release(part, *args)

    monkeypatch.setattr(dask_perturb, "release_partition", fail)
    target = tmp_path / "many"
    target.mkdir()  # an empty folder of that name may be the target: it stays as it was
    code = main(["perturb", str(data / "3"), "-o", str(target), "--engine", "dask",
                 *_options("tracs-d", "philox", data)])
    assert code == 1 and "RuntimeError: worker lost" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many"] and not any(target.iterdir())


def test_the_folder_is_written_beside_and_renamed(data, tmp_path, monkeypatch):
    seen = []
    write_folder = dask_perturb.write_folder

    def spy(output, write):
        def wrapped(folder):
            seen.append(folder)
            assert folder.parent == output.parent and folder.name.startswith(".many.") and not output.exists()
            write(folder)
        write_folder(output, wrapped)

    monkeypatch.setattr(dask_perturb, "write_folder", spy)
    assert main(["perturb", str(data / "2"), "-o", str(tmp_path / "many"), "--engine", "dask",
                 *_options("tracs-d", "philox", data)]) == 0
    assert len(seen) == 1 and not seen[0].exists()
    assert sorted(p.name for p in (tmp_path / "many").iterdir()) == ["part.0.parquet", "part.1.parquet"]
