"""A map layer of an estimated density (:class:`tracs.estimate.Density`): one cell, one shade."""

from __future__ import annotations

import html

import folium
import numpy as np

from .._text import significant
from ._elements import Legend
from ._page import DEFAULT_TILES, base_map

__all__ = ["density_layer", "density_map"]

#: the note shown on a density map when its background tiles cannot be loaded
TILE_NOTE = ("Background map tiles could not be loaded (no network?). The estimated density is drawn "
             "on a plain background; the scale bar still holds.")


def density_layer(estimate, crs, *, name: str = "estimated density", min_share: float = 0.0,
                  color: str = "#b30000") -> folium.FeatureGroup:
    """A folium layer with every cell of ``estimate`` shaded by its probability.

    Parameters
    ----------
    estimate : tracs.estimate.Density
    crs : CRS of the estimate's grid (the metric CRS of perturbation)
    name : str
        Layer name in the layer control.
    min_share : float
        Cells below this probability are left out (keeps the page small).
    color : str
        Fill colour; opacity grows with the probability.
    """
    cells = estimate.to_geodataframe(crs=crs)
    cells = cells[cells.probability > min_share].to_crs(4326)
    top = float(cells.probability.max()) if len(cells) else 1.0
    group = folium.FeatureGroup(name=name)

    def style(feature, top=top):
        share = feature["properties"]["probability"] / top
        return {"fillColor": color, "color": color, "weight": 0, "fillOpacity": 0.8 * float(np.sqrt(share))}

    folium.GeoJson(cells.__geo_interface__, style_function=style,
                   tooltip=folium.GeoJsonTooltip(fields=["probability"], localize=True)).add_to(group)
    return group


#: shares of the largest cell's probability shown in the colour legend
LEGEND_SHARES = (1.0, 0.5, 0.25, 0.1, 0.01)


def density_legend(estimate, *, title: str = "estimated density", color: str = "#b30000") -> str:
    """The HTML of the colour legend of :func:`density_layer`: a swatch per share of the largest
    cell's probability, with that probability (the shade's opacity grows as its square root)."""
    top = float(np.max(estimate.probabilities)) if np.size(estimate.probabilities) else 0.0
    rows = "".join(
        f'<div><span class="tracs-swatch" style="background:{color};opacity:{0.8 * np.sqrt(share):.3f}"></span>'
        f"{significant(share * top)} per cell</div>" for share in LEGEND_SHARES)
    return (f'<div class="tracs-title">{html.escape(title)}</div><div>probability of a cell '
            f"(the share of the true points estimated in it)</div>{rows}")


def density_map(estimate, crs, *, tiles=DEFAULT_TILES, name: str = "estimated density"):
    """A map of :func:`density_layer` with a layer control, fitted to the estimate's grid.

    Built by :func:`tracs.maps.base_map` like every tracs map (Leaflet only, tiles that
    need no key, a note when they fail to load); write it with
    :func:`tracs.maps.save_map`, which inlines the scripts so the page opens offline.
    """
    cells = estimate.to_geodataframe(crs=crs).to_crs(4326)
    minx, miny, maxx, maxy = cells.total_bounds
    fmap = base_map(((miny, minx), (maxy, maxx)), tiles=tiles, tile_note=TILE_NOTE)
    fmap.fit_bounds([[miny, minx], [maxy, maxx]])
    density_layer(estimate, crs, name=name).add_to(fmap)
    folium.LayerControl().add_to(fmap)
    Legend(density_legend(estimate, title=name)).add_to(fmap)
    return fmap
