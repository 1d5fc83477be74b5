"""A ``tracs.Batch`` through the engine: ``perturb_many(batch)`` (the engine's and every releaser's)
releases bit for bit what :func:`tracs.release.release_points` releases with the same seed, for every
registered perturber and baseline, and returns the batch at the released points."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import methods
from tracs._validation import as_batch
from tracs.engine import perturb_many
from tracs.errors import InputTypeError
from tracs.methods import MethodContext
from tracs.region import Rectangle
from tracs.release import release_points
from tracs.trajectory_batch import Batch

REGION = Rectangle(0.0, 0.0, 1000.0, 800.0)
POIS = np.random.default_rng(1).uniform([0, 0], [1000, 800], (50, 2))
RELEASERS = list(methods.view(methods.PERTURBER, methods.BASELINE))


def _batch(ids):
    """Two trajectories per user, ids as written, a column and attrs."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 20, 2 * len(ids))
    offsets = np.r_[0, np.cumsum(lengths)]
    coords = rng.uniform([1, 1], [999, 799], (offsets[-1], 2))
    keys = np.repeat(np.repeat(np.asarray(ids, dtype=object), 2), lengths)
    return Batch(coords, offsets, keys=keys, columns={"speed": np.arange(offsets[-1], dtype=float)},
                 crs="EPSG:32633", attrs={"report": "kept"})


def test_every_shipped_releaser_is_listed():
    assert {"tracs-d", "tracs-c", "strawman", "planar-laplace", "em", "ngram", "lsrr", "atp", "tp"} <= set(RELEASERS)


@pytest.mark.parametrize("name", RELEASERS)
@pytest.mark.parametrize("ids", [["007", "7", "a", "b"], [7, 3, 11, 5]], ids=["text", "integers"])
def test_perturb_many_of_a_batch_is_release_points(name, ids):
    batch = _batch(ids)
    releaser = methods.get(name).build(MethodContext(region=REGION, pois=POIS), 2.0)
    expected = release_points(releaser, batch, rng=9, seed=9, chunk_points=16).coords
    for out in (perturb_many(releaser, batch, rng=9, keyed=methods.get(name).keyed, workers=2),
                releaser.perturb_many(batch, rng=9)):
        assert isinstance(out, Batch)
        np.testing.assert_array_equal(out.coords, expected)
        np.testing.assert_array_equal(out.offsets, batch.offsets)
        assert out.keys is batch.keys and out.column("speed") is batch.column("speed")
        assert out.crs == batch.crs and out.attrs == {"report": "kept"}


def test_the_array_signature_is_unchanged():
    batch = _batch(["a", "b"])
    releaser = methods.get("tracs-d").build(MethodContext(region=REGION), 2.0)
    out = releaser.perturb_many(batch.coords, batch.offsets, rng=4, keys=batch.stream_keys())
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, releaser.perturb_many(batch, rng=4).coords)
    baseline = methods.get("em").build(MethodContext(region=REGION, pois=POIS), 2.0)
    released, indices = perturb_many(baseline, batch, rng=4, return_indices=True)
    np.testing.assert_array_equal(released.coords, POIS[indices])
    np.testing.assert_array_equal(released.coords, baseline.perturb_many(batch.coords, batch.offsets, rng=4,
                                                                         keys=batch.stream_keys()))


def test_a_batch_without_keys_draws_by_position():
    batch = _batch(["a", "b"])
    bare = Batch(batch.coords, batch.offsets)
    releaser = methods.get("tracs-c").build(MethodContext(region=REGION), 2.0)
    np.testing.assert_array_equal(releaser.perturb_many(bare, rng=3).coords,
                                  releaser.perturb_many(bare.coords, bare.offsets, rng=3))


@pytest.mark.parametrize("call, message", [
    (lambda r, b: r.perturb_many(b, b.offsets, rng=1), "give offsets or a tracs.Batch"),
    (lambda r, b: perturb_many(r, b, b.offsets, rng=1), "give offsets or a tracs.Batch"),
    (lambda r, b: r.perturb_many(b, rng=1, keys=["x"] * len(b)), "give keys or a tracs.Batch with keys"),
    (lambda r, b: as_batch(b, b.offsets), "give offsets or a tracs.Batch"),
])
def test_a_batch_with_its_own_offsets_or_keys_again_is_refused(call, message):
    releaser = methods.get("tracs-d").build(MethodContext(region=REGION), 2.0)
    with pytest.raises(InputTypeError, match=message):
        call(releaser, _batch(["a", "b"]))


def test_as_batch_takes_a_batch_as_it_is():
    batch = _batch(["a"])
    coords, offsets, as_list = as_batch(batch)
    assert coords is batch.coords and offsets is batch.offsets and as_list is False


def test_stream_keys_keep_text_numbers_and_bytes_as_they_are():
    assert Batch(np.zeros((3, 2)), [0, 1, 2, 3], keys=["007", 7, b"7"]).stream_keys() == ["007", "7", b"7"]
    assert Batch(np.zeros((2, 2)), [0, 1, 2], keys=np.array([7, 8])).stream_keys().dtype.kind == "i"
