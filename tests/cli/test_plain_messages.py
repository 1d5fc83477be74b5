"""What the commands print: library warnings as one line, counts that agree with their nouns,
evaluate's first line naming its rounding target, the estimate page's colour legend."""

from __future__ import annotations

WIDE = """uid,datetime,lat,lng
u,2024-01-01T10:00:00Z,40.0,0.0
u,2024-01-01T11:00:00Z,40.5,20.0
v,2024-01-01T12:00:00Z,40.2,5.0
v,2024-01-01T13:00:00Z,40.3,6.0
"""
EVALUATE = ("evaluate", "--methods", "tracs-d", "--epsilons", "2", "--repetitions", "1", "--no-progress",
            "--no-figure")


def test_a_library_warning_is_one_line_of_the_command(cli, tmp_path):
    source = tmp_path / "wide.csv"
    source.write_text(WIDE)
    result = cli(*EVALUATE, "--dataset", source, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "tracs evaluate: warning: the data spans 20.0 degrees of longitude" in result.stderr
    assert "UserWarning" not in result.stderr and "warnings.warn" not in result.stderr


def test_one_point_in_one_trajectory(cli, tmp_path):
    source = tmp_path / "one.csv"
    source.write_text("uid,datetime,lat,lng\nu,2024-01-01T10:00:00Z,35.7,139.7\n")
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region", "tky", "-q")
    assert result.returncode == 0, result.stderr
    assert "TraCS-D: 1 point in 1 trajectory, " in result.stdout
    assert "read 1 row: dropped 0" in result.stderr


def test_evaluate_names_its_rounding_target_first(cli, tmp_path):
    venues = cli(*EVALUATE, "--dataset", "synthetic", "--output-dir", tmp_path / "a")
    assert venues.returncode == 0, venues.stderr
    first = venues.stdout.splitlines()[0]
    assert first.startswith("synthetic: ") and "continuous methods rounded to the data's " in first
    assert first.endswith("distinct venues")
    off = cli(*EVALUATE, "--dataset", "synthetic", "--no-round-to-pois", "--output-dir", tmp_path / "b")
    assert off.stdout.splitlines()[0].endswith("; continuous methods not rounded")


def test_the_estimate_page_has_a_colour_legend(cli, tmp_path):
    source, release, page = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "density.html"
    rows = "".join(f"u{k % 3},2024-01-01T{10 + k // 6:02d}:{k % 6 * 10:02d}:00Z,{35.6 + k * 0.004},{139.6 + k * 0.005}\n"
                   for k in range(30))
    source.write_text("uid,datetime,lat,lng\n" + rows)
    assert cli("perturb", source, "-o", release, "-m", "tracs-d", "-e", "2", "--region", "tky", "--seed", "1",
               "-q").returncode == 0
    result = cli("estimate", release, "-o", page, "--grid", "8")
    assert result.returncode == 0, result.stderr
    text = page.read_text()
    assert "probability of a cell" in text and text.count(" per cell<") == 5
