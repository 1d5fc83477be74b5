"""Maps opened in a real browser (headless Chromium): they render, without errors.

Every page is written with its scripts embedded and no tiles, opened from a local
file, and must: raise no JavaScript error (window errors and SEVERE console
entries), load nothing over the network, hold the expected Leaflet layers, and
paint pixels.  A screenshot of each goes to the test's artifacts folder.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.maps import compare_maps, save_map, trajectory_map

pytestmark = pytest.mark.browser

POINTS = {1: 10, 2: 8, 3: 5}
N = sum(POINTS.values())


def _clean(stats: dict) -> dict:
    """The page's single map, after checking the page raised no error and fetched nothing."""
    assert stats["errors"] == [], stats["errors"]
    assert stats["console_errors"] == [], stats["console_errors"]
    assert stats["resources"] == [], f"the page loaded {stats['resources']}"
    return stats["maps"]


def _toggle_overlay(browser, name: str) -> None:
    """Click the layer-control checkbox of the overlay called ``name``."""
    for label in browser.driver.find_elements("css selector", ".leaflet-control-layers-overlays label"):
        if label.text.strip() == name:
            label.find_element("tag name", "input").click()
            return
    raise AssertionError(f"no overlay named {name!r} in the layer control")


def _screenshot(browser, artifacts_dir, name):
    path = browser.screenshot(artifacts_dir / f"{name}.png")
    assert path.stat().st_size > 5_000  # a real picture, not an empty page


def test_small_map_markers_lines_and_tooltips(browser, tracks, reports, rounded, pois, tmp_path,
                                              artifacts_dir):
    fmap = trajectory_map(tracks, reports, rounded=rounded, pois=pois, tiles=None,
                          epsilon=2, method="TraCS-D")
    stats = browser.open(save_map(fmap, tmp_path / "small.html", offline=True))
    [m] = _clean(stats)
    # one circle marker per true point, report and rounded report, plus 40 POIs
    assert m["circleMarkers"] == 3 * N + 40
    assert m["roles"]["start"] == 3 * 4  # 4 trajectories, 3 layers
    assert m["roles"]["point"] == 3 * N - 12 + 40
    # per user and layer: the trajectory line and its arrowheads; reports add displacement
    assert m["roles"]["line"] == 3 * 3 and m["roles"]["arrows"] == 3 * 3
    assert m["roles"]["links"] == 3 * 2
    assert m["polylines"] == 9 + 9 + 6
    assert m["tileLayers"] == 0
    assert m["overlays"] == 3 * 3 + 1 + 1  # user layers, POIs, heat map
    assert "TraCS-D" in m["legend"] and "ε = 2 per point" in m["legend"]
    assert m["svgPaths"] == m["polylines"] + m["circleMarkers"]  # small maps draw SVG
    # switch user 1's reports off in the layer control, then hover its first true point
    for name in ("user 1 · perturbed", "user 1 · rounded"):
        _toggle_overlay(browser, name)
    assert browser.stats()["maps"][0]["circleMarkers"] == 3 * N + 40 - 2 * POINTS[1]
    first = tracks.to_crs(4326).geometry.iloc[0]
    text = browser.hover(m["name"], first.y, first.x)
    assert text is not None and text.startswith("user 1 true #1/6") and "2012-04-01 08:00" in text
    _screenshot(browser, artifacts_dir, "small_map")


def test_heat_map_layer_draws(browser, tracks, reports, tmp_path, artifacts_dir):
    fmap = trajectory_map(tracks, reports, tiles=None)
    browser.open(save_map(fmap, tmp_path / "heat.html", offline=True))
    heat = fmap._children[next(k for k in fmap._children if k.startswith("heat_map"))].get_name()
    browser.run(f"{fmap.get_name()}.addLayer({heat});")
    ink = browser.run("var c = document.querySelector('canvas.leaflet-heatmap-layer');"
                      "if (!c) { return -1; } var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                      "var n = 0; for (var i = 3; i < d.length; i += 4) { if (d[i]) { n++; } } return n;")
    assert ink > 1_000
    [m] = _clean(browser.stats())
    assert m["heat"] == 1
    _screenshot(browser, artifacts_dir, "heat_map")


def test_large_map_draws_dots_on_canvas(browser, make_big, tmp_path, artifacts_dir):
    frame, reported = make_big(20, 200)  # 4,000 points and their reports: dots, canvas
    pois = reported[::5] + [0.2, 0.0]  # 800 POIs, clustered, east of the trajectories
    fmap = trajectory_map(frame, reported, pois=pois, tiles=None, epsilon=4, method="TraCS-D")
    [m] = _clean(browser.open(save_map(fmap, tmp_path / "large.html", offline=True)))
    assert m["dotPoints"] == 2 * 4_000
    assert m["roles"]["points"] == 2 * 20 and m["roles"]["starts"] == 2 * 20
    assert m["roles"]["links"] == 20
    assert m["clusters"] == [800]
    assert m["svgPaths"] == 0 and m["ink"] > 20_000  # drawn on a canvas
    # hovering the last report (drawn on top) names it and its distance from the true point
    lon, lat = reported[-1]
    text = browser.hover(m["name"], lat, lon)
    assert text is not None and text.startswith("user 19 reported #200/200")
    assert text.endswith("m from the true point")
    _screenshot(browser, artifacts_dir, "large_map")


def test_compare_maps_side_by_side_in_sync(browser, tracks, reports, tmp_path, artifacts_dir):
    left = trajectory_map(tracks, reports, tiles=None, epsilon=2, method="TraCS-D")
    far = np.column_stack([tracks.geometry.x, tracks.geometry.y]) + 300.0
    right = trajectory_map(tracks, far, tiles=None, epsilon=8, method="TraCS-D")
    page = compare_maps(left, right, titles=("ε = 2", "ε = 8"))
    maps = _clean(browser.open(save_map(page, tmp_path / "compare.html", offline=True)))
    assert len(maps) == 2
    for m in maps:
        assert m["circleMarkers"] == 2 * N
    views = []
    for fmap, other in ((left, right), (right, left)):  # move one map: the other follows
        browser.run(f"{fmap.get_name()}.setView([35.7, 139.75], {13 + len(views)}, {{animate: false}});")
        views.append(browser.run(
            "return [arguments[0], arguments[1]].map(function (k) {"
            " var m = window[k], c = m.getCenter(); return [c.lat, c.lng, m.getZoom()]; });",
            fmap.get_name(), other.get_name()))
    for (moved, follower), zoom in zip(views, (13, 14)):
        assert moved[2] == follower[2] == zoom
        # within a pixel (setView pans by whole pixels): ~20 m at zoom 13
        assert follower[:2] == pytest.approx(moved[:2], abs=3e-4)
        assert moved[:2] == pytest.approx([35.7, 139.75], abs=3e-4)
    _clean(browser.stats())
    _screenshot(browser, artifacts_dir, "compare_maps")


def test_map_command_output_opens(browser, checkin_files, tmp_path, artifacts_dir, capsys):
    from tracs.cli import main

    source, released = checkin_files
    out = tmp_path / "cli.html"
    assert main(["map", str(source), str(released), "-o", str(out), "--input-pois",
                 "--tiles", "none", "--offline", "--first", "3"]) == 0
    [m] = _clean(browser.open(out))
    assert m["roles"]["links"] == 3 and m["overlays"] >= 6
    assert "ε = 4 per point" in m["legend"]
    _screenshot(browser, artifacts_dir, "map_command")


def test_demo_map_opens(browser, tmp_path, artifacts_dir, capsys):
    """'tracs demo' writes a map that renders without errors, with its legend and layers."""
    from tracs.cli import main

    out = tmp_path / "demo"
    assert main(["demo", "--dataset", "synthetic", "--epsilons", "4", "--repetitions", "1",
                 "--output-dir", str(out), "--tiles", "none", "--no-progress"]) == 0
    [m] = _clean(browser.open(out / "map.html"))
    assert "TraCS-D" in m["legend"] and "ε = 4 per point" in m["legend"]
    assert m["overlays"] >= 3 * 5  # original, released and rounded layers of five users
    _screenshot(browser, artifacts_dir, "demo_map")
