"""The synthesis utility metrics on hand-computed cases, and their bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.evaluation.synthesis_metrics import (METRICS, coverage_kendall_tau, density_error, every_metric,
                                                hotspot_ndcg, jensen_shannon, length_error, query_error,
                                                transition_error, trip_error)

LN2 = np.log(2.0)
BOX = (0.0, 0.0, 2.0, 2.0)  # a 2 × 2 grid of unit cells with cells=2: cell = 2·iy + ix


def test_jensen_shannon_by_hand():
    assert jensen_shannon([1, 0], [0, 1]) == pytest.approx(LN2)
    assert jensen_shannon([3, 1], [6, 2]) == pytest.approx(0.0, abs=1e-15)
    # p = (1, 0), q = (½, ½): m = (¾, ¼); ½·log(4/3) + ½·(½ log(2/3) + ½ log 2)
    expected = 0.5 * np.log(4 / 3) + 0.5 * (0.5 * np.log(0.5 / 0.75) + 0.5 * np.log(0.5 / 0.25))
    assert jensen_shannon([1, 0], [1, 1]) == pytest.approx(expected)


def test_density_error_by_hand():
    true = np.array([[0.5, 0.5], [0.5, 0.5], [1.5, 0.5], [1.5, 1.5]])  # shares ½, ¼, 0, ¼
    assert density_error(true, true[[0, 2, 3, 0, 0, 2, 3, 0]], BOX, cells=2) == pytest.approx(0.0, abs=1e-15)
    assert density_error(true, [[0.5, 1.5]], BOX, cells=2) == pytest.approx(LN2)


def test_query_error_uses_shares_and_the_sanity_bound():
    true = np.array([[0.25, 0.25]] * 3 + [[1.75, 1.75]])
    # the same shares at twice the size: no error for any rectangle
    assert query_error(true, np.repeat(true, 2, axis=0), BOX, rng=1) == pytest.approx(0.0)
    # every point moved to the opposite corner: a rectangle holding share s of the true points
    # (and none of the synthetic) errs by s / max(s, δ); one holding none but share t errs t / δ
    other = np.array([[1.75, 0.25]])
    from tracs.query_metrics import random_range_queries, range_query_counts

    q = random_range_queries(BOX, 500, size=(0.05, 0.2), rng=7)
    s = range_query_counts(true, q) / 4
    t = range_query_counts(other, q) / 1
    expected = np.mean(np.abs(s - t) / np.maximum(s, 0.01))
    assert query_error(true, other, BOX, rng=7, sanity=0.01) == pytest.approx(expected)


def test_hotspot_ndcg_by_hand():
    true = np.array([[0.5, 0.5]] * 3 + [[1.5, 0.5]] * 2 + [[0.5, 1.5]])  # counts 3, 2, 1, 0
    assert hotspot_ndcg(true, true, BOX, cells=2, k=2) == pytest.approx(1.0)
    # synthetic ranking: cell 3 (0 true), then cell 2 (1 true): DCG = 0 + 1/log2 3; ideal 3 + 2/log2 3
    syn = np.array([[1.5, 1.5]] * 5 + [[0.5, 1.5]] * 4)
    assert hotspot_ndcg(true, syn, BOX, cells=2, k=2) == pytest.approx((1 / np.log2(3)) / (3 + 2 / np.log2(3)))


def test_trip_and_transition_errors_by_hand():
    pts = np.array([[0.5, 0.5], [1.5, 0.5], [1.5, 1.5], [0.5, 1.5], [0.5, 0.5]])
    off = np.array([0, 3, 5])  # trips (0 -> 3), (2 -> 0); transitions 0->1, 1->3, 2->0
    assert trip_error(pts, off, pts, off, BOX, cells=2) == pytest.approx(0.0, abs=1e-15)
    assert transition_error(pts, off, pts, off, BOX, cells=2) == pytest.approx(0.0, abs=1e-15)
    # one synthetic trajectory (0 -> 1 -> 3): trips {0->3} against {0->3, 2->0}; transitions
    # {0->1, 1->3} against {0->1, 1->3, 2->0}
    syn, soff = pts[:3], np.array([0, 3])
    assert trip_error(pts, off, syn, soff, BOX, cells=2) == pytest.approx(jensen_shannon([1, 1], [1, 0]))
    assert transition_error(pts, off, syn, soff, BOX, cells=2) == \
        pytest.approx(jensen_shannon([1, 1, 1], [1, 1, 0]))


def test_length_error_by_hand():
    pts = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [0.0, 1.0]])
    off = np.array([0, 2, 4])  # travelled 5 and 1 (the step between trajectories does not count)
    assert length_error(pts, off, pts, off, bins=5) == pytest.approx(0.0, abs=1e-15)
    # bins of width 1 over [0, 5]: true in bins 4 and 1; synthetic (length 10) clipped to bin 4
    syn, soff = np.array([[0.0, 0.0], [6.0, 8.0]]), np.array([0, 2])
    assert length_error(pts, off, syn, soff, bins=5) == pytest.approx(jensen_shannon([1, 1], [1, 0]))


def test_coverage_kendall_tau_by_hand():
    pts = np.array([[0.5, 0.5], [0.5, 0.5], [1.5, 0.5], [0.5, 0.5], [1.5, 0.5], [1.5, 1.5]])
    off = np.array([0, 2, 3, 6])  # coverage (distinct trajectories): cell 0: 2, cell 1: 2, cell 3: 1
    assert coverage_kendall_tau(pts, off, pts, off, BOX, cells=2) == pytest.approx(1.0)
    # one trajectory in each of cells 0, 1, 2: coverage (1, 1, 1, 0) against (2, 2, 0, 1)
    a = np.array([[0.5, 0.5]] * 1 + [[1.5, 0.5]] * 1 + [[0.5, 1.5]] * 1)
    from scipy.stats import kendalltau

    expected = kendalltau([2, 2, 0, 1], [1, 1, 1, 0])[0]
    assert coverage_kendall_tau(pts, off, a, np.array([0, 1, 2, 3]), BOX, cells=2) == pytest.approx(expected)



def test_every_metric_is_each_metric_in_order():
    # two data sets of 3 trajectories on a 4 × 4 box (seeds 5 and 6), cells=4, seed 3: each value
    # equals its metric called alone with the same options (the query rectangles from seed + 1000)
    rng = np.random.default_rng(5)
    true, off = rng.uniform(0, 4, (12, 2)), np.array([0, 3, 7, 12])
    other, other_off = np.random.default_rng(6).uniform(0, 4, (10, 2)), np.array([0, 4, 6, 10])
    box = (0.0, 0.0, 4.0, 4.0)
    expected = [density_error(true, other, box, cells=4), query_error(true, other, box, rng=1003),
                hotspot_ndcg(true, other, box, cells=4, k=10), trip_error(true, off, other, other_off, box),
                length_error(true, off, other, other_off), transition_error(true, off, other, other_off, box),
                coverage_kendall_tau(true, off, other, other_off, box, cells=4)]
    values = every_metric(true, off, other, other_off, box, cells=4, seed=3)
    assert len(values) == len(METRICS) == 7
    assert values == expected


P = np.array([[0.5, 0.5], [1.5, 1.5]])
OFF = np.array([0, 2])

BAD = [
    ("points not (N, 2)", lambda: density_error(np.zeros((3, 3)), P, BOX), ValueError,
     r"true must have shape \(n, 2\)"),
    ("no point", lambda: density_error(P, np.zeros((0, 2)), BOX), ValueError, "synthetic holds no point"),
    ("NaN", lambda: density_error([[np.nan, 0.0]], P, BOX), ValueError, "NaN or infinite"),
    ("bounds of 3", lambda: density_error(P, P, (0, 0, 1)), ValueError, r"bounds must be \(xmin"),
    ("empty bounds", lambda: density_error(P, P, (0, 0, 0, 1)), ValueError, "xmin < xmax"),
    ("cells 0", lambda: density_error(P, P, BOX, cells=0), ValueError, "cells must be >= 1"),
    ("cells float", lambda: density_error(P, P, BOX, cells=2.0), TypeError, "cells must be an int"),
    ("sanity 0", lambda: query_error(P, P, BOX, sanity=0), ValueError, "sanity must be > 0"),
    ("no queries", lambda: query_error(P, P, BOX, n_queries=0), ValueError, "n_queries must be >= 1"),
    ("k too big", lambda: hotspot_ndcg(P, P, BOX, cells=2, k=5), ValueError, r"k must be between 1 and .*\(4\)"),
    ("k float", lambda: hotspot_ndcg(P, P, BOX, cells=2, k=1.0), TypeError, "k must be an int"),
    ("offsets short", lambda: trip_error(P, [0, 1], P, OFF, BOX), ValueError, "must run from 0 to N=2"),
    ("offsets float", lambda: trip_error(P, OFF, P, [0.0, 2.0], BOX), TypeError, "offsets must be an integer"),
    ("empty trajectory", lambda: trip_error(P, [0, 0, 2], P, OFF, BOX), ValueError, "are empty"),
    ("bins 0", lambda: length_error(P, OFF, P, OFF, bins=0), ValueError, "bins must be an int >= 1"),
    ("no transitions", lambda: transition_error(P, [0, 1, 2], P, OFF, BOX), ValueError, "no consecutive points"),
    ("flat coverage", lambda: coverage_kendall_tau(P, OFF, P, OFF, (0, 0, 1, 1), cells=1), ValueError,
     "τ is undefined"),
    ("JSD sizes", lambda: jensen_shannon([1, 0], [1, 0, 0]), ValueError, "same size"),
    ("JSD negative", lambda: jensen_shannon([1, -1], [1, 0]), ValueError, "non-negative"),
    ("JSD zero total", lambda: jensen_shannon([0, 0], [1, 0]), ValueError, "positive total"),
]


@pytest.mark.parametrize("call, error, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()
