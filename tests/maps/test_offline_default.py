"""Maps work where users are: Leaflet inlined by default, a note when tiles fail, the date line."""

from __future__ import annotations

import time

import geopandas as gpd
import numpy as np
import pytest
from shapely.geometry import Point

from tracs.maps import map_html, save_map, trajectory_map
from tracs.maps._elements import TILE_FAILURE_NOTE
from tracs.maps._inputs import rows_batch, unwrap_longitudes

LEAFLET_CDN = "cdn.jsdelivr.net/npm/leaflet"


def test_pages_inline_leaflet_by_default(tracks, reports, tmp_path, offline_assets):
    fmap = trajectory_map(tracks, reports, tiles=None)
    page = save_map(fmap, tmp_path / "m.html").read_text(encoding="utf-8")
    assert LEAFLET_CDN not in page and "L.map" in page and "<script src=\"http" not in page
    assert LEAFLET_CDN in map_html(fmap, offline=False)


def test_tile_failure_note_only_where_there_are_tiles(tracks, offline_assets):
    with_tiles = map_html(trajectory_map(tracks, tiles="OpenStreetMap"))
    assert "tracs-tile-note" in with_tiles and "could not be loaded" in with_tiles
    assert "tracs-tile-note" not in map_html(trajectory_map(tracks, tiles=None))


def _rows(lon, track):
    n = len(lon)
    return rows_batch(np.zeros(n), np.asarray(lon, float), np.asarray(track, object), np.asarray(track, object))


@pytest.mark.parametrize("lon,track,expected", [
    # east to west across the date line: continues past 180
    ([179.0, 179.9, -179.9, -179.0], [1, 1, 1, 1], [179.0, 179.9, 180.1, 181.0]),
    # west to east
    ([-179.5, 179.5], [1, 1], [-179.5, -180.5]),
    # a new trajectory starts afresh
    ([179.9, -179.9, -179.9, 179.9], [1, 1, 2, 2], [179.9, 180.1, -179.9, -180.1]),
    # nothing crosses: unchanged
    ([139.6, 139.7, 139.8], [1, 1, 1], [139.6, 139.7, 139.8]),
])
def test_longitudes_unwrap_along_each_trajectory(lon, track, expected):
    original, _ = unwrap_longitudes(_rows(lon, track), {})
    np.testing.assert_allclose(original.coords[:, 0], expected, atol=1e-9)


def test_reports_take_the_copy_nearest_their_true_point():
    original = _rows([179.9, -179.9], [1, 1])
    report = _rows([-179.8, 179.7], [1, 1])
    shifted, reports = unwrap_longitudes(original, {"perturbed": report})
    np.testing.assert_allclose(shifted.coords[:, 0], [179.9, 180.1])
    np.testing.assert_allclose(reports["perturbed"].coords[:, 0], [180.2, 179.7])


def test_a_trip_across_the_date_line_is_drawn_the_short_way(offline_assets):
    frame = gpd.GeoDataFrame({"uid": [1, 1, 1]},
                             geometry=[Point(179.8, -16.5), Point(179.95, -16.6), Point(-179.9, -16.7)],
                             crs="EPSG:4326")
    page = map_html(trajectory_map(frame, tiles=None))
    assert "180.1" in page and "-179.9" not in page


@pytest.mark.browser
def test_offline_page_with_unreachable_tiles_draws_the_trajectories(browser, tracks, reports, tmp_path,
                                                                    artifacts_dir):
    """Tiles from a server this machine cannot reach: a visible note, and the lines drawn."""
    import matplotlib.image as mpimg

    fmap = trajectory_map(tracks, reports, tiles="OpenStreetMap", heatmap=False)
    browser.open(save_map(fmap, tmp_path / "offline.html"))
    deadline = time.monotonic() + 20
    note = []
    while time.monotonic() < deadline and not note:
        note = browser.driver.find_elements("css selector", ".tracs-tile-note")
        time.sleep(0.2)
    assert note, "no tile-failure note appeared"
    assert note[0].is_displayed() and TILE_FAILURE_NOTE.split(".")[0] in note[0].text
    image = mpimg.imread(browser.screenshot(artifacts_dir / "offline_tiles.png"))[..., :3]
    # the first user's colour (#1f77b4) is painted: the trajectories are drawn
    first = np.array([0x1F, 0x77, 0xB4]) / 255
    painted = np.all(np.abs(image - first) < 0.06, axis=-1).sum()
    assert painted > 200, f"only {painted} pixels of the first trajectory's colour"
