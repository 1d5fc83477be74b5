"""The paper's range-query and hotspot metrics inside the evaluation grid (offsets reach the metrics)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracs import evaluation as ev
from tracs.query_metrics import metres_per_degree
from tracs.region import Rectangle

PAPER = ["range_preservation", "hotspot_count_error"]
TIMING = ["seconds", "seconds_per_point"]

# two trajectories in metres; 1 degree = 100 m east, 200 m north, so δ = 0.1° is 10 m east / 20 m north
TRUE = np.array([[0, 0], [0, 0], [100, 100], [200, 200],      # A
                 [300, 300], [400, 400], [0, 0]], float)       # B
RELEASED = np.array([[5, 0],      # 0.05°: kept
                     [0, 0],      # kept, on the hotspot
                     [100, 125],  # 25 m north = 0.125°: not kept
                     [200, 200],  # kept
                     [0, 0],      # far: not kept, but on the hotspot
                     [400, 410],  # 0.05°: kept
                     [0, 0]], float)  # kept, on the hotspot


class _Fixed:
    """A stand-in perturber that releases the rows of ``RELEASED`` (for hand-checked scores)."""

    def perturb_many(self, coords, offsets, *, rng=None):
        return RELEASED[:len(coords)].copy()


@pytest.fixture
def tiny():
    from tracs.methods import BASELINE, Method, registered

    with registered(Method("fixed", "Fixed", BASELINE, lambda ctx, budget: _Fixed(), keyed=False)):
        yield ev.Dataset(name="tiny", region=Rectangle(0, 0, 500, 500), offsets=np.array([0, 4, 7]),
                         coords=TRUE, units="m", pois=np.unique(TRUE, axis=0), normalise=True,
                         degree_scale=(100.0, 200.0))


def test_hand_checked_scores_through_run_grid(tiny):
    row = ev.run_grid(tiny, ["fixed"], [1.0], metrics=PAPER).iloc[0]
    # range: A keeps 3 of 4, B 2 of 3 -> (3/4 + 2/3)/2 (pooled over points it would be 5/7)
    assert row.range_preservation == pytest.approx((3 / 4 + 2 / 3) / 2)
    # 5 distinct true locations -> 1 hotspot, (0, 0) (3 visits); A: true 2 hits, released 1;
    # B: true 1, released 2 -> mean of |1 - 2| and |2 - 1|
    assert row.hotspot_count_error == 1.0


def test_same_seed_same_paper_metrics_and_range_is_a_fraction():
    data = ev.load_dataset("synthetic", synthetic_users=12, seed=3)
    a = ev.run_grid(data, "lsrr,tracs-c", [2, 8], repetitions=2, seed=5, metrics=PAPER)
    b = ev.run_grid(data, "lsrr,tracs-c", [2, 8], repetitions=2, seed=5, metrics=PAPER)
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING))
    assert a.range_preservation.between(0, 1).all() and (a.hotspot_count_error >= 0).all()
    # more budget keeps more points near their true location (mean over methods and repetitions)
    means = a.groupby("epsilon").range_preservation.mean()
    assert means[8.0] > means[2.0]
    summary = ev.summarise(a)
    assert set(PAPER) <= set(summary.columns)


def test_synthetic_city_degree_scale_is_its_latitude():
    data = ev.load_dataset("synthetic", synthetic_users=5, seed=0)
    lat = ev.degree_scale(data.trajectories.to_wgs84())
    assert lat == (1.0, 1.0)  # already degrees
    east, north = data.degree_scale
    # the synthetic city lies at Tokyo's latitude (about 35.7°N): ~90.5 km per degree east
    assert 85_000 < east < 95_000 and north == pytest.approx(110_950, abs=50)


def test_metres_per_degree_known_values():
    # WGS84: a·π/180 = 111,319.49 m per degree of longitude at the equator,
    # 110,574.3 m per degree of latitude at the equator and 111,694 m at the pole
    assert metres_per_degree(0.0) == pytest.approx((111_319.49, 110_574.27), abs=0.5)
    assert metres_per_degree(90.0)[1] == pytest.approx(111_693.9, abs=0.5)
    with pytest.raises(ValueError):
        metres_per_degree(91)


def test_continuous_region_uses_region_units_and_refuses_hotspots():
    small = ev.continuous_dataset("unit-square", trajectories=4, points=5)
    table = ev.run_grid(small, "tracs-c", [50], metrics=["range_preservation"])
    # δ = 0.1 region units; at ε = 50 the coordinates move by about 1e-3
    assert table.range_preservation.iloc[0] == 1.0
    with pytest.raises(ValueError, match="points of interest"):
        ev.run_grid(small, "tracs-c", [2], metrics=["hotspot_count_error"])


@pytest.mark.parametrize("metrics, match", [("bogus", "unknown metric"),
                                            ("range_preservation,range_preservation", "twice")])
def test_parse_metrics_errors(metrics, match):
    with pytest.raises(ValueError, match=match):
        ev.parse_metrics(metrics)


def test_a_batch_makes_the_dataset_of_its_trajectories():
    source = ev.load_dataset("synthetic", synthetic_users=5, seed=0).trajectories
    from_trajectories = ev.checkin_dataset(source)
    from_batch = ev.checkin_dataset(source.to_batch())
    np.testing.assert_array_equal(from_batch.coords, from_trajectories.coords)
    np.testing.assert_array_equal(from_batch.offsets, from_trajectories.offsets)
    np.testing.assert_array_equal(from_batch.keys, from_trajectories.keys)
    np.testing.assert_array_equal(from_batch.pois, from_trajectories.pois)
    assert from_batch.region == from_trajectories.region
