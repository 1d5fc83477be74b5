"""The collector's live page in headless Chromium with the network off.

The page the collector serves (``GET /``) is saved to a file and opened with the
browser offline; its two requests (``/v1/stats``, ``/v1/estimate``) are answered
with what the running collector answered them, so the page draws a real estimate
without any request reaching a network.  The browser is the map tests' headless
Chromium (``tests/maps/conftest.py``), loaded from there.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import httpx
import pytest

from .test_server import enrolled_device, walk

_spec = importlib.util.spec_from_file_location("tracs_maps_browser", Path(__file__).parents[1] / "maps" / "conftest.py")
_maps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_maps)
browser, offline_assets = _maps.browser, _maps.offline_assets  # the fixtures, shared with the map tests

_ANSWERS = """
window.__answers = %s;
window.fetch = function (url) {
  var body = window.__answers[String(url)];
  return Promise.resolve({ok: body !== undefined, json: function () { return Promise.resolve(body); }});
};
"""


@pytest.mark.browser
def test_live_page_draws_the_estimate_offline(browser, serve, tmp_path):
    running, collector = serve()
    device = enrolled_device(running.url, collector.parameters, "live", tmp_path / "d.sqlite")
    walk(device, 40)
    assert device.upload(running.url)["accepted"] == 40
    page = tmp_path / "live.html"
    page.write_bytes(httpx.get(running.url + "/").content)
    answers = {path: httpx.get(running.url + path, timeout=60).json()
               for path in ("/v1/stats", "/v1/estimate?grid=32")}
    shaded = sum(p > 0 for p in answers["/v1/estimate?grid=32"]["cells"]["probability"])
    driver = browser.driver
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    hook = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _ANSWERS % json.dumps(answers)})
    try:
        browser.open(page)
        counts = None
        for _ in range(50):
            counts = browser.run("return document.getElementById('counts').textContent;")
            if "stored" in counts:
                break
            time.sleep(0.1)
        stats = browser.run("""
            var out = {errors: window.__tracsErrors || [], resources: [], paths: 0};
            performance.getEntriesByType('resource').forEach(function (e) { out.resources.push(e.name); });
            out.paths = document.querySelectorAll('.leaflet-overlay-pane svg path').length;
            out.note = document.getElementById('note').textContent;
            return out;""")
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": hook["identifier"]})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    assert stats["errors"] == [] and stats["resources"] == []
    assert counts == "40 reports stored, 0 rejected"
    assert stats["paths"] == 1 + shaded  # the region's outline and one rectangle per shaded cell
    assert stats["note"] == "estimated from 40 of 40 reports, 32×32 cells, exact fit"
