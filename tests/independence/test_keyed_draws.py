"""The batched keyed draws are bit for bit the draws of ``tracs.random`` (Philox and ChaCha20)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines._draws import PointDraws, as_row_draws
from tracs.perturbers.keyed_draws import uniform_at, words_at
from tracs.random import Secure, point_streams, resolve_streams
from tracs.random.kernels import draw_u64, draw_uniform

OFFSETS = np.array([0, 5, 5, 300, 1000, 1001])
KEYS = ["a", "b", "c", "a", 17]


@pytest.fixture(params=[12, Secure(5)], ids=["philox", "chacha20"])
def streams(request):
    return resolve_streams(request.param, KEYS, len(KEYS))


def test_words_and_uniforms_at_any_draw(streams):
    stream, index = point_streams(streams, OFFSETS)
    draw = np.random.default_rng(0).integers(0, 2**33, len(stream)).astype(np.uint64)
    words = words_at(streams.kind, streams.key, stream, index, draw)
    uniforms = uniform_at(streams.kind, streams.key, stream, index, draw)
    for i in range(0, len(stream), 37):
        assert words[i] == draw_u64(streams.kind, streams.key, stream[i], index[i], draw[i])
        assert uniforms[i] == draw_uniform(streams.kind, streams.key, stream[i], index[i], draw[i])


def test_proposals_equal_separate_draws(streams):
    draws = PointDraws(streams, OFFSETS).at(np.arange(1001), 3)
    local = np.arange(100, 160)
    cand, u = draws.proposals(local, 5, 6, 37)
    j = np.arange(5, 11, dtype=np.uint64)[None, :]
    assert np.array_equal(cand, draws.integers(local[:, None], 2 * j, 37))
    assert np.array_equal(u, draws.uniform(local[:, None], 2 * j + 1))
    assert cand.min() >= 0 and cand.max() < 37


def test_exact_integers_are_uniform():
    """Counts of 120,000 draws in 0..6 (seed 4): a chi-square test at α = 1e-4."""
    from scipy import stats

    draws = as_row_draws(4, 120_000)
    values = draws.integers(np.arange(120_000), 0, 7)
    counts = np.bincount(values, minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_sites_are_checked():
    draws = PointDraws(resolve_streams(1, None, 1), [0, 3])
    with pytest.raises(ValueError, match="site must lie in 0 .. 127"):
        draws.at([0], 128)
    with pytest.raises(ValueError, match="n >= 1"):
        draws.integers([0], 0, 0)
