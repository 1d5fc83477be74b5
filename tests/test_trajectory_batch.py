"""The one batch type (tracs.trajectory_batch.Batch): its checks, its keys kept as written, its GeoDataFrame view."""

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tracs.trajectory_batch import Batch
from tracs.errors import InputError, InputTypeError

COORDS = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])


def test_defaults_one_trajectory_no_keys():
    batch = Batch(COORDS)
    assert len(batch) == 1 and batch.n_points == 4
    assert batch.offsets.dtype == np.int64 and batch.offsets.tolist() == [0, 4]
    assert batch.keys is None and batch.columns == {} and batch.crs is None
    assert batch.first_of_key().tolist() == [True]


def test_keys_kept_exactly_as_given():
    keys = pd.Series(["007", "007", "7", "7"], dtype=object)
    batch = Batch(COORDS, [0, 1, 2, 4], keys=keys)
    assert batch.keys is keys
    assert batch.trajectory_keys().tolist() == ["007", "007", "7"]
    assert batch.first_of_key().tolist() == [True, False, True]
    mixed = Batch(COORDS, [0, 2, 4], keys=["007", "007", 7, 7])
    assert mixed.trajectory_keys().tolist() == ["007", 7]
    arrow = Batch(COORDS, [0, 2, 4], keys=pa.array(["a", "a", "b", "b"]))
    assert arrow.trajectory_keys().tolist() == ["a", "b"]


def test_columns_kept_in_order_and_in_the_geodataframe_view():
    times = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"], dtype="datetime64[ns]")
    batch = Batch(COORDS, [0, 3, 4], keys=np.array([5, 5, 5, 9]), crs="EPSG:32654",
                  columns={"venue": pa.array(["001", "002", None, "004"]), "time": times})
    frame = batch.to_geodataframe()
    assert list(frame.columns) == ["uid", "trajectory", "venue", "time", "geometry"]
    assert frame["venue"].tolist()[:2] == ["001", "002"] and frame["venue"].isna().tolist()[2]
    assert frame["trajectory"].tolist() == [0, 0, 0, 1]
    assert frame.crs.to_epsg() == 32654
    back = Batch.from_geodataframe(frame)
    assert back.offsets.tolist() == [0, 3, 4] and back.keys.tolist() == [5, 5, 5, 9]
    assert list(back.columns) == ["trajectory", "venue", "time"]
    np.testing.assert_array_equal(back.coords, COORDS)


def test_from_geodataframe_runs_of_keys_and_text_ids():
    frame = gpd.GeoDataFrame({"uid": ["007", "007", "7", "7"]},
                             geometry=gpd.points_from_xy(COORDS[:, 0], COORDS[:, 1]), crs=4326)
    batch = Batch.from_geodataframe(frame)
    assert batch.offsets.tolist() == [0, 2, 4]
    assert batch.trajectory_keys().tolist() == ["007", "7"]
    assert batch.crs == frame.crs


def test_an_empty_batch_has_no_trajectory():
    batch = Batch(np.zeros((0, 2)), keys=np.array([], dtype=object))
    assert len(batch) == 0 and batch.offsets.tolist() == [0]
    assert batch.first_of_key().tolist() == [] and batch.trajectory_keys().tolist() == []
    assert len(Batch.from_geodataframe(gpd.GeoDataFrame({"uid": []}, geometry=gpd.points_from_xy([], [])))) == 0


def test_take_rows_keeps_every_column_and_drops_emptied_trajectories():
    keys = pd.Series(["a", "b", "b", "c"], index=[10, 11, 12, 13])
    batch = Batch(COORDS, [0, 1, 3, 4], keys=keys, attrs={"report": "r"},
                  columns={"n": np.arange(4), "t": pa.array(["w", "x", "y", "z"])})
    kept = batch.take_rows(np.array([False, True, False, True]))
    assert kept.offsets.tolist() == [0, 1, 2] and len(batch) - len(kept) == 1
    assert kept.keys.tolist() == ["b", "c"] and kept.keys.index.tolist() == [0, 1]
    assert kept.column("n").tolist() == [1, 3] and kept.column("t").to_pylist() == ["x", "z"]
    assert kept.attrs == {"report": "r"} and kept.column("missing") is None
    assert batch.point_index().tolist() == [0, 0, 1, 0]


def test_with_coords_keeps_rows():
    batch = Batch(COORDS, [0, 1, 4], keys=[1, 1, 2, 2], columns={"a": np.arange(4)}, crs=4326)
    moved = batch.with_coords(COORDS + 1, crs="EPSG:32654")
    assert moved.keys is batch.keys and moved.crs == "EPSG:32654" and list(moved.columns) == ["a"]
    np.testing.assert_array_equal(moved.coords, COORDS + 1)
    assert batch.with_coords(COORDS).crs == 4326


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((np.zeros((0, 2)), [0, 0]), {}, InputError, "empty"),
    ((np.zeros((3, 3)),), {}, InputError, r"shape \(n, 2\)"),
    ((np.array([[0.0, np.nan]]),), {}, InputError, "NaN or infinite"),
    ((np.array([["a", "b"]]),), {}, InputTypeError, "coords"),
    ((COORDS, [0, 2, 2, 4]), {}, InputError, "empty"),
    ((COORDS, [0.0, 4.0]), {}, InputTypeError, "integer array"),
    ((COORDS, [0, 3]), {}, InputError, "from 0 to N=4"),
    ((COORDS,), {"keys": [1, 2]}, InputError, "keys holds 2 values for 4 rows"),
    ((COORDS,), {"keys": "abcd"}, InputTypeError, "one value per row"),
    ((COORDS,), {"keys": np.zeros((4, 2))}, InputError, "one-dimensional"),
    ((COORDS,), {"columns": {"a": np.arange(3)}}, InputError, "column 'a' holds 3 values"),
    ((COORDS,), {"columns": {1: np.arange(4)}}, InputTypeError, "column names must be text"),
])
def test_bad_batches(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        Batch(*args, **kwargs)


@pytest.mark.parametrize("call, error, message", [
    (lambda: Batch(COORDS).trajectory_keys(), InputError, "no keys"),
    (lambda: Batch(COORDS).with_coords(COORDS[:2]), InputError, "must have shape"),
    (lambda: Batch.from_geodataframe(pd.DataFrame({"a": [1]})), InputTypeError, "GeoDataFrame"),
    (lambda: Batch(COORDS).take_rows([2, 1]), InputError, "increasing"),
    (lambda: Batch(COORDS, keys=[1, 1, 1, 1], columns={"uid": np.arange(4)}).to_geodataframe(), InputError,
     "also the name of the keys"),
])
def test_bad_calls(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_trajectories_are_the_geodataframe_view_of_a_batch():
    from tracs import Trajectories

    frame = gpd.GeoDataFrame({"uid": ["007", "007", "7", "7"], "trajectory": [0, 0, 1, 1], "v": [1, 2, 3, 4]},
                             geometry=gpd.points_from_xy(COORDS[:, 0], COORDS[:, 1]), crs=32654)
    trajectories = Trajectories(frame, report="how")
    batch = trajectories.to_batch()
    assert batch.offsets is not trajectories.offsets and batch.offsets.tolist() == [0, 2, 4]
    assert not batch.offsets.flags.writeable and not trajectories.offsets.flags.writeable
    assert batch.trajectory_keys().tolist() == ["007", "7"] and list(batch.columns) == ["trajectory", "v"]
    assert batch.attrs["report"] == "how" and batch.crs == frame.crs
    assert repr(batch) == "Batch(2 trajectories, 4 points, keys=yes, columns: trajectory, v, crs=EPSG:32654)"
    np.testing.assert_array_equal(batch.coords, trajectories.coords)
    back = Trajectories(batch.to_geodataframe())
    assert back.offsets.tolist() == [0, 2, 4] and back.frame["uid"].tolist() == frame["uid"].tolist()
