"""Likelihood of TraCS-D / Strawman reports equal to their reference (``_directional._special_likelihood``):
the arc sums by counts over one cyclic run of nodes equal the sums over every (point, node) pair."""

import numpy as np
import pytest

from tracs.estimate import _directional as D
from tracs.evaluation import METHODS, MethodContext
from tracs.mechanisms.closed_forms import circular_half_widths, classical_half_widths
from tracs.perturbers import Strawman
from tracs.region import Rectangle


def _by_pairs(refs, perturber, eps_dir, eps_dist, half_dir, half_r, points, region):
    """The definition: dense (point × node) sums, one report at a time."""
    K, S = points.shape[:2]
    flat = points.reshape(-1, 2)
    grid = (np.arange(D._ARC_NODES) + 0.5) * (2 * np.pi / D._ARC_NODES)
    lik = np.empty((len(refs), K))
    for r, o in enumerate(refs):
        phi, u = region._direction_distance(np.broadcast_to(o, flat.shape), flat)
        left = np.clip(u - half_r[r], 0.0, 1.0 - 2 * half_r[r])
        g0 = np.where(left <= 0.0, 1.0, np.exp(-eps_dist[r]))
        outward = region._exit_distance(np.broadcast_to(o, grid.shape + (2,)), np.cos(grid), np.sin(grid)) <= 0.0
        if not outward.any():
            lik[r] = g0.reshape(K, S).mean(axis=1)
            continue
        if isinstance(perturber, Strawman):
            k = perturber.sectors
            high = (np.minimum((phi / (2 * np.pi / k)).astype(np.int64), k - 1)[:, None]
                    == np.minimum((grid / (2 * np.pi / k)).astype(np.int64), k - 1)[None, :])
        else:
            d = np.abs(phi[:, None] - grid[None, :]) % (2 * np.pi)
            high = np.minimum(d, 2 * np.pi - d) < half_dir[r]
        dens = np.where(high, 1.0, np.exp(-eps_dir[r]))
        lik[r] = (dens[:, outward].sum(axis=1) / dens.sum(axis=1)).reshape(K, S).mean(axis=1)
    return lik


@pytest.mark.parametrize("method", ["tracs-d", "strawman"])
@pytest.mark.parametrize("eps", [0.1, 1.0, 2.0, 4.0, 10.0, 30.0])
def test_special_likelihood_equals_the_pairwise_sums(method, eps):
    """Seed 1, 30 cells × 9 points of [0,2) × [0,10); references at corners, on edges and inside;
    relative tolerance 1e-12."""
    region = Rectangle(0.0, 0.0, 2.0, 10.0)
    perturber = METHODS[method].build(MethodContext(region=region, pois=None, anchor="corner"), eps)
    gen = np.random.default_rng(1)
    points = np.stack([gen.uniform(0, 2, (30, 9)), gen.uniform(0, 10, (30, 9))], axis=-1)
    refs = np.array([[0, 0], [2, 0], [0, 10], [1, 0], [2, 5], [0.3, 10], [1, 5], [2, 10], [0, 3.3]], float)
    eps_dir, eps_dist, inverse = D._split(perturber, np.full(len(refs), eps))
    half_r = classical_half_widths(eps_dist)[inverse]
    half_dir = (circular_half_widths(eps_dir, 2 * np.pi)[inverse] if method == "tracs-d"
                else np.zeros(len(refs)))
    args = (refs, perturber, eps_dir[inverse], eps_dist[inverse], half_dir, half_r, points, region)
    np.testing.assert_allclose(D._special_likelihood(*args), _by_pairs(*args), rtol=1e-12)


@pytest.mark.parametrize("method", ["tracs-d", "strawman"])
@pytest.mark.parametrize("block", [1, 7 * 30 * 9, 1 << 20])
def test_special_likelihood_is_the_same_in_any_blocks(method, block, monkeypatch):
    """Reports worked a block at a time (one, a few, all at once) give the same values bit for bit;
    seed 2, 30 cells × 9 points of [0,2) × [0,10), 40 references on the edges and inside."""
    region = Rectangle(0.0, 0.0, 2.0, 10.0)
    perturber = METHODS[method].build(MethodContext(region=region, pois=None, anchor="corner"), 2.0)
    gen = np.random.default_rng(2)
    points = np.stack([gen.uniform(0, 2, (30, 9)), gen.uniform(0, 10, (30, 9))], axis=-1)
    refs = np.concatenate([np.c_[gen.uniform(0, 2, 20), np.zeros(20)], np.c_[gen.uniform(0, 2, 20),
                                                                           gen.uniform(0, 10, 20)]])
    eps_dir, eps_dist, inverse = D._split(perturber, np.full(len(refs), 2.0))
    half_r = classical_half_widths(eps_dist)[inverse]
    half_dir = (circular_half_widths(eps_dir, 2 * np.pi)[inverse] if method == "tracs-d"
                else np.zeros(len(refs)))
    args = (refs, perturber, eps_dir[inverse], eps_dist[inverse], half_dir, half_r, points, region)
    expected = _by_pairs(*args)
    monkeypatch.setattr(D, "SPECIAL_BLOCK", block)
    got = D._special_likelihood(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    monkeypatch.setattr(D, "SPECIAL_BLOCK", 1 << 20)
    assert np.array_equal(got, D._special_likelihood(*args))
