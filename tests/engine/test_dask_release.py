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
import re

import numpy as np
import pandas as pd
import pytest

from tracs.cli import BUG_STATUS, main
from tracs.dask import folders as dask_files, partition_release
from tracs.cli._common import release_methods

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")
pytest.importorskip("dask_geopandas", reason="tracs[dask] is not installed")
pq = pytest.importorskip("pyarrow.parquet")

#: text ids as written: "7" and "007" are two users, "x" is not a number
IDS = ["7", "12", "007", "x", "0"]
METHODS = sorted(name for name, method in release_methods().items() if method.ldp)
GENERATORS = {"philox": [], "chacha20": ["--secure-rng"]}


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """The Dask runs on the synchronous scheduler, without a cluster."""
    monkeypatch.setattr(dask_files, "client", lambda *args: contextlib.nullcontext())
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
    geo = [json.loads(t.schema.metadata[b"geo"]) for t in (one, many)]
    for meta in geo:
        meta["columns"]["geometry"].pop("bbox")  # each file's own
    assert geo[0] == geo[1]  # the same GeoParquet writer


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
    assert sidecar == json.loads(local.with_name(local.name + ".tracs.json").read_text())
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


@pytest.mark.parametrize("extra, message", [
    (["--method", "tracs-d", "--geometry", "lines"],
     "--engine dask writes points (a GeoParquet folder): --geometry lines needs --engine local"),
    (["--method", "tracs-d", "--pois", "{pois}"],
     "--pois is used by the discrete methods and --round-to-pois only, not by 'tracs-d' without --round-to-pois"),
    (["--method", "em"], "method 'em' needs the public points of interest: --pois FILE"),
])
def test_options_the_local_command_refuses_are_refused(extra, message, data, tmp_path, capsys):
    extra = [a.replace("{pois}", str(data / "pois.csv")) for a in extra]
    code = main(["perturb", str(data / "2"), "-o", str(tmp_path / "many"), "--engine", "dask", "--region", "tky",
                 "--seed", "5", "--epsilon", "2", *extra])
    assert code == 1 and message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_failed_write_leaves_the_target_as_it_was(data, tmp_path, monkeypatch, capsys):
    release = partition_release.release_partition

    def fail(part, *args):  # some partitions are written, then one fails
        if (part["uid"] == "x").any():
            raise RuntimeError("worker lost")
        return release(part, *args)

    monkeypatch.setattr(partition_release, "release_partition", fail)
    target = tmp_path / "many"
    target.mkdir()  # an empty folder of that name may be the target: it stays as it was
    code = main(["perturb", str(data / "3"), "-o", str(target), "--engine", "dask",
                 *_options("tracs-d", "philox", data)])
    # not a refusal of the input: shown with its traceback as a failure of tracs
    assert code == BUG_STATUS and "RuntimeError: worker lost" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many"] and not any(target.iterdir())


def test_the_folder_is_written_beside_and_renamed(data, tmp_path, monkeypatch):
    seen = []
    write_folder = dask_files.write_folder

    def spy(output, write, say=None):
        def wrapped(folder):
            seen.append(folder)
            assert folder.parent == output.parent and folder.name.startswith(".many.") and not output.exists()
            write(folder)
        write_folder(output, wrapped, say)

    monkeypatch.setattr(dask_files, "write_folder", spy)
    assert main(["perturb", str(data / "2"), "-o", str(tmp_path / "many"), "--engine", "dask",
                 *_options("tracs-d", "philox", data)]) == 0
    assert len(seen) == 1 and not seen[0].exists()
    assert sorted(p.name for p in (tmp_path / "many").iterdir()) == ["part.0.parquet", "part.1.parquet"]


def test_times_are_read_per_user_as_in_process(tmp_path):
    """User 1 writes dates both readings fit, user 2 dates only the day-first reading fits:
    each user's times are read from that user's own values, in one file or in two."""
    one = pd.DataFrame({"uid": [1, 1, 1], "datetime": ["03/04/2012 10:00", "05/04/2012 11:00", "07/04/2012 09:00"]})
    two = pd.DataFrame({"uid": [2, 2, 2], "datetime": ["13/04/2012 10:00", "14/04/2012 11:00", "25/04/2012 09:00"]})
    parts = [p.assign(lat=[35.6, 35.61, 35.62], lng=[139.6, 139.61, 139.62]) for p in (one, two)]
    source = _write(tmp_path / "in", parts)
    pd.concat(parts, ignore_index=True).to_parquet(tmp_path / "all.parquet", index=False)
    options = ["--region", "tky", "--seed", "5", "--epsilon", "2", "--method", "tracs-d", "--split-gap", "30d"]
    assert main(["perturb", str(tmp_path / "all.parquet"), "-o", str(tmp_path / "one.parquet"), *options]) == 0
    assert main(["perturb", str(source), "-o", str(tmp_path / "many"), "--engine", "dask", *options]) == 0
    _assert_same_release(tmp_path / "one.parquet", tmp_path / "many")
    times = pq.read_table(tmp_path / "many").column("datetime").to_pylist()
    assert [t.month for t in times[:3]] == [3, 5, 7]  # user 1 alone: month first, as in pandas


def _api_frame(ids):
    return pd.DataFrame({"uid": pd.Series(ids, dtype=object), "x": np.linspace(10.0, 90.0, len(ids)),
                         "y": np.linspace(20.0, 80.0, len(ids))})


@pytest.mark.parametrize("ids, found", [
    ([7, "7", 7, "7"], "mixed (int, str)"),
    ([7, 7.0, 8], "mixed (float, int)"),
    (["007", 7, "x"], "mixed (int, str)"),
])
@pytest.mark.parametrize("call", ["perturb_frame", "perturb", "estimate"])
def test_the_api_refuses_ids_of_two_types_in_a_column(ids, found, call):
    from tracs import dask as tdask
    from tracs.perturbers import TraCSD
    from tracs.region import Rectangle

    model = TraCSD(Rectangle(0.0, 0.0, 100.0, 100.0), 1.0)
    frame = _api_frame(ids)
    lazy = dask.dataframe.from_pandas(frame, npartitions=2, sort=False)
    run = {"perturb_frame": lambda: tdask.perturb_frame(frame, model, seed=3, x="x", y="y"),
           "perturb": lambda: tdask.perturb(lazy, model, seed=3, x="x", y="y").compute(),
           "estimate": lambda: tdask.estimate(lazy, model, grid=4, x="x", y="y")}[call]
    with pytest.raises(ValueError, match=rf"column 'uid' holds user ids of more than one type \({re.escape(found)}"):
        run()


@pytest.mark.parametrize("call", ["perturb", "estimate", "needs_shuffle"])
def test_the_api_refuses_partitions_of_two_id_types(call):
    """Integer ids in one partition, text in the other (an object column): 7 and "7" never share noise."""
    from tracs import dask as tdask
    from tracs.perturbers import TraCSD
    from tracs.region import Rectangle

    model = TraCSD(Rectangle(0.0, 0.0, 100.0, 100.0), 1.0)
    parts = [_api_frame([7, 8, 7]), _api_frame(["7", "8", "7"])]
    with dask.config.set({"dataframe.convert-string": False}):  # (else dask turns 7 into "7" itself)
        lazy = dask.dataframe.from_delayed([dask.delayed(p) for p in parts], meta=parts[0].iloc[:0])
        run = {"perturb": lambda: tdask.perturb(lazy, model, seed=3, x="x", y="y", shuffle=False).compute(),
               "estimate": lambda: tdask.estimate(lazy, model, grid=4, x="x", y="y", shuffle=False),
               "needs_shuffle": lambda: tdask.needs_shuffle(lazy)}[call]
        with pytest.raises(ValueError, match=r"column 'uid' holds user ids of more than one type \(integer and text\)"):
            run()
