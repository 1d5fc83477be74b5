"""The paper's range-query (preservation within δ) and hotspot-count metrics on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import query_metrics as qm


def test_range_preservation_averages_per_trajectory_not_per_point():
    # trajectory A (4 points): 3 kept within 0.1; trajectory B (1 point): not kept
    true = np.zeros((5, 2))
    pert = np.array([[0.0, 0.05], [0.1, 0.0], [0.06, 0.08], [0.2, 0.0],  # A: d = .05, .1, .1, .2
                     [0.0, 0.5]])                                       # B: d = .5
    off = np.array([0, 4, 5])
    # per trajectory: 3/4 and 0/1 -> mean 0.375 (pooled over points it would be 3/5)
    assert qm.range_preservation(true, pert, off, radius=0.1) == pytest.approx(0.375)
    assert qm.preservation_ratio(true, pert, 0.1) == pytest.approx(0.6)
    # one trajectory when offsets are omitted; identical data keep everything
    assert qm.range_preservation(true, pert, radius=0.1) == pytest.approx(0.6)
    assert qm.range_preservation(true, true, off, radius=1e-9) == 1.0


def test_range_preservation_scale_measures_in_other_units():
    # metres with 1 degree = 100 m east, 200 m north: a 15 m east + 10 m north shift is
    # (0.15, 0.05) degrees -> 0.158 degrees, kept at δ = 0.16 but not at δ = 0.15
    true = np.zeros((1, 2))
    pert = np.array([[15.0, 10.0]])
    assert qm.range_preservation(true, pert, radius=0.16, scale=(100.0, 200.0)) == 1.0
    assert qm.range_preservation(true, pert, radius=0.15, scale=(100.0, 200.0)) == 0.0


def test_hotspot_locations_top_share_with_first_seen_ties():
    a, b, c, d, e = [0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]
    pts = np.array([c, a, a, b, b, b, c, d, e, e])  # counts: b 3, a 2, c 2, e 2, d 1
    # 5 distinct locations: share 0.4 -> 2 hotspots; a and c tie with e on 2 visits,
    # c was seen first (index 0), then a (1), then e (8)
    np.testing.assert_array_equal(qm.hotspot_locations(pts, 0.4), [b, c])
    np.testing.assert_array_equal(qm.hotspot_locations(pts, 0.8), [b, c, a, e])
    with pytest.raises(ValueError, match="no hotspot"):
        qm.hotspot_locations(pts, 0.1)  # floor(0.5) = 0


def test_hotspot_count_error_by_hand():
    h, o, p = [0.0, 0.0], [5.0, 5.0], [5.0, 5.000001]
    true = np.array([h, h, o,   h, o])
    pert = np.array([o, p, h,   h, h])
    off = np.array([0, 3, 5])
    hot = np.array([h])
    # trajectory 1: true hits 2, released hits 1 -> 1; trajectory 2: true 1, released 2 -> 1
    assert qm.hotspot_count_error(true, pert, off, hotspots=hot) == 1.0
    # exact matching: a point a hair away from a hotspot is not on it
    assert qm.hotspot_count_error(np.array([h]), np.array([[0.0, 1e-12]]), hotspots=hot) == 1.0
    assert qm.hotspot_count_error(true, true, off, hotspots=hot) == 0.0


def test_hotspot_count_error_default_hotspots_come_from_true_points():
    h, x, y, z, w = [0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]
    true = np.array([h, h, h, x, y, z, w])      # 5 distinct -> top 20 % = 1 hotspot: h
    pert = np.array([x, h, y, h, h, z, w])      # one trajectory: true 3 hits, released 3 hits
    assert qm.hotspot_count_error(true, pert) == 0.0
    off = np.array([0, 3, 7])                    # split: |1 - 3| = 2 and |2 - 0| = 2
    assert qm.hotspot_count_error(true, pert, off) == 2.0


@pytest.mark.parametrize("call, exc", [
    (lambda: qm.range_preservation(np.zeros((2, 2)), np.zeros((2, 2)), radius=0.0), ValueError),
    (lambda: qm.range_preservation(np.zeros((2, 2)), np.zeros((2, 2)), radius=1, scale=(1, 0)), ValueError),
    (lambda: qm.range_preservation(np.zeros((2, 2)), np.zeros((2, 2)), [0, 1], radius=1), ValueError),
    (lambda: qm.range_preservation(np.zeros((2, 2)), np.zeros((3, 2)), radius=1), ValueError),
    (lambda: qm.hotspot_count_error(np.zeros((2, 2)), np.zeros((2, 2)), [0.0, 2.0]), TypeError),
    (lambda: qm.hotspot_count_error(np.zeros((2, 2)), np.zeros((2, 2)), hotspots=np.empty((0, 2))),
     ValueError),
    (lambda: qm.hotspot_locations(np.zeros((2, 2)), 1.5), ValueError),
])
def test_bad_input_raises(call, exc):
    with pytest.raises(exc):
        call()
