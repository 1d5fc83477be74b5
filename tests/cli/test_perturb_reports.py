"""``tracs perturb`` on inputs it accepts: what it reports, and how it writes.

Rows dropped, clipped or left outside are counted and listed on standard error; a
summary line is printed even when nothing was dropped; notes say which timezone was
assumed; the non-private opt-in warns; the output appears only when complete.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HEADER = "uid,datetime,lat,lng\n"


def write(path, rows):
    path.write_text(HEADER + "".join(rows))
    return path


def tokyo_rows(n=6, uid=1, start_hour=10, lat=35.70, lng=139.70):
    return [f"{uid},2012-01-01T{start_hour + i:02d}:00:00Z,{lat + 0.01 * i},{lng + 0.01 * i}\n" for i in range(n)]


def test_summary_line_even_when_nothing_is_dropped(cli, tmp_path):
    source = write(tmp_path / "in.csv", tokyo_rows())
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-c", "-e", "2", "--region", "tky")
    assert result.returncode == 0, result.stderr
    assert "read 6 rows: dropped 0 for bad values" in result.stderr


def test_dropped_rows_are_counted_and_listed_with_lines(cli, tmp_path):
    rows = tokyo_rows(8)
    rows[2] = "1,2012-01-01T12:00:00Z,abc,139.7\n"  # line 4
    rows[5] = "1,not a time,35.7,139.7\n"  # line 7
    source = write(tmp_path / "in.csv", rows)
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-c", "-e", "2", "--region", "tky")
    assert result.returncode == 0, result.stderr
    assert ("dropped 1 row(s): latitude or longitude is empty, not a number, NaN or infinite in columns "
            "'lat', 'lng': line 4") in result.stderr
    assert "dropped 1 row(s): the time is empty or cannot be parsed in column 'datetime': line 7" in result.stderr
    assert "read 8 rows: dropped 2 for bad values" in result.stderr
    assert len(pd.read_csv(tmp_path / "out.csv")) == 6


def test_naive_times_say_which_timezone_was_assumed(cli, tmp_path):
    source = write(tmp_path / "in.csv", [r.replace("Z,", ",") for r in tokyo_rows()])
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-c", "-e", "2", "--region", "tky")
    assert result.returncode == 0, result.stderr
    assert "without a timezone were read as UTC" in result.stderr


@pytest.mark.data
def test_gowalla_times_say_utc(cli, tmp_path, chi_path):
    result = cli("perturb", chi_path, "-o", tmp_path / "out.parquet", "-m", "tracs-c", "-e", "2", "--region", "chi")
    assert result.returncode == 0, result.stderr
    assert "read as UTC" in result.stderr


def test_clip_moves_rows_into_the_box_and_lists_them(cli, tmp_path):
    rows = tokyo_rows(5) + ["1,2012-01-01T20:00:00Z,35.95,139.70\n"]  # line 7: north of the box
    source = write(tmp_path / "in.csv", rows)
    out = tmp_path / "out.csv"
    result = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--region", "tky", "--clip")
    assert result.returncode == 0, result.stderr
    assert "clipped 1 row(s) outside the region: line 7" in result.stderr
    assert "clipped 1 outside the region" in result.stderr
    assert len(pd.read_csv(out)) == 6


def test_drop_leaves_rows_out_and_lists_them(cli, tmp_path):
    rows = tokyo_rows(5) + ["1,2012-01-01T20:00:00Z,40.7,-74.0\n"]
    source = write(tmp_path / "in.csv", rows)
    out = tmp_path / "out.csv"
    result = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--region", "tky", "--drop",
                 "--keep-lines")
    assert result.returncode == 0, result.stderr
    assert "dropped 1 row(s) outside the region: line 7" in result.stderr
    released = pd.read_csv(out)
    assert len(released) == 5 and 7 not in released["source_line"].tolist()


def test_region_from_data_warns_that_it_is_not_private(cli, tmp_path):
    source = write(tmp_path / "in.csv", tokyo_rows(4) + tokyo_rows(3, uid=2))
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region-from-data")
    assert result.returncode == 0, result.stderr
    assert "NOT private" in result.stderr


def test_one_point_with_pad_runs(cli, tmp_path):
    source = write(tmp_path / "in.csv", tokyo_rows(1))
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2",
                 "--region-from-data", "--pad", "500")
    assert result.returncode == 0, result.stderr


def test_two_continents_are_warned_about(cli, tmp_path):
    rows = tokyo_rows(3) + ["2,2012-01-01T10:00:00Z,48.85,2.35\n", "2,2012-01-01T11:00:00Z,48.86,2.36\n"]
    source = write(tmp_path / "in.csv", rows)
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-c", "-e", "2", "--region-from-data")
    assert result.returncode == 0, result.stderr
    assert "seems to span two continents" in result.stderr and "one region" in result.stderr
    # with a region: the same warning, and the rows of the other continent are named
    result = cli("perturb", source, "-o", tmp_path / "out2.csv", "-m", "tracs-c", "-e", "2", "--region", "tky")
    assert result.returncode == 1 and "2 of 5 rows lie outside the region" in result.stderr
    assert "seems to span two continents" in result.stderr and "--region" in result.stderr
    # with --drop the warning stays and the dropped rows are listed with their lines
    result = cli("perturb", source, "-o", tmp_path / "out3.csv", "-m", "tracs-c", "-e", "2", "--region", "tky",
                 "--drop")
    assert result.returncode == 0, result.stderr
    assert "seems to span two continents" in result.stderr
    assert "dropped 2 row(s) outside the region: line 5, line 6" in result.stderr


def test_a_failed_write_leaves_no_file_and_keeps_the_old_one(cli, tmp_path, monkeypatch):
    from tracs.io import batch_files as table

    source = write(tmp_path / "in.csv", tokyo_rows())
    out = tmp_path / "out.csv"
    out.write_text("the previous release\n")

    def crash(points, lonlat, eps_point, eps_traj, path, fmt, **kwargs):
        Path(path).write_text("half a fi")
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(table, "write_released", crash)
    result = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--region", "tky")
    assert result.returncode == 1 and "No space left on device" in result.stderr
    assert out.read_text() == "the previous release\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


def test_an_existing_output_is_replaced_whole(cli, tmp_path):
    source = write(tmp_path / "in.csv", tokyo_rows())
    out = tmp_path / "out.geojson"
    out.write_text("old")
    result = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--region", "tky", "--seed", "1")
    assert result.returncode == 0, result.stderr
    import geopandas as gpd

    assert len(gpd.read_file(out)) == 6
    # the release and its sidecar of public parameters; no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.geojson", "out.geojson.tracs.json"]


def test_the_projection_comes_from_the_region_not_the_data(cli, tmp_path):
    """Two files in different parts of the box, same user rows: the user's release does not move
    with the other rows (the projection and region are the box's)."""
    alone = write(tmp_path / "a.csv", tokyo_rows(4))
    with_far = write(tmp_path / "b.csv", tokyo_rows(4) + tokyo_rows(3, uid=9, lat=35.46, lng=139.96))
    outs = []
    for source in (alone, with_far):
        out = source.with_suffix(".out.csv")
        assert cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--region", "tky",
                   "--seed", "3").returncode == 0
        frame = pd.read_csv(out, dtype=str)
        outs.append(frame[frame["uid"] == "1"][["lat", "lng"]].reset_index(drop=True))
    pd.testing.assert_frame_equal(outs[0], outs[1])
    assert not np.allclose(outs[0]["lat"].astype(float), [35.70, 35.71, 35.72, 35.73])


def test_secure_rng_is_reproducible_with_a_seed_and_differs_from_philox(cli, tmp_path):
    source = write(tmp_path / "in.csv", tokyo_rows(n=8) + tokyo_rows(n=5, uid=2, lat=35.66))
    runs = {}
    for name, extra in {"secure-a": ["--secure-rng"], "secure-b": ["--secure-rng"], "philox": []}.items():
        out = tmp_path / f"{name}.csv"
        result = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--region", "tky", "--seed", "5",
                     *extra)
        assert result.returncode == 0, result.stderr
        runs[name] = out.read_text()
    assert runs["secure-a"] == runs["secure-b"]
    assert runs["secure-a"] != runs["philox"]
    fresh = tmp_path / "fresh.csv"
    assert cli("perturb", source, "-o", fresh, "-m", "tracs-d", "-e", "2", "--region", "tky",
               "--secure-rng").returncode == 0
    assert fresh.read_text() != runs["secure-a"]
