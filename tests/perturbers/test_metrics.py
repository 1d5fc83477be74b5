"""Average error and per-trajectory errors."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.metrics import average_error, point_errors, trajectory_errors
from tracs.region import Rectangle


def test_trajectory_mean_then_mean_over_trajectories():
    true = np.zeros((4, 2))
    out = np.array([[3.0, 4.0], [0.0, 1.0], [0.0, 1.0], [0.0, 4.0]])
    offsets = np.array([0, 1, 4])
    assert np.allclose(trajectory_errors(true, out, offsets), [5.0, 2.0])
    # each trajectory weighs the same, whatever its length (the mean of all points is 2.75)
    assert average_error(true, out, offsets) == pytest.approx(3.5)
    assert average_error(true, out) == pytest.approx(2.75)  # one trajectory
    assert np.allclose(point_errors(true, out), [5, 1, 1, 4])


def test_list_input_matches_flat():
    rng = np.random.default_rng(0)
    a, b = rng.random((10, 2)), rng.random((10, 2))
    offsets = np.array([0, 3, 10])
    lists = ([a[:3], a[3:]], [b[:3], b[3:]])
    assert np.allclose(trajectory_errors(*lists), trajectory_errors(a, b, offsets))


def test_normalised_compatibility_mode():
    true, out = np.array([[0.0, 0.0]]), np.array([[2.0, 10.0]])
    region = Rectangle(0, 0, 2, 10)
    assert average_error(true, out, normalize_by=region) == pytest.approx(np.sqrt(2))
    assert average_error(true, out, normalize_by=(0, 0, 2, 10)) == pytest.approx(np.sqrt(2))


@pytest.mark.parametrize("args, exc", [
    ((np.zeros((3, 2)), np.zeros((2, 2))), ValueError),
    ((np.zeros((3, 3)), np.zeros((3, 3))), ValueError),
    ((np.zeros((3, 2)), np.full((3, 2), np.nan)), ValueError),
    ((np.zeros((3, 2)), np.zeros((3, 2)), [0, 0, 3]), ValueError),  # empty trajectory
    ((np.zeros((3, 2)), np.zeros((3, 2)), [0, 2]), ValueError),
    ((np.zeros((3, 2)), np.zeros((3, 2)), [0.0, 3.0]), TypeError),
    ((np.zeros((0, 2)), np.zeros((0, 2))), ValueError),
])
def test_bad_input(args, exc):
    with pytest.raises(exc):
        trajectory_errors(*args)
