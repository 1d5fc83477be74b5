"""TraCS-C's kernel works in blocks of points: block edges must not show in any release."""

import numpy as np
import pytest

from tracs.perturbers import TraCSC
from tracs.perturbers._kernels import BLOCK
from tracs.region import Rectangle

REGION = Rectangle(-500.0, 100.0, 20000.0, 9000.0)


def _batch(seed=5):
    rng = np.random.default_rng(seed)
    # trajectory lengths chosen so that many trajectories straddle block edges
    lengths = np.r_[BLOCK - 1, 2, BLOCK + 3, rng.integers(1, 700, 12), 1]
    offsets = np.r_[0, np.cumsum(lengths)]
    n = int(offsets[-1])
    pts = np.column_stack([rng.uniform(-500.0, 20000.0, n), rng.uniform(100.0, 9000.0, n)])
    pts[:40, 0] = -500.0  # on the edges
    pts[40:80, 1] = 9000.0
    return pts, offsets


@pytest.mark.parametrize("perturber", [TraCSC(REGION, epsilon=1.0), TraCSC(REGION, epsilon_per_trajectory=40.0),
                                       TraCSC(REGION, epsilon=3.0, resolution=1 / 63)],
                         ids=["per-point", "per-trajectory", "coarse"])
def test_batch_equals_trajectory_by_trajectory(perturber):
    pts, offsets = _batch()
    keys = [f"user-{t}" for t in range(len(offsets) - 1)]
    batch = perturber.perturb_many(pts, offsets, rng=9, keys=keys)
    assert len(pts) > 3 * BLOCK
    for t, key in enumerate(keys):
        one = perturber.perturb(pts[offsets[t]:offsets[t + 1]], rng=9, key=key)
        assert np.array_equal(batch[offsets[t]:offsets[t + 1]], one), t


def test_indices_are_the_released_points():
    pts, offsets = _batch(6)
    perturber = TraCSC(REGION, epsilon=2.0)
    released = perturber.perturb_many(pts, offsets, rng=3)
    idx = perturber.lattice_indices(pts, offsets, rng=3)
    lx, ly = perturber.lattice
    assert idx.shape == pts.shape and idx.dtype == np.int64
    assert np.array_equal(released[:, 0], lx.points(idx[:, 0]))
    assert np.array_equal(released[:, 1], ly.points(idx[:, 1]))
