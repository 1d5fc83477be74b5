"""tracs.geo (UTM choice, round trips) and the tracs.Trajectories container."""

from __future__ import annotations

import warnings

import geopandas as gpd
import numpy as np
import pyproj
import pytest
import shapely

import data_loaders as dl
from tracs import ConvexRegion, Rectangle, Trajectories
from tracs.geo import local_metric_crs, to_metric, to_wgs84

GEOD = pyproj.Geod(ellps="WGS84")


@pytest.mark.parametrize("lon, lat, epsg", [
    (139.70, 35.68, 32654),    # Tokyo
    (-73.98, 40.75, 32618),    # New York
    (-87.63, 41.88, 32616),    # Chicago
    (151.21, -33.87, 32756),   # Sydney: southern hemisphere
    (-0.1, 51.5, 32630),       # London, west of Greenwich
    (0.1, 51.5, 32631),        # east of Greenwich
    ([179.5, -179.5], [-17.0, -18.0], 32701),  # Fiji, across the antimeridian
    ([20, 25], [-0.5, 1.5], 32634),            # across the equator: the centre decides
    (15.0, 86.0, 32661),       # UPS north
    (0.0, -85.0, 32761),       # UPS south
])
def test_local_metric_crs(lon, lat, epsg):
    assert local_metric_crs(lon, lat).to_epsg() == epsg


def test_local_metric_crs_warns_for_wide_data_and_rejects_bad_input():
    with pytest.warns(UserWarning, match="degrees of longitude"):
        local_metric_crs([-10.0, 10.0], [40.0, 41.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        local_metric_crs([139.0, 141.0], [35.0, 36.0])  # two zones, fine
    for lon, lat in [([], []), ([np.nan], [1.0]), ([190.0], [1.0]), ([1.0], [-91.0])]:
        with pytest.raises(ValueError):
            local_metric_crs(lon, lat)


CITIES = [(139.70, 35.68), (-73.98, 40.75), (151.21, -33.87), (179.9, -17.5), (15.6, 78.2),
          (15.0, 86.0), (-58.4, -34.6)]


@pytest.mark.parametrize("lon0, lat0", CITIES)
def test_round_trip_within_a_millimetre(lon0, lat0):
    rng = np.random.default_rng(11)
    lon = np.clip(lon0 + rng.uniform(-0.3, 0.3, 2000), -180, 180)
    lat = lat0 + rng.uniform(-0.3, 0.3, 2000)
    frame = gpd.GeoDataFrame(geometry=gpd.points_from_xy(lon, lat), crs=4326)
    metric = to_metric(frame)
    assert metric.crs.is_projected
    back = shapely.get_coordinates(np.asarray(to_wgs84(metric).geometry.array))
    _, _, dist = GEOD.inv(lon, lat, back[:, 0], back[:, 1])
    assert np.max(dist) <= 1e-3  # metres


def test_to_metric_matches_geopandas_and_keeps_everything_else():
    frame = dl.synthetic_checkins(users=5, seed=2)
    mine = to_metric(frame)
    theirs = frame.to_crs(mine.crs)
    np.testing.assert_array_equal(shapely.get_coordinates(np.asarray(mine.geometry.array)),
                                  shapely.get_coordinates(np.asarray(theirs.geometry.array)))
    assert mine.drop(columns="geometry").equals(frame.drop(columns="geometry"))
    assert mine.attrs["report"] is frame.attrs["report"]
    assert to_metric(frame.geometry, "EPSG:3857").crs.to_epsg() == 3857  # a GeoSeries
    with pytest.raises(ValueError, match="no CRS"):
        to_metric(frame.set_crs(None, allow_override=True))
    with pytest.raises(TypeError):
        to_metric(np.zeros((3, 2)))


@pytest.fixture(scope="module")
def traj():
    return dl.to_trajectories(dl.synthetic_checkins(users=30, seed=4, checkins_per_user=10),
                              split_gap="3h")


def test_container_basics(traj):
    n, t = traj.n_points, len(traj)
    assert traj.coords.shape == (n, 2) and traj.coords.dtype == np.float64
    assert traj.offsets.dtype == np.int64 and traj.offsets.shape == (t + 1,)
    assert not traj.coords.flags.writeable and not traj.offsets.flags.writeable
    assert traj.lengths.sum() == n
    assert [len(c) for c in traj] == traj.lengths.tolist()
    np.testing.assert_array_equal(traj[-1], traj.coords[traj.offsets[-2]:])
    np.testing.assert_array_equal(traj.coords[:, 0], traj.frame.geometry.x)
    assert "trajectories" in repr(traj)
    with pytest.raises(IndexError):
        traj[t]
    with pytest.raises(TypeError):
        traj[0:2]


def test_select(traj):
    sub = traj.select([3, 1])
    assert len(sub) == 2
    np.testing.assert_array_equal(sub[0], traj[3])
    np.testing.assert_array_equal(sub[1], traj[1])
    assert sub.frame["trajectory"].tolist() == [3] * len(traj[3]) + [1] * len(traj[1])
    assert len(traj.select(slice(0, 5))) == 5
    assert len(traj.select(traj.lengths >= 2)) == int(np.sum(traj.lengths >= 2))
    with pytest.raises(ValueError):
        traj.select([])


def test_crs_conversions(traj):
    wgs = traj.to_wgs84()
    assert wgs.crs.to_epsg() == 4326
    np.testing.assert_array_equal(wgs.offsets, traj.offsets)
    again = wgs.to_metric()
    assert again.crs == traj.crs
    np.testing.assert_allclose(again.coords, traj.coords, atol=1e-6)
    assert traj.to_metric() is traj  # already metric
    assert traj.to_crs(3857).crs.to_epsg() == 3857
    with pytest.raises(ValueError, match="degrees"):
        wgs.region()


def test_pois(traj):
    coords, ids = traj.pois()
    unique = {tuple(p) for p in traj.coords}
    assert len(coords) == len(unique) and {tuple(p) for p in coords} == unique
    first = {}
    for p, i in zip(map(tuple, traj.coords), traj.frame["poi_id"]):
        first.setdefault(p, i)
    assert ids.tolist() == [first[tuple(p)] for p in coords]
    by_id = traj.pois(by="poi_id")
    assert len(by_id.coords) == traj.frame["poi_id"].nunique()
    no_ids = traj.with_coords(traj.coords)
    no_ids = Trajectories(no_ids.frame.drop(columns="poi_id"), no_ids.offsets)
    assert no_ids.pois().ids is None
    with pytest.raises(ValueError):
        no_ids.pois(by="poi_id")
    with pytest.raises(ValueError):
        traj.pois(by="venue")


def test_region_rectangle_and_hull(traj):
    lo, hi = traj.coords.min(axis=0), traj.coords.max(axis=0)
    rect = traj.region()
    assert isinstance(rect, Rectangle)
    np.testing.assert_array_equal(rect.bounds, [lo[0], lo[1], hi[0], hi[1]])
    padded = traj.region(pad=250.0)
    np.testing.assert_allclose(padded.bounds, [lo[0] - 250, lo[1] - 250, hi[0] + 250, hi[1] + 250])
    hull = traj.region(hull=True)
    assert isinstance(hull, ConvexRegion) and hull.contains(traj.coords).all()
    grown = traj.region(pad=100.0, hull=True)
    assert grown.contains(traj.coords).all()
    outside = traj.coords[np.argmin(traj.coords[:, 0])] - [150.0, 0.0]
    assert not grown.contains(outside[None])[0]
    with pytest.raises(ValueError, match=">= 0"):
        traj.region(pad=-1.0)


def test_region_of_degenerate_point_sets():
    line = Trajectories.from_arrays([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], crs=None)
    with pytest.raises(ValueError, match="no area"):
        line.region()
    with pytest.raises(ValueError, match="no area"):
        line.region(hull=True)
    assert line.region(pad=1.0).bounds == (-1.0, -1.0, 3.0, 1.0)
    assert line.region(pad=1.0, hull=True).contains(line.coords).all()


def test_with_coords(traj):
    moved = traj.with_coords(traj.coords + 10.0)
    np.testing.assert_array_equal(moved.coords, traj.coords + 10.0)
    assert moved.frame.drop(columns="geometry").equals(traj.frame.drop(columns="geometry"))
    assert moved.crs == traj.crs and moved.report is traj.report
    np.testing.assert_array_equal(moved.offsets, traj.offsets)
    assert not np.array_equal(traj.coords, moved.coords)  # the original is untouched
    with pytest.raises(ValueError, match="shape"):
        traj.with_coords(traj.coords[:-1])
    bad = traj.coords.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        traj.with_coords(bad)


def test_from_arrays_and_validation():
    t = Trajectories.from_arrays(np.arange(10.0).reshape(5, 2), [0, 2, 5], uid=[1, 1, 2, 2, 2])
    assert len(t) == 2 and t.crs is None
    assert t.frame["trajectory"].tolist() == [0, 0, 1, 1, 1]
    assert isinstance(t.region(), Rectangle)
    frame = t.frame
    for offsets, error in [([0, 2], ValueError), ([1, 5], ValueError), ([0, 2, 2, 5], ValueError),
                           ([0.0, 2.5, 5.0], TypeError), ([[0, 5]], ValueError), ([0], ValueError)]:
        with pytest.raises(error):
            Trajectories(frame, offsets)
    with pytest.raises(ValueError, match="not constant"):
        Trajectories(frame, [0, 3, 5])
    with pytest.raises(ValueError, match="repeats an id"):
        Trajectories(frame.assign(trajectory=[0, 0, 1, 1, 0]), [0, 2, 4, 5])
    assert Trajectories(frame).offsets.tolist() == [0, 2, 5]  # offsets from the id column
    with pytest.raises(TypeError):
        Trajectories(frame.drop(columns="geometry"), [0, 5])
    with pytest.raises(ValueError, match="empty"):
        Trajectories(frame.iloc[:0], [0])
    with pytest.raises(ValueError, match="point"):
        Trajectories(frame.set_geometry([shapely.LineString([(0, 0), (1, 1)])] * 5), [0, 2, 5])
    with pytest.raises(ValueError):
        Trajectories.from_arrays(np.zeros((0, 2)))
