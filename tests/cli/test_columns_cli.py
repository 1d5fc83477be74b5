"""The tracs command on users' own files: column options, aliases, time layouts, GPX,
Parquet with any names, --input-format foursquare on Parquet, --pad, quiet progress,
chunked perturbation equal to one batch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

BASE = pd.DataFrame({
    "person": [7, 7, 7, 9, 9, 9],
    "when": ["01/02/2024 08:00", "01/02/2024 09:00", "01/02/2024 10:00",
             "03/04/2024 08:00", "03/04/2024 09:30", "03/04/2024 11:00"],
    "north": [35.60, 35.62, 35.64, 35.70, 35.69, 35.71],
    "east": [139.60, 139.63, 139.61, 139.70, 139.72, 139.74],
})
FLAGS = ["--user-col", "person", "--time-col", "when", "--lat-col", "north", "--lon-col", "east"]


#: the public region of these Tokyo rows (a fixed box, never the data's bounds)
REGION = ("--region", "tky")
#: Munich, for the GPX ride
MUNICH = ("--region", "11.3,48.0,11.8,48.3")


def perturb(cli, source, output, *extra, region=REGION):
    return cli("perturb", source, "-o", output, "-m", "tracs-c", "-e", "2", "--seed", "3", *region, *extra)


@pytest.fixture
def custom_csv(tmp_path):
    path = tmp_path / "custom.csv"
    BASE.to_csv(path, index=False)
    return path


def test_column_flags_and_month_first_note(cli, custom_csv, tmp_path):
    out = tmp_path / "out.csv"
    result = perturb(cli, custom_csv, out, *FLAGS)
    assert result.returncode == 0, result.stderr
    released = pd.read_csv(out)
    assert len(released) == 6 and released["uid"].tolist() == BASE["person"].tolist()
    assert released["datetime"].iloc[0] == "2024-01-02 08:00:00+00:00"  # month first
    assert "'%m/%d/%Y %H:%M'" in result.stderr and "--dayfirst" in result.stderr


def test_dayfirst_and_time_format(cli, custom_csv, tmp_path):
    out = tmp_path / "out.csv"
    assert perturb(cli, custom_csv, out, *FLAGS, "--dayfirst").returncode == 0
    assert pd.read_csv(out)["datetime"].iloc[0] == "2024-02-01 08:00:00+00:00"
    assert perturb(cli, custom_csv, out, *FLAGS, "--time-format", "%d/%m/%Y %H:%M").returncode == 0
    assert pd.read_csv(out)["datetime"].iloc[3] == "2024-04-03 08:00:00+00:00"


def test_aliases_need_no_flags(cli, tmp_path):
    path = tmp_path / "aliases.csv"
    BASE.rename(columns={"person": "user_id", "when": "timestamp", "north": "latitude",
                         "east": "longitude"}).to_csv(path, index=False)
    result = perturb(cli, path, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr


NAMED = ["--user-col", "person", "--time-col", "when"]


@pytest.mark.parametrize("columns, flags, fragments", [
    ({"person": "a", "when": "b", "north": "c", "east": "d"}, [],
     ["--user-col", "--time-col", "--lat-col", "--lon-col", "Columns found: a, b, c, d"]),
    ({"north": "c"}, NAMED, ["--lat-col NAME", "Columns found: person, when, c, east"]),
    ({}, [*NAMED, "--lat-col", "LAT", "--lon-col", "east"], ["no column 'LAT' (--lat-col LAT)"]),
    ({}, [*FLAGS, "--time-format", "%Y-%m-%d"], ["no time matches the format", "--time-format"]),
])
def test_missing_columns_and_bad_formats(cli, tmp_path, columns, flags, fragments):
    path = tmp_path / "bad.csv"
    BASE.rename(columns=columns).to_csv(path, index=False)
    result = perturb(cli, path, tmp_path / "out.csv", *flags)
    assert result.returncode == 1
    line = result.stderr.strip().splitlines()[-1]
    for fragment in fragments:
        assert fragment in line, line
    assert "user=" not in line and "lng=" not in line


def test_unreadable_times_say_what_was_tried(cli, tmp_path):
    path = tmp_path / "words.csv"
    BASE.assign(when="sometime in spring").to_csv(path, index=False)
    result = perturb(cli, path, tmp_path / "out.csv", *FLAGS)
    assert result.returncode == 1
    assert "tried ISO 8601" in result.stderr and "--time-format" in result.stderr


@pytest.mark.parametrize("name, content", [
    ("table.xlsx", b"PK\x03\x04\x14\x00\x06\x00"),
    ("photo.png", b"\x89PNG\r\n\x1a\n"),
    ("words.txt", b"no delimiters in here\n"),
])
def test_unsupported_formats(cli, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    result = perturb(cli, path, tmp_path / "out.csv")
    assert result.returncode == 1
    assert "supported formats: CSV, TSV, GeoJSON, GeoParquet, Parquet, GeoPackage, Shapefile, FlatGeobuf, GPX" \
        in result.stderr
    assert "delimiter" not in result.stderr.split("supported formats")[1]


GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
<trk><name>ride</name>
<trkseg>
<trkpt lat="48.10" lon="11.50"><time>2024-05-01T08:00:00Z</time></trkpt>
<trkpt lat="48.11" lon="11.52"><time>2024-05-01T08:01:00Z</time></trkpt>
<trkpt lat="48.12" lon="11.55"><time>2024-05-01T08:02:00Z</time></trkpt>
</trkseg>
</trk>
<trk><name>walk</name>
<trkseg>
<trkpt lat="48.20" lon="11.60"></trkpt>
<trkpt lat="48.21" lon="11.61"></trkpt>
</trkseg>
</trk>
</gpx>
"""


def test_gpx_in_and_out(cli, tmp_path):
    import gpxpy

    source = tmp_path / "ride.gpx"
    source.write_text(GPX)
    out = tmp_path / "released.gpx"
    result = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "4", "--seed", "1", *MUNICH)
    assert result.returncode == 0, result.stderr
    assert "kept 2 points without a time in the file's order (written without a time): rows 3, 4" in result.stderr
    gpx = gpxpy.parse(out.read_text())
    assert [len(t.segments[0].points) for t in gpx.tracks] == [3, 2]
    assert gpx.tracks[0].segments[0].points[2].time.isoformat() == "2024-05-01T08:02:00+00:00"
    csv_out = tmp_path / "released.csv"
    assert cli("perturb", source, "-o", csv_out, "-m", "tracs-c", "-e", "4", "-q", *MUNICH).returncode == 0
    assert pd.read_csv(csv_out)["trajectory"].tolist() == [0, 0, 0, 1, 1]


MIXED_GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
<trk><trkseg>
<trkpt lat="48.10" lon="11.50"><time>2024-05-01T08:00:00Z</time></trkpt>
<trkpt lat="48.105" lon="11.505"></trkpt>
<trkpt lat="48.11" lon="11.51"><time>2024-05-01T08:01:00Z</time></trkpt>
<trkpt lat="48.12" lon="11.52"></trkpt>
</trkseg><trkseg>
<trkpt lat="48.20" lon="11.60"></trkpt>
<trkpt lat="48.21" lon="11.61"><time>2024-05-01T07:00:00Z</time></trkpt>
</trkseg></trk>
</gpx>
"""


def test_gpx_points_without_time_keep_order_and_stay_untimed(cli, tmp_path):
    """Points without <time> between timed ones: same order, no invented time in any output."""
    import gpxpy

    source = tmp_path / "mixed.gpx"
    source.write_text(MIXED_GPX)
    out = tmp_path / "released.gpx"
    result = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "4", "--seed", "1", "-q", *MUNICH)
    assert result.returncode == 0, result.stderr
    assert "kept 3 points without a time in the file's order (written without a time): rows 1, 3, 4" \
        in result.stderr
    written = [p for t in gpxpy.parse(out.read_text()).tracks for p in t.segments[0].points]
    assert [None if p.time is None else p.time.isoformat() for p in written] == [
        "2024-05-01T08:00:00+00:00", None, "2024-05-01T08:01:00+00:00", None, None, "2024-05-01T07:00:00+00:00"]
    assert "<time>" not in out.read_text().split("<trkpt")[2]  # no empty element either
    csv_out = tmp_path / "released.csv"
    assert cli("perturb", source, "-o", csv_out, "-m", "tracs-c", "-e", "4", "-q", "--keep-lines",
               *MUNICH).returncode == 0
    rows = pd.read_csv(csv_out)
    assert rows["source_row"].tolist() == [0, 1, 2, 3, 4, 5]
    assert rows["datetime"].isna().tolist() == [False, True, False, True, True, False]
    assert rows["datetime"].iloc[0] == "2024-05-01 08:00:00+00:00"


def test_parquet_any_names_and_geoparquet(cli, tmp_path):
    import geopandas as gpd

    plain = tmp_path / "custom.parquet"
    BASE.to_parquet(plain)
    assert perturb(cli, plain, tmp_path / "a.csv", *FLAGS).returncode == 0
    geo = tmp_path / "custom.geoparquet"
    gpd.GeoDataFrame(BASE[["person", "when"]], geometry=gpd.points_from_xy(BASE.east, BASE.north),
                     crs=4326).to_parquet(geo)
    result = perturb(cli, geo, tmp_path / "b.parquet", "--user-col", "person", "--time-col", "when")
    assert result.returncode == 0, result.stderr
    assert len(gpd.read_parquet(tmp_path / "b.parquet")) == 6


def test_foursquare_input_format_on_parquet(cli, tmp_path):
    path = tmp_path / "fsq.parquet"
    pd.DataFrame({"User ID": [1, 1, 2], "Venue ID": ["v1", "v2", "v3"], "Latitude": [35.7, 35.8, 35.75],
                  "Longitude": [139.7, 139.8, 139.75],
                  "UTC Time": ["Sat Dec 08 05:56:34 +0000 2012", "Sat Dec 08 06:56:34 +0000 2012",
                               "Sun Dec 09 06:56:34 +0000 2012"]}).to_parquet(path)
    result = perturb(cli, path, tmp_path / "out.csv", "--input-format", "foursquare")
    assert result.returncode == 0, result.stderr
    BASE.to_parquet(tmp_path / "other.parquet")
    result = perturb(cli, tmp_path / "other.parquet", tmp_path / "out.csv", "--input-format", "foursquare")
    assert result.returncode == 1 and "user id: none of userid, user, uid" in result.stderr


def test_pad_widens_the_region(cli, custom_csv, tmp_path):
    """--pad grows the region taken from the data (--region-from-data, the non-private opt-in)."""
    tight, wide = tmp_path / "tight.csv", tmp_path / "wide.csv"
    from_data = ("--region-from-data",)
    assert perturb(cli, custom_csv, tight, *FLAGS, region=from_data).returncode == 0
    assert perturb(cli, custom_csv, wide, *FLAGS, "--pad", "50000", region=from_data).returncode == 0
    inside = pd.read_csv(tight)
    assert inside["lat"].between(35.60 - 1e-9, 35.71 + 1e-9).all()
    spread = pd.read_csv(wide)
    assert (~spread["lat"].between(35.60, 35.71)).any()  # seed 3: some releases use the margin
    assert cli("perturb", custom_csv, "-o", wide, "-m", "tracs-c", "-e", "2", "--pad", "-1").returncode == 2


def test_no_progress_bar_without_terminal(cli, checkins_csv, tmp_path):
    result = cli("perturb", checkins_csv, "-o", tmp_path / "o.csv", "-m", "tracs-c", "-e", "2", *REGION)
    assert result.returncode == 0 and "pt/s" not in result.stderr and "\r" not in result.stderr


def test_chunks_give_the_same_release_as_one_batch(cli, checkins_csv, tmp_path, monkeypatch):
    from tracs.release import steps

    whole, pieces = tmp_path / "whole.csv", tmp_path / "pieces.csv"
    assert cli("perturb", checkins_csv, "-o", whole, "-m", "tracs-d", "-e", "2", "--seed", "5", *REGION).returncode == 0
    monkeypatch.setattr(steps, "CHUNK_POINTS", 7)  # a chunk per user (25, 20, 15 points)
    assert steps.chunks(np.array([0, 25, 45, 60]), np.array([True, True, True]), 7) == [(0, 1), (1, 2), (2, 3)]
    assert steps.chunks(np.array([0, 5, 9, 20]), np.array([True, False, True]), 7) == [(0, 2), (2, 3)]
    assert cli("perturb", checkins_csv, "-o", pieces, "-m", "tracs-d", "-e", "2", "--seed", "5", *REGION).returncode == 0
    assert whole.read_bytes() == pieces.read_bytes()


def test_map_and_evaluate_take_column_options(cli, custom_csv, tmp_path):
    result = cli("map", custom_csv, "-o", tmp_path / "m.html", "-e", "2", "--tiles", "none", *FLAGS)
    assert result.returncode == 0, result.stderr
    result = cli("evaluate", "--dataset", custom_csv, "--methods", "tracs-c", "--epsilons", "2",
                 "--repetitions", "1", "--output-dir", tmp_path / "ev", "--no-figure", "--no-progress",
                 "--no-round-to-pois", *FLAGS)
    assert result.returncode == 0, result.stderr
