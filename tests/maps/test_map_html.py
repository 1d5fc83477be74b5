"""``tracs.maps.trajectory_map`` checked on the rendered HTML (no browser needed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import folium
import geopandas as gpd
import numpy as np
import pytest

from tracs import Batch
from tracs.maps import compare_maps, external_assets, map_html, save_map, trajectory_map

USERS = [1, 2, 3]
POINTS = {1: 10, 2: 8, 3: 5}  # the fixture's users: user 1 has trajectories of 6 and 4 points


def _user_layers(data: list[dict]) -> list[dict]:
    return [d for d in data if "o" in d]


def test_import_tracs_does_not_import_folium():
    code = ("import sys, tracs; tracs.__dir__(); "
            "assert 'folium' not in sys.modules, 'folium imported'; "
            "assert 'tracs.maps' not in sys.modules; "
            "import tracs.maps; assert 'folium' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_layers_groups_and_payloads(tracks, reports, rounded, pois, read_payloads):
    fmap = trajectory_map(tracks, reports, rounded=rounded, pois=pois, tiles=None,
                          epsilon=2, method="TraCS-D")
    assert isinstance(fmap, folium.Map)
    html = map_html(fmap)
    data = read_payloads(html)
    layers = _user_layers(data)
    # one FeatureGroup per user and layer, plus the POI group
    groups = [c for c in fmap._children.values() if isinstance(c, folium.FeatureGroup)]
    assert len(groups) == 3 * 3 + 1
    names = [g.layer_name for g in groups]
    for uid in USERS:
        for layer in ("original", "perturbed", "rounded"):
            assert f"user {uid} &middot; {layer}" in names
    assert "POIs (40)" in names
    assert len(layers) == 9
    for k, uid in enumerate(USERS):
        orig, pert, rnd = layers[3 * k: 3 * k + 3]
        for d in (orig, pert, rnd):
            assert len(d["c"]) == POINTS[uid]
            assert d["o"][0] == 0 and d["o"][-1] == POINTS[uid]
        # user 1 has two trajectories: two polyline parts, a break at 6
        assert orig["o"] == ([0, 6, 10] if uid == 1 else [0, POINTS[uid]])
        # reports point back at the layer of true points (displacement segments)
        assert orig["_ref"] == "null" and pert["_ref"] != "null" and rnd["_ref"] == pert["_ref"]
        assert "link" in pert and "link" in rnd and "link" not in orig
        assert "t" in orig and len(orig["t"]) == POINTS[uid]
        assert len(pert["e"]) == POINTS[uid] and min(pert["e"]) >= 0
    # the POI layer: 40 points with their ids, no lines
    poi_layer = [d for d in data if "o" not in d]
    assert len(poi_layer) == 1 and len(poi_layer[0]["c"]) == 40 and poi_layer[0]["ids"][0] == "v0"
    # layer control, legend (with ε and method), fitted bounds, heat map (hidden), no tiles
    assert "L.control.layers(" in html
    assert "TraCS-D" in html and "&epsilon; = 2 per point" in html
    assert ".fitBounds([[" in html and "animate: false" in html
    assert html.count("L.heatLayer(") == 1
    assert "L.tileLayer(" not in html
    assert "L.markerClusterGroup" not in html  # 40 POIs are not clustered


def test_coordinates_are_wgs84_rounded_and_in_input_order(tracks, reports, read_payloads):
    layers = _user_layers(read_payloads(map_html(trajectory_map(tracks, reports, tiles=None))))
    true = tracks.to_crs(4326)
    expected = np.column_stack([true.geometry.y, true.geometry.x])
    got = np.concatenate([np.asarray(d["c"]) for d in layers[0::2]])
    np.testing.assert_allclose(got, expected, atol=5e-7)  # rounded to 6 decimals, not reordered
    text = re.findall(r"-?\d+\.\d+", str(layers[0]["c"]))
    assert max(len(t.split(".")[1]) for t in text) <= 6
    back = gpd.GeoSeries(gpd.points_from_xy(reports[:, 0], reports[:, 1]), crs=tracks.crs).to_crs(4326)
    got = np.concatenate([np.asarray(d["c"]) for d in layers[1::2]])
    np.testing.assert_allclose(got, np.column_stack([back.y, back.x]), atol=5e-7)


def test_displacement_distance_is_metres(tracks, reports, read_payloads):
    layers = _user_layers(read_payloads(map_html(trajectory_map(tracks, reports, tiles=None))))
    xy = np.column_stack([tracks.geometry.x, tracks.geometry.y])
    metres = np.hypot(*(reports - xy).T)  # UTM distances; haversine agrees to < 0.5 % here
    got = np.concatenate([d["e"] for d in layers[1::2]])
    np.testing.assert_allclose(got, metres, rtol=5e-3, atol=1.0)


def test_perturbed_as_frame_and_trajectories_like(tracks, reports, read_payloads):
    frame = tracks.copy()
    frame["geometry"] = gpd.points_from_xy(reports[:, 0], reports[:, 1])
    a = read_payloads(map_html(trajectory_map(tracks, reports, tiles=None)))
    b = read_payloads(map_html(trajectory_map(tracks, frame.to_crs(4326), tiles=None)))

    class Container:  # anything with a .frame, like tracs.Trajectories
        def __init__(self, f):
            self.frame = f

    c = read_payloads(map_html(trajectory_map(Container(tracks), Container(frame), tiles=None)))
    for x, y, z in zip(a, b, c):
        assert x["c"] == y["c"] == z["c"]


def test_batches_draw_as_their_geodataframes(tracks, reports, read_payloads):
    original = Batch.from_geodataframe(tracks)
    a = read_payloads(map_html(trajectory_map(tracks, reports, tiles=None)))
    b = read_payloads(map_html(trajectory_map(original, original.with_coords(reports), tiles=None)))
    assert [x["c"] for x in a] == [y["c"] for y in b]


def test_tiles_default_and_none(tracks):
    assert "L.tileLayer(" in map_html(trajectory_map(tracks))
    assert "L.tileLayer(" not in map_html(trajectory_map(tracks, tiles=None))


def test_only_original(tracks, read_payloads):
    html = map_html(trajectory_map(tracks, tiles=None))
    layers = _user_layers(read_payloads(html))
    assert len(layers) == 3 and all(d["_ref"] == "null" for d in layers)
    assert "L.heatLayer(" not in html  # nothing reported, no heat map


def test_users_selection(tracks, reports, read_payloads):
    def drawn(**kw):
        layers = _user_layers(read_payloads(map_html(trajectory_map(tracks, reports, tiles=None, **kw))))
        return [d["label"] for d in layers[0::2]]

    assert drawn(users=[3, 1]) == ["user 3 true", "user 1 true"]
    assert drawn(users=2) == ["user 1 true", "user 2 true"]
    assert drawn(users=["2"]) == ["user 2 true"]  # command-line text matches int ids
    with pytest.raises(ValueError, match="not in the data: 99"):
        trajectory_map(tracks, users=[1, 99], tiles=None)
    with pytest.raises(ValueError, match=">= 1"):
        trajectory_map(tracks, users=0, tiles=None)


def test_cap_warns_and_keeps_whole_users(tracks, reports, read_payloads):
    with pytest.warns(UserWarning, match=r"draws 18 of 23 points \(2 of 3 users\)"):
        fmap = trajectory_map(tracks, reports, tiles=None, max_points=20)
    layers = _user_layers(read_payloads(map_html(fmap)))
    assert [len(d["c"]) for d in layers[0::2]] == [10, 8]
    # the first user alone is too big: its first rows, with a warning
    with pytest.warns(UserWarning, match="draws 7 of 23 points"):
        fmap = trajectory_map(tracks, tiles=None, max_points=7)
    assert _user_layers(read_payloads(map_html(fmap)))[0]["o"] == [0, 6, 7]
    with pytest.warns(UserWarning, match=r"\(1 of 3 users\).*max_users=1"):
        fmap = trajectory_map(tracks, tiles=None, max_users=1)
    assert len(_user_layers(read_payloads(map_html(fmap)))) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trajectory_map(tracks, reports, tiles=None, max_points=23, max_users=3)  # fits: no warning


@pytest.mark.parametrize("bad, error, match", [
    ("reports_short", ValueError, "one row per original row"),
    ("no_crs", ValueError, "no CRS"),
    ("no_uid", ValueError, "'uid' column"),
    ("nan", ValueError, "NaN"),
    ("lines", ValueError, "point geometries"),
    ("array_original", TypeError, "Trajectories or a GeoDataFrame"),
    ("string_perturbed", TypeError, "array"),
    ("epsilon", ValueError, "epsilon must be > 0"),
    ("max_points", ValueError, "max_points must be >= 1"),
    ("uid_order", ValueError, "correspond in order"),
])
def test_bad_input(tracks, reports, bad, error, match):
    original, perturbed, kw = tracks, reports, {}
    if bad == "reports_short":
        perturbed = reports[:-1]
    elif bad == "no_crs":
        original = tracks.set_crs(None, allow_override=True)
    elif bad == "no_uid":
        original = tracks.drop(columns="uid")
    elif bad == "nan":
        perturbed = reports.copy()
        perturbed[3, 0] = np.nan
    elif bad == "lines":
        original = tracks.copy()
        original["geometry"] = original.geometry.buffer(1.0).boundary
    elif bad == "array_original":
        original = reports
    elif bad == "string_perturbed":
        perturbed = "reports.csv"
    elif bad == "epsilon":
        kw["epsilon"] = -1.0
    elif bad == "max_points":
        kw["max_points"] = 0
    elif bad == "uid_order":
        perturbed = tracks.iloc[::-1].reset_index(drop=True)
    with pytest.raises(error, match=match):
        trajectory_map(original, perturbed, tiles=None, **kw)


def test_user_text_is_escaped(tracks):
    frame = tracks.copy()
    frame["uid"] = frame["uid"].map({1: "</script><b>x", 2: 'a"b\\c', 3: "plain"})
    html = map_html(trajectory_map(frame, tiles=None))
    assert "</script><b>" not in html
    assert "&lt;/script&gt;&lt;b&gt;x" in html


def test_many_pois_are_clustered(tracks, reports):
    rng = np.random.default_rng(1)
    xy = np.column_stack([tracks.geometry.x, tracks.geometry.y]).mean(axis=0) + rng.normal(0, 3e3, (900, 2))
    html = map_html(trajectory_map(tracks, reports, pois=xy, tiles=None))  # array: in the CRS of tracks
    assert html.count("L.markerClusterGroup(") == 1
    data = json.loads(re.search(r"var data = (\[\[.*?\]\]);", html).group(1))
    assert len(data) == 900 and all(len(row) == 2 for row in data)
    assert "POIs (900, clustered)" in html


def test_large_map_is_small_and_capped(make_big, read_payloads, tmp_path, offline_assets):
    """30,000 points with reports, rounded reports and 5,000 POIs: under 15 MB."""
    frame, reported = make_big(100, 300)
    fmap = trajectory_map(frame, reported, rounded=reported + 1e-4, pois=reported[::6],
                          tiles=None, epsilon=2, method="TraCS-D")
    path = save_map(fmap, tmp_path / "big.html")
    size = path.stat().st_size
    print(f"30,000-point map: {size / 1e6:.2f} MB")
    assert size < 15e6
    offline = save_map(fmap, tmp_path / "big_offline.html", offline=True).stat().st_size
    assert offline < 15e6
    html = path.read_text(encoding="utf-8")
    layers = _user_layers(read_payloads(html))
    assert sum(len(d["c"]) for d in layers) == 3 * 30_000
    assert all(d["dots"] for d in layers)  # one polyline of dots per layer, not 90,000 markers
    assert '"preferCanvas": true' in html
    with pytest.warns(UserWarning, match="draws 20,100 of 30,000 points"):
        trajectory_map(frame, reported, tiles=None, max_points=20_100)


def test_compare_maps(tracks, reports, tmp_path):
    left = trajectory_map(tracks, reports, tiles=None, epsilon=2)
    right = trajectory_map(tracks, reports * 1.0001, tiles=None, epsilon=8)
    page = compare_maps(left, right, titles=("ε = 2", "ε = 8"))
    html = map_html(page)
    assert html.count("= L.map(") == 2
    assert f"tracsMaps.sync({left.get_name()}, {right.get_name()});" in html
    assert "ε = 2</div>" in html and "ε = 8</div>" in html
    assert html.count("var tracsMaps") == 1  # the runtime once per page
    with pytest.raises(TypeError):
        compare_maps(left, "right")
    with pytest.raises(ValueError):
        compare_maps(left, left)


def test_offline_page_has_no_external_assets(tracks, reports, pois, tmp_path, offline_assets):
    fmap = trajectory_map(tracks, reports, pois=pois, tiles=None)
    online = map_html(fmap, offline=False)
    assert {u.rsplit("/", 1)[-1] for u in external_assets(online)} == {
        "leaflet.js", "leaflet.css", "leaflet_heat.min.js"}
    offline = map_html(fmap, offline=True)
    assert external_assets(offline) == []
    assert "data:image/png;base64," in offline  # the CSS images are inlined too
    saved = save_map(fmap, tmp_path / "m.html", offline=True).read_text(encoding="utf-8")
    assert external_assets(saved) == [] and saved.count("tracsMaps.track(") == 3 * 2 + 1


def test_offline_refuses_unknown_assets(tracks, offline_assets):
    from folium.plugins import Fullscreen

    fmap = trajectory_map(tracks, tiles=None)
    Fullscreen().add_to(fmap)
    with pytest.raises(ValueError, match="no local copy of .*fullscreen"):
        map_html(fmap, offline=True)


def test_save_map_bad_path(tracks):
    with pytest.raises(TypeError):
        save_map(trajectory_map(tracks, tiles=None), 3)
