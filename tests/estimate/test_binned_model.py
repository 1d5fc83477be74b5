"""``binned_mobility_model``: the binned mobility model of any method's reports in a public region."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tracs.estimate.synthesize import binned_mobility_model, fit_mobility_model
from tracs.perturbers import TraCSC
from tracs.poi_space import POISpace
from tracs.region import Rectangle

REGION = Rectangle(0.0, 0.0, 1000.0, 1000.0)


def _reports(seed=3):
    rng = np.random.default_rng(seed)
    off = np.r_[0, np.cumsum(rng.integers(1, 6, 40))]
    return rng.uniform(0.0, 1000.0, (off[-1], 2)), off


def test_it_is_the_binned_fit_of_a_perturber():
    """The same start, transitions and lengths, bit for bit, as fit_mobility_model(binned=True)."""
    points, off = _reports()
    mine = binned_mobility_model(points, REGION, offsets=off, grid=(4, 3), crs="EPSG:32654")
    theirs = fit_mobility_model(points, TraCSC(REGION, 2.0), offsets=off, grid=(4, 3), crs="EPSG:32654",
                                binned=True)
    for name in ("xe", "ye", "start", "transition", "lengths"):
        assert np.array_equal(getattr(mine, name), getattr(theirs, name)), name
    assert (mine.method, mine.iterations, mine.crs) == ("binned", 0, "EPSG:32654")


def test_it_counts_released_pois():
    """Three POIs at the centres of cells 0, 5 and 15 of a 4 × 4 grid: two trajectories 0 → 5 → 15 and
    one 5 → 5: the start is 2/3 at cell 0 and 1/3 at cell 5; from 5 a third to 5, two thirds to 15."""
    space = POISpace(np.array([[125.0, 125.0], [375.0, 375.0], [875.0, 875.0]]), region=REGION)
    idx = np.array([0, 1, 2, 0, 1, 2, 1, 1])
    model = binned_mobility_model(space.points[idx], REGION, offsets=np.array([0, 3, 6, 8]), grid=4)
    assert model.start[[0, 5]].tolist() == [2 / 3, 1 / 3] and model.start.sum() == 1.0
    assert model.transition[0, 5] == 1.0 and model.transition[5, [5, 15]].tolist() == [1 / 3, 2 / 3]
    assert model.lengths.tolist() == [0.0, 0.0, 1 / 3, 2 / 3]


@pytest.mark.parametrize("points, offsets, grid, exc, fragment", [
    (np.zeros((3, 2)), np.array([0, 3]), 25, ValueError, "grid sides up to 24, got (25, 25)"),
    (np.zeros((0, 2)), np.array([0, 0]), 4, ValueError, "reports is empty"),
    (np.array([[10.0, 10.0], [2000.0, 10.0]]), np.array([0, 2]), 4, ValueError,
     "1 point(s) of reports lie outside the region Rectangle(0.0, 0.0, 1000.0, 1000.0)"),
])
def test_bad_inputs(points, offsets, grid, exc, fragment):
    with pytest.raises(exc, match=re.escape(fragment)):
        binned_mobility_model(points, REGION, offsets=offsets, grid=grid)
