"""The release paths that build their own batch (``tracs.gdf.perturb_gdf``, ``tracs.dask.perturb_frame``,
``tracs.evaluation.run_grid``) release a ``tracs.Batch`` through the engine, keyed as the registry says:
their outputs for fixed seeds are bit for bit those of the code before they did (the digests below were
recorded with the earlier code, which passed per-trajectory key lists to the engine itself)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from tracs import evaluation, methods
from tracs.dask.frames import perturb_frame
from tracs.gdf import perturb_gdf
from tracs.methods import MethodContext
from tracs.region import Rectangle

gpd = pytest.importorskip("geopandas")

#: BLAKE2b (8 bytes) of the released float64 coordinates (or of a grid's ``ae`` column), recorded before
RECORDED = {
    "dask/tracs-d/int": "4b957bcc638d1847",
    "gdf/tracs-d/int": "15aed788be20fe2c",
    "dask/tracs-d/str": "53e86d3235334155",
    "gdf/tracs-d/str": "3e7bfde0343e79e1",
    "dask/tracs-c/int": "dc18fcd716f2a3db",
    "gdf/tracs-c/int": "88730195e3956286",
    "dask/tracs-c/str": "ae54a3afff2e2e4a",
    "gdf/tracs-c/str": "ba7adffb27601f52",
    "dask/strawman/int": "f3b2fec463c78c23",
    "gdf/strawman/int": "afba8d9e0b295a39",
    "dask/strawman/str": "7acb7a521dacb0f5",
    "gdf/strawman/str": "298bb5d20cd5457e",
    "dask/planar-laplace/int": "33c811f63eab271d",
    "gdf/planar-laplace/int": "edfb282143f5c257",
    "dask/planar-laplace/str": "28786109a37468cd",
    "gdf/planar-laplace/str": "c91706a8cc6eee8a",
    "dask/tracs-d-paper/int": "4318e2353c7e271d",
    "gdf/tracs-d-paper/int": "d7fc8e9a27f322eb",
    "dask/tracs-d-paper/str": "7f7221ee29afbcb6",
    "gdf/tracs-d-paper/str": "b74bcafa28fa5877",
    "dask/em/int": "78d9f7a52f20a5f7",
    "dask/em/str": "39a146171b57c5b2",
    "dask/ngram/int": "cc15a58bde074479",
    "dask/ngram/str": "1e55e2e2476e1958",
    "dask/lsrr/int": "a80e6a6a1e4ae713",
    "dask/lsrr/str": "b10509478d6161cd",
    "dask/lsrr-thresholds/int": "ca849e52dd1310e8",
    "dask/lsrr-thresholds/str": "90babe9a3776a007",
    "dask/atp/int": "bfe828145052c2fa",
    "dask/atp/str": "dbb27f598e4f6bba",
    "dask/tp/int": "eaca3e962e753019",
    "dask/tp/str": "ba8ddc9221d7ca7f",
    "grid keys": "c81500b8c598788f",
    "grid nokeys": "249664f72e0ab197",
    "dask float": "2b3ef78b8944e97f",
    "dask bytes": "3ef0bad7f73747bf"
}

N = 60
_rng = np.random.default_rng(5)
XY = _rng.uniform(100, 900, (N, 2))
USERS = {"int": np.repeat([7, 3, 11, 5], 15), "str": np.repeat(["007", "b", "7", "a"], 15)}
REGION = Rectangle(0, 0, 1000, 1000)
POIS = _rng.uniform(0, 1000, (40, 2))
CTX = MethodContext(region=REGION, pois=POIS)
GRID = "tracs-d,tracs-c,strawman,planar-laplace,tracs-d-paper,em,ngram,lsrr,lsrr-thresholds,atp,tp"


def _digest(values) -> str:
    data = np.ascontiguousarray(np.asarray(values, dtype=np.float64)).tobytes()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _frame(tag):
    return pd.DataFrame({"uid": USERS[tag], "x": XY[:, 0], "y": XY[:, 1], "t": np.arange(N) % 15})


@pytest.mark.parametrize("tag", ["int", "str"])
@pytest.mark.parametrize("name", sorted({k.split("/")[1] for k in RECORDED if k.startswith("dask/")}))
def test_dask_frames_release_as_recorded(name, tag):
    releaser = methods.get(name).build(CTX, 2.0)
    out = perturb_frame(_frame(tag), releaser, seed=9, user="uid", time="t", x="x", y="y")
    assert _digest(out[["x", "y"]].to_numpy()) == RECORDED[f"dask/{name}/{tag}"]


@pytest.mark.parametrize("tag", ["int", "str"])
@pytest.mark.parametrize("name", sorted({k.split("/")[1] for k in RECORDED if k.startswith("gdf/")}))
def test_perturb_gdf_releases_as_recorded(name, tag):
    releaser = methods.get(name).build(CTX, 2.0)
    frame = gpd.GeoDataFrame(_frame(tag), geometry=gpd.points_from_xy(XY[:, 0], XY[:, 1]), crs="EPSG:32633")
    out = perturb_gdf(frame, releaser, rng=9, user="uid", time="t")
    assert _digest(np.column_stack([out.geometry.x, out.geometry.y])) == RECORDED[f"gdf/{name}/{tag}"]


@pytest.mark.parametrize("ids, tag", [(np.repeat([7.0, 3.5, 11.0, 5.0], 15), "float"),
                                      (np.repeat([b"a", b"b", b"7", b"5"], 15), "bytes")])
def test_dask_frames_keep_the_streams_of_float_and_bytes_ids(ids, tag):
    releaser = methods.get("tracs-d").build(CTX, 2.0)
    frame = pd.DataFrame({"uid": ids, "x": XY[:, 0], "y": XY[:, 1]})
    assert _digest(perturb_frame(frame, releaser, seed=9, x="x", y="y")[["x", "y"]].to_numpy()) == \
        RECORDED[f"dask {tag}"]


@pytest.mark.parametrize("keys, tag", [(np.array(["007", "b", "7", "a"], dtype=object), "keys"), (None, "nokeys")])
def test_run_grid_releases_as_recorded(keys, tag):
    data = evaluation.Dataset(name="t", region=REGION, offsets=np.array([0, 10, 25, 40, 60]), coords=XY,
                              pois=POIS, keys=keys)
    result = evaluation.run_grid(data, GRID, [1.0, 4.0], repetitions=2, seed=3, progress=False)
    assert _digest(result["ae"].to_numpy()) == RECORDED[f"grid {tag}"]


def test_a_dataset_gives_each_repetition_as_a_batch():
    data = evaluation.Dataset(name="t", region=REGION, offsets=np.array([0, 10, 25, 40, 60]), coords=XY,
                              keys=np.array(["007", "b", "7", "a"], dtype=object))
    batch = data.batch()
    np.testing.assert_array_equal(batch.coords, XY)
    np.testing.assert_array_equal(batch.offsets, data.offsets)
    assert batch.stream_keys() == ["007", "b", "7", "a"] and batch.keys[10] == "b"
    assert evaluation.Dataset(name="t", region=REGION, offsets=np.array([0, 60]), coords=XY).batch().keys is None
