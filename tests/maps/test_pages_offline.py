"""Every HTML page the ``tracs`` command writes opens without a network, in headless Chromium.

The pages of ``tracs estimate -o x.html``, ``tracs map`` and ``tracs demo`` are
written by the command itself, then opened with Chromium's network switched off
(DevTools network emulation).  Each must raise no JavaScript error, fetch nothing
but its background tiles (which fail: the page then shows its note), and draw its
layers.  Without tiles (``--tiles none``) it fetches nothing at all.  The page
checks without a browser — no script or style sheet from the network, no jQuery or
Bootstrap, tile providers that need a key refused — run everywhere.
"""

from __future__ import annotations

import contextlib
import io
import time

import pytest

from tracs.cli import main
from tracs.maps import base_map, check_tiles, external_assets, save_map

TILE_HOST = "tile.openstreetmap.org"


def _tracs(*argv) -> str:
    """Run the command in this process; return its standard error (failing on a non-zero exit)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    assert code == 0, err.getvalue()
    return err.getvalue()


@pytest.fixture
def release(checkin_files, tmp_path):
    """A file released by ``tracs perturb`` (with its sidecar) from the Tokyo check-ins of the fixture."""
    source, _ = checkin_files
    out = tmp_path / "released.csv"
    _tracs("perturb", source, "-o", out, "-m", "tracs-c", "-e", "4", "--region", "tky", "--seed", "1", "-q")
    return source, out


def _pages(release, tmp_path):
    source, released = release
    pages = {}
    for tiles in ("OpenStreetMap", "none"):
        pages[f"estimate-{tiles}"] = tmp_path / f"estimate-{tiles}.html"
        _tracs("estimate", released, "-o", pages[f"estimate-{tiles}"], "--grid", "6", "--tiles", tiles)
        pages[f"map-{tiles}"] = tmp_path / f"map-{tiles}.html"
        _tracs("map", source, released, "-o", pages[f"map-{tiles}"], "--tiles", tiles, "-q")
    return pages


def test_pages_written_by_the_command_hold_every_script(release, tmp_path, offline_assets):
    for name, path in _pages(release, tmp_path).items():
        page = path.read_text(encoding="utf-8")
        assert external_assets(page) == [], name
        assert "L.map(" in page, name
        for absent in ("jquery", "bootstrap", "awesome-markers", "cartocdn"):
            assert absent not in page.lower(), (name, absent)
        assert (TILE_HOST in page) == name.endswith("OpenStreetMap"), name


@pytest.mark.parametrize("tiles, fragment", [
    ("CartoDB positron", "need an API key"),
    ("Thunderforest.OpenCycleMap", "need an API key"),
])
def test_tiles_that_need_a_key_are_refused(tiles, fragment):
    with pytest.raises(ValueError) as info:
        check_tiles(tiles)
    assert fragment in str(info.value) and "use OpenStreetMap (the default) or none" in str(info.value)
    with pytest.raises(ValueError, match="need an API key"):
        base_map(((35, 139), (36, 140)), tiles=tiles)


@pytest.mark.parametrize("tiles", [None, "OpenStreetMap", "https://tiles.example.org/{z}/{x}/{y}.png"])
def test_tiles_without_a_key_are_kept(tiles):
    assert check_tiles(tiles) == tiles


def test_estimate_refuses_keyed_tiles_before_any_work(release, tmp_path, capsys):
    _, released = release
    code = main(["estimate", str(released), "-o", str(tmp_path / "x.html"), "--tiles", "CartoDB positron"])
    assert code == 1
    assert "tracs estimate: error: the tiles 'CartoDB positron' need an API key" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


# ----------------------------------------------------------------------------- in Chromium


@contextlib.contextmanager
def _offline(browser):
    driver = browser.driver
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


_NOTE = "var n = document.querySelector('.tracs-tile-note'); return n ? n.textContent : null;"


def _open_offline(browser, path, *, tiles: bool) -> dict:
    """Open ``path`` offline; wait for the tile note when there are tiles; return the page's stats."""
    stats = browser.open(path)
    note = None
    for _ in range(50):
        note = browser.run(_NOTE)
        if note is not None or not tiles:
            break
        time.sleep(0.1)
    stats = browser.stats()
    stats["note"] = note
    assert stats["errors"] == [], stats["errors"]
    assert [e for e in stats["console_errors"] if TILE_HOST not in e] == [], stats["console_errors"]
    assert all(TILE_HOST in url for url in stats["resources"]), stats["resources"]
    if not tiles:
        assert stats["resources"] == [] and note is None
    [fmap] = stats["maps"]
    return stats | {"map": fmap}


@pytest.mark.browser
def test_every_page_opens_offline_in_chromium(browser, release, tmp_path, artifacts_dir):
    pages = _pages(release, tmp_path)
    with _offline(browser):
        for tiles in ("OpenStreetMap", "none"):
            with_tiles = tiles != "none"
            est = _open_offline(browser, pages[f"estimate-{tiles}"], tiles=with_tiles)
            assert est["map"]["tileLayers"] == int(with_tiles)
            assert est["map"]["svgPaths"] >= 4  # the shaded cells of the 6 × 6 grid
            if with_tiles:
                assert est["note"].startswith("Background map tiles could not be loaded")
                assert "The estimated density is drawn on a plain background" in est["note"]
            browser.screenshot(artifacts_dir / f"estimate_offline_{tiles}.png")
            drawn = _open_offline(browser, pages[f"map-{tiles}"], tiles=with_tiles)
            assert drawn["map"]["tileLayers"] == int(with_tiles)
            assert drawn["map"]["roles"]["line"] >= 5 and drawn["map"]["legend"]
            if with_tiles:
                assert "The trajectories are drawn on a plain background" in drawn["note"]


@pytest.mark.browser
def test_demo_map_opens_offline_in_chromium(browser, tmp_path):
    _tracs("demo", "--dataset", "synthetic", "--epsilons", "4", "--repetitions", "1", "--output-dir",
           tmp_path / "demo", "-q")
    page = tmp_path / "demo" / "map.html"
    assert external_assets(page.read_text(encoding="utf-8")) == []
    with _offline(browser):
        stats = _open_offline(browser, page, tiles=True)
    assert stats["map"]["roles"]["line"] >= 2 and stats["note"] is not None


def test_save_map_inlines_a_base_map(tmp_path, offline_assets):
    page = save_map(base_map(((35.6, 139.6), (35.8, 139.9)), tiles=None), tmp_path / "b.html")
    assert external_assets(page.read_text(encoding="utf-8")) == []
