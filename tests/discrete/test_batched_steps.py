"""Compiled batch steps of the baselines give the same releases as the per-row reference computations.

ATP's radius reports (one Square Wave release per trajectory under its own key) and
TP's merge scan (all POIs on a segment) are computed for a whole batch at once; here
they are compared, bit for bit, with the per-trajectory ``SquareWave.sample`` call
and with the NumPy segment test.  Seeds and sizes are fixed; no tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines._draws import PointDraws
from tracs.baselines._exponential_sampler import sample_em
from tracs.baselines._radius import square_wave_per_key
from tracs.baselines._segment import on_segment, pick_on_segments
from tracs.mechanisms import SquareWave
from tracs.random import RandomKey, Secure, resolve_streams


def _row_draws(rng, n, site=6):
    streams = resolve_streams(rng, [f"user-{t}" for t in range(n)], n)
    return PointDraws(streams, np.arange(n + 1)).at(np.arange(n), site)


@pytest.mark.parametrize("rng", [3, Secure(5)], ids=["philox", "chacha20"])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 31.0])
def test_radius_reports_equal_one_call_per_trajectory(rng, epsilon):
    n = 300
    values = np.random.default_rng(0).uniform(0.0, 5000.0, n)
    values[:3] = (0.0, 5000.0, 2500.0)  # the interval's ends and middle
    draws = _row_draws(rng, n)
    mech = SquareWave(epsilon=epsilon, low=0.0, high=5000.0)
    keys = draws.keys(np.arange(n))
    batched = square_wave_per_key(mech, values, draws.source.kind, keys)
    one_by_one = np.array([mech.sample(values[t:t + 1], rng=seed)[0]
                           for t, seed in enumerate(draws.seeds(np.arange(n)))])
    np.testing.assert_array_equal(batched, one_by_one)
    assert isinstance(draws.seeds([0])[0], RandomKey)


def test_segment_scan_equals_the_numpy_test():
    rng = np.random.default_rng(1)
    points = np.round(rng.uniform(0, 100, (400, 2)))  # a grid: many POIs exactly on segments
    a_idx, b_idx = rng.integers(0, 400, 200), rng.integers(0, 400, 200)
    keep = a_idx != b_idx
    a, b = points[a_idx[keep]], points[b_idx[keep]]
    tol = 1e-9 * 150.0
    draws = _row_draws(7, len(a), site=30)
    picked = pick_on_segments(points, a, b, tol, draws)
    ok = on_segment(points[None, :, 0], points[None, :, 1], a[:, None, :], b[:, None, :], tol)
    count = ok.sum(axis=1)
    assert count.min() >= 2 and count.max() > 2  # both ends always; some segments hold more
    choice = draws.integers(np.arange(len(a)), 0, count)
    expected = np.argmax(np.cumsum(ok, axis=1) > choice[:, None], axis=1)
    np.testing.assert_array_equal(picked, expected)


def test_compiled_rejection_equals_the_blocked_sampler():
    """EM without a candidate set: the compiled pass and the blocked NumPy pass pick the same POIs."""
    from tracs.baselines import _exponential_sampler as _em

    rng = np.random.default_rng(2)
    points = rng.uniform(0, 1000, (500, 2))
    x = points[rng.integers(0, 500, 400)]
    scale = np.full(400, 4.0 / (2 * 1414.0))
    fast = sample_em(points, x, scale, _row_draws(11, 400, site=0))
    out, done = np.zeros(400, dtype=np.intp), np.zeros(400, dtype=bool)
    _em._rejection(points, x, scale, _row_draws(11, 400, site=0), None, max(32, 500 // 8), out, done)
    rest = np.flatnonzero(~done)
    if rest.size:
        _em._inverse_cdf(points, x, scale, _row_draws(11, 400, site=0), None, None, rest, out)
    np.testing.assert_array_equal(fast, out)


def test_compiled_candidate_sets_equal_their_numpy_tests():
    """Disc and Sectors (TP's target sets) give the NumPy tests' masks, for blocks and shared rows."""
    from tracs.baselines._exponential_sampler import Disc
    from tracs.baselines._sectors import Sectors

    rng = np.random.default_rng(4)
    points = rng.uniform(0, 1000, (300, 2))
    n = 50
    disc = Disc(points, points[rng.integers(0, 300, n)], rng.uniform(0, 400, n) ** 2)
    k = rng.choice([2, 4, 6, 12], n)
    reports = [(rng.random(n) < 0.8, points[rng.integers(0, 300, n)], rng.integers(0, 12, n) % k)
               for _ in range(2)]
    rows = np.arange(n)
    for accept in (disc, Sectors(points, k, reports), Sectors(points, k, reports, disc)):
        for cand in (rng.integers(0, 300, (n, 40)), np.arange(300)[None, :]):
            mask = accept(rows, cand)
            np.testing.assert_array_equal(mask, accept.reference(rows, cand))
            assert mask.any() and not mask.all()
