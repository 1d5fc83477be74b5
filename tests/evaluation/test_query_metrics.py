"""Range-query and hotspot metrics: exact values on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import query_metrics as qm

BOUNDS = (0.0, 0.0, 1.0, 1.0)


def test_queries_lie_inside_the_region_and_are_seeded():
    q = qm.random_range_queries((0, 0, 2, 10), 500, size=(0.1, 0.3), rng=1)
    assert q.shape == (500, 4)
    assert np.all(q[:, 0] >= 0) and np.all(q[:, 2] <= 2) and np.all(q[:, 1] >= 0) and np.all(q[:, 3] <= 10)
    widths, heights = q[:, 2] - q[:, 0], q[:, 3] - q[:, 1]
    assert np.all((widths >= 0.2 - 1e-12) & (widths <= 0.6 + 1e-12))
    assert np.all((heights >= 1.0 - 1e-12) & (heights <= 3.0 + 1e-12))
    np.testing.assert_array_equal(q, qm.random_range_queries((0, 0, 2, 10), 500, size=(0.1, 0.3), rng=1))


def test_range_counts_match_brute_force():
    rng = np.random.default_rng(0)
    pts = rng.random((2000, 2))
    queries = qm.random_range_queries(BOUNDS, 50, rng=2)
    brute = [np.count_nonzero((pts[:, 0] >= a) & (pts[:, 0] <= c) & (pts[:, 1] >= b) & (pts[:, 1] <= d))
             for a, b, c, d in queries]
    np.testing.assert_array_equal(qm.range_query_counts(pts, queries), brute)


def test_range_query_error_is_zero_for_identical_data_and_positive_otherwise():
    rng = np.random.default_rng(3)
    pts = rng.random((1000, 2))
    assert qm.range_query_error(pts, pts, BOUNDS, rng=0) == 0.0
    moved = np.clip(pts + 0.3, 0, 1)
    assert qm.range_query_error(pts, moved, BOUNDS, rng=0) > 0.3


def test_range_query_error_value_on_one_query():
    # one query covering the left half: 3 true points inside, 1 released point inside
    true = np.array([[0.1, 0.5], [0.2, 0.5], [0.3, 0.5], [0.9, 0.5]])
    pert = np.array([[0.1, 0.5], [0.8, 0.5], [0.8, 0.5], [0.9, 0.5]])
    q = np.array([[0.0, 0.0, 0.5, 1.0]])
    assert list(qm.range_query_counts(true, q)) == [3]
    assert list(qm.range_query_counts(pert, q)) == [1]


def test_hotspots_perfect_and_disjoint():
    # 4x4 grid; true mass in cells 0 and 5, released mass in cells 15 and 10
    true = np.array([[0.1, 0.1]] * 5 + [[0.3, 0.3]] * 3)
    pert = np.array([[0.9, 0.9]] * 5 + [[0.6, 0.6]] * 3)
    assert qm.hotspot_precision(true, true, BOUNDS, cells=4, k=2) == 1.0
    assert qm.hotspot_ndcg(true, true, BOUNDS, cells=4, k=2) == pytest.approx(1.0)
    assert qm.hotspot_precision(true, pert, BOUNDS, cells=4, k=2) == 0.0
    assert qm.hotspot_ndcg(true, pert, BOUNDS, cells=4, k=2) == 0.0


def test_hotspot_ndcg_rewards_order():
    true = np.array([[0.1, 0.1]] * 5 + [[0.3, 0.3]] * 3)
    swapped = np.array([[0.1, 0.1]] * 3 + [[0.3, 0.3]] * 5)  # same cells, ranks swapped
    value = qm.hotspot_ndcg(true, swapped, BOUNDS, cells=4, k=2)
    ideal = 5 + 3 / np.log2(3)
    assert value == pytest.approx((3 + 5 / np.log2(3)) / ideal)
    assert qm.hotspot_precision(true, swapped, BOUNDS, cells=4, k=2) == 1.0


def test_grid_counts_keep_boundary_points():
    pts = np.array([[1.0, 1.0], [0.0, 0.0], [1.2, -0.1]])
    counts = qm.grid_counts(pts, BOUNDS, 2)
    assert counts.sum() == 3 and counts[3] == 1 and counts[0] == 1 and counts[1] == 1


def test_preservation_ratio():
    true = np.zeros((4, 2))
    pert = np.array([[0.0, 0.05], [0.0, 0.2], [0.1, 0.0], [1.0, 1.0]])
    assert qm.preservation_ratio(true, pert, 0.1) == 0.5


@pytest.mark.parametrize("call", [
    lambda: qm.range_query_error(np.zeros((3, 2)), np.zeros((2, 2)), BOUNDS),
    lambda: qm.hotspot_precision(np.zeros((0, 2)), np.zeros((0, 2)), BOUNDS),
    lambda: qm.hotspot_precision(np.zeros((3, 2)), np.zeros((3, 2)), BOUNDS, cells=2, k=5),
    lambda: qm.random_range_queries((0, 0, 0, 1), 3),
    lambda: qm.random_range_queries(BOUNDS, 3, size=(0.5, 2.0)),
    lambda: qm.preservation_ratio(np.zeros((3, 2)), np.zeros((3, 2)), 0),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()
