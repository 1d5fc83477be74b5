"""The ae_degrees evaluation metric: average error in degrees."""
from types import SimpleNamespace

import numpy as np
import pytest

from tracs.evaluation.extra_metrics import EXTRA_METRICS


def _score(dataset, true, pert, offsets):
    return EXTRA_METRICS["ae_degrees"].function(true, pert, offsets, dataset, None)


def test_divides_each_axis_by_its_units_per_degree():
    ds = SimpleNamespace(name="d", degree_scale=(2.0, 4.0), normalise=True)
    true = np.zeros((3, 2))
    pert = np.array([[6.0, 0.0], [0.0, 8.0], [6.0, 16.0]])  # 3°, 2°, 5° (3-4-5)
    offsets = np.array([0, 2, 3])
    # trajectory means: (3 + 2) / 2 = 2.5 and 5; their mean 3.75
    assert _score(ds, true, pert, offsets) == pytest.approx(3.75, rel=1e-12)


def test_region_units_on_a_continuous_region():
    ds = SimpleNamespace(name="u", degree_scale=None, normalise=False)
    assert _score(ds, np.zeros((1, 2)), np.array([[3.0, 4.0]]), np.array([0, 1])) == pytest.approx(5.0)


@pytest.mark.parametrize("scale, normalise, fragment", [(None, True, "data without a CRS")])
def test_refuses_data_without_degrees(scale, normalise, fragment):
    ds = SimpleNamespace(name="x", degree_scale=scale, normalise=normalise)
    with pytest.raises(ValueError, match=fragment):
        _score(ds, np.zeros((1, 2)), np.ones((1, 2)), np.array([0, 1]))
