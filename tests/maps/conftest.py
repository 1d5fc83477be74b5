"""Fixtures for the map tests: small trajectories, and a headless Chromium.

The browser is Debian's Chromium (``/usr/bin/chromium``) driven by its
chromedriver (``/usr/bin/chromedriver``) through Selenium, with an explicit
driver path so that Selenium Manager never downloads anything.  Pages are opened
from local files with their scripts embedded (``save_map(..., offline=True)``)
and no tiles, so nothing touches the network.  Without Chromium the browser tests
skip with a message naming Chromium; in CI (``CI`` true) they fail instead.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest

UTM_TOKYO = "EPSG:32654"
#: points per trajectory of the small fixture: user 1 has two trajectories
TRAJECTORIES = {1: (6, 4), 2: (8,), 3: (5,)}
N_POIS = 40

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium")
CHROMEDRIVER_CANDIDATES = ("chromedriver", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1200,800",
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


# ----------------------------------------------------------------------------- data


@pytest.fixture
def tracks() -> gpd.GeoDataFrame:
    """23 true points of 3 users in metres (UTM 54N), in trajectory order."""
    rng = np.random.default_rng(7)
    rows = []
    trajectory = 0
    for uid, lengths in TRAJECTORIES.items():
        for n in lengths:
            start = np.array([388_000.0, 3_948_000.0]) + rng.normal(0, 3_000, 2)
            steps = np.cumsum(rng.normal(0, 600, (n, 2)), axis=0)
            times = pd.Timestamp("2012-04-01 08:00", tz="UTC") + pd.to_timedelta(
                np.arange(n) * 45 + trajectory * 1440, unit="min")
            for k in range(n):
                rows.append((uid, trajectory, times[k], *(start + steps[k])))
            trajectory += 1
    frame = pd.DataFrame(rows, columns=["uid", "trajectory", "datetime", "x", "y"])
    return gpd.GeoDataFrame(frame[["uid", "trajectory", "datetime"]],
                            geometry=gpd.points_from_xy(frame["x"], frame["y"]), crs=UTM_TOKYO)


@pytest.fixture
def reports(tracks) -> np.ndarray:
    """One report per true point, in metres (the CRS of ``tracks``), seeded noise."""
    xy = np.column_stack([tracks.geometry.x, tracks.geometry.y])
    return xy + np.random.default_rng(8).normal(0, 800, xy.shape)


@pytest.fixture
def pois(tracks) -> gpd.GeoDataFrame:
    """40 venues around the trajectories, in WGS84, with ids."""
    rng = np.random.default_rng(9)
    xy = np.column_stack([tracks.geometry.x, tracks.geometry.y])
    points = xy.mean(axis=0) + rng.normal(0, 4_000, (N_POIS, 2))
    frame = gpd.GeoDataFrame({"poi_id": [f"v{i}" for i in range(N_POIS)]},
                             geometry=gpd.points_from_xy(points[:, 0], points[:, 1]), crs=UTM_TOKYO)
    return frame.to_crs(4326)


@pytest.fixture
def rounded(reports, pois) -> np.ndarray:
    """Each report moved to its nearest venue (metres)."""
    venues = pois.to_crs(UTM_TOKYO)
    v = np.column_stack([venues.geometry.x, venues.geometry.y])
    nearest = np.argmin(((reports[:, None, :] - v[None, :, :]) ** 2).sum(-1), axis=1)
    return v[nearest]


def big_tracks(n_users: int, per_user: int, seed: int = 0):
    """``n_users * per_user`` points (WGS84) and matching reports (an array in degrees)."""
    rng = np.random.default_rng(seed)
    n = n_users * per_user
    lat = 35.68 + 0.2 * np.cumsum(rng.normal(0, 0.002, n))
    lon = 139.76 + 0.2 * np.cumsum(rng.normal(0, 0.002, n))
    lat, lon = 35.68 + lat - lat.mean(), 139.76 + lon - lon.mean()
    frame = gpd.GeoDataFrame(
        {"uid": np.repeat(np.arange(n_users), per_user),
         "datetime": pd.Timestamp("2012-04-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 600, unit="s")},
        geometry=gpd.points_from_xy(lon, lat), crs=4326)
    reported = np.column_stack([lon, lat]) + rng.normal(0, 0.02, (n, 2))
    return frame, reported


# ----------------------------------------------------------------------------- HTML


_TRACK_CALL = re.compile(r"tracsMaps\.track\((\w+), (\{.*?\}), (\w+)\);\n")


def payloads(page: str) -> list[dict]:
    """The JSON payloads of the trajectory layers of a page, in page order."""
    out = []
    for group, text, ref in _TRACK_CALL.findall(page):
        data = json.loads(text)
        data["_group"], data["_ref"] = group, ref
        out.append(data)
    return out


# ----------------------------------------------------------------------------- browser


def _missing_browser(message: str):
    if _in_ci():
        pytest.fail(f"{message} (CI must run the browser tests)")
    pytest.skip(message)


def _find(candidates) -> str | None:
    for name in candidates:
        found = shutil.which(name) or (name if os.path.isfile(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


_ERROR_HOOK = """
window.__tracsErrors = [];
window.addEventListener('error', function (e) {
  window.__tracsErrors.push(String(e.message) + ' at ' + e.filename + ':' + e.lineno);
});
window.addEventListener('unhandledrejection', function (e) {
  window.__tracsErrors.push('unhandled rejection: ' + String(e.reason));
});
"""

_STATS = """
var out = {maps: [], errors: window.__tracsErrors || [], resources: [], tooltip: null};
performance.getEntriesByType('resource').forEach(function (e) { out.resources.push(e.name); });
Object.keys(window).forEach(function (k) {
  var m;
  try { m = window[k]; } catch (e) { return; }
  if (k.indexOf('map_') !== 0 || !(m instanceof L.Map)) { return; }
  var s = {name: k, circleMarkers: 0, polylines: 0, roles: {}, dotPoints: 0, clusters: [],
           heat: 0, tileLayers: 0, center: m.getCenter(), zoom: m.getZoom(), ink: 0, svgPaths: 0};
  m.eachLayer(function (l) {
    if (l instanceof L.CircleMarker) { s.circleMarkers++; }
    else if (l instanceof L.Polyline) { s.polylines++; }
    if (l instanceof L.TileLayer) { s.tileLayers++; }
    if (l.tracsRole) {
      s.roles[l.tracsRole] = (s.roles[l.tracsRole] || 0) + 1;
      if (l.tracsRole === 'points') { s.dotPoints += l.getLatLngs().length; }
    }
    if (L.MarkerClusterGroup && l instanceof L.MarkerClusterGroup) { s.clusters.push(l.getLayers().length); }
    if (L.HeatLayer && l instanceof L.HeatLayer) { s.heat++; }
  });
  var box = m.getContainer();
  s.overlays = box.querySelectorAll('.leaflet-control-layers-overlays label').length;
  var legend = box.querySelector('.tracs-legend');
  s.legend = legend ? legend.textContent : null;
  s.svgPaths = box.querySelectorAll('.leaflet-map-pane svg path').length;
  box.querySelectorAll('.leaflet-map-pane canvas').forEach(function (c) {
    if (!c.width || !c.height) { return; }
    var px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (var i = 3; i < px.length; i += 4) { if (px[i]) { s.ink++; } }
  });
  out.maps.push(s);
});
var tip = document.querySelector('.leaflet-tooltip');
out.tooltip = tip ? tip.textContent : null;
return out;
"""


class Browser:
    """A headless Chromium session that opens local pages and reports what they drew."""

    def __init__(self, driver):
        self.driver = driver

    def open(self, path: Path) -> dict:
        """Load ``path``; return the page's stats (see ``_STATS``) plus console errors."""
        self.driver.get_log("browser")  # drop what earlier pages logged
        self.driver.get(Path(path).resolve().as_uri())
        self.driver.execute_script("return document.readyState")
        return self.stats()

    def stats(self) -> dict:
        stats = self.driver.execute_script(_STATS)
        severe = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        stats["console_errors"] = severe
        return stats

    def run(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def hover(self, map_name: str, lat: float, lng: float) -> str | None:
        """Move the mouse over a point of a map and return the tooltip text shown."""
        from selenium.webdriver.common.action_chains import ActionChains

        x, y, w, h = self.run(
            f"var m = window[{json.dumps(map_name)}], p = m.latLngToContainerPoint([arguments[0], arguments[1]]),"
            " r = m.getContainer().getBoundingClientRect(); return [p.x, p.y, r.width, r.height];", lat, lng)
        box = self.driver.find_element("id", map_name)
        ActionChains(self.driver).move_to_element_with_offset(box, int(x - w / 2), int(y - h / 2)).perform()
        ActionChains(self.driver).move_by_offset(1, 0).perform()
        return self.run("var t = document.querySelector('.leaflet-tooltip'); return t ? t.textContent : null;")

    def screenshot(self, path: Path) -> Path:
        self.driver.save_screenshot(str(path))
        return path


@pytest.fixture(scope="session")
def offline_assets():
    """Skip (fail in CI) when the packages holding Leaflet for offline pages are missing."""
    try:
        for name in ("xstatic.pkg.leaflet", "xstatic.pkg.leaflet_markercluster"):
            importlib.import_module(name)
    except ImportError:
        _missing_browser("offline pages for the Chromium tests need xstatic-leaflet and "
                         "xstatic-leaflet-markercluster (pip install xstatic-leaflet-markercluster): "
                         "test skipped")


@pytest.fixture(scope="session")
def browser(offline_assets):
    """A session-wide headless Chromium (skips, or fails in CI, when it is missing)."""
    chromium = _find(CHROMIUM_CANDIDATES)
    driver_path = _find(CHROMEDRIVER_CANDIDATES)
    if chromium is None or driver_path is None:
        _missing_browser("Chromium or chromedriver not found (apt-get install chromium chromium-driver): "
                         "browser test skipped")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing_browser("Chromium tests need the selenium package (pip install selenium): "
                         "browser test skipped")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not download anything
    profile = tempfile.mkdtemp(prefix="tracs-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except Exception as exc:  # noqa: BLE001 - report why Chromium did not start
        shutil.rmtree(profile, ignore_errors=True)
        _missing_browser(f"Chromium did not start: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    driver.set_window_size(1200, 800)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _ERROR_HOOK})
    try:
        yield Browser(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def read_payloads():
    """``read_payloads(html) -> list of dict``: the trajectory layers' data in a page."""
    return payloads


@pytest.fixture
def make_big():
    """``make_big(n_users, per_user, seed=0) -> (frame, reports)``."""
    return big_tracks


@pytest.fixture
def checkin_files(tmp_path):
    """A check-in CSV (5 synthetic users) and a released CSV in the form ``tracs perturb`` writes."""
    import data_loaders

    checkins = data_loaders.synthetic_checkins(users=5, seed=3, checkins_per_user=12)
    table = checkins.drop(columns="geometry").assign(lat=checkins.geometry.y, lng=checkins.geometry.x)
    source = tmp_path / "checkins.csv"
    table.to_csv(source, index=False)
    trajs = data_loaders.to_trajectories(data_loaders.load_checkins(source))
    noise = np.random.default_rng(4).normal(0, 700, np.shape(trajs.coords))
    released = trajs.with_coords(np.asarray(trajs.coords) + noise).to_wgs84().frame
    out = released[["uid", "datetime"]].assign(  # one trajectory per user: trajectory 0, points 0, 1, ...
        trajectory=0, point=released.groupby("uid").cumcount().to_numpy(),
        lat=released.geometry.y, lng=released.geometry.x, epsilon_point=4.0)
    path = tmp_path / "released.csv"
    out.to_csv(path, index=False)
    return source, path
