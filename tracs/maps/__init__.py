"""Interactive maps of true and reported trajectories (folium / Leaflet).

Every page starts from ``base_map`` (Leaflet only, tiles without an API key) and
is written by ``save_map``.  ``trajectory_map`` draws, per user, the true trajectory, what the collector
received and (optionally) the reports rounded to POIs, with the displacement of
every point, a POI layer, a heat map of reports, a layer control and a legend
stating ε and the method.  ``compare_maps`` puts two such maps side by side with
linked views (two mechanisms, or two values of ε).  ``save_map`` writes a page,
self-contained by default (Leaflet inlined) so it opens without a network.

This module imports folium; ``import tracs`` does not (it loads this module on
first use of ``tracs.maps``).
"""

from .assets import embed_assets, external_assets
from ._page import DEFAULT_TILES, base_map, check_tiles, compare_maps, map_html, save_map
from ._trajectory_map import DEFAULT_MAX_POINTS, DEFAULT_MAX_USERS, trajectory_map

__all__ = ["trajectory_map", "compare_maps", "save_map", "map_html", "base_map", "check_tiles",
           "embed_assets", "external_assets", "DEFAULT_MAX_POINTS", "DEFAULT_MAX_USERS", "DEFAULT_TILES"]
