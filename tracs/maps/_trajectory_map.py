"""``trajectory_map``: true and reported trajectories, displacement and POIs on one map."""

from __future__ import annotations

import html
import numbers

import folium
import numpy as np
from folium.plugins import FastMarkerCluster, HeatMap

from .._progress import progress_bar
from .._text import counted
from .._validation import check_epsilon
from ..errors import InputTypeError
from ..trajectory_batch import Batch
from ._elements import FitView, Legend, TrackLayer
from ._inputs import as_rows, same_length, unwrap_longitudes
from ._page import DEFAULT_TILES, base_map
from ._selection import ROW, select_users

__all__ = ["trajectory_map", "DEFAULT_MAX_POINTS", "DEFAULT_MAX_USERS", "DEFAULT_TILES"]

#: Most original rows one map draws (see ``max_points``).
DEFAULT_MAX_POINTS = 50_000
#: Most users one map draws (see ``max_users``).
DEFAULT_MAX_USERS = 200
#: Above this many drawn points the map renders on a canvas instead of SVG.
CANVAS_THRESHOLD = 2_000
#: Above this many drawn points each layer draws its points as one polyline of dots.
MARKER_THRESHOLD = 5_000
DECIMALS = 6  # ~0.1 m: far below any perturbation, and compact in the page
EARTH_RADIUS_M = 6_371_008.8

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
           "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
LINK_COLOR = "#555555"
POI_COLOR = "#6b6b6b"
UNRELEASED_COLOR = "#000000"
POI_PANE = "tracsPois"  # below the trajectories (overlay pane: 400), above tiles (200)


def _haversine_m(a: Batch, b: Batch, rows: np.ndarray) -> np.ndarray:
    """Great-circle distance in metres between matching rows of ``a`` and ``b`` (WGS84 batches)."""
    lon1, lat1 = np.radians(a.coords[rows]).T
    lon2, lat2 = np.radians(b.coords[rows]).T
    h = (np.sin((lat2 - lat1) / 2) ** 2
         + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2)
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _latlng(points: Batch, rows: np.ndarray | slice) -> list:
    return points.coords[rows][:, ::-1].round(DECIMALS).tolist()


def _styles(color: str, dashed: bool) -> dict[str, dict]:
    """Leaflet path options of the three layers of one user.

    Reported lines are dashed on small maps; on large ones (where dashing tens of
    thousands of segments slows drawing) they are thinner and lighter instead.
    """
    styles = {
        "original": {
            "line": {"color": color, "weight": 3, "opacity": 0.85},
            "arrow": {"color": color, "weight": 2.5, "opacity": 0.95},
            "point": {"radius": 4, "color": color, "weight": 1.5, "fillColor": color,
                      "fillOpacity": 0.9},
            "start": {"radius": 7, "color": color, "weight": 2, "fillColor": color,
                      "fillOpacity": 0.9},
        },
        "perturbed": {
            "line": {"color": color, "weight": 2, "opacity": 0.75, "dashArray": "6 5"},
            "arrow": {"color": color, "weight": 2, "opacity": 0.9},
            "link": {"color": LINK_COLOR, "weight": 1, "opacity": 0.6},
            "point": {"radius": 4, "color": color, "weight": 2, "fillColor": "#ffffff",
                      "fillOpacity": 0.9},
            "start": {"radius": 7, "color": color, "weight": 2.5, "fillColor": "#ffffff",
                      "fillOpacity": 0.9},
        },
        "rounded": {
            "line": {"color": color, "weight": 2, "opacity": 0.75, "dashArray": "1 5"},
            "arrow": {"color": color, "weight": 1.5, "opacity": 0.8},
            "link": {"color": LINK_COLOR, "weight": 1, "opacity": 0.45},
            "point": {"radius": 3.5, "color": "#222222", "weight": 1, "fillColor": color,
                      "fillOpacity": 1.0},
            "start": {"radius": 6, "color": "#222222", "weight": 1.5, "fillColor": color,
                      "fillOpacity": 1.0},
        },
    }
    if not dashed:
        for layer in ("perturbed", "rounded"):
            styles[layer]["line"].pop("dashArray")
            styles[layer]["line"].update(weight=1.5, opacity=0.55)
    return styles


LAYER_TITLES = {"original": "true", "perturbed": "reported", "rounded": "rounded"}


def _label(value) -> str:
    """Text of a user-supplied value for HTML and the layer control (escaped, one line)."""
    text = " ".join(str(value).split())
    return html.escape(text, quote=True).replace("\\", "&#92;")


def _poi_rows(pois, crs) -> tuple[Batch, list | None]:
    rows = as_rows(pois, "pois", crs=crs)
    frame = getattr(pois, "frame", pois)
    ids = None
    if hasattr(frame, "columns") and "poi_id" in frame.columns:
        ids = [_label(v) for v in frame["poi_id"].tolist()]
    return rows, ids


def _svg_line(color: str, dash: str | None, width: float) -> str:
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<svg width="30" height="10"><line x1="1" y1="5" x2="29" y2="5" stroke="{color}" '
            f'stroke-width="{width}"{dash_attr}/></svg>')


def _legend_html(*, title, method, epsilon, layers, has_pois, users, n_users_total,
                 n_points, n_points_total, dashed, n_unreleased=0) -> str:
    parts = [f'<div class="tracs-title">{_label(title)}</div>']
    setting = []
    if method is not None:
        setting.append(f"method: {_label(method)}")
    if epsilon is not None:
        setting.append(f"&epsilon; = {epsilon:g} per point")
    if setting:
        parts.append(f"<div>{' &middot; '.join(setting)}</div>")
    parts.append(f"<div>{_svg_line('#333', None, 3)}true trajectory (arrows: order)</div>")
    if "perturbed" in layers:
        parts.append(f"<div>{_svg_line('#333', '6 5' if dashed else None, 2 if dashed else 1)}reported (perturbed)</div>")
    if "rounded" in layers:
        parts.append(f"<div>{_svg_line('#333', '1 5' if dashed else None, 2 if dashed else 1)}reported, rounded to a POI</div>")
    if len(layers) > 1:
        parts.append(f"<div>{_svg_line(LINK_COLOR, None, 1)}true point &rarr; report</div>")
    if has_pois:
        parts.append(f'<div><span class="tracs-swatch" style="background:{POI_COLOR};'
                     'border-radius:5px"></span>POI</div>')
    if n_unreleased:
        parts.append(f'<div><span class="tracs-swatch" style="background:#fff;border:2px solid {UNRELEASED_COLOR};'
                     f'border-radius:5px"></span>not released ({n_unreleased:,} input '
                     f'{"row" if n_unreleased == 1 else "rows"}, e.g. dropped outside the region)</div>')
    swatches = " ".join(
        f'<span style="white-space:nowrap"><span class="tracs-swatch" '
        f'style="background:{PALETTE[k % len(PALETTE)]}"></span>{_label(uid)}</span>'
        for k, uid in enumerate(users[:8])
    )
    more = f" &hellip; +{len(users) - 8}" if len(users) > 8 else ""
    parts.append(f"<div>users: {swatches}{more}</div>")
    parts.append(f"<div>{len(users):,} of {counted(n_users_total, 'user')}, "
                 f"{n_points:,} of {counted(n_points_total, 'point')}</div>")
    return "".join(parts)


def trajectory_map(
    original,
    perturbed=None,
    *,
    pois=None,
    users=None,
    tiles=DEFAULT_TILES,
    rounded=None,
    epsilon=None,
    method: str | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
    max_users: int = DEFAULT_MAX_USERS,
    heatmap: bool = True,
    cluster_pois: int = 500,
    prefer_canvas: bool | None = None,
    point_markers: bool | None = None,
    title: str = "Trajectories",
    unreleased=None,
) -> folium.Map:
    """Draw true trajectories, their reports and the POIs on an interactive map.

    Each drawn user gets one ``folium.FeatureGroup`` per layer — ``original``
    (true points), ``perturbed`` (what the collector received) and ``rounded``
    (reports rounded to POIs) — that can be switched on and off in the layer
    control.  A layer shows the trajectory as a polyline with an arrowhead on every
    segment (the order of the points), a circle per point (the first point of each
    trajectory larger; hovering shows the user, the position in the trajectory, the
    time and, for reports, the distance to the true point), and for reports the
    displacement segment from each true point to its report.

    Parameters
    ----------
    original : tracs.Trajectories or geopandas.GeoDataFrame
        True rows in trajectory order: a ``uid`` column and point geometry in any
        CRS, optionally ``trajectory`` (a new polyline starts where it changes) and
        ``datetime``.
    perturbed, rounded : Trajectories, GeoDataFrame, GeoSeries or array (N, 2), optional
        Reports, one per original row and in the same order (a ``uid`` column, when
        present, must match).  An array holds ``(x, y)`` in the CRS of
        ``original`` — e.g. the output of ``perturber.perturb_many(traj.coords,
        traj.offsets)``.
    pois : GeoDataFrame, GeoSeries or array (M, 2), optional
        Points of interest (an array is read in the CRS of ``original``); a
        ``poi_id`` column labels them.  More than ``cluster_pois`` are clustered
        (Leaflet.markercluster).
    users : None, int or iterable, optional
        Users to draw: all (default), the first ``k``, or the given ids.
    tiles : str, folium.TileLayer or None
        Background tiles; ``None`` draws no tile layer (offline pages and tests).
    epsilon : float, optional
        Privacy budget per point, shown in the legend.
    method : str, optional
        Name of the mechanism, shown in the legend.
    max_points : int, default 50,000
        Cap on the number of original rows drawn.  Whole users are kept in order
        while they fit; leaving anything out raises a ``UserWarning`` (never a
        silent cut).  Pages stay small: coordinates are written once per layer,
        rounded to 6 decimals (about 0.1 m), and drawn by a small script —
        30,000 points with their reports make a page of a few MB.
    max_users : int, default 200
        Cap on the number of users drawn (each adds layers to the page and to the
        layer control), applied like ``max_points`` and with the same warning.
    heatmap : bool, default True
        Add a heat-map layer of the reported points (hidden until switched on).
    cluster_pois : int, default 500
        Largest number of POIs drawn without clustering.
    prefer_canvas : bool, optional
        Render on a canvas (fast for many points); by default when the map draws
        more than 2,000 points.
    point_markers : bool, optional
        Draw each point as its own ``L.circleMarker`` (by default when the map
        draws at most 5,000 points).  Otherwise the points of a layer are the
        round-capped dots of one polyline: the same look, drawn in one stroke, so
        maps of tens of thousands of points stay fluid; hovering still names the
        nearest point.
    title : str
        Title of the legend.
    unreleased : GeoDataFrame, GeoSeries or array (M, 2), optional
        Input rows with no report (left out of the release, e.g. by ``--drop``): drawn
        as hollow black circles in a layer of their own and counted in the legend.

    Returns
    -------
    folium.Map
        Fitted to the drawn points, with a layer control and a legend.  Save it
        with ``tracs.maps.save_map`` (``offline=True`` embeds the scripts).

    Raises
    ------
    TypeError, ValueError
        Inputs of the wrong type, without CRS or ``uid``, with non-point or
        non-finite geometry, reports whose length or users do not match.
    """
    orig = as_rows(original, "original", require_uid=True)
    reports: dict[str, Batch] = {}
    for name, value in (("perturbed", perturbed), ("rounded", rounded)):
        if value is not None:
            reports[name] = as_rows(value, name, crs=orig.attrs["input_crs"])
            same_length(orig, reports[name], name)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
    if method is not None and not isinstance(method, str):
        raise InputTypeError(f"method must be a str, got {type(method).__name__}")
    if isinstance(cluster_pois, bool) or not isinstance(cluster_pois, numbers.Integral):
        raise InputTypeError(f"cluster_pois must be an int, got {type(cluster_pois).__name__}")
    poi_rows, poi_ids = _poi_rows(pois, orig.attrs["input_crs"]) if pois is not None else (None, None)
    missing = as_rows(unreleased, "unreleased", crs=orig.attrs["input_crs"]) if unreleased is not None else None

    orig, reports = unwrap_longitudes(orig, reports)
    groups = select_users(orig, users, max_points, max_users)
    drawn = np.concatenate([g.column(ROW) for g in groups])
    layers = ["original", *reports]

    lon, lat = np.concatenate([orig.coords[drawn], *(r.coords[drawn] for r in reports.values())]).T
    south, north, west, east = lat.min(), lat.max(), lon.min(), lon.max()
    diagonal = np.hypot(north - south, (east - west) * np.cos(np.radians((north + south) / 2)))
    arrow_size = max(0.015 * float(diagonal), 1e-5)
    if prefer_canvas is None:
        prefer_canvas = len(lat) > CANVAS_THRESHOLD
    if point_markers is None:
        point_markers = len(lat) <= MARKER_THRESHOLD

    fmap = base_map(((south, west), (north, east)), tiles=tiles, prefer_canvas=bool(prefer_canvas))

    if poi_rows is not None:
        _add_pois(fmap, poi_rows, poi_ids, cluster_pois)
    if missing is not None:
        payload = {"label": "not released", "c": _latlng(missing, slice(None)),
                   "point": {"radius": 4, "color": UNRELEASED_COLOR, "weight": 2, "fill": False}}
        TrackLayer(payload).add_to(folium.FeatureGroup(name=f"not released ({missing.n_points:,})").add_to(fmap))

    times = orig.column("times")
    with progress_bar(len(groups), desc="draw users", unit="user") as bar:
        for k, group in enumerate(groups):
            _draw_user(fmap, k, group, orig, reports, layers, times, point_markers, arrow_size)
            bar.update(1)

    if heatmap and reports:
        reported = next(iter(reports.values()))
        HeatMap(_latlng(reported, drawn), name="heat map of reported points", show=False,
                radius=14, blur=18, min_opacity=0.25).add_to(fmap)

    n_layers = (len(groups) * len(layers) + (poi_rows is not None) + bool(heatmap and reports)
                + (missing is not None))
    folium.LayerControl(collapsed=n_layers > 12).add_to(fmap)
    Legend(_legend_html(
        title=title, method=method, epsilon=epsilon, layers=layers,
        has_pois=poi_rows is not None, users=[g.keys[0] for g in groups],
        n_users_total=len(set(orig.keys.tolist())), n_points=len(drawn),
        n_points_total=orig.n_points, dashed=point_markers,
        n_unreleased=0 if missing is None else missing.n_points,
    )).add_to(fmap)
    FitView([[south, west], [north, east]], max_zoom=16).add_to(fmap)
    return fmap


_POI_CALLBACK = (
    "function (row) {"
    " var marker = L.circleMarker(new L.LatLng(row[0], row[1]),"
    f" {{radius: 3, color: '{POI_COLOR}', weight: 1, fillColor: '{POI_COLOR}', fillOpacity: 0.6,"
    f" pane: '{POI_PANE}'}});"
    " if (row.length > 2) { marker.bindTooltip('POI ' + row[2]); }"
    " return marker; }"
)


_POI_CLUSTER_ICON = (
    "function (cluster) {"
    " var n = cluster.getChildCount(), size = n < 10 ? 18 : n < 100 ? 24 : 30;"
    " return L.divIcon({html: '<div>' + n + '</div>', className: 'tracs-poi-cluster',"
    " iconSize: L.point(size, size)}); }"
)


def _draw_user(fmap, k: int, group: Batch, orig, reports: dict, layers, times, point_markers: bool,
               arrow_size) -> None:
    """One user's layers (original and released tracks) on ``fmap``; ``group`` is the user's batch
    of :func:`select_users` (its rows' positions in ``orig`` and the reports: column ``ROW``)."""
    color = PALETTE[k % len(PALETTE)]
    styles = _styles(color, dashed=point_markers)
    name = f"user {_label(group.keys[0])}"
    rows = group.column(ROW)
    base = None
    for layer in layers:
        points = orig if layer == "original" else reports[layer]
        payload = {"label": f"{name} {LAYER_TITLES[layer]}",
                   "c": _latlng(points, rows),
                   "o": group.offsets.tolist(),
                   "arrow_size": arrow_size, "dots": not point_markers, **styles[layer]}
        if layer == "original":
            if times is not None and any(times[rows]):
                payload["t"] = times[rows].tolist()
        else:
            payload["e"] = np.rint(_haversine_m(orig, points, rows)).astype(int).tolist()
        feature_group = folium.FeatureGroup(name=f"{name} &middot; {layer}").add_to(fmap)
        track = TrackLayer(payload, ref=base).add_to(feature_group)
        if layer == "original":
            base = track


def _add_pois(fmap: folium.Map, pois: Batch, ids: list | None, cluster_pois: int) -> None:
    n = pois.n_points
    folium.map.CustomPane(POI_PANE, z_index=350, pointer_events=True).add_to(fmap)
    if n > cluster_pois:
        data = _latlng(pois, slice(None))
        if ids is not None:
            data = [row + [label] for row, label in zip(data, ids)]
        FastMarkerCluster(data, callback=_POI_CALLBACK, name=f"POIs ({n:,}, clustered)",
                          icon_create_function=_POI_CLUSTER_ICON,
                          options={"chunkedLoading": True, "disableClusteringAtZoom": 17,
                                   "maxClusterRadius": 50, "clusterPane": POI_PANE}).add_to(fmap)
        return
    group = folium.FeatureGroup(name=f"POIs ({n:,})").add_to(fmap)
    payload = {"label": "POI", "c": _latlng(pois, slice(None)),
               "point": {"radius": 3, "color": POI_COLOR, "weight": 1,
                         "fillColor": POI_COLOR, "fillOpacity": 0.6, "pane": POI_PANE}}
    if ids is not None:
        payload["ids"] = ids
    TrackLayer(payload).add_to(group)
