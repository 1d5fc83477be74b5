"""The ``tracs`` command: exit codes, files written, messages.

A few runs go through a subprocess exactly as a user's shell would (``tracs_cmd``);
the others call ``tracs.cli.main`` in-process (``cli``), which is the same code
path minus interpreter start-up, to keep the folder fast.
"""

from __future__ import annotations

import json
import time
from xml.etree import ElementTree

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest

#: the public region of every perturb call (the test data lies in Tokyo)
REGION = ("--region", "tky")


def assert_clean_failure(result, *fragments):
    """Non-zero exit, one line on stderr naming the problem, never a traceback."""
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# ----------------------------------------------------------------------------- help


def test_help_in_a_shell(tracs_cmd):
    result = tracs_cmd("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tracs")
    for command in ("perturb", "evaluate", "demo"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["perturb", "evaluate", "demo"])
def test_help_of_each_command(cli, command):
    result = cli(command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: tracs {command}")


def test_no_command_prints_help_and_fails(cli):
    result = cli()
    assert result.returncode == 2 and "usage: tracs" in result.stderr


# ----------------------------------------------------------------------------- perturb


def read_back(path):
    if path.suffix == ".csv":
        return pd.read_csv(path)
    if path.suffix == ".geojson":
        return gpd.read_file(path)
    return gpd.read_parquet(path)


def check_released(path, source_csv, eps):
    source = pd.read_csv(source_csv)
    released = read_back(path)
    assert len(released) == len(source)
    # ids and times kept, in the input's (user, time) order
    assert list(released["uid"].astype(int)) == list(source["uid"])
    assert (pd.to_datetime(released["datetime"], utc=True) == pd.to_datetime(source["datetime"], utc=True)).all()
    # released points are new WGS84 points in the public region (the tky box, drawn in the UTM
    # rectangle that holds it, whose grid is slightly rotated against lat/lng: allow 3 % of its span)
    from tracs.public import CITY_BOXES

    box = CITY_BOXES["tky"]
    for col, low, high in (("lat", box.min_lat, box.max_lat), ("lng", box.min_lon, box.max_lon)):
        margin = 0.03 * (high - low)
        assert released[col].between(low - margin, high + margin).all()
    assert not np.allclose(released["lat"], source["lat"])
    assert "poi_id" not in released.columns  # never the true venue ids
    np.testing.assert_allclose(released["epsilon_point"], eps)
    n = source.groupby("uid").size()
    np.testing.assert_allclose(released["epsilon_trajectory"], eps * source["uid"].map(n))
    return released


def test_perturb_in_a_shell(checkins_csv, tmp_path, tracs_cmd):
    out = tmp_path / "released.csv"
    result = tracs_cmd("perturb", *REGION, checkins_csv, "-o", out, "--method", "tracs-d", "--epsilon", "4", "--seed", "1")
    assert result.returncode == 0, result.stderr
    summary = result.stdout.strip().splitlines()
    assert len(summary) == 1
    # no figure computed from the true points unless --report-error asks for it
    assert "60 points in 3 trajectories" in summary[0] and "AE" not in summary[0]
    check_released(out, checkins_csv, 4.0)


@pytest.mark.parametrize("suffix", [".geojson", ".parquet"])
@pytest.mark.parametrize("method", ["tracs-c", "strawman", "planar-laplace"])
def test_perturb_formats_and_methods(cli, checkins_csv, tmp_path, suffix, method):
    out = tmp_path / f"released{suffix}"
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", method, "-e", "2", "--seed", "1")
    assert result.returncode == 0, result.stderr
    check_released(out, checkins_csv, 2.0)


def _release_methods():
    from tracs.methods import BASELINE, PERTURBER, view

    return view(PERTURBER, BASELINE)


@pytest.mark.parametrize("method", list(_release_methods()))
def test_perturb_every_registered_method(cli, checkins_csv, venues_csv, tmp_path, method):
    """Every registered perturber and baseline releases through 'tracs perturb' (baselines onto
    the venues); a method that is not ε-LDP is refused, by name."""
    entry = _release_methods()[method]
    out = tmp_path / "released.csv"
    pois = ("--pois", venues_csv) if entry.discrete else ()
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", method, "-e", "4", "--seed", "1", *pois)
    if not entry.ldp:
        assert result.returncode != 0 and f"method {method!r} is not ε-LDP" in result.stderr
        assert not out.exists()
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{entry.label}: 60 points in 3 trajectories")
    check_released(out, checkins_csv, 4.0)
    if entry.discrete:
        assert_on_venues(out, checkins_csv)


def assert_on_venues(released_csv, source_csv):
    venues = pd.read_csv(source_csv)[["lat", "lng"]].drop_duplicates().to_numpy()
    released = pd.read_csv(released_csv)[["lat", "lng"]].to_numpy()
    # every released point is one of the venues (up to the projection round trip)
    gap = np.min(np.abs(released[:, None, :] - venues[None, :, :]).max(axis=2), axis=1)
    assert gap.max() < 1e-6


def test_perturb_per_trajectory_budget(cli, checkins_csv, tmp_path):
    out = tmp_path / "released.csv"
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", "tracs-c", "-e", "10", "--per-trajectory", "--seed", "2")
    assert result.returncode == 0, result.stderr
    released = pd.read_csv(out)
    n = released.groupby("uid")["uid"].transform("size")
    np.testing.assert_allclose(released["epsilon_point"], 10.0 / n)
    np.testing.assert_allclose(released["epsilon_trajectory"], 10.0)
    assert "per trajectory" in result.stdout


def test_perturb_round_to_pois_releases_venues(cli, checkins_csv, venues_csv, tmp_path):
    out = tmp_path / "released.csv"
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", "tracs-d", "-e", "2", "--round-to-pois",
                 "--seed", "3", "--pois", venues_csv)
    assert result.returncode == 0, result.stderr
    assert "rounded to POIs" in result.stdout
    assert_on_venues(out, checkins_csv)


def test_perturb_seed_reproduces(cli, checkins_csv, tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    for path, seed in ((a, 9), (b, 9), (c, 10)):
        assert cli("perturb", *REGION, checkins_csv, "-o", path, "-m", "tracs-d", "-e", "3", "--seed", seed).returncode == 0
    pd.testing.assert_frame_equal(pd.read_csv(a), pd.read_csv(b))
    assert not pd.read_csv(a).equals(pd.read_csv(c))


def test_perturb_reads_its_own_output(cli, checkins_csv, tmp_path):
    # a released CSV is itself a check-in file: it can be read and perturbed again
    first, second = tmp_path / "first.csv", tmp_path / "second.geojson"
    assert cli("perturb", *REGION, checkins_csv, "-o", first, "-m", "tracs-c", "-e", "5", "--seed", "1").returncode == 0
    # released points may lie just outside the lon/lat box (inside its projected rectangle)
    result = cli("perturb", *REGION, first, "-o", second, "-m", "tracs-c", "-e", "5", "--seed", "1", "--clip")
    assert result.returncode == 0, result.stderr
    assert len(gpd.read_file(second)) == 60


# ----------------------------------------------------------------------------- bad input


def test_bad_method(cli, checkins_csv, tmp_path):
    result = cli("perturb", *REGION, checkins_csv, "-o", tmp_path / "o.csv", "-m", "tracs-x", "-e", "1")
    assert_clean_failure(result, "invalid choice", "tracs-x")


@pytest.mark.parametrize("eps", ["0", "-1", "nan", "inf", "abc"])
def test_bad_epsilon(cli, checkins_csv, tmp_path, eps):
    result = cli("perturb", *REGION, checkins_csv, "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", eps)
    assert_clean_failure(result, "epsilon")


def test_missing_input_in_a_shell(tmp_path, tracs_cmd):
    result = tracs_cmd("perturb", *REGION, tmp_path / "nope.csv", "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "no such file", "nope.csv")


def test_unwritable_output(cli, checkins_csv, tmp_path):
    result = cli("perturb", *REGION, checkins_csv, "-o", tmp_path / "missing" / "o.csv", "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "cannot write")
    result = cli("perturb", *REGION, checkins_csv, "-o", tmp_path / "o.xlsx", "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "output format")
    result = cli("perturb", *REGION, checkins_csv, "-o", tmp_path, "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "is a folder")


def test_empty_input(cli, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("uid,datetime,lat,lng\n")
    result = cli("perturb", *REGION, empty, "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "empty.csv")
    assert not (tmp_path / "o.csv").exists()


def test_not_a_checkin_file(cli, tmp_path):
    junk = tmp_path / "junk.csv"
    junk.write_text("a,b\n1,2\n")
    result = cli("perturb", *REGION, junk, "-o", tmp_path / "o.csv", "-m", "tracs-d", "-e", "1")
    assert_clean_failure(result, "junk.csv")


# ----------------------------------------------------------------------------- evaluate

EVAL = ["evaluate", "--dataset", "unit-square", "--methods", "tracs-d,tracs-c,strawman,planar-laplace",
        "--epsilons", "2,8", "--repetitions", "2", "--trajectories", "10", "--points", "20",
        "--format", "json", "--seed", "5"]


def test_evaluate_json_and_files_in_a_shell(tmp_path, tracs_cmd, cli):
    first = tracs_cmd(*EVAL, "--output-dir", tmp_path / "a")
    assert first.returncode == 0, first.stderr
    records = json.loads(first.stdout)
    assert len(records) == 8
    keys = {"method", "epsilon", "ae_mean", "ae_ci_low", "ae_ci_high", "ae_mean_normalised", "seconds_per_point"}
    assert all(set(r) == keys for r in records)
    assert {r["method"] for r in records} == {"tracs-d", "tracs-c", "strawman", "planar-laplace"}
    results = pd.read_csv(tmp_path / "a" / "results.csv")
    assert len(results) == 4 * 2 * 2
    assert {"method", "epsilon", "repetition", "ae", "ae_normalised", "seconds_per_point"} <= set(results)
    chart = ElementTree.parse(tmp_path / "a" / "ae_vs_epsilon.svg").getroot()
    series = chart.findall(".//{http://www.w3.org/2000/svg}polyline[@class='series']")
    assert sorted(line.get("data-label") for line in series) == ["Strawman", "TraCS-C", "TraCS-D", "planar Laplace"]
    # same seed, same numbers (timings aside), here from an in-process run
    second = cli(*EVAL, "--output-dir", tmp_path / "b", "--no-figure", "--no-progress")
    strip = lambda recs: [{k: v for k, v in r.items() if k != "seconds_per_point"} for r in recs]  # noqa: E731
    assert strip(records) == strip(json.loads(second.stdout))


def test_evaluate_json_writes_only_json(cli, tmp_path, monkeypatch):
    """--format json: the JSON array alone on stdout, or in -o; no results folder appears."""
    monkeypatch.chdir(tmp_path)
    result = cli(*EVAL, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 8 and list(tmp_path.iterdir()) == []
    result = cli(*EVAL, "--no-progress", "-o", tmp_path / "summary.json")
    assert result.returncode == 0 and result.stdout == ""
    assert len(json.loads((tmp_path / "summary.json").read_text())) == 8
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
    refused = cli("evaluate", "--repetitions", "1", "-o", tmp_path / "x.json", "--no-progress")
    assert refused.returncode != 0 and "-o/--output goes with --format json" in refused.stderr
    assert not (tmp_path / "x.json").exists()


def test_evaluate_says_how_long_a_long_run_will_take(cli, tmp_path, monkeypatch):
    from tracs.cli import evaluate

    monkeypatch.setattr(evaluate, "ESTIMATE_NOTE_SECONDS", 0.0)
    result = cli(*EVAL, "--no-progress")
    assert result.returncode == 0
    assert "this run will take about" in result.stderr and "--max-trajectories" in result.stderr
    monkeypatch.setattr(evaluate, "ESTIMATE_NOTE_SECONDS", 1e9)
    assert "this run will take" not in cli(*EVAL, "--no-progress").stderr


def test_run_grid_estimate_is_close_to_the_run(tmp_path):
    from tracs import evaluation

    dataset = evaluation.load_dataset("unit-square", trajectories=40, points=50)
    seen = {}
    start = time.perf_counter()
    evaluation.run_grid(dataset, ["tracs-d", "tracs-c"], [2.0, 8.0], repetitions=2, on_estimate=seen.update)
    took = time.perf_counter() - start
    assert set(seen) == {"tracs-d", "tracs-c"} and all(v > 0 for v in seen.values())
    # timing on a shared machine is noisy: the estimate is only asked to be of the right order
    assert sum(seen.values()) < 20 * took


def test_evaluate_table_and_metrics(cli, tmp_path):
    result = cli("evaluate", "--dataset", "2x10", "--methods", "tracs-c", "--epsilons", "4", "--repetitions", "2",
                 "--trajectories", "5", "--points", "10", "--no-figure", "--output-dir", tmp_path,
                 "--metrics", "range_query_error,hotspot_precision", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "TraCS-C" in result.stdout and "95% CI" in result.stdout and "hotspot_precision" in result.stdout
    assert "hotspot_precision" in pd.read_csv(tmp_path / "summary.csv").columns


def test_evaluate_check_in_file_rounds_to_pois(cli, checkins_csv, tmp_path):
    result = cli("evaluate", "--dataset", checkins_csv, "--methods", "tracs-d,tracs-c", "--epsilons", "4",
                 "--repetitions", "1", "--no-figure", "--output-dir", tmp_path, "--format", "json", "--no-progress")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "results.csv")
    assert table["rounded"].all() and (table["units"] == "m").all() and (table["n_points"] == 60).all()


@pytest.mark.parametrize("args, fragment", [
    (["--methods", "tracs-d,bogus"], "bogus"),
    (["--epsilons", "2,-4"], "epsilon"),
    (["--methods", "atp"], "points of interest"),
    (["--dataset", "no-such-file.csv"], "no such file"),
    (["--metrics", "nope"], "nope"),
])
def test_evaluate_bad_input(cli, tmp_path, args, fragment):
    result = cli("evaluate", "--output-dir", tmp_path, "--repetitions", "1", "--trajectories", "2",
                 "--points", "2", "--no-progress", *args)
    assert_clean_failure(result, fragment)


def test_evaluate_named_data_needs_the_data_folder(cli, tmp_path, no_data_dirs):
    result = cli("evaluate", "--dataset", "tky", "--output-dir", tmp_path)
    assert_clean_failure(result, "TRACS_DATA_DIR")


def test_evaluate_unwritable_output_dir(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("evaluate", "--output-dir", blocker / "sub", "--repetitions", "1")
    assert_clean_failure(result, "output folder")


# ----------------------------------------------------------------------------- demo


def test_demo_on_synthetic_city_in_a_shell(tmp_path, tracs_cmd):
    out = tmp_path / "demo"
    result = tracs_cmd("demo", "--dataset", "synthetic", "--epsilons", "2,8", "--repetitions", "1",
                       "--output-dir", out, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "TraCS-D" in result.stdout and "TraCS-C" in result.stdout
    chart = ElementTree.parse(out / "ae_vs_epsilon.svg").getroot()
    series = chart.findall(".//{http://www.w3.org/2000/svg}polyline[@class='series']")
    assert [line.get("data-label") for line in series] == ["TraCS-D", "TraCS-C"]
    assert (out / "results.csv").is_file()
    released = next(out.glob("released_*.csv"))
    assert len(pd.read_csv(released)) > 0


def test_demo_says_why_it_falls_back_to_the_synthetic_city(cli, tmp_path, no_data_dirs):
    result = cli("demo", "--epsilons", "4", "--repetitions", "1", "--output-dir", tmp_path / "demo",
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "using the synthetic city, because the Tokyo check-ins were not found" in result.stderr
    assert "TRACS_DATA_DIR" in result.stderr and "empty-cache" in result.stderr  # where to put them


# ----------------------------------------------------------------------------- real data


@pytest.mark.data
def test_perturb_tokyo_file(cli, tky_path, tmp_path):
    import data_loaders

    out = tmp_path / "tky.parquet"
    result = cli("perturb", *REGION, tky_path, "-o", out, "-m", "tracs-c", "-e", "4", "--seed", "0",
                 "--keep-lines")
    assert result.returncode == 0, result.stderr
    assert "in 101 trajectories" in result.stdout
    released = gpd.read_parquet(out)
    # published in the file's order: the loader's rows sorted by their source line
    loaded = data_loaders.load_foursquare(tky_path).sort_values("source_line", kind="stable")
    assert len(released) == len(loaded)
    np.testing.assert_array_equal(released["source_line"].to_numpy(), loaded["source_line"].to_numpy())
    # ids as written: the command keeps their text, the Foursquare loader reads plain integers as numbers
    np.testing.assert_array_equal(released["uid"].to_numpy(), loaded["uid"].astype(str).to_numpy())
    assert (released["datetime"].to_numpy() == loaded["datetime"].to_numpy()).all()


def test_perturb_keeps_the_input_order_and_map_reads_it_back(cli, checkins_csv, tmp_path):
    """Rows are perturbed in (user, time) order but published in the input's order."""
    shuffled = pd.read_csv(checkins_csv).sample(frac=1.0, random_state=3)
    source = tmp_path / "shuffled.csv"
    shuffled.to_csv(source, index=False)
    out, lines = tmp_path / "released.csv", tmp_path / "lines.csv"
    result = cli("perturb", *REGION, source, "-o", out, "-m", "tracs-d", "-e", "4", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert cli("perturb", *REGION, source, "-o", lines, "-m", "tracs-d", "-e", "4", "--seed", "1",
               "--keep-lines").returncode == 0
    released, with_lines = pd.read_csv(out), pd.read_csv(lines)
    assert len(released) == len(shuffled)
    assert "source_line" not in released.columns  # the file position is written only when asked
    assert with_lines["source_line"].tolist() == list(range(2, len(shuffled) + 2))  # line 1: header
    assert with_lines.drop(columns="source_line").equals(released)
    # the map pairs the rows by key (uid, trajectory, point), with or without the file's lines
    from tracs.cli._pairing import match
    from tracs.io.release import read_release
    from tracs.io.batch_files import read_points

    points = read_points(source)
    by_order, by_line = read_release(out), read_release(lines)
    a, b = match(points, by_order, "out"), match(points, by_line, "lines")
    assert np.array_equal(by_order["lat"].to_numpy()[a], by_line["lat"].to_numpy()[b])
    assert by_order["uid"].astype(str).to_numpy()[a].tolist() == points.keys.astype(str).tolist()
    assert released["uid"].tolist() == shuffled["uid"].tolist()
    assert (pd.to_datetime(released["datetime"], utc=True).to_numpy()
            == pd.to_datetime(shuffled["datetime"], utc=True).to_numpy()).all()
    page = tmp_path / "map.html"
    result = cli("map", source, out, "-o", page, "--tiles", "none")
    assert result.returncode == 0, result.stderr
    assert page.stat().st_size > 0


def test_evaluate_paper_metrics_same_seed_same_numbers(cli, checkins_csv, tmp_path):
    args = ("evaluate", "--dataset", checkins_csv, "--methods", "lsrr,tracs-c", "--epsilons", "2,8",
            "--repetitions", "2", "--no-figure", "--format", "json", "--no-progress",
            "--metrics", "range_preservation,hotspot_count_error")
    first = cli(*args, "--output-dir", tmp_path / "a")
    second = cli(*args, "--output-dir", tmp_path / "b")
    assert first.returncode == 0, first.stderr
    records = json.loads(first.stdout)
    strip = lambda recs: [{k: v for k, v in r.items() if k != "seconds_per_point"} for r in recs]  # noqa: E731
    assert strip(records) == strip(json.loads(second.stdout))
    assert len(records) == 4
    for record in records:
        assert 0 <= record["range_preservation"] <= 1 and record["hotspot_count_error"] >= 0
    runs = pd.read_csv(tmp_path / "a" / "results.csv")
    assert runs["range_preservation"].between(0, 1).all()
    assert "range_preservation" in cli("evaluate", "--help").stdout


def test_evaluate_hotspot_count_error_needs_pois(cli, tmp_path):
    result = cli("evaluate", "--dataset", "unit-square", "--methods", "tracs-c", "--epsilons", "2",
                 "--repetitions", "1", "--trajectories", "2", "--points", "2", "--no-progress",
                 "--output-dir", tmp_path, "--metrics", "hotspot_count_error")
    assert_clean_failure(result, "hotspot_count_error", "points of interest")


def test_perturb_refuses_the_non_ldp_lsrr_thresholds(cli, checkins_csv, tmp_path):
    out = tmp_path / "released.csv"
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", "lsrr-thresholds", "-e", "4", "--seed", "1")
    assert_clean_failure(result, "lsrr-thresholds", "not ε-LDP", "lsrr")
    assert not out.exists()


def test_evaluate_runs_lsrr_thresholds_with_its_label(cli, checkins_csv, tmp_path):
    result = cli("evaluate", "--dataset", checkins_csv, "--methods", "lsrr,lsrr-thresholds", "--epsilons", "4",
                 "--repetitions", "1", "--no-figure", "--output-dir", tmp_path, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "L-SRR (paper's thresholds, not LDP)" in result.stdout
