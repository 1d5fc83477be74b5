"""tracs.release: the one release of a grouped batch (chunks of whole users through the engine) and
its public record; bit for bit the releaser's own perturb_many."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tracs.trajectory_batch import Batch
from tracs.errors import InputError, InputTypeError
from tracs.methods import MethodContext, get
from tracs.region import Rectangle
from tracs.release import Released, chunks, perturb_parameters, release_points, user_keys, write_perturb_sidecar

REGION = Rectangle(0.0, 0.0, 1000.0, 800.0)


def _batch(seed=0, users=12):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, users * 2)
    owners = np.repeat(np.arange(users), 2)  # two trajectories per user
    offsets = np.r_[0, np.cumsum(lengths)]
    coords = rng.uniform([1, 1], [999, 799], (offsets[-1], 2))
    ids = np.array([f"{u:03d}" for u in owners], dtype=object)
    return Batch(coords, offsets, keys=np.repeat(ids, lengths)), ids


@pytest.mark.parametrize("name, per_trajectory", [("tracs-d", False), ("tracs-c", True), ("planar-laplace", False),
                                                   ("ngram", False)])
@pytest.mark.parametrize("chunk_points", [None, 1, 40])
def test_chunks_of_whole_users_give_the_releasers_own_batch(name, per_trajectory, chunk_points):
    batch, ids = _batch()
    coords, offsets = batch.coords, batch.offsets
    pois = np.random.default_rng(1).uniform([0, 0], [1000, 800], (50, 2))
    model = get(name).build(MethodContext(region=REGION, pois=pois), 4.0, per_trajectory=per_trajectory)
    seen = []
    done = release_points(model, batch, rng=9, workers=2, chunk_points=chunk_points, progress=seen.append)
    expected = model.perturb_many(coords, offsets, rng=9, keys=list(ids))
    np.testing.assert_array_equal(done.coords, expected)
    assert sum(seen) == len(coords) and (chunk_points != 1 or len(seen) == 12)  # size 1: a chunk per user
    lengths = np.diff(offsets)
    np.testing.assert_array_equal(done.epsilon_point, np.repeat(model.epsilon_per_point(lengths), lengths))
    np.testing.assert_allclose(np.add.reduceat(done.epsilon_point, offsets[:-1]),
                               done.epsilon_trajectory[offsets[:-1]])


def test_rounding_is_the_nearest_poi_of_the_release():
    batch, _ = _batch(2)
    ctx = MethodContext(region=REGION, pois=np.random.default_rng(3).uniform([0, 0], [1000, 800], (40, 2)))
    model = get("tracs-c").build(ctx, 2.0)
    raw = release_points(model, batch, rng=4)
    rounded = release_points(model, batch, rng=4, round_to=ctx.poi_space)
    np.testing.assert_array_equal(rounded.coords, ctx.poi_space.round(raw.coords)[0])


class _Unkeyed:
    """A releaser without keyed streams: one generator for the whole batch."""

    def __init__(self):
        self.calls = []

    def epsilon_per_point(self, lengths):
        return np.full(np.shape(lengths), 1.0)

    def perturb_many(self, coords, offsets, *, rng=None):
        self.calls.append(len(coords))
        return coords + rng.normal(size=coords.shape)


def test_a_releaser_without_keyed_streams_gets_one_batch_and_one_generator():
    batch, _ = _batch(4)
    coords = batch.coords
    model = _Unkeyed()
    done = release_points(model, Batch(coords, batch.offsets), rng=5, seed=5, chunk_points=1)  # no keys needed
    assert model.calls == [len(coords)]
    np.testing.assert_array_equal(done.coords, coords + np.random.default_rng(5).normal(size=coords.shape))
    assert isinstance(done, Released)


@pytest.mark.parametrize("batch, error, message", [
    ((np.zeros((2, 2)), np.array([0, 2])), InputTypeError, "must be a tracs.Batch, got tuple"),
    (Batch(np.ones((2, 2))), InputError, "this batch has no keys"),
])
def test_bad_batches_of_a_keyed_releaser(batch, error, message):
    model = get("tracs-d").build(MethodContext(region=REGION), 2.0)
    with pytest.raises(error, match=message):
        release_points(model, batch, rng=1)


def test_chunks_cut_only_where_a_user_starts_and_keys_keep_ids_as_written():
    assert chunks(np.array([0, 5, 9, 20]), np.array([True, False, True]), 7) == [(0, 2), (2, 3)]
    assert user_keys(np.array(["007", 7], dtype=object)) == ["007", "7"]
    assert user_keys(np.array([7, 8])).dtype.kind == "i"


def test_the_sidecar_is_written_from_the_public_parameters(tmp_path):
    model = get("tracs-d").build(MethodContext(region=REGION, anchor=(10.0, 20.0)), 2.0)
    data = perturb_parameters("tracs-d", 2.0, model, REGION, "EPSG:32654", split_gap="3h", anchor_given=True)
    assert (data["method"], data["epsilon"], data["sources"]) == ("tracs-d", 2.0, {"region": "public",
                                                                                  "anchor": "public"})
    path = write_perturb_sidecar(tmp_path / "out.csv", data, digest="0" * 64)
    written = json.loads(path.read_text())
    assert path.name == "out.csv.tracs.json" and written["method"] == "tracs-d"
