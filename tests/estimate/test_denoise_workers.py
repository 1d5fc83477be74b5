"""``denoise(..., workers=N)``: threads over fixed chunks, the output bit-identical for every N."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.errors import InputError, InputTypeError
from tracs.estimate import _directional, density, denoising, poi_posterior, smoothing
from tracs.estimate._laplace_integrals import edge_tables
from tracs.estimate.denoising import denoise, smooth_trajectories
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)
#: trajectories of 15 to 45 points (uneven lengths: TraCS-C with a per-trajectory budget has several ε)
LENGTHS = np.tile([15, 30, 45, 20], 8)
MAKERS = {
    "tracs-c": lambda: TraCSC(REGION, 2.0),
    "tracs-c-per-trajectory": lambda: TraCSC(REGION, epsilon_per_trajectory=40.0),
    "tracs-d": lambda: TraCSD(REGION, 2.0),
    "strawman": lambda: Strawman(REGION, 2.0),
    "planar-laplace": lambda: PlanarLaplace(REGION, 2.0),
}
POIS = np.random.default_rng(11).uniform([0, 0], [2, 1], (40, 2))
CALLS = {
    "point": {},
    "trajectory": {"trajectory": True},
    "trajectory-given": {"trajectory": True, "scale": 0.3, "jump": 0.2},
    "pois-mean": {"pois": POIS},
    "pois-mode-em": {"pois": POIS, "rule": "mode", "iterations": 2},
    "pois-trajectory": {"pois": POIS, "trajectory": True},
}


@pytest.fixture(scope="module")
def releases():
    """Every family's release of 1,000 points (seeds 12, 13) and its 6×4 estimate."""
    off = np.concatenate([[0], np.cumsum(LENGTHS)])
    rng = np.random.default_rng(12)
    steps = rng.normal(0.0, 0.05, (off[-1], 2))
    steps[off[:-1]] = rng.uniform([0.3, 0.2], [1.7, 0.8], (len(LENGTHS), 2))  # every walk's start
    walks = np.concatenate([np.cumsum(steps[a:b], axis=0) for a, b in zip(off[:-1], off[1:])])
    pts = np.clip(walks, [0.0, 0.0], [2.0, 1.0])
    out = {}
    for name, make in MAKERS.items():
        pert = make()
        rep = pert.perturb_many(pts, off, rng=13)
        out[name] = (rep, pert, density(rep, pert, offsets=off, grid=(6, 4)), off)
    return out


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few reports: the small release runs over several of them on every path."""
    monkeypatch.setattr(_directional, "CHUNK", 128)
    monkeypatch.setattr(smoothing, "CHUNK_CELLS", 96 * 24)
    monkeypatch.setattr(poi_posterior, "CHUNK", 200)
    monkeypatch.setattr(denoising, "ROW_ENTRIES", 150 * 96)


def _cases():
    for name in MAKERS:
        for call in CALLS:
            if name == "planar-laplace" and "trajectory" in call:
                continue  # planar Laplace is denoised per point only
            yield name, call


@pytest.mark.parametrize("name, call", list(_cases()))
def test_every_number_of_workers_gives_the_same_points(releases, small_chunks, name, call):
    rep, pert, est, off = releases[name]
    one = denoise(rep, pert, est, offsets=off, workers=1, **CALLS[call])
    assert one.shape == rep.shape
    for workers in (2, 3):
        assert np.array_equal(denoise(rep, pert, est, offsets=off, workers=workers, **CALLS[call]), one), workers


@pytest.mark.parametrize("name, call", list(_cases()))
def test_one_worker_is_the_default_and_the_chunks_change_nothing(releases, monkeypatch, name, call):
    # the default (workers=1, the output before ``workers`` existed) with the modules' own chunks,
    # against one worker over chunks of a few reports where the chunks add nothing up: the runs'
    # and the POI posterior's (the smoother's log-likelihoods are sums over its chunks, and planar
    # Laplace's means are BLAS products whose rounding follows the rows per product)
    rep, pert, est, off = releases[name]
    default = denoise(rep, pert, est, offsets=off, **CALLS[call])
    monkeypatch.setattr(_directional, "CHUNK", 128)
    monkeypatch.setattr(poi_posterior, "CHUNK", 200)
    assert np.array_equal(denoise(rep, pert, est, offsets=off, workers=1, **CALLS[call]), default)


def test_smooth_trajectories_takes_workers(releases, small_chunks):
    rep, pert, est, off = releases["tracs-d"]
    one = smooth_trajectories(rep, pert, est, offsets=off)
    two = smooth_trajectories(rep, pert, est, offsets=off, workers=2)
    assert np.array_equal(one.points, two.points)
    assert (one.scale, one.jump, one.log_likelihood) == (two.scale, two.jump, two.log_likelihood)


BAD_WORKERS = [
    (0, InputError, "workers must be >= 1, got 0"),
    (-1, InputError, "workers must be >= 1, got -1"),
    (1.5, InputTypeError, "workers must be an int, got float"),
    (True, InputTypeError, "workers must be an int, got bool"),
    ("2", InputTypeError, "workers must be an int, got str"),
]


@pytest.mark.parametrize("workers, exc, message", BAD_WORKERS)
@pytest.mark.parametrize("call", ["point", "trajectory", "pois-mean"])
def test_bad_workers(releases, workers, exc, message, call):
    rep, pert, est, off = releases["tracs-c"]
    with pytest.raises(exc) as info:
        denoise(rep, pert, est, offsets=off, workers=workers, **CALLS[call])
    assert str(info.value) == message
    with pytest.raises(exc) as info:  # the message density gives for the same value
        density(rep, pert, offsets=off, grid=(6, 4), workers=workers)
    assert str(info.value) == message


@pytest.mark.parametrize("workers, exc, message", BAD_WORKERS)
def test_bad_workers_of_smooth_trajectories(releases, workers, exc, message):
    rep, pert, est, off = releases["tracs-c"]
    with pytest.raises(exc) as info:
        smooth_trajectories(rep, pert, est, offsets=off, workers=workers)
    assert str(info.value) == message


@pytest.mark.parametrize("cells", [8, 12, 128])
def test_edge_tables_pieces_do_not_depend_on_their_reach(cells):
    # planar Laplace: every thread makes its own edge tables, reaching as far as the chunk that made
    # them; the pieces they share are the same bits, so every report's row is the same for any workers
    u = (np.arange(cells) + 0.5) / cells * 3.0
    _, first = edge_tables(u, 0.4)
    for reach in (1.0, 6.0, 6.1, 50.0, 400.0):
        _, coefs = edge_tables(u, reach)
        assert coefs.shape[1] >= first.shape[1]
        assert np.array_equal(coefs[:, :first.shape[1]], first), reach
