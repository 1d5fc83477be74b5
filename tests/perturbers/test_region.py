"""Regions: construction, containment, exact exit distances, clamping."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from tracs.region import ConvexRegion, Rectangle

HEXAGON = [(math.cos(a), math.sin(a)) for a in np.arange(6) * math.pi / 3]


def brute_exit(region, origin, angle):
    """Exit distance by bisection on containment (independent of the half-plane code)."""
    d = np.array([math.cos(angle), math.sin(angle)])
    lo, hi = 0.0, 2.0 * region.diameter
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if region.polygon.covers(shapely.Point(*(origin + mid * d))):
            lo = mid
        else:
            hi = mid
    return lo


def test_rectangle_properties():
    r = Rectangle(0, 0, 2, 10)
    assert r.bounds == (0.0, 0.0, 2.0, 10.0)
    assert (r.width, r.height, r.area) == (2.0, 10.0, 20.0)
    assert r.diameter == pytest.approx(math.hypot(2, 10))
    assert r.center == (1.0, 5.0) and r.corner == (0.0, 0.0)
    assert r == Rectangle(0.0, 0.0, 2.0, 10.0) and hash(r) == hash(Rectangle(0, 0, 2, 10))
    assert r.polygon.area == 20.0


@pytest.mark.parametrize("args, exc", [
    ((0, 0, 0, 1), ValueError), ((0, 1, 1, 0), ValueError), ((0, 0, math.nan, 1), ValueError),
    ((0, 0, math.inf, 1), ValueError), (("0", 0, 1, 1), TypeError), ((True, 0, 1, 1), TypeError),
])
def test_rectangle_rejects_bad_bounds(args, exc):
    with pytest.raises(exc):
        Rectangle(*args)


def test_convex_region_from_polygon_and_vertices():
    a = ConvexRegion(shapely.Polygon(HEXAGON))
    b = ConvexRegion(HEXAGON[::-1] + [HEXAGON[-1]])  # clockwise, closing vertex repeated
    assert a == b
    assert a.area == pytest.approx(3 * math.sqrt(3) / 2)
    assert np.allclose(a.center, (0, 0), atol=1e-15)
    assert a.diameter == pytest.approx(2.0)
    assert a.corner == pytest.approx((math.cos(4 * math.pi / 3), math.sin(4 * math.pi / 3)))
    # collinear and duplicate vertices are dropped
    c = ConvexRegion([(0, 0), (0.5, 0), (1, 0), (1, 0), (1, 1), (0, 1)])
    assert len(c.vertices) == 4


@pytest.mark.parametrize("bad, exc", [
    ([(0, 0), (1, 0), (0.2, 0.2), (0, 1)], ValueError),  # reflex vertex
    ([(0, 0), (2, 0), (0, 2), (2, 2)], ValueError),  # bow tie
    ([(math.cos(a), math.sin(a)) for a in np.arange(5) * 4 * math.pi / 5], ValueError),  # pentagram
    ([(0, 0), (1, 0), (2, 0)], ValueError),  # degenerate
    ([(0, 0), (1, 0)], ValueError),
    (shapely.Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], [[(1, 1), (2, 1), (2, 2)]]), ValueError),
    (shapely.Point(0, 0), TypeError),
    ("square", TypeError),
    ([(0, 0), (1, math.nan), (0, 1)], ValueError),
])
def test_convex_region_rejects(bad, exc):
    with pytest.raises(exc):
        ConvexRegion(bad)


def test_contains_closed_and_tolerance():
    r = Rectangle(0, 0, 1, 1)
    assert r.contains([[0, 0], [1, 1], [0.5, 1], [1, 0.3]]).all()
    assert not r.contains([[np.nextafter(1.0, 2.0), 0.5], [-1e-300, 0.5]]).any()
    tri = ConvexRegion([(0, 0), (1, 0), (0, 1)])
    assert tri.contains([[0.5, 0.5], [0, 0]]).all()
    assert not tri.contains([[0.5, 0.5 + 1e-9]])[0]
    with pytest.raises(ValueError):
        r.contains([1, 2, 3])


def test_exit_distance_exact_at_boundary_and_corners():
    r = Rectangle(0, 0, 2, 10)
    o = np.array([[0, 0], [0, 0], [0, 0], [2, 10], [1, 0], [1, 0], [2, 5], [1, 5]], float)
    phi = np.array([math.pi, 1.5 * math.pi, 0.25 * math.pi, 0.0, 1.5 * math.pi, 0.5 * math.pi,
                    0.0, 0.0])
    d = r.exit_distance(o, phi)
    assert d[0] == 0.0 and d[1] == 0.0 and d[3] == 0.0 and d[4] == 0.0 and d[6] == 0.0
    assert d[2] == pytest.approx(2 * math.sqrt(2))
    assert d[5] == 10.0 and d[7] == 1.0
    assert not np.signbit(d).any()


@pytest.mark.parametrize("region", [Rectangle(-1, 2, 3, 4), ConvexRegion(HEXAGON),
                                    ConvexRegion([(0, 0), (5, 1), (3, 4)])])
def test_exit_distance_matches_bisection(region):
    rng = np.random.default_rng(7)
    xmin, ymin, xmax, ymax = region.bounds
    pts = rng.uniform((xmin, ymin), (xmax, ymax), size=(400, 2))
    pts = np.concatenate([pts[region.contains(pts)][:40], region.vertices])
    angles = rng.uniform(0, 2 * math.pi, len(pts))
    got = region.exit_distance(pts, angles)
    want = [brute_exit(region, o, a) for o, a in zip(pts, angles)]
    assert np.allclose(got, want, atol=1e-9 * region.diameter)
    # the exit point lies on the boundary
    ends = pts + got[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])
    assert region.contains(ends).all() or isinstance(region, ConvexRegion)


def test_convex_square_agrees_with_rectangle():
    rect = Rectangle(0, 0, 2, 10)
    poly = ConvexRegion(rect.polygon)
    rng = np.random.default_rng(3)
    o = rng.uniform((0, 0), (2, 10), (1000, 2))
    phi = rng.uniform(0, 2 * np.pi, 1000)
    assert np.array_equal(rect.exit_distance(o, phi), poly.exit_distance(o, phi))
    tau = rng.uniform((0, 0), (2, 10), (1000, 2))
    assert np.array_equal(rect.direction_distance(o, tau)[1], poly.direction_distance(o, tau)[1])


def test_exit_distance_rejects_outside_origin():
    with pytest.raises(ValueError):
        Rectangle(0, 0, 1, 1).exit_distance([[2, 0]], [0.0])


def test_direction_distance_conventions():
    r = Rectangle(0, 0, 1, 1)
    o = np.array([[0.5, 0.5], [0, 0], [0, 0], [0.5, 0.5], [1, 1], [0.2, 0.3]])
    tau = np.array([[0.5, 0.5], [1, 1], [0, 0.7], [1, 0.5], [0.2, 0.9], [0.2, 0.3]])
    phi, u = r.direction_distance(o, tau)
    assert (phi[0], u[0]) == (0.0, 0.0)  # τ == o
    assert u[1] == 1.0 and phi[1] == pytest.approx(math.pi / 4)  # corner to corner, exact
    assert u[2] == 0.7 and phi[2] == pytest.approx(math.pi / 2)  # along an edge
    assert u[3] == 1.0 and phi[3] == 0.0
    assert phi[4] > math.pi and 0 < u[4] <= 1
    assert (phi[5], u[5]) == (0.0, 0.0)
    assert np.all((phi >= 0) & (phi < 2 * math.pi))
    # tiny negative angle wraps to [0, 2π), never 2π
    phi, _ = r.direction_distance([[0.5, 0.5]], [[1.0, 0.5 - 1e-300]])
    assert 0.0 <= phi[0] < 2 * math.pi


def test_direction_distance_inverts_exit_distance():
    region = ConvexRegion(HEXAGON)
    rng = np.random.default_rng(11)
    pts = rng.uniform(-1, 1, (3000, 2))
    pts = pts[region.contains(pts)]
    o, tau = pts[: len(pts) // 2], pts[len(pts) // 2: 2 * (len(pts) // 2)]
    phi, u = region.direction_distance(o, tau)
    back = o + (u * region.exit_distance(o, phi))[:, None] * np.column_stack([np.cos(phi), np.sin(phi)])
    assert np.allclose(back, tau, atol=1e-12)


def test_clip_projects_to_nearest_point():
    r = Rectangle(0, 0, 1, 1)
    assert np.array_equal(r.clip([[2, 0.5], [-1, -1], [0.3, 0.4]]), [[1, 0.5], [0, 0], [0.3, 0.4]])
    tri = ConvexRegion([(0, 0), (1, 0), (0, 1)])
    got = tri.clip([[1, 1], [2, -1], [0.1, 0.1]])
    assert np.allclose(got, [[0.5, 0.5], [1, 0], [0.1, 0.1]])
    assert tri.contains(got).all()


def test_bounding_rectangle():
    r = Rectangle.bounding([[1, 2], [3, -1]], pad=0.5)
    assert r.bounds == (0.5, -1.5, 3.5, 2.5)
    with pytest.raises(ValueError):
        Rectangle.bounding([[1, 2]], pad=-1)


def test_regions_pickle():
    import pickle

    for region in (Rectangle(0, 0, 1, 2), ConvexRegion(HEXAGON)):
        assert pickle.loads(pickle.dumps(region)) == region


def test_many_vertices_polygon():
    """A 2000-gon (a disc): memory stays bounded, geometry is right."""
    a = np.linspace(0, 2 * np.pi, 2000, endpoint=False)
    disc = ConvexRegion(np.column_stack([np.cos(a), np.sin(a)]))
    assert disc.diameter == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    phi = rng.uniform(0, 2 * np.pi, 1000)
    assert np.allclose(disc.exit_distance(np.zeros((1000, 2)), phi), 1.0, atol=2e-6)
    clipped = disc.clip(3 * np.column_stack([np.cos(phi), np.sin(phi)]))
    assert np.allclose(np.hypot(*clipped.T), 1.0, atol=2e-6) and disc.contains(clipped).all()
