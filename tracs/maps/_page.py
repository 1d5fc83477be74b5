"""Pages: the one builder of every map tracs draws, two maps side by side, writing a page.

Every HTML page tracs writes goes through this module: :func:`base_map` makes the
empty map (Leaflet only — no jQuery, Bootstrap or icon fonts —, tiles that need no
API key, a note when they fail to load, a scale bar), the drawing functions add
their layers, and :func:`save_map` writes the page with its scripts and styles
inlined (:mod:`tracs.maps.assets`), so it opens without a network.
"""

from __future__ import annotations

import html
import json
import os
import xyzservices.providers as providers
from pathlib import Path

import folium
from branca.element import Element, Figure

from .._progress import progress_bar
from .assets import embed_assets
from ..errors import InputError, InputTypeError
from ._elements import TILE_FAILURE_NOTE, FitView, HeaderStyle, TileFailureNote, ViewSync, to_js

__all__ = ["base_map", "check_tiles", "compare_maps", "save_map", "map_html", "DEFAULT_TILES"]

#: background tiles of every map unless told otherwise: OpenStreetMap's own, no key needed
DEFAULT_TILES = "OpenStreetMap"
#: Leaflet's default maximum zoom (also needed by marker clustering when there are no tiles)
MAX_ZOOM = 19
#: the background of a map without tiles
NO_TILES_STYLE = "div.folium-map.leaflet-container { background: #f3f2ee; }"


def check_tiles(tiles):
    """``tiles`` if a page can show them without an account: ``None``, a URL template or a
    tile provider name that needs no API key (``OpenStreetMap``, ``CartoDB positron``
    needs one now and is refused, as is any provider :mod:`xyzservices` marks so)."""
    if tiles is None or not isinstance(tiles, str) or "{" in tiles or tiles.lower() == "openstreetmap":
        return tiles
    try:
        provider = providers.query_name(tiles)
    except ValueError:
        return tiles  # a name folium may know; it reports unknown ones itself
    if provider.requires_token():
        raise InputError(f"the tiles {tiles!r} need an API key, so the page would show no background: "
                         f"use {DEFAULT_TILES} (the default) or none")
    return tiles


def base_map(bounds, *, tiles=DEFAULT_TILES, prefer_canvas: bool = False, zoom_start: int = 12,
             tile_note: str = TILE_FAILURE_NOTE) -> folium.Map:
    """The empty map every tracs page starts from.

    Parameters
    ----------
    bounds : ((south, west), (north, east))
        Degrees (WGS84): the map opens centred on them.
    tiles : str or None
        Background tiles (:func:`check_tiles`; default OpenStreetMap); ``None`` draws a
        plain background.
    prefer_canvas : bool
        Draw vector layers on a canvas (large maps) instead of SVG.
    zoom_start : int
        The zoom before the page fits its data.
    tile_note : str
        The note shown when the tiles fail to load (default: the trajectories' one).

    Returns
    -------
    folium.Map
        Leaflet only (no jQuery, Bootstrap or icon fonts, which no tracs layer uses),
        with a scale bar and, when there are tiles, a visible note if they fail to load.
    """
    (south, west), (north, east) = bounds
    fmap = folium.Map(location=[(south + north) / 2, (west + east) / 2], zoom_start=zoom_start,
                      tiles=check_tiles(tiles), prefer_canvas=bool(prefer_canvas), control_scale=True,
                      max_zoom=MAX_ZOOM)
    fmap.options["max_zoom"] = MAX_ZOOM
    fmap.default_js = [pair for pair in fmap.default_js if pair[0] == "leaflet"]
    fmap.default_css = [pair for pair in fmap.default_css if pair[0] == "leaflet_css"]
    if tiles is None:
        HeaderStyle(NO_TILES_STYLE, "tracs_no_tiles").add_to(fmap)
    else:
        TileFailureNote(tile_note).add_to(fmap)
    return fmap

_TITLE_STYLE = (
    "<style>.tracs-pane-title { position: absolute; z-index: 1000; top: 8px; padding: 3px 10px;"
    " background: rgba(255,255,255,0.9); border-radius: 4px; font: bold 14px sans-serif;"
    " box-shadow: 0 1px 4px rgba(0,0,0,0.35); pointer-events: none; }</style>"
)


def compare_maps(left: folium.Map, right: folium.Map, *, titles=None,
                 layout: str = "horizontal", sync: bool = True) -> Figure:
    """Put two maps side by side in one page, their views moving together.

    Typical use: the same users under two mechanisms or two values of ε, each map
    made by :func:`trajectory_map`.  Unlike ``folium.plugins.DualMap`` this needs
    no extra script from the network (the view sync is part of the page), so the
    page also works offline.

    Parameters
    ----------
    left, right : folium.Map
        The maps; they are moved into the new page (resized to half of it, their
        layer controls folded).
    titles : pair of str, optional
        Captions shown at the top of each half.
    layout : {"horizontal", "vertical"}
        Side by side, or one above the other.
    sync : bool, default True
        Pan and zoom both maps together.

    Returns
    -------
    branca.element.Figure
        The page; save it with :func:`save_map`.
    """
    if not isinstance(left, folium.Map) or not isinstance(right, folium.Map):
        raise InputTypeError("compare_maps takes two folium.Map objects")
    if left is right:
        raise InputError("compare_maps needs two different maps")
    if layout not in ("horizontal", "vertical"):
        raise InputError(f"layout must be 'horizontal' or 'vertical', got {layout!r}")
    if titles is not None:
        titles = [str(t) for t in titles]
        if len(titles) != 2:
            raise InputError("titles must be a pair of strings")
    figure = Figure()
    horizontal = layout == "horizontal"
    for index, fmap in enumerate((left, right)):
        for child in fmap._children.values():  # half a page: layer lists start folded
            if isinstance(child, folium.LayerControl):
                child.options["collapsed"] = True
        fmap.width = (50.0, "%") if horizontal else (100.0, "%")
        fmap.height = (100.0, "%") if horizontal else (50.0, "%")
        fmap.left = (50.0 * index, "%") if horizontal else (0.0, "%")
        fmap.top = (0.0, "%") if horizontal else (50.0 * index, "%")
        fmap.position = "absolute"
        figure.add_child(fmap)
    if titles is not None:
        figure.header.add_child(Element(_TITLE_STYLE), name="tracs_pane_title_style")
        for index, text in enumerate(titles):
            where = (f"left: calc({50 * index}% + 55px)" if horizontal
                     else f"left: 55px; top: calc({50 * index}% + 8px)")
            figure.html.add_child(Element(
                f'<div class="tracs-pane-title" style="{where}">{html.escape(text)}</div>'))
    if sync:
        _fit_both(left, right)
        figure.add_child(ViewSync(left, right))
    return figure


def _fit_both(left: folium.Map, right: folium.Map) -> None:
    """Fit both maps to the union of their data, so the linked view shows all of both."""
    fits = [c for m in (left, right) for c in m._children.values() if isinstance(c, FitView)]
    if len(fits) != 2:
        return
    corners = [json.loads(f.bounds) for f in fits]
    union = [[min(c[0][0] for c in corners), min(c[0][1] for c in corners)],
             [max(c[1][0] for c in corners), max(c[1][1] for c in corners)]]
    for fit in fits:
        fit.bounds = to_js(union)


def map_html(page, *, offline: bool = True) -> str:
    """The full HTML of a map or page; ``offline=True`` (the default) inlines Leaflet and plugins."""
    root = getattr(page, "get_root", None)
    if root is None:
        raise InputTypeError(f"expected a folium map or branca element, got {type(page).__name__}")
    text = _render(root(), page)
    return embed_assets(text) if offline else text


def _render(root, page) -> str:
    """``root.render()`` with a progress bar over the page's layers (:mod:`tracs._progress`):
    each child of ``page`` reports when it has been rendered."""
    children = list(getattr(page, "_children", {}).values())
    with progress_bar(len(children), desc="write map", unit="layer") as bar:
        if bar.disable:
            return root.render()
        for child in children:  # an instance attribute shadows the class's render for this call only
            child.render = _counted(child.render, bar)
        try:
            return root.render()
        finally:
            for child in children:
                del child.render


def _counted(render, bar):
    def run(*args, **kwargs):
        out = render(*args, **kwargs)
        bar.update(1)
        return out

    return run


def save_map(page, path, *, offline: bool = True) -> Path:
    """Write a map (or a :func:`compare_maps` page) to an HTML file.

    Parameters
    ----------
    page : folium.Map or branca.element.Element
    path : str or os.PathLike
    offline : bool, default True
        Embed Leaflet and the plugins the page uses (from the ``xstatic-leaflet``
        packages and folium) so the file opens without a network.  Background
        tiles, when the map has any, still come from their tile server; when they
        cannot load, the page says so in a visible note and draws the trajectories
        on a plain background with its scale bar.  ``False`` links Leaflet from
        its CDN instead (a smaller file that needs a network).

    Returns
    -------
    pathlib.Path
        The written file.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = Path(path)
    path.write_text(map_html(page, offline=offline), encoding="utf-8")
    return path
