"""Shortcuts of the command line's read/write path give exactly the plain computation's result."""

import numpy as np
import pyproj
import pytest

from tracs.geo import transform_xy
from tracs.io.batch_files import _row_order
from tracs.io.write import bounds as _bounds


@pytest.mark.parametrize("users, sorted_times, with_traj", [
    (50, True, False), (50, False, False), (200_000, True, False), (50, True, True)],
    ids=["few-users-in-time-order", "unsorted-times", "wide-user-keys", "trajectory-column"])
def test_row_order_is_the_lexsort(users, sorted_times, with_traj):
    rng = np.random.default_rng(3)
    n = 40_000
    tkey = rng.integers(0, 5_000, n)  # many equal times: ties must keep the file's order
    if sorted_times:
        tkey = np.sort(tkey)
    ukey = rng.integers(-7, users, n).astype(np.int64) * 3
    traj = rng.integers(0, 4, n) if with_traj else None
    want = np.lexsort([tkey] + ([traj] if with_traj else []) + [ukey])
    assert np.array_equal(_row_order(tkey, traj, ukey), want)


def test_bounds_are_the_column_extremes():
    lonlat = np.random.default_rng(1).uniform(-180, 180, (10_001, 2))
    lo, hi = _bounds(lonlat)
    assert lo == list(lonlat.min(axis=0)) and hi == list(lonlat.max(axis=0))


@pytest.mark.parametrize("workers", [2, 3])
def test_transform_on_threads_is_bit_identical(workers):
    rng = np.random.default_rng(2)
    lon, lat = rng.uniform(139.0, 140.5, 300_001), rng.uniform(35.0, 36.2, 300_001)
    one = pyproj.Transformer.from_crs(4326, 32654, always_xy=True).transform(lon, lat, errcheck=True)
    many = transform_xy(lon, lat, 4326, 32654, workers=workers)
    assert np.array_equal(one[0], many[0]) and np.array_equal(one[1], many[1])
    back = transform_xy(*many, 32654, 4326, workers=workers)
    assert np.max(np.abs(back[0] - lon)) < 1e-9 and np.max(np.abs(back[1] - lat)) < 1e-9


def test_transform_on_threads_reports_a_failed_point():
    lon = np.full(200_000, 10.0)
    lat = np.full(200_000, 50.0)
    lat[150_000] = 200.0  # not a latitude
    with pytest.raises(pyproj.exceptions.ProjError):
        transform_xy(lon, lat, 4326, 32632, workers=2)
