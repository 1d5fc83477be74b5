"""The collector's live page: the estimated density on a map, the counts, acceptance by reason.

One HTML page with Leaflet inlined (as ``tracs map`` saves its pages, so it works
offline); it asks ``/v1/estimate`` and ``/v1/stats`` again every ``refresh``
seconds and draws the cells of the density over the public region (no tiles: the
page loads nothing from the network).
"""

from __future__ import annotations

import json

__all__ = ["live_page"]

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>tracs collector</title>
<link rel="stylesheet" href="https://unpkg.com/leaflet@1.9.4/dist/leaflet.css"/>
<script src="https://unpkg.com/leaflet@1.9.4/dist/leaflet.js"></script>
<style>body{margin:0;font:14px sans-serif}#map{position:absolute;top:0;bottom:0;left:0;right:320px;background:#f3f2ee}
#side{position:absolute;top:0;bottom:0;right:0;width:300px;padding:10px;overflow:auto}td{padding:2px 6px}</style>
</head><body><div id="map"></div><div id="side"><h3>__TITLE__</h3><div id="counts">waiting for reports</div>
<table id="reasons"></table><p id="note"></p></div>
<script>
var box = __BOX__;
var map = L.map('map').fitBounds([[box[1], box[0]], [box[3], box[2]]]);
L.rectangle([[box[1], box[0]], [box[3], box[2]]], {fill: false, color: '#555', weight: 1}).addTo(map);
var cells = L.layerGroup().addTo(map);
function text(s) { return String(s).replace(/[&<>]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;'}[c]; }); }
function refresh() {
  fetch('/v1/stats').then(function (r) { return r.json(); }).then(function (s) {
    document.getElementById('counts').innerHTML = '<b>' + s.stored + '</b> reports stored, <b>' + s.rejected + '</b> rejected';
    var rows = '';
    for (var k in s.reasons) { rows += '<tr><td>' + text(k) + '</td><td>' + s.reasons[k] + '</td></tr>'; }
    document.getElementById('reasons').innerHTML = rows;
  });
  fetch('/v1/estimate?grid=__GRID__').then(function (r) { return r.ok ? r.json() : null; }).then(function (e) {
    if (!e) { return; }
    var c = e.cells, top = Math.max.apply(null, c.probability.concat([1e-300]));
    cells.clearLayers();
    for (var k = 0; k < c.probability.length; k++) {
      if (c.probability[k] <= 0) { continue; }
      L.rectangle([[c.min_lat[k], c.min_lng[k]], [c.max_lat[k], c.max_lng[k]]],
                  {stroke: false, fillColor: '#c0392b', fillOpacity: 0.8 * c.probability[k] / top}).addTo(cells);
    }
    document.getElementById('note').textContent = 'estimated from ' + e.reports + ' of ' + e.stored + ' reports, ' + e.grid + '×' + e.grid + ' cells, '
      + (e.fit === 'exact' ? 'exact fit' : 'provisional (warm-started) fit');
  });
}
refresh(); setInterval(refresh, __REFRESH__ * 1000);
</script></body></html>
"""


def live_page(parameters, *, grid: int = 32, refresh: int = 10) -> str:
    """The page's HTML for a collection of ``parameters``, Leaflet inlined."""
    from ..maps.assets import embed_assets

    title = f"{parameters.method}, ε = {parameters.epsilon:g} per point"
    page = (_PAGE.replace("__TITLE__", title).replace("__BOX__", json.dumps(list(parameters.box)))
            .replace("__GRID__", str(int(grid))).replace("__REFRESH__", str(int(refresh))))
    return embed_assets(page)
