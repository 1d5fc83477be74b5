"""tracs.perturb_gdf: a GeoDataFrame in, the same frame with released geometry out."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import LineString, Point

import tracs
from tracs.gdf import perturb_gdf

# Tokyo, read off a map in degrees
REGION = tracs.Rectangle(139.5, 35.5, 139.9, 35.8)


def _frame(seed=0, users=("a", "b", "c"), n=6):
    rng = np.random.default_rng(seed)
    rows = []
    for u in users:
        start = np.array([139.6, 35.6]) + rng.uniform(0, 0.15, 2)
        for k in range(n):
            lon, lat = start + rng.normal(0, 0.01, 2)
            rows.append({"user_id": u, "timestamp": pd.Timestamp("2024-05-01 08:00", tz="UTC")
                         + pd.Timedelta(minutes=17 * k), "venue": f"v{k}", "lon": lon, "lat": lat})
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed)  # rows in any order
    frame.index = [f"r{i}" for i in range(len(frame))]
    return gpd.GeoDataFrame(frame.drop(columns=["lon", "lat"]),
                            geometry=gpd.points_from_xy(frame.lon, frame.lat), crs="EPSG:4326")


@pytest.mark.parametrize("make", [
    lambda r: tracs.TraCSD(r, epsilon=2.0),
    lambda r: tracs.TraCSC(r, epsilon=2.0),
    lambda r: tracs.Strawman(r, epsilon=2.0),
    lambda r: tracs.PlanarLaplace(r, epsilon=2.0),
    lambda r: tracs.TraCSD(r, epsilon_per_trajectory=12.0, anchor=(139.7, 35.65)),
], ids=["tracs-d", "tracs-c", "strawman", "planar-laplace", "tracs-d-anchor-budget"])
def test_same_frame_with_released_geometry(make):
    gdf = _frame()
    out = perturb_gdf(gdf, make(REGION), rng=7)
    assert out.crs == gdf.crs and list(out.index) == list(gdf.index)
    assert list(out.columns) == list(gdf.columns)
    pd.testing.assert_frame_equal(out.drop(columns="geometry"), gdf.drop(columns="geometry"))
    moved = out.geometry.distance(gdf.geometry)
    assert (moved > 0).all()
    # releases lie in (the projected bounding box of) the region: within 0.01° of it here
    x, y = out.geometry.x, out.geometry.y
    assert x.between(139.5 - 0.01, 139.9 + 0.01).all() and y.between(35.5 - 0.01, 35.8 + 0.01).all()
    again = perturb_gdf(gdf, make(REGION), rng=7)
    assert again.geometry.geom_equals_exact(out.geometry, tolerance=0).all()


def test_a_users_release_depends_only_on_that_users_rows():
    gdf = _frame()
    out = perturb_gdf(gdf, tracs.TraCSD(REGION, 2.0), rng=3)
    changed = gdf.copy()
    other = changed.user_id != "a"
    changed.loc[other, "geometry"] = gpd.points_from_xy(np.full(other.sum(), 139.8), np.full(other.sum(), 35.7))
    changed = changed.drop(index=changed.index[other][:2])  # and fewer rows of the others
    out2 = perturb_gdf(changed, tracs.TraCSD(REGION, 2.0), rng=3)
    mine = gdf.index[gdf.user_id == "a"]
    assert out2.loc[mine].geometry.geom_equals_exact(out.loc[mine].geometry, tolerance=0).all()


def test_projected_frames_are_perturbed_in_their_own_crs():
    gdf = _frame().to_crs("EPSG:32654")
    xmin, ymin, xmax, ymax = gdf.total_bounds
    region = tracs.Rectangle(xmin - 5000, ymin - 5000, xmax + 5000, ymax + 5000)
    out = perturb_gdf(gdf, tracs.TraCSC(region, 4.0), rng=1)
    assert out.crs == gdf.crs and region.contains(np.column_stack([out.geometry.x, out.geometry.y])).all()


@pytest.mark.parametrize("call,error,fragment", [
    (lambda g: perturb_gdf(pd.DataFrame(g), tracs.TraCSD(REGION, 1.0)), TypeError, "pass a geopandas.GeoDataFrame"),
    (lambda g: perturb_gdf(g.geometry, tracs.TraCSD(REGION, 1.0)), TypeError, "expected a GeoDataFrame"),
    (lambda g: perturb_gdf(g, "tracs-d"), TypeError, "expected a tracs perturber"),
    (lambda g: perturb_gdf(g.set_crs(None, allow_override=True), tracs.TraCSD(REGION, 1.0)), ValueError,
     "has no CRS"),
    (lambda g: perturb_gdf(g, tracs.TraCSD(REGION, 1.0), user="uid"), ValueError, "user column 'uid' not found"),
    (lambda g: perturb_gdf(g, tracs.TraCSD(REGION, 1.0), time="when"), ValueError, "time column 'when'"),
    (lambda g: perturb_gdf(g.assign(user_id=None), tracs.TraCSD(REGION, 1.0)), ValueError, "have no user id"),
    (lambda g: perturb_gdf(g.assign(timestamp="soon"), tracs.TraCSD(REGION, 1.0)), ValueError,
     "no readable time"),
    (lambda g: perturb_gdf(g, tracs.TraCSD(tracs.Rectangle(139.5, 35.5, 139.6, 35.55), 1.0)), ValueError,
     "outside the perturber's region"),
    (lambda g: perturb_gdf(g.set_geometry([LineString([(139.6, 35.6), (139.7, 35.7)])] * len(g)),
                           tracs.TraCSD(REGION, 1.0)), ValueError, "must be a Point"),
    (lambda g: perturb_gdf(g.set_geometry([None] + [Point(139.6, 35.6)] * (len(g) - 1), crs="EPSG:4326"),
                           tracs.TraCSD(REGION, 1.0)), ValueError, "have no geometry"),
])
def test_bad_inputs(call, error, fragment):
    with pytest.raises(error) as info:
        call(_frame())
    assert fragment in str(info.value)


def test_empty_frame_comes_back_empty():
    empty = _frame().iloc[:0]
    assert len(perturb_gdf(empty, tracs.TraCSD(REGION, 1.0))) == 0


def test_the_metric_perturber_is_rebuilt_by_its_registry_entry_with_every_public_option():
    from tracs.gdf import metric_perturber
    from tracs.methods import method_of

    pois = tracs.POISpace(np.array([[139.6, 35.6], [139.7, 35.7], [139.8, 35.65]]))
    given = tracs.TraCSD(REGION, epsilon_per_trajectory=12.0, anchor=(139.7, 35.65), direction_share=0.6,
                         distance_along="true", resolution=2.0 ** -12, round_to=pois)
    metric, forward, _, _ = metric_perturber(given, "EPSG:4326")
    assert type(metric) is tracs.TraCSD and method_of(metric).name == "tracs-d-paper"
    assert (metric.epsilon, metric.epsilon_per_trajectory) == (None, 12.0)
    assert (metric.direction_share, metric.distance_along, metric.resolution) == (0.6, "true", 2.0 ** -12)
    np.testing.assert_allclose(metric.anchor, forward.transform(139.7, 35.65))
    np.testing.assert_allclose(metric.round_to.points[:, 0], forward.transform(*pois.points.T)[0])


def test_a_class_no_registry_entry_builds_is_refused_in_degrees():
    class Mine(tracs.TraCSC):
        pass

    with pytest.raises(TypeError, match="Mine is not a registered perturber"):
        perturb_gdf(_frame(), Mine(REGION, 1.0))
