"""The users a map draws: each a ``tracs.Batch`` of its rows (keys, offsets where its track changes,
positions in the input), the point cap said in a warning."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.maps._selection import ROW, select_users
from tracs.trajectory_batch import Batch


def _rows():
    uid = np.array(["007", "7", "007", "007", "7", "b"], dtype=object)
    track = np.array([0, 0, 0, 1, 0, 0])
    coords = np.column_stack([np.arange(6.0), np.arange(6.0) + 10])
    return Batch(coords, np.arange(7), keys=uid, columns={"track": track}, crs="EPSG:4326")


def test_each_user_is_a_batch_of_its_rows():
    groups = select_users(_rows())
    assert all(isinstance(g, Batch) for g in groups)
    assert [g.keys[0] for g in groups] == ["007", "7", "b"]
    first = groups[0]
    np.testing.assert_array_equal(first.column(ROW), [0, 2, 3])
    np.testing.assert_array_equal(first.offsets, [0, 2, 3])  # its track changes before row 3
    np.testing.assert_array_equal(first.coords, _rows().coords[[0, 2, 3]])
    assert first.crs == "EPSG:4326" and set(first.keys) == {"007"}


def test_the_point_cap_keeps_whole_users_and_says_so():
    with pytest.warns(UserWarning, match="the map draws 3 of 6 points"):
        groups = select_users(_rows(), max_points=4)
    assert [g.keys[0] for g in groups] == ["007"]
    with pytest.warns(UserWarning, match="the map draws 2 of 3 points"):
        (only,) = select_users(_rows(), users=["007"], max_points=2)
    np.testing.assert_array_equal(only.column(ROW), [0, 2])
