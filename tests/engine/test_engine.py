"""tracs.engine: every worker count gives the serial output bit for bit.

Batches are small, so chunks are forced small (``MIN_CHUNK_POINTS`` patched to 8)
and every batch is really cut into several chunks run on several threads.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs import engine, metrics
from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.poi_space import POISpace
from tracs.engine import _pool
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.region import ConvexRegion, Rectangle

REGION = Rectangle(0.0, 0.0, 2000.0, 1000.0)
HEXAGON = ConvexRegion([(1000 + 500 * math.cos(a), 500 + 500 * math.sin(a))
                        for a in np.arange(6) * math.pi / 3])
POIS = POISpace(np.random.default_rng(11).uniform((0, 0), (2000, 1000), (60, 2)), region=REGION)


def _methods():
    return {
        "tracs-d": TraCSD(REGION, 2.0),
        "tracs-d-hexagon": TraCSD(HEXAGON, 2.0, anchor="center"),
        "tracs-d-per-trajectory": TraCSD(REGION, epsilon_per_trajectory=8.0),
        "tracs-c": TraCSC(REGION, 2.0),
        "tracs-c-rounded": TraCSC(REGION, 2.0, round_to=POIS),
        "strawman": Strawman(REGION, 2.0),
        "planar-laplace": PlanarLaplace(REGION, 2.0),
        "em": ExponentialMechanism(POIS, 2.0),
        "ngram": NGram(POIS, 2.0),
        "lsrr": LSRR(POIS, 2.0),
        "tp": TP(POIS, 4.0),
        "atp": ATP(POIS, 4.0),
    }


METHODS = _methods()


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(_pool, "MIN_CHUNK_POINTS", 8)


def _batch(region, n_traj=40, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 12, n_traj)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    xmin, ymin, xmax, ymax = region.bounds
    pts = rng.uniform((xmin, ymin), (xmax, ymax), (offsets[-1], 2))
    inside = region.contains(pts)
    pts[~inside] = region.center
    return pts, offsets


@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("workers", [2, 3, -1])
def test_perturb_many_matches_one_worker(name, workers):
    model = METHODS[name]
    region = getattr(model, "region", REGION)
    pts, offsets = _batch(region)
    keys = [f"user{t % 13}" for t in range(len(offsets) - 1)]
    for kw in ({"keys": keys}, {"keys": None}):
        serial = model.perturb_many(pts, offsets, rng=5, **kw)
        parallel = engine.perturb_many(model, pts, offsets, rng=5, workers=workers, **kw)
        assert parallel.dtype == serial.dtype and np.array_equal(parallel, serial), (name, kw)


def _registered():
    from tracs.methods import BASELINE, PERTURBER, view

    return view(PERTURBER, BASELINE)


@pytest.mark.parametrize("name", list(_registered()))
@pytest.mark.parametrize("workers", [1, 3])
def test_every_registered_method_matches_its_serial_call(name, workers):
    """The engine releases what the method's own perturb_many releases, for every registered
    perturber and baseline, per point and per trajectory."""
    from tracs.methods import MethodContext

    ctx = MethodContext(region=REGION, _poi_space=POIS)
    pts, offsets = _batch(REGION)
    keys = [f"user{t % 13}" for t in range(len(offsets) - 1)]
    for per_trajectory, eps in ((False, 3.0), (True, 12.0)):
        model = _registered()[name].build(ctx, eps, per_trajectory=per_trajectory)
        serial = model.perturb_many(pts, offsets, rng=5, keys=keys)
        parallel = engine.perturb_many(model, pts, offsets, rng=5, keys=keys, workers=workers)
        assert np.array_equal(parallel, serial), (name, per_trajectory)


def test_chunks_really_split_the_batch():
    pts, offsets = _batch(REGION)
    chunks = _pool.trajectory_chunks(offsets, 8)
    assert len(chunks) == 8
    assert chunks[0][0] == 0 and chunks[-1][1] == len(offsets) - 1
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))


def test_return_indices_and_lists_match():
    model = METHODS["em"]
    pts, offsets = _batch(REGION)
    serial = model.perturb_many(pts, offsets, rng=1, return_indices=True)
    parallel = engine.perturb_many(model, pts, offsets, rng=1, workers=2, return_indices=True)
    assert np.array_equal(serial[0], parallel[0]) and np.array_equal(serial[1], parallel[1])
    parts = np.split(pts, offsets[1:-1])
    as_list = engine.perturb_many(METHODS["tracs-d"], parts, rng=2, workers=2)
    assert isinstance(as_list, list) and len(as_list) == len(parts)
    assert np.array_equal(np.concatenate(as_list), METHODS["tracs-d"].perturb_many(pts, offsets, rng=2))


def test_resolved_streams_and_fresh_entropy_are_shared_by_every_chunk():
    from tracs.random import resolve_streams

    model = METHODS["tracs-c"]
    pts, offsets = _batch(REGION)
    streams = resolve_streams(None, None, len(offsets) - 1)  # fresh OS entropy, drawn once
    serial = model.perturb_many(pts, offsets, rng=streams)
    assert np.array_equal(engine.perturb_many(model, pts, offsets, rng=streams, workers=2), serial)


def test_a_user_release_does_not_depend_on_the_rest_of_the_batch():
    model = METHODS["tracs-d"]
    pts, offsets = _batch(REGION)
    keys = [f"u{t}" for t in range(len(offsets) - 1)]
    full = engine.perturb_many(model, pts, offsets, rng=9, keys=keys, workers=2)
    t = 17
    alone = model.perturb(pts[offsets[t]:offsets[t + 1]], rng=9, key=keys[t])
    assert np.array_equal(full[offsets[t]:offsets[t + 1]], alone)


def test_rounding_and_metrics_match_serial():
    rng = np.random.default_rng(4)
    pts, offsets = _batch(REGION, n_traj=60)
    released = rng.uniform((0, 0), (2000, 1000), pts.shape)
    coords, idx = engine.round_points(POIS, released, workers=2)
    ref_coords, ref_idx = POIS.round(released)
    assert np.array_equal(coords, ref_coords) and np.array_equal(idx, ref_idx)
    assert np.array_equal(engine.point_errors(pts, released, workers=2), metrics.point_errors(pts, released))
    assert np.array_equal(engine.trajectory_errors(pts, released, offsets, workers=3),
                          metrics.trajectory_errors(pts, released, offsets))
    assert engine.average_error(pts, released, offsets, workers=2) == metrics.average_error(pts, released,
                                                                                            offsets)


def test_bad_input_gets_the_serial_error():
    model = METHODS["tracs-c"]
    with pytest.raises(ValueError, match="offsets must run from 0"):
        engine.perturb_many(model, np.zeros((5, 2)), [0, 3], rng=1, workers=2)
    with pytest.raises(ValueError, match="coords contains NaN"):
        engine.perturb_many(model, np.full((40, 2), np.nan), np.arange(0, 41, 4), rng=1, workers=2)


@pytest.mark.parametrize("workers, error, fragment", [
    (0, ValueError, "positive int"),
    (-2, ValueError, "positive int"),
    (1.5, TypeError, "positive int"),
    (True, TypeError, "positive int"),
    ("2", TypeError, "positive int"),
])
def test_bad_worker_counts(workers, error, fragment):
    with pytest.raises(error, match=fragment):
        engine.resolve_workers(workers)


def test_worker_counts():
    import os

    assert engine.resolve_workers(1) == 1
    assert engine.resolve_workers(3) == 3
    assert engine.resolve_workers(-1) == engine.resolve_workers(None) == (os.cpu_count() or 1)


@pytest.mark.parametrize("lengths, parts", [([5] * 10, 3), ([1, 100, 1, 1], 4), ([0, 0, 7, 0], 2), ([3], 5)])
def test_trajectory_chunks_cover_every_trajectory_once_in_order(lengths, parts):
    offsets = np.r_[0, np.cumsum(lengths)]
    chunks = _pool.trajectory_chunks(offsets, parts, min_points=1)
    assert chunks[0][0] == 0 and chunks[-1][1] == len(lengths)
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(chunks, chunks[1:] + [(chunks[-1][1], None)]))
    assert len(chunks) <= parts


@pytest.mark.parametrize("name", ["tracs-d", "tracs-c-rounded", "ngram", "atp"])
def test_perturb_many_takes_workers(name):
    model = METHODS[name]
    pts, offsets = _batch(getattr(model, "region", REGION))
    keys = [f"user{t % 7}" for t in range(len(offsets) - 1)]
    indices = name != "tracs-d"  # the others also return POI indices
    serial = model.perturb_many(pts, offsets, rng=3, keys=keys, return_indices=indices)
    parallel = model.perturb_many(pts, offsets, rng=3, keys=keys, return_indices=indices, workers=2)
    for a, b in zip(serial if indices else [serial], parallel if indices else [parallel]):
        assert np.array_equal(a, b)


@pytest.fixture
def small_error_chunks(monkeypatch):
    from tracs.engine import batch

    monkeypatch.setattr(batch, "ERROR_CHUNK_POINTS", 16)  # several chunks even on one worker


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("normalize_by", [None, REGION])
def test_errors_in_chunks_match_serial(workers, normalize_by, small_error_chunks):
    rng = np.random.default_rng(7)
    pts, offsets = _batch(REGION, n_traj=80)
    released = rng.uniform((0, 0), (2000, 1000), pts.shape)
    kw = {"normalize_by": normalize_by}
    assert np.array_equal(engine.trajectory_errors(pts, released, offsets, workers=workers, **kw),
                          metrics.trajectory_errors(pts, released, offsets, **kw))
    assert engine.average_error(pts, released, offsets, workers=workers, **kw) == \
        metrics.average_error(pts, released, offsets, **kw)
    assert np.array_equal(engine.point_errors(pts, released, workers=workers, **kw),
                          metrics.point_errors(pts, released, **kw))
    ints = np.round(pts).astype(np.int64)  # integer input is converted chunk by chunk, as serially
    assert engine.average_error(ints, released, offsets, workers=workers) == metrics.average_error(ints, released,
                                                                                                    offsets)


@pytest.mark.parametrize("workers", [1, 2])
def test_rounding_matches_serial_on_one_and_two_workers(workers):
    released = np.random.default_rng(8).uniform((0, 0), (2000, 1000), (500, 2))
    coords, idx = engine.round_points(POIS, released, workers=workers)
    ref_coords, ref_idx = POIS.round(released)
    assert np.array_equal(coords, ref_coords) and np.array_equal(idx, ref_idx) and idx.dtype == ref_idx.dtype


@pytest.mark.parametrize("name", ["tracs-c", "tracs-d", "strawman", "tracs-c-rounded"])
def test_perturb_many_checks_points_chunk_by_chunk_on_one_and_two_workers(name):
    pts, offsets = _batch(REGION, n_traj=60)
    keys = np.arange(60) + 500
    ref = METHODS[name].perturb_many(pts, offsets, rng=9, keys=keys)
    for workers in (1, 2):
        assert np.array_equal(engine.perturb_many(METHODS[name], pts, offsets, rng=9, keys=keys, workers=workers),
                              ref)


def _with(pts, row, value):
    out = pts.copy()
    out[row] = value
    return out


BATCH, OFFSETS = _batch(REGION, n_traj=60)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("call, error, fragment", [
    (lambda w: engine.perturb_many(METHODS["tracs-c"], _with(BATCH, -3, np.nan), OFFSETS, rng=1, workers=w),
     ValueError, "coords contains NaN or infinite values"),
    (lambda w: engine.perturb_many(METHODS["tracs-c"], _with(BATCH, -3, (5000.0, 10.0)), OFFSETS, rng=1,
                                   workers=w), ValueError, "1 point\\(s\\) of coords lie outside the region"),
    (lambda w: engine.perturb_many(METHODS["tracs-c-rounded"], _with(BATCH, 2, np.inf), OFFSETS, rng=1,
                                   workers=w), ValueError, "coords contains NaN or infinite values"),
    (lambda w: engine.average_error(BATCH, _with(_with(BATCH, 1, np.nan), -1, np.nan), OFFSETS, workers=w),
     ValueError, "perturbed contains 4 NaN or infinite value\\(s\\)"),
    (lambda w: engine.trajectory_errors(BATCH, BATCH, np.r_[OFFSETS[:3], OFFSETS[2:]], workers=w),
     ValueError, "1 trajectory\\(ies\\) are empty"),
    (lambda w: engine.point_errors(_with(BATCH, 0, np.nan), BATCH, workers=w),
     ValueError, "true contains 2 NaN or infinite value\\(s\\)"),
    (lambda w: engine.round_points(POIS, _with(BATCH, -1, np.nan), workers=w),
     ValueError, "NaN"),
])
def test_bad_values_get_the_serial_error_counting_the_whole_batch(workers, call, error, fragment,
                                                                  small_error_chunks):
    with pytest.raises(error, match=fragment):
        call(workers)
