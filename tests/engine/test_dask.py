"""tracs.dask: the Dask result equals the in-process result bit for bit, for every method.

One ``distributed.LocalCluster`` (2 worker processes) serves the whole module, so
the perturbers really travel to other processes.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tracs.dask import needs_shuffle, perturb_frame

from .test_engine import HEXAGON, METHODS

dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
distributed = pytest.importorskip("distributed", reason="tracs[dask] is not installed")


def _frame(n=600, users=25, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "uid": rng.integers(0, users, n),
        "day": rng.integers(0, 2, n),
        "t": rng.permutation(n),
        "x": rng.uniform(0, 2000, n),
        "y": rng.uniform(0, 1000, n),
        "note": [f"row{i}" for i in range(n)],
    }, index=pd.Index(rng.permutation(n) * 7 + 3, name="rid"))
    inside = HEXAGON.contains(frame[["x", "y"]].to_numpy())  # inside every method's region
    frame.loc[~inside, ["x", "y"]] = HEXAGON.center
    return frame


def _by_hand(frame, model, seed):
    """Group per user (ordered by time), perturb with keys: the definition."""
    ordered = frame.sort_values(["uid", "t"], kind="stable")
    offsets = np.r_[0, np.cumsum(ordered.groupby("uid", sort=True).size().to_numpy())]
    keys = ordered["uid"].to_numpy()[offsets[:-1]].tolist()
    out = model.perturb_many(ordered[["x", "y"]].to_numpy(), offsets, rng=seed, keys=keys)
    return pd.DataFrame(out, index=ordered.index, columns=["x", "y"]).loc[frame.index]


def test_perturb_frame_is_per_user_perturb_many():
    frame = _frame()
    model = METHODS["tracs-d"]
    out = perturb_frame(frame, model, seed=4, time="t", x="x", y="y")
    assert out.index.equals(frame.index) and list(out.columns) == list(frame.columns)
    assert np.array_equal(out[["x", "y"]].to_numpy(), _by_hand(frame, model, 4).to_numpy())
    assert out["note"].equals(frame["note"]) and not np.array_equal(out["x"], frame["x"])


def test_a_user_release_depends_only_on_that_user():
    frame = _frame()
    model = METHODS["tracs-c"]
    out = perturb_frame(frame, model, seed=4, time="t", x="x", y="y", trajectory="day")
    one = frame[frame["uid"] == 3].sample(frac=1.0, random_state=1)  # other rows gone, order shuffled
    alone = perturb_frame(one, model, seed=4, time="t", x="x", y="y", trajectory="day")
    assert np.array_equal(alone.loc[one.index, ["x", "y"]].to_numpy(), out.loc[one.index, ["x", "y"]].to_numpy())


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"seed": None}, ValueError, "give a seed"),
    ({"seed": 1, "user": "who"}, ValueError, "missing column(s) 'who'"),
    ({"seed": 1, "y": None}, ValueError, "give both x= and y="),
    ({"seed": 1, "x": None, "y": None}, ValueError, "point geometry"),
    ({"seed": 1, "time": "when"}, ValueError, "missing column(s) 'when'"),
])
def test_bad_arguments(kwargs, error, fragment):
    args = {"x": "x", "y": "y", **kwargs}
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        perturb_frame(_frame(), METHODS["tracs-c"], **args)


def test_missing_user_ids_are_refused():
    frame = _frame().astype({"uid": "float64"})
    frame.iloc[4, 0] = np.nan
    with pytest.raises(ValueError, match="missing user ids"):
        perturb_frame(frame, METHODS["tracs-c"], seed=1, x="x", y="y")


def test_import_tracs_does_not_import_dask():
    code = "import sys, tracs, tracs.engine, tracs.perturbers; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.slow  # a two-process cluster
def test_every_method_on_a_cluster_equals_in_process(client):
    import dask

    from tracs import dask as tdask

    frame = _frame()
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)  # users span partitions
    assert needs_shuffle(ddf, "uid")
    names = sorted(METHODS)
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):  # quicker than p2p on tiny data
        lazy = [tdask.perturb(ddf, METHODS[name], seed=8, time="t", x="x", y="y", shuffle=True)
                for name in names]
        results = dask.compute(*lazy)
    for name, out in zip(names, results):
        expected = perturb_frame(frame, METHODS[name], seed=8, time="t", x="x", y="y")
        assert out.index.equals(frame.index), name
        assert np.array_equal(out[["x", "y"]].to_numpy(), expected[["x", "y"]].to_numpy()), name
        assert out["note"].tolist() == frame["note"].tolist(), name  # dask stores text as Arrow strings


@pytest.mark.slow  # a two-process cluster
def test_partitioning_by_user_needs_no_shuffle_and_geometry_works(client):
    import dask

    gpd = pytest.importorskip("geopandas")
    dask_geopandas = pytest.importorskip("dask_geopandas", reason="tracs[dask] is not installed")
    from tracs import dask as tdask

    frame = _frame().sort_values("uid", kind="stable")
    gdf = gpd.GeoDataFrame(frame.drop(columns=["x", "y"]),
                           geometry=gpd.points_from_xy(frame["x"], frame["y"]), crs="EPSG:32654")
    cuts = np.flatnonzero(np.r_[True, frame["uid"].to_numpy()[1:] != frame["uid"].to_numpy()[:-1]])
    parts = [gdf.iloc[a:b] for a, b in zip(cuts[::6], list(cuts[6::6]) + [len(gdf)])]
    ddf = dask_geopandas.from_dask_dataframe(dd.from_delayed([dask.delayed(p) for p in parts],
                                                             meta=gdf.iloc[:0]))
    assert not needs_shuffle(ddf, "uid")
    out = tdask.perturb(ddf, METHODS["tracs-d"], seed=2, time="t").compute()
    expected = perturb_frame(gdf, METHODS["tracs-d"], seed=2, time="t")
    assert out.crs == gdf.crs and out.index.equals(gdf.index)
    assert np.array_equal(out.geometry.x.to_numpy(), expected.geometry.x.to_numpy())
    assert np.array_equal(out.geometry.y.to_numpy(), expected.geometry.y.to_numpy())
