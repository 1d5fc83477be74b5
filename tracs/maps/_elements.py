"""Compact Leaflet elements for the trajectory maps.

Folium writes one JavaScript object literal per marker or line.  For maps with
tens of thousands of points that is both large and slow, so the trajectory layers
here write each (user, layer) once, as one JSON payload of rounded coordinates,
and a small runtime script draws it in the browser:

* the trajectory as one multi-polyline (one part per trajectory),
* arrowheads (one multi-polyline) at the middle of every non-zero segment,
  showing the order of the points,
* optionally the displacement segments from each true point to its report,
* one ``L.circleMarker`` per point (the first point of each trajectory larger),
* one tooltip per layer group whose text is computed on hover from the payload
  (user, position in the trajectory, time, distance to the true point).
"""

from __future__ import annotations

import json

from branca.element import Element, Figure, MacroElement
from jinja2 import Template

from ..errors import InputTypeError

__all__ = ["TrackLayer", "Legend", "ViewSync", "FitView", "HeaderStyle", "to_js", "add_runtime"]

_RUNTIME = """<script>
var tracsMaps = (function () {
  "use strict";
  var RAD = Math.PI / 180, SPREAD = 0.45;
  function arrowheads(c, o, size) {
    var heads = [], cs = Math.cos(SPREAD), sn = Math.sin(SPREAD);
    for (var j = 0; j + 1 < o.length; j++) {
      for (var i = o[j]; i + 1 < o[j + 1]; i++) {
        var a = c[i], b = c[i + 1];
        var k = Math.max(Math.cos((a[0] + b[0]) * RAD / 2), 1e-6);
        var dx = (b[1] - a[1]) * k, dy = b[0] - a[0];
        var len = Math.sqrt(dx * dx + dy * dy);
        if (!(len > 0)) { continue; }
        var s = Math.min(size, 0.35 * len), ux = dx / len, uy = dy / len;
        var tx = (a[1] + b[1]) * k / 2 + ux * s / 2, ty = (a[0] + b[0]) / 2 + uy * s / 2;
        heads.push([
          [ty - s * (ux * sn + uy * cs), (tx - s * (ux * cs - uy * sn)) / k],
          [ty, tx / k],
          [ty - s * (uy * cs - ux * sn), (tx - s * (ux * cs + uy * sn)) / k]
        ]);
      }
    }
    return heads;
  }
  function tag(layer, role) { layer.tracsRole = role; return layer; }
  function nearest(c, idx, latlng) {
    var best = idx[0], bestQ = Infinity, k = Math.cos(latlng.lat * RAD);
    for (var n = 0; n < idx.length; n++) {
      var p = c[idx[n]], dy = p[0] - latlng.lat, dx = (p[1] - latlng.lng) * k, q = dx * dx + dy * dy;
      if (q < bestQ) { bestQ = q; best = idx[n]; }
    }
    return best;
  }
  function trajectoryOf(o, i) {
    var lo = 0, hi = o.length - 2;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (o[mid] <= i) { lo = mid; } else { hi = mid - 1; } }
    return lo;
  }
  // Many points: each point is a zero-length segment with round caps inside one
  // polyline per style (outline, then fill), so the canvas strokes a layer at once.
  function dotLayers(group, c, idx, s, role, tip) {
    var parts = [];
    for (var n = 0; n < idx.length; n++) {
      var p = c[idx[n]];
      parts.push([p, [p[0], p[1] + 1e-9]]);
    }
    var common = {lineCap: "round", smoothFactor: 0, fill: false};
    var outer = tag(L.polyline(parts, L.extend({}, common, {
      color: s.color, opacity: s.opacity || 1, weight: 2 * s.radius + s.weight
    })), role).addTo(group);
    if (s.fillColor && s.fillColor !== s.color) {
      tag(L.polyline(parts, L.extend({}, common, {
        color: s.fillColor, opacity: s.fillOpacity, interactive: false,
        weight: Math.max(2 * s.radius - s.weight, 1)
      })), role + "-fill").addTo(group);
    }
    outer.on("mouseover mousemove", function (e) {
      var i = nearest(c, idx, e.latlng);
      if (i !== outer.tracsIdx) {
        outer.tracsIdx = i;
        if (group.isTooltipOpen()) { group.setTooltipContent(tip); }
      }
    });
  }
  function track(group, d, ref) {
    var c = d.c, o = d.o || [0, c.length], times = d.t || (ref && ref.t) || null, i, j;
    function tip(layer) {
      var i = layer.tracsIdx;
      if (i === undefined) { return d.label; }
      var j = trajectoryOf(o, i), text = d.label;
      if (d.ids) { text += " " + d.ids[i]; }
      if (d.o) { text += " #" + (i - o[j] + 1) + "/" + (o[j + 1] - o[j]); }
      if (times && times[i]) { text += " \u00b7 " + times[i]; }
      if (d.e) { text += " \u00b7 " + d.e[i] + " m from the true point"; }
      return text;
    }
    if (d.o) {
      var lines = [];
      for (j = 0; j + 1 < o.length; j++) {
        if (o[j + 1] - o[j] > 1) { lines.push(c.slice(o[j], o[j + 1])); }
      }
      if (lines.length) { tag(L.polyline(lines, d.line), "line").addTo(group); }
      var heads = arrowheads(c, o, d.arrow_size);
      if (heads.length) { tag(L.polyline(heads, d.arrow), "arrows").addTo(group); }
    }
    if (ref && d.link) {
      var links = [];
      for (i = 0; i < c.length; i++) { links.push([ref.c[i], c[i]]); }
      tag(L.polyline(links, d.link), "links").addTo(group);
    }
    var starts = [], all = [];
    for (j = 0; j + 1 < o.length; j++) {
      if (d.o && o[j + 1] > o[j]) { starts.push(o[j]); }
    }
    if (d.dots) {
      for (i = 0; i < c.length; i++) { all.push(i); }
      dotLayers(group, c, all, d.point, "points", tip);
      if (starts.length) { dotLayers(group, c, starts, d.start, "starts", tip); }
    } else {
      for (j = 0; j + 1 < o.length; j++) {
        for (i = o[j]; i < o[j + 1]; i++) {
          var first = d.o && i === o[j];
          var m = tag(L.circleMarker(c[i], first ? d.start : d.point), first ? "start" : "point");
          m.tracsIdx = i;
          m.addTo(group);
        }
      }
    }
    group.bindTooltip(tip, {sticky: true});
    return {c: c, t: times};
  }
  function legend(map, html) {
    var control = L.control({position: "bottomleft"});
    control.onAdd = function () {
      var div = L.DomUtil.create("div", "tracs-legend");
      div.innerHTML = html;
      L.DomEvent.disableClickPropagation(div);
      L.DomEvent.disableScrollPropagation(div);
      return div;
    };
    control.addTo(map);
    return control;
  }
  function sync(a, b) {
    var busy = false;
    function follow(src, dst) {
      src.on("move", function () {
        if (busy) { return; }
        busy = true;
        dst.setView(src.getCenter(), src.getZoom(), {animate: false});
        busy = false;
      });
    }
    follow(a, b);
    follow(b, a);
    b.setView(a.getCenter(), a.getZoom(), {animate: false});
  }
  return {track: track, legend: legend, sync: sync};
})();
</script>
<style>
.tracs-legend {
  background: rgba(255, 255, 255, 0.92); padding: 6px 9px; border-radius: 5px;
  box-shadow: 0 1px 5px rgba(0, 0, 0, 0.4); font: 11px/1.4 sans-serif; color: #222;
  max-width: 300px;
}
.tracs-legend .tracs-title { font-weight: bold; font-size: 13px; }
.tracs-legend svg { vertical-align: middle; margin-right: 4px; }
.tracs-poi-cluster div {
  width: 100%; height: 100%; border-radius: 50%; display: flex; align-items: center;
  justify-content: center; background: rgba(90, 90, 90, 0.28); border: 1px solid rgba(60, 60, 60, 0.5);
  box-sizing: border-box; color: #333; font: 10px/1 sans-serif;
}
.tracs-legend .tracs-swatch {
  display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px;
}
</style>"""


def to_js(value) -> str:
    """Compact one-line JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def add_runtime(element: MacroElement) -> None:
    """Put the runtime script in the page header once (named, so it is deduplicated)."""
    figure = element.get_root()
    if not isinstance(figure, Figure):
        raise InputTypeError("this map element must be added to a folium map before rendering")
    if "tracs_maps_runtime" not in figure.header._children:  # compile the template once
        figure.header.add_child(Element(_RUNTIME), name="tracs_maps_runtime")


class _RuntimeElement(MacroElement):
    def render(self, **kwargs):
        add_runtime(self)
        super().render(**kwargs)


class TrackLayer(_RuntimeElement):
    """One layer of one user, drawn into its parent ``FeatureGroup``.

    Parameters
    ----------
    payload : dict
        ``c`` (list of ``[lat, lng]``), optional ``o`` (trajectory offsets into
        ``c``; without it only points are drawn), ``t`` (time strings), ``e``
        (metres to the true point), ``ids`` (labels), ``label``, and the Leaflet
        path options ``line``, ``arrow``, ``link``, ``point``, ``start`` plus
        ``arrow_size`` (degrees of latitude).
    ref : TrackLayer, optional
        The layer of true points: displacement segments are drawn from each of
        its points to the matching point here, and its times are reused.
    """

    _template = Template(
        "{% macro script(this, kwargs) %}\n"
        "var {{ this.get_name() }} = tracsMaps.track({{ this._parent.get_name() }}, "
        "{{ this.payload }}, {{ this.ref.get_name() if this.ref else 'null' }});\n"
        "{% endmacro %}"
    )

    def __init__(self, payload: dict, ref: "TrackLayer | None" = None):
        super().__init__()
        self._name = "TrackLayer"
        self.payload = to_js(payload)
        self.ref = ref


class Legend(_RuntimeElement):
    """A legend box in the lower-left corner, from ready-made (escaped) HTML."""

    _template = Template(
        "{% macro script(this, kwargs) %}\n"
        "tracsMaps.legend({{ this._parent.get_name() }}, {{ this.html }});\n"
        "{% endmacro %}"
    )

    def __init__(self, html: str):
        super().__init__()
        self._name = "Legend"
        self.html = to_js(html)


class ViewSync(_RuntimeElement):
    """Keep the views (centre and zoom) of two maps in the same page together."""

    _template = Template(
        "{% macro script(this, kwargs) %}\n"
        "tracsMaps.sync({{ this.left.get_name() }}, {{ this.right.get_name() }});\n"
        "{% endmacro %}"
    )

    def __init__(self, left, right):
        super().__init__()
        self._name = "ViewSync"
        self.left = left
        self.right = right


class FitView(MacroElement):
    """Fit the map to ``bounds`` at once, without the zoom animation.

    ``folium.Map.fit_bounds`` animates the zoom, so for a moment after loading the
    view is not settled (and a linked map would follow a moving target).
    """

    _template = Template(
        "{% macro script(this, kwargs) %}\n"
        "{{ this._parent.get_name() }}.fitBounds({{ this.bounds }}, "
        "{maxZoom: {{ this.max_zoom }}, animate: false});\n"
        "{% endmacro %}"
    )

    def __init__(self, bounds, max_zoom: int):
        super().__init__()
        self._name = "FitView"
        self.bounds = to_js([[float(v) for v in corner] for corner in bounds])
        self.max_zoom = int(max_zoom)


class HeaderStyle(MacroElement):
    """CSS put in the header of whatever page the map ends up in (named: once per page)."""

    def __init__(self, css: str, name: str):
        super().__init__()
        self._name = "HeaderStyle"
        self.css = css
        self.key = name

    def render(self, **kwargs):
        figure = self.get_root()
        if isinstance(figure, Figure) and self.key not in figure.header._children:
            figure.header.add_child(Element(f"<style>{self.css}</style>"), name=self.key)
        super().render(**kwargs)


#: the note shown on the map when its background tiles cannot be loaded
TILE_FAILURE_NOTE = ("Background map tiles could not be loaded (no network?). "
                     "The trajectories are drawn on a plain background; the scale bar still holds.")


class TileFailureNote(MacroElement):
    """A visible note, and a plain background, when the map's tiles fail to load.

    Offline pages embed Leaflet and draw every trajectory without a network, but the
    background tiles come from a tile server.  On the first ``tileerror`` of any
    tile layer the page turns the map background plain and shows
    :data:`TILE_FAILURE_NOTE` at the top of the map.
    """

    _template = Template(
        "{% macro script(this, kwargs) %}\n"
        "(function (map) {\n"
        "  var shown = false;\n"
        "  function note() {\n"
        "    if (shown) { return; }\n"
        "    shown = true;\n"
        "    map.getContainer().style.background = '#f3f2ee';\n"
        "    var box = L.DomUtil.create('div', 'tracs-tile-note');\n"
        "    box.style.cssText = 'position:absolute;top:10px;left:50%;transform:translateX(-50%);'\n"
        "      + 'z-index:1000;background:#fff8e1;border:1px solid #c9a227;padding:4px 8px;'\n"
        "      + 'font:12px sans-serif;max-width:420px;pointer-events:none';\n"
        "    box.textContent = {{ this.text }};\n"
        "    map.getContainer().appendChild(box);\n"
        "  }\n"
        "  map.eachLayer(function (layer) {\n"
        "    if (layer instanceof L.TileLayer) { layer.on('tileerror', note); }\n"
        "  });\n"
        "})({{ this._parent.get_name() }});\n"
        "{% endmacro %}"
    )

    def __init__(self, text: str = TILE_FAILURE_NOTE):
        super().__init__()
        self._name = "TileFailureNote"
        self.text = json.dumps(text)
