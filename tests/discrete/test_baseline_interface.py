"""The perturber interface of every baseline: shapes, order, snapping, seeds, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram

ALL = [ExponentialMechanism, NGram, LSRR, TP, ATP]


@pytest.mark.parametrize("cls", ALL)
def test_shapes_lists_empty_trajectories_and_indices(grid_space, cls):
    model = cls(grid_space, 2.0)
    coords = grid_space.points[[1, 2, 3, 4, 5, 6]]
    out, idx = model.perturb_many(coords, [0, 0, 2, 2, 6], rng=1, return_indices=True)
    assert out.shape == (6, 2)
    np.testing.assert_array_equal(out, grid_space.points[idx])
    parts = model.perturb_many([coords[:2], coords[2:]], rng=1)
    assert [p.shape for p in parts] == [(2, 2), (4, 2)]
    assert model.perturb(coords[:1], rng=2).shape == (1, 2)


@pytest.mark.parametrize("cls", ALL)
def test_inputs_are_snapped_and_seeds_reproduce(grid_space, cls):
    model = cls(grid_space, 3.0)
    off_grid = grid_space.points[[0, 7, 12]] + [[3.0, -4.0], [10.0, 10.0], [-20.0, 5.0]]
    on_grid = grid_space.points[[0, 7, 12]]
    np.testing.assert_array_equal(model.perturb(off_grid, rng=5), model.perturb(on_grid, rng=5))
    np.testing.assert_array_equal(model.perturb_indices([0, 7, 12], [0, 3], rng=5),
                                  grid_space.round(model.perturb(on_grid, rng=5))[1])


@pytest.mark.parametrize("cls", ALL)
def test_bad_input(grid_space, cls):
    model = cls(grid_space, 1.0)
    with pytest.raises(ValueError, match="empty"):
        model.perturb(np.empty((0, 2)))
    with pytest.raises(ValueError):
        model.perturb([[0.0, np.nan]])
    with pytest.raises(ValueError):
        model.perturb([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="offsets"):
        model.perturb_many(grid_space.points[:3], [0, 2])
    with pytest.raises(TypeError):
        model.perturb_many(grid_space.points[:3], [0.5, 3])
    with pytest.raises(ValueError, match="indices"):
        model.perturb_indices([0, 99], [0, 2])
    with pytest.raises(ValueError, match="n must"):
        model.privacy_spent(0)
