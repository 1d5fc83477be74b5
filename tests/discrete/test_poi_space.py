"""POISpace: construction, duplicates, diameter and KD-tree rounding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from tracs.poi_space import POISpace


def test_round_matches_brute_force_nearest():
    rng = np.random.default_rng(1)
    pois = rng.uniform(0, 1000, size=(300, 2))
    space = POISpace(pois)
    queries = rng.uniform(-200, 1200, size=(2000, 2))
    coords, idx = space.round(queries)
    dist = cdist(queries, space.points)
    # nearest distance must match exactly (ties may pick any of the nearest POIs)
    np.testing.assert_allclose(dist[np.arange(len(queries)), idx], dist.min(axis=1), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(coords, space.points[idx])
    assert idx.dtype == np.intp and coords.shape == (2000, 2)


def test_round_of_pois_is_identity():
    rng = np.random.default_rng(2)
    space = POISpace(rng.uniform(0, 50, size=(100, 2)))
    coords, idx = space.round(space.points)
    np.testing.assert_array_equal(idx, np.arange(len(space)))
    np.testing.assert_array_equal(coords, space.points)


def test_round_empty_and_bad_shapes():
    space = POISpace([[0, 0], [1, 1]])
    coords, idx = space.round(np.empty((0, 2)))
    assert coords.shape == (0, 2) and idx.shape == (0,)
    with pytest.raises(ValueError, match="shape"):
        space.round([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        space.round([[np.nan, 0.0]])
    with pytest.raises(TypeError):
        space.round([["a", "b"]])


def test_duplicates_are_merged_in_first_occurrence_order():
    pts = [[5, 5], [0, 0], [5, 5], [1, 0], [0, 0]]
    space = POISpace(pts)
    np.testing.assert_array_equal(space.points, [[5, 5], [0, 0], [1, 0]])
    np.testing.assert_array_equal(space.inverse, [0, 1, 0, 2, 1])
    np.testing.assert_array_equal(space.source_index, [0, 1, 3])
    np.testing.assert_array_equal(space.points[space.inverse], np.asarray(pts, dtype=float))
    assert len(space) == 3
    with pytest.raises(ValueError):
        space.points[0, 0] = 1.0  # read-only


@pytest.mark.parametrize("pts", [np.empty((0, 2)), [[3.0, 4.0]], [[3.0, 4.0]] * 5])
def test_empty_or_single_location_is_an_error(pts):
    with pytest.raises(ValueError, match="at least two distinct"):
        POISpace(pts)


def test_wrong_types_and_shapes():
    with pytest.raises(ValueError, match="shape"):
        POISpace([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN"):
        POISpace([[0, 0], [np.inf, 1]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_diameter_is_exact(seed):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(400, 2)) * [1000, 300]
    space = POISpace(pts)
    assert space.diameter == pytest.approx(cdist(pts, pts).max(), rel=1e-12)


def test_diameter_of_collinear_points():
    t = np.array([3.0, -1.0, 7.5, 0.0, 2.0])
    pts = np.column_stack([t, 2 * t + 1])
    assert POISpace(pts).diameter == pytest.approx(8.5 * np.sqrt(5), rel=1e-12)
    assert POISpace([[0, 0], [0, 10]]).diameter == pytest.approx(10.0)


def test_default_region_is_the_bounding_rectangle():
    space = POISpace([[0, 0], [10, 0], [3, 7]])
    assert space.bounds == (0.0, 0.0, 10.0, 7.0)
    region = space.region
    assert np.all(region.contains(space.points))


def test_region_must_cover_the_pois():
    from tracs.region import Rectangle

    with pytest.raises(ValueError, match="outside"):
        POISpace([[0, 0], [10, 10]], region=Rectangle(0, 0, 5, 5))
    space = POISpace([[1, 1], [4, 4]], region=Rectangle(0, 0, 5, 5))
    assert space.region.bounds == (0, 0, 5, 5)


def test_digest_is_the_spaces_not_the_inputs():
    """The digest (``pois_sha256`` of a sidecar) of the distinct POIs: repeated rows and a shift far
    below the millimetre it records (the last bits of a projection) leave it; a POI added, removed
    or moved by a millimetre, or another order of first occurrence, change it."""
    rng = np.random.default_rng(5)
    pois = rng.uniform(380_000, 390_000, size=(50, 2))
    digest = POISpace(pois).digest()
    assert len(digest) == 64 and set(digest) <= set("0123456789abcdef")
    assert POISpace(np.vstack([pois, pois[[3, 7]]])).digest() == digest  # repeated rows: one POI each
    assert POISpace(pois + 1e-9).digest() == digest
    moved = pois.copy()
    moved[10, 0] += 1e-3
    changed = {"added": np.vstack([pois, [[385_000.0, 385_000.0]]]), "removed": pois[1:], "moved": moved,
               "order": pois[::-1]}
    digests = {name: POISpace(points).digest() for name, points in changed.items()}
    assert digest not in digests.values() and len(set(digests.values())) == len(digests)
