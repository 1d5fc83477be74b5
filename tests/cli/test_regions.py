"""Regions anywhere: negative coordinates as separate words, presets, polygon files, the poles.

The data are small files written here: a city west of Greenwich and south of the
equator (Rio de Janeiro), and a few points north of 85° N.  Bad region inputs are in
the table of ``test_bad_inputs_cli.py`` (exit status and message of every case).
"""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import box as shapely_box

from tracs.estimate import sidecar_path
from tracs.cli._common import join_negative_values
from tracs.public import CITY_BOXES, LonLatBox, parse_box, read_region_file

#: a public box around Rio de Janeiro: every number negative
RIO = "-43.80,-23.10,-43.10,-22.70"
#: a box near the North Pole, projected with UPS North
ARCTIC = "10,85,40,89"


def _checkins(path, lon, lat, users=(1, 2, 3), per_user=12, seed=0):
    """``users × per_user`` check-ins scattered around ``(lon, lat)``, written as CSV."""
    rng = np.random.default_rng(seed)
    rows = []
    for uid in users:
        times = pd.Timestamp("2024-03-01 08:00", tz="UTC") + pd.to_timedelta(np.arange(per_user) * 3600, unit="s")
        for t in times:
            rows.append({"uid": uid, "datetime": t.isoformat(), "lat": lat + rng.uniform(-0.08, 0.08),
                         "lng": lon + rng.uniform(-0.08, 0.08)})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture
def rio(tmp_path):
    return _checkins(tmp_path / "rio.csv", -43.35, -22.90)


# ----------------------------------------------------------------------------- the command line


@pytest.mark.parametrize("argv, expected", [
    (["--region", "-74.3,40.45,-73.65,41"], ["--region=-74.3,40.45,-73.65,41"]),
    (["--anchor", "-500,20", "-e", "2"], ["--anchor=-500,20", "-e", "2"]),
    (["--pois", "-1.csv"], ["--pois=-1.csv"]),
    (["--region", ".5,1,2,3"], ["--region", ".5,1,2,3"]),  # not negative: left as it is
    (["--region", "-.5,1,2,3"], ["--region=-.5,1,2,3"]),
    (["--region", "--drop"], ["--region", "--drop"]),  # an option, not a value: argparse reports it
    (["--region", "-q"], ["--region", "-q"]),
    (["--region"], ["--region"]),
    (["-e", "-2"], ["-e", "-2"]),  # other options are argparse's business
    (["--", "--region", "-7,1,2,3"], ["--", "--region", "-7,1,2,3"]),
    (["--region=-7,1,2,3"], ["--region=-7,1,2,3"]),
])
def test_negative_values_are_joined_to_their_option(argv, expected):
    assert join_negative_values(argv) == expected


@pytest.mark.parametrize("command, option, value", [
    ("perturb", "--region", "-43.8,-23.1,-43.1,-22.7"),
    ("perturb", "--anchor", "-5,3"),
    ("evaluate", "--region", "-43.8,-23.1,-43.1,-22.7"),
    ("evaluate", "--anchor", "-5,3"),
])
def test_every_command_parses_a_negative_value(command, option, value):
    from tracs.cli import build_parser

    argv = [command, *(["in.csv", "-o", "out.csv", "-m", "tracs-d", "-e", "2"] if command == "perturb" else []),
            option, value]
    args = build_parser().parse_args(argv)
    parsed = getattr(args, option.lstrip("-"))
    if option == "--region":
        assert parsed == LonLatBox(-43.8, -23.1, -43.1, -22.7)
    else:
        assert parsed == (-5.0, 3.0)


def test_map_takes_a_poi_file_named_like_a_number(cli, tmp_path, monkeypatch):
    from tracs.cli import build_parser

    args = build_parser().parse_args(["map", "in.csv", "-o", "m.html", "--pois", "-1.csv"])
    assert args.pois == "-1.csv"


# ----------------------------------------------------------------------------- presets


#: a landmark in each preset's city (lon, lat), from public maps
LANDMARKS = {
    "tky": (139.767, 35.681),  # Tokyo Station
    "nyc": (-74.006, 40.713),  # City Hall
    "chi": (-87.630, 41.878),  # the Loop
    "beijing": (116.397, 39.909),  # Tiananmen
    "porto": (-8.611, 41.146),  # Avenida dos Aliados
    "san-francisco": (-122.419, 37.775),  # City Hall
    "rome": (12.496, 41.903),  # Piazza Venezia
}


def test_presets_cover_the_public_data_sets_cities():
    assert set(CITY_BOXES) == set(LANDMARKS)
    for name, (lon, lat) in LANDMARKS.items():
        box = CITY_BOXES[name]
        assert box.contains(lon, lat), name
        assert "fixed round box" in box.source
        region = box.to_region()
        assert 15_000 < region.width < 100_000 and 15_000 < region.height < 100_000, name  # a city, in metres


@pytest.mark.parametrize("text", ["San Francisco", "san_francisco", "SAN-FRANCISCO", " rome "])
def test_preset_names_ignore_case_spaces_and_underscores(text):
    assert parse_box(text) in (CITY_BOXES["san-francisco"], CITY_BOXES["rome"])


def test_regions_command_lists_every_preset(cli):
    result = cli("regions")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["name", "MINLON,MINLAT,MAXLON,MAXLAT", "projection"]
    assert [line.split()[0] for line in lines[1:]] == list(CITY_BOXES)
    porto = next(line for line in lines if line.startswith("porto"))
    assert "-8.8,40.7,-8,41.5" in porto and "EPSG:32629" in porto


# ----------------------------------------------------------------------------- end to end


def _released(path):
    return pd.read_csv(path)


def test_negative_region_end_to_end(cli, rio, tmp_path):
    """Rio de Janeiro: --region as a separate word equals --region=, and every report lies in the region."""
    separate, joined = tmp_path / "a.csv", tmp_path / "b.csv"
    for out, region in ((separate, ["--region", RIO]), (joined, [f"--region={RIO}"])):
        result = cli("perturb", rio, "-o", out, "-m", "tracs-c", "-e", "2", *region, "--seed", "5", "-q")
        assert result.returncode == 0, result.stderr
    assert separate.read_bytes() == joined.read_bytes()
    frame = _released(separate)
    assert len(frame) == 36
    sidecar = json.loads(sidecar_path(separate).read_text())
    assert sidecar["crs"] in ("EPSG:32723", 32723) or "32723" in json.dumps(sidecar["crs"])  # UTM 23 S
    # reports lie in the metric rectangle of the box: back in degrees, within a margin of the box
    box = parse_box(RIO)
    assert box.contains(frame["lng"].mean(), frame["lat"].mean())
    assert (frame["lng"] > -44.0).all() and (frame["lng"] < -42.9).all()
    assert (frame["lat"] > -23.2).all() and (frame["lat"] < -22.6).all()
    # the collector's side reads it back over the same region
    est = cli("estimate", separate, "-o", tmp_path / "density.csv", "--grid", "4")
    assert est.returncode == 0, est.stderr
    cells = pd.read_csv(tmp_path / "density.csv")
    assert abs(cells["probability"].sum() - 1) < 1e-9
    assert cells["min_lng"].min() < -43.79 and cells["max_lat"].max() > -22.71


def test_region_file_in_wgs84_is_the_box(cli, rio, tmp_path):
    """A GeoJSON polygon that is the box gives the same release as the box, and says how it was read."""
    zone = tmp_path / "zone.geojson"
    gpd.GeoDataFrame(geometry=[shapely_box(-43.8, -23.1, -43.1, -22.7)], crs=4326).to_file(zone)
    by_file = cli("perturb", rio, "-o", tmp_path / "f.csv", "-m", "tracs-d", "-e", "2", "--region", zone,
                  "--seed", "3", "-q")
    assert by_file.returncode == 0, by_file.stderr
    assert ("note: --region -43.8,-23.1,-43.1,-22.7 is the bounds of the 1 polygon of zone.geojson "
            "(a box: the polygons' shape is not used)") in by_file.stderr
    by_box = cli("perturb", rio, "-o", tmp_path / "b.csv", "-m", "tracs-d", "-e", "2", "--region", RIO,
                 "--seed", "3", "-q")
    assert by_box.returncode == 0, by_box.stderr
    assert (tmp_path / "f.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_region_file_in_a_projected_crs_gives_its_wgs84_bounds(tmp_path):
    """A GeoPackage of two polygons in SIRGAS 2000 / UTM 23S: the WGS84 bounds of their union."""
    utm = "EPSG:31983"
    corners = gpd.GeoSeries(gpd.points_from_xy([-43.8, -43.4], [-23.1, -22.9], crs=4326)).to_crs(utm)
    (x0, y0), (x1, y1) = [(p.x, p.y) for p in corners]
    polygons = [shapely_box(x0, y0, (x0 + x1) / 2, y1), shapely_box((x0 + x1) / 2, y0, x1, y1)]
    path = tmp_path / "zones.gpkg"
    gpd.GeoDataFrame({"name": ["west", "east"]}, geometry=polygons, crs=utm).to_file(path, driver="GPKG")
    box = read_region_file(path)
    assert box.path == str(path) and "the 2 polygons of zones.gpkg" in box.source
    # the bounds hold every reprojected vertex, and exceed them by less than 10 m (densified edges)
    exact = gpd.GeoSeries(polygons, crs=utm).segmentize(50.0).to_crs(4326).total_bounds
    np.testing.assert_allclose(box.bounds, exact, atol=1e-4)
    assert box.min_lon <= -43.8 + 1e-6 and box.max_lat >= -22.9 - 1e-6


def test_the_north_pole_is_handled_with_ups(cli, tmp_path):
    """A box north of 85° N is perturbed in the polar stereographic UPS North (EPSG:32661)."""
    data = _checkins(tmp_path / "arctic.csv", 25.0, 87.0, per_user=6)
    out = tmp_path / "arctic_out.csv"
    result = cli("perturb", data, "-o", out, "-m", "tracs-c", "-e", "3", "--region", ARCTIC, "--seed", "2", "-q")
    assert result.returncode == 0, result.stderr
    assert "32661" in json.dumps(json.loads(sidecar_path(out).read_text())["crs"])
    frame = _released(out)
    assert len(frame) == 18 and np.isfinite(frame[["lat", "lng"]].to_numpy()).all()
    assert (frame["lat"] > 84.0).all()


def test_a_cap_around_the_north_pole_is_one_region(cli, tmp_path):
    """Rows at every longitude within 60 km of the pole, over the cap north of 85° N: no warning
    about a file spanning continents, every report in the cap's metric square."""
    rng = np.random.default_rng(0)
    rows = [{"uid": u, "datetime": f"2024-03-01T{8 + k:02d}:00:00Z", "lat": 89.5 + rng.uniform(0, 0.45),
             "lng": rng.uniform(-170, 170)} for u in (1, 2) for k in range(5)]
    data = tmp_path / "pole.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    out = tmp_path / "pole_out.csv"
    result = cli("perturb", data, "-o", out, "-m", "tracs-c", "-e", "3", "--region", "-180,85,180,90", "--seed", "2",
                 "-q")
    assert result.returncode == 0, result.stderr
    assert "two continents" not in result.stderr
    frame = _released(out)
    assert len(frame) == 10 and (frame["lat"] > 80.0).all()  # the square around the 85° circle


def test_a_box_reaching_the_south_pole_projects(tmp_path):
    box = LonLatBox(-60, -90, -50, -85)
    assert box.metric_crs().to_epsg() == 32761
    region = box.to_region()
    assert region.width > 50_000 and region.height > 50_000  # a square inside the wedge


# ----------------------------------------------------------------------------- evaluate


EVALUATE = ("evaluate", "--methods", "tracs-d", "--epsilons", "2", "--repetitions", "1", "--format", "json",
            "--no-progress")


def test_evaluate_a_file_without_region_says_loudly_it_uses_the_files_bounds(cli, rio):
    result = cli(*EVALUATE, "--dataset", rio)
    assert result.returncode == 0, result.stderr
    assert (f"tracs evaluate: warning: --dataset {rio} without --region: the region is the file's own "
            "bounding box") in result.stderr
    assert "NOT the setting of a private release" in result.stderr
    assert json.loads(result.stdout)[0]["method"] == "tracs-d"


def test_evaluate_a_file_over_a_public_region(cli, rio, tmp_path):
    """With --region the file's bounds are not used: no warning, and the AE changes with the region."""
    inside = cli(*EVALUATE, "--dataset", rio, "--region", RIO)
    assert inside.returncode == 0, inside.stderr
    assert "without --region" not in inside.stderr
    assert "points of interest (discrete methods, rounding) are the data's distinct venues" in inside.stderr
    # TraCS-C's error grows with the region's side: a box 5 times as wide and high (seed 0)
    runs = [cli(*EVALUATE, "--dataset", rio, "--region", region, "--no-round-to-pois", "--methods", "tracs-c")
            for region in (RIO, "-45.2,-24.7,-41.7,-22.7")]
    assert all(r.returncode == 0 for r in runs), runs[1].stderr
    small, large = (json.loads(r.stdout)[0]["ae_mean"] for r in runs)
    assert large > 3 * small


def test_evaluate_rows_outside_the_region(cli, tmp_path):
    data = _checkins(tmp_path / "rio.csv", -43.35, -22.90, per_user=4)
    with open(data, "a") as fh:
        fh.write("9,2024-03-02T08:00:00+00:00,-21.5,-43.23\n")  # line 14: north of the box
    refused = cli(*EVALUATE, "--dataset", data, "--region", RIO)
    assert refused.returncode == 1
    assert ("1 of 13 rows lie outside the region -43.8,-23.1,-43.1,-22.7 (line 14); pass --clip"
            in refused.stderr)
    dropped = cli(*EVALUATE, "--dataset", data, "--region", RIO, "--drop")
    assert dropped.returncode == 0, dropped.stderr
    assert "tracs evaluate: dropped 1 row(s) outside the region: line 14" in dropped.stderr
    assert "tracs evaluate: read 13 rows: dropped 0 for bad values, dropped 1 outside the region; 12 kept" in (
        dropped.stderr)


@pytest.mark.parametrize("extra, fragment", [
    (("--dataset", "unit-square", "--region", RIO), "--region applies to check-in data; unit-square is a continuous"),
    (("--pois", "venues.csv"), "--pois goes with --region"),
    (("--drop",), "--drop goes with --region"),
    (("--dataset", "synthetic", "--region", "-100,-10,100,10"), "too wide for one projection"),
    (("--dataset", "synthetic", "--region", "nyc"), "rows lie outside the region -74.3,40.45,-73.65,41"),
])
def test_evaluate_bad_public_parameters(cli, extra, fragment):
    result = cli(*EVALUATE, *extra)
    assert result.returncode == 1
    assert fragment in result.stderr, result.stderr


def test_evaluate_takes_public_pois_inside_the_region(cli, rio, tmp_path):
    venues = tmp_path / "venues.csv"
    pd.DataFrame({"lat": [-22.90, -22.95, -22.85, -23.0], "lng": [-43.20, -43.30, -43.40, -43.25]}).to_csv(
        venues, index=False)
    result = cli(*EVALUATE, "--dataset", rio, "--region", RIO, "--pois", venues, "--methods", "em")
    assert result.returncode == 0, result.stderr
    assert "distinct venues" not in result.stderr and "without --region" not in result.stderr
    own = cli(*EVALUATE, "--dataset", rio, "--region", RIO, "--methods", "em")  # the data's 36 venues
    assert own.returncode == 0, own.stderr
    assert json.loads(own.stdout)[0]["ae_mean"] != json.loads(result.stdout)[0]["ae_mean"]
    outside = tmp_path / "far.csv"
    pd.DataFrame({"lat": [-22.90, 10.0], "lng": [-43.20, -43.30]}).to_csv(outside, index=False)
    refused = cli(*EVALUATE, "--dataset", rio, "--region", RIO, "--pois", outside, "--methods", "em")
    assert refused.returncode == 1
    assert f"far.csv: 1 POI(s) outside the region {parse_box(RIO)} (lines 3)" in refused.stderr


# ----------------------------------------------------------------------------- bad regions in Python

_POINT = {"type": "Point", "coordinates": [139.7, 35.6]}
_SQUARE = {"type": "Polygon", "coordinates": [[[139.6, 35.5], [139.9, 35.5], [139.9, 35.8], [139.6, 35.8],
                                               [139.6, 35.5]]]}


def _geojson(*geometries) -> str:
    return json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {}, "geometry": g} for g in geometries]})


@pytest.mark.parametrize("name, content, error, message", [
    ("absent.geojson", None, FileNotFoundError, "no such region file: "),
    ("zone.geojson", _geojson(_POINT), ValueError, "holds Point geometries: a region file holds polygons"),
    ("zone.geojson", _geojson(_SQUARE, _POINT), ValueError, "holds Point, Polygon geometries"),
    ("zone.geojson", '{"type": "FeatureCollection", "features": []}', ValueError, "holds no geometry"),
    ("zone.geojson", "{not json", ValueError, "cannot read the region file zone.geojson as a polygon file"),
    ("zone.gpkg", "not a database", ValueError, "cannot read the region file zone.gpkg"),
], ids=["missing", "points", "mixed", "empty", "not-json", "not-gpkg"])
def test_bad_region_files(tmp_path, name, content, error, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(error) as info:
        parse_box(str(path))
    assert message in str(info.value)


@pytest.mark.parametrize("make, error, message", [
    (lambda: LonLatBox(170, -20, -170, -10), ValueError, "MINLON 170 > MAXLON -170: a box across the antimeridian"),
    (lambda: LonLatBox(-100, -10, 100, 10).to_region(), ValueError, "too wide for one projection"),
    (lambda: parse_box("-74.3,40.45,-73.65"), ValueError, "needs 4 numbers"),
    (lambda: parse_box("gotham"), ValueError, "unknown region preset 'gotham'; choose from tky, nyc, chi, beijing"),
], ids=["antimeridian", "too-wide", "three-numbers", "unknown-preset"])
def test_bad_regions(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


def test_a_good_region_file_polygon_reads(tmp_path):
    path = tmp_path / "zone.geojson"
    path.write_text(_geojson(_SQUARE))
    assert parse_box(str(path)).bounds == pytest.approx((139.6, 35.5, 139.9, 35.8))
