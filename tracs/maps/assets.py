"""Self-contained pages: replace CDN script and style links by inline copies.

Folium pages load Leaflet and its plugins from CDNs, so they show nothing without
a network.  ``embed_assets`` swaps each ``<script src=...>`` / ``<link
rel="stylesheet" href=...>`` for the same file shipped in an installed Python
package, inlined (images referenced by the CSS become ``data:`` URIs):

=============================  ============================================
file named in the URL          local copy
=============================  ============================================
``leaflet.js``, ``leaflet.css``  package ``xstatic-leaflet``
``leaflet.markercluster.js``,  package ``xstatic-leaflet-markercluster``
``MarkerCluster*.css``
``leaflet_heat.min.js``        folium itself (``folium/templates``)
=============================  ============================================

A link with no local copy is an error, never silently left to fail offline.
"""

from __future__ import annotations

import base64
import importlib
import re
from pathlib import Path
from urllib.parse import urlparse

from ..errors import InputError, MissingExtraError

__all__ = ["embed_assets", "external_assets", "LOCAL_ASSETS"]

#: file name at the end of a CDN URL -> (Python module holding it, path in its data folder)
LOCAL_ASSETS = {
    "leaflet.js": ("xstatic.pkg.leaflet", "leaflet.js"),
    "leaflet.css": ("xstatic.pkg.leaflet", "leaflet.css"),
    "leaflet.markercluster.js": ("xstatic.pkg.leaflet_markercluster", "leaflet.markercluster.js"),
    "MarkerCluster.css": ("xstatic.pkg.leaflet_markercluster", "MarkerCluster.css"),
    "MarkerCluster.Default.css": ("xstatic.pkg.leaflet_markercluster", "MarkerCluster.Default.css"),
    "leaflet_heat.min.js": ("folium", "templates/leaflet_heat.min.js"),
}
INSTALL_HINT = "pip install xstatic-leaflet-markercluster (it brings xstatic-leaflet)"

_SCRIPT = re.compile(r"""<script\s+src=["'](https?://[^"']+)["']\s*>\s*</script>""", re.I)
_STYLESHEET = re.compile(
    r"""<link\s+rel=["']stylesheet["']\s+href=["'](https?://[^"']+)["']\s*/?>""", re.I)
_CSS_URL = re.compile(r"""url\((["']?)(images/[^"')]+)\1\)""")
_EXTERNAL = re.compile(
    r"""<(?:script|link)\b[^>]*?(?:src|href)=["'](https?://[^"']+)["']""", re.I)


def _data_dir(module_name: str) -> Path:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MissingExtraError(
            f"an offline map needs the module {module_name}: {INSTALL_HINT}") from exc
    base = getattr(module, "BASE_DIR", None)
    return Path(base) if base else Path(module.__file__).parent


def _local_file(url: str) -> Path:
    name = urlparse(url).path.rsplit("/", 1)[-1]
    if name not in LOCAL_ASSETS:
        raise InputError(
            f"no local copy of {url} for an offline page; known files: {', '.join(LOCAL_ASSETS)}")
    module_name, relative = LOCAL_ASSETS[name]
    path = _data_dir(module_name) / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (needed for {url}): {INSTALL_HINT}")
    return path


def _inline_css(path: Path) -> str:
    css = path.read_text(encoding="utf-8")

    def data_uri(match: re.Match) -> str:
        image = path.parent / match.group(2)
        if not image.is_file():
            raise FileNotFoundError(f"{image} referenced by {path.name} is missing")
        encoded = base64.b64encode(image.read_bytes()).decode("ascii")
        return f'url("data:image/png;base64,{encoded}")'

    return _CSS_URL.sub(data_uri, css)


def _safe_in_tag(text: str, tag: str) -> str:
    return re.sub(f"</{tag}", f"<\\\\/{tag}", text, flags=re.I)


def external_assets(page: str) -> list[str]:
    """URLs of the scripts and style sheets a page loads from the network."""
    return _EXTERNAL.findall(page)


def embed_assets(page: str) -> str:
    """Return ``page`` with every CDN script and style sheet inlined from local copies.

    Raises
    ------
    ValueError
        A script or style sheet has no known local copy.
    ModuleNotFoundError
        The package holding a needed copy is not installed.
    """
    def script(match: re.Match) -> str:
        code = _local_file(match.group(1)).read_text(encoding="utf-8")
        return f"<script>{_safe_in_tag(code, 'script')}</script>"

    def stylesheet(match: re.Match) -> str:
        return f"<style>{_safe_in_tag(_inline_css(_local_file(match.group(1))), 'style')}</style>"

    page = _SCRIPT.sub(script, page)
    page = _STYLESHEET.sub(stylesheet, page)
    left = external_assets(page)
    if left:
        raise InputError(f"cannot inline these assets for an offline page: {', '.join(left)}")
    return page
