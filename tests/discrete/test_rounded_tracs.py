"""TraCS-D and TraCS-C followed by rounding to the nearest POI (``round_to=poi_space``)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.poi_space import POISpace
from tracs.perturbers import TraCSC, TraCSD


@pytest.fixture(scope="module")
def space() -> POISpace:
    rng = np.random.default_rng(12)
    # clustered POIs, like a city: most outputs of TraCS fall far from any POI
    centres = rng.uniform(0, 5000, size=(6, 2))
    pts = centres[rng.integers(0, 6, 400)] + rng.normal(scale=150, size=(400, 2))
    return POISpace(pts)


@pytest.mark.parametrize("cls", [TraCSD, TraCSC])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_rounding_is_post_processing(space, cls, epsilon):
    rng = np.random.default_rng(3)
    coords = space.points[rng.integers(0, len(space), 300)]
    offsets = np.array([0, 1, 120, 300])
    rounded, idx = cls(space.region, epsilon, round_to=space).perturb_many(
        coords, offsets, rng=8, return_indices=True)
    raw = cls(space.region, epsilon).perturb_many(coords, offsets, rng=8)
    # the same draws, then the public nearest-POI map: the guarantee is TraCS's own
    expected, expected_idx = space.round(raw)
    np.testing.assert_array_equal(rounded, expected)
    np.testing.assert_array_equal(idx, expected_idx)
    # every output is a POI
    np.testing.assert_array_equal(rounded, space.points[idx])
    assert rounded.shape == coords.shape


@pytest.mark.parametrize("cls", [TraCSD, TraCSC])
def test_rounded_single_trajectory_and_ledger(space, cls):
    model = cls(space.region, 2.0, round_to=space)
    out = model.perturb(space.points[:5], rng=1)
    assert np.isin(out.view(np.complex128), space.points.view(np.complex128)).all()
    ledger = model.privacy_spent(5)
    assert ledger.per_point == pytest.approx(2.0) and ledger.per_trajectory == pytest.approx(10.0)


def test_rounded_error_falls_with_epsilon(space):
    rng = np.random.default_rng(4)
    coords = space.points[rng.integers(0, len(space), 4000)]
    offsets = np.arange(0, 4001, 20)
    for cls in (TraCSD, TraCSC):
        errors = []
        for eps in (1.0, 8.0):
            out = cls(space.region, eps, round_to=space).perturb_many(coords, offsets, rng=5)
            errors.append(np.linalg.norm(out - coords, axis=1).mean())
        assert errors[1] < 0.7 * errors[0], (cls.__name__, errors)
