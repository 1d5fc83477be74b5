"""Fixtures of small synthetic POI spaces for the discrete-space tests."""

from __future__ import annotations

import pytest
from poi_helpers import adversarial_points, grid_points

from tracs.poi_space import POISpace


@pytest.fixture
def grid_space() -> POISpace:
    return POISpace(grid_points())


@pytest.fixture
def adversarial_space() -> POISpace:
    return POISpace(adversarial_points())
