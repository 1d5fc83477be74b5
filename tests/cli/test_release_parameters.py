"""Every release is tied to its own parameters: sidecar per file name with a digest of the rows,
parameters embedded in the formats that hold metadata, checked by every reader; no figure of the
true points printed unless asked; no leftovers of interrupted runs."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tracs.estimate import read_sidecar, sidecar_path
from tracs.estimate.sidecar import legacy_sidecar_path
from tracs.io.parameters import embedded_parameters, rows_digest
from tracs.io.release import read_release

REGION = ("--region", "139.5,35.5,140.0,35.9")


@pytest.fixture(scope="module")
def releases(checkins_csv, tmp_path_factory):
    """``rel.csv`` (TraCS-C, ε = 2) and ``rel.parquet`` (TraCS-D, ε = 8) of one input, in one folder."""
    from tracs.cli import main

    folder = tmp_path_factory.mktemp("releases")
    for name, method, eps in (("rel.csv", "tracs-c", "2"), ("rel.parquet", "tracs-d", "8")):
        assert main(["perturb", str(checkins_csv), "-o", str(folder / name), "-m", method, "-e", eps,
                     "--seed", "1", "--quiet", *REGION]) == 0
    return folder


def _copy(folder, tmp_path, *names):
    for name in names:
        (tmp_path / name).write_bytes((folder / name).read_bytes())


# ------------------------------------------------------------------------- break 1: a sidecar per file

@pytest.mark.parametrize("first, second", [("csv", "parquet"), ("csv", "gpkg"), ("parquet", "gpx"),
                                           ("geojson", "tsv"), ("gpkg", "gpx")])
def test_two_releases_of_one_input_never_share_a_sidecar(first, second, cli, checkins_csv, tmp_path):
    outs = {}
    for suffix, method, eps in ((first, "tracs-c", "2"), (second, "tracs-d", "8")):
        out = tmp_path / f"rel.{suffix}"
        assert cli("perturb", checkins_csv, "-o", out, "-m", method, "-e", eps, "--seed", "1", *REGION).returncode == 0
        outs[suffix] = (out, method, float(eps))
    assert sidecar_path(outs[first][0]) != sidecar_path(outs[second][0])
    assert not legacy_sidecar_path(outs[first][0]).exists()
    for out, method, eps in outs.values():
        data = read_sidecar(out)
        assert (data["method"], data["epsilon"]) == (method, eps)
        result = cli("estimate", out, "--grid", "4", "-o", tmp_path / f"est-{out.suffix[1:]}.csv")
        assert result.returncode == 0, result.stderr
        assert f"{method} at ε = {eps:g}" in result.stdout


def test_the_digest_does_not_depend_on_the_format(cli, checkins_csv, tmp_path):
    digests = set()
    for suffix in ("csv", "tsv", "parquet", "gpkg", "gpx", "geojson"):
        out = tmp_path / f"rel.{suffix}"
        assert cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION).returncode == 0
        recorded = json.loads(sidecar_path(out).read_text())["rows_sha256"]
        assert recorded == rows_digest(read_release(out))
        digests.add(recorded)
    assert len(digests) == 1


@pytest.fixture(scope="module")
def awkward_csv(tmp_path_factory):
    """Text ids that are not numbers as written (``007``, ``a b``), a trajectory column, times with
    fractions of a second (to the nanosecond, which GPX does not keep)."""
    rows = []
    for k in range(40):
        second = pd.Timestamp("2012-04-03 18:00:00", tz="UTC") + pd.Timedelta(seconds=90 * k + (k % 3) * 0.25, nanoseconds=k % 4)
        rows.append({"uid": ("007", "7", "a b")[k % 3], "trip": ("01", "x")[k % 2],
                     "datetime": second.isoformat(),
                     "lat": 35.6 + 0.003 * k, "lng": 139.6 + 0.004 * (k % 7)})
    path = tmp_path_factory.mktemp("awkward") / "awkward.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("suffix, geometry", [("csv", "points"), ("tsv", "points"), ("parquet", "points"),
                                              ("gpkg", "points"), ("gpx", "points"), ("geojson", "points"),
                                              ("parquet", "lines"), ("gpkg", "lines"), ("geojson", "lines")])
def test_the_digest_written_from_memory_is_that_of_the_file_read_back(suffix, geometry, cli, awkward_csv,
                                                                        tmp_path):
    out = tmp_path / f"rel.{suffix}"
    result = cli("perturb", awkward_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", "--geometry",
                 geometry, "--traj-col", "trip", *REGION)
    assert result.returncode == 0, result.stderr
    recorded = json.loads(sidecar_path(out).read_text())["rows_sha256"]
    assert recorded == rows_digest(read_release(out))


@pytest.mark.parametrize("suffix", ["parquet", "gpkg", "gpx", "geojson"])
def test_formats_with_metadata_carry_the_parameters(suffix, cli, checkins_csv, tmp_path):
    out = tmp_path / f"rel.{suffix}"
    assert cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION).returncode == 0
    embedded = embedded_parameters(out)
    sidecar = json.loads(sidecar_path(out).read_text())
    assert embedded == {k: v for k, v in sidecar.items() if k != "rows_sha256"}
    if suffix == "gpkg":  # the standard metadata table, referenced for the whole GeoPackage
        with sqlite3.connect(out) as db:
            scope, = db.execute("SELECT reference_scope FROM gpkg_metadata_reference").fetchone()
        assert scope == "geopackage"
    sidecar_path(out).unlink()  # embedded parameters alone are enough
    result = cli("estimate", out, "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 0, result.stderr
    assert "tracs-c at ε = 2" in result.stdout


def test_embedded_parameters_must_agree_with_the_sidecar(releases, cli, tmp_path):
    _copy(releases, tmp_path, "rel.parquet")
    data = embedded_parameters(tmp_path / "rel.parquet")
    sidecar_path(tmp_path / "rel.parquet").write_text(json.dumps(
        {**data, "epsilon": 0.5, "rows_sha256": rows_digest(read_release(tmp_path / "rel.parquet"))}))
    result = cli("estimate", tmp_path / "rel.parquet", "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 1
    assert "rel.parquet.tracs.json disagrees with the parameters embedded in rel.parquet (epsilon)" in result.stderr


def test_an_older_sidecar_name_is_read_with_a_note(releases, cli, tmp_path):
    _copy(releases, tmp_path, "rel.csv")
    data = json.loads((releases / "rel.csv.tracs.json").read_text())
    data.pop("rows_sha256")
    legacy_sidecar_path(tmp_path / "rel.csv").write_text(json.dumps(data))
    result = cli("estimate", tmp_path / "rel.csv", "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 0, result.stderr
    assert "note: read the parameters of rel.csv from rel.tracs.json, the sidecar name of older releases" \
        in result.stderr
    # the TraCS-D sidecar of rel.parquet under the shared old name: its ε is not that of rel.csv
    data = json.loads((releases / "rel.parquet.tracs.json").read_text())
    data.pop("rows_sha256")
    legacy_sidecar_path(tmp_path / "rel.csv").write_text(json.dumps(data))
    result = cli("estimate", tmp_path / "rel.csv", "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 1
    assert "rel.tracs.json says ε = 8 per point, but 60 of 60 rows of rel.csv hold epsilon_point = 2" \
        in result.stderr


# ------------------------------------------------------------------------- break 2 and 5: tampered inputs

def _edit_sidecar(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _edit_release(path, change):
    frame = pd.read_csv(path, dtype=str)
    change(frame)
    frame.to_csv(path, index=False)


def _set(key, value):
    def change(data):
        data[key] = value
    return change


def _swap_method(data):
    data["method"] = "tracs-d"
    data.pop("x_share", None)
    data.pop("lattice", None)


def _move_row(frame):
    frame.loc[3, "lat"] = str(float(frame.loc[3, "lat"]) + 0.01)


def _move_row_off_lattice(frame):  # and record the new rows' digest: only the lattice can tell
    frame.loc[3, "lat"] = str(float(frame.loc[3, "lat"]) + 1e-4)


def _polygon(count):
    angles = np.linspace(0, 2 * np.pi, count, endpoint=False)
    return {"type": "convex", "vertices": np.column_stack([4e5 + 1e4 * np.cos(angles),
                                                          3.95e6 + 1e4 * np.sin(angles)]).tolist()}


@pytest.mark.parametrize("sidecar_change, release_change, options, message", [
    (None, _move_row, (), "rel.csv.tracs.json does not belong to rel.csv: the digest of the rows it records "
                          "differs from the rows of the file"),
    (_set("epsilon", 0.1), None, (), "rel.csv.tracs.json says ε = 0.1 per point, but 60 of 60 rows of rel.csv "
                                     "hold epsilon_point = 2"),
    (_swap_method, None, (), "of 60 reports are off the lattice of tracs-d of rel.csv.tracs.json: rel.csv is "
                             "not a release of these parameters"),
    (_set("region", {"type": "rectangle", "bounds": [0, 0, 1e12, 1e12]}), None, (),
     "rel.csv.tracs.json: the region spans 1,000,000,000,000 m, more than the Earth's circumference"),
    (_set("region", {"type": "rectangle", "bounds": [4.00e5, 3.95e6, 4.01e5, 3.951e6]}), None, (),
     "of 60 reports are outside the region of rel.csv.tracs.json"),
    (_set("region", _polygon(200_000)), None, (),
     "rel.csv.tracs.json: the region has 200,000 vertices, more than the 4,096 a sidecar may hold"),
    (_set("crs", "EPSG:999999"), None, (), "the parameters of rel.csv name the CRS 'EPSG:999999', which is not "
                                          "a coordinate reference system"),
    (_set("crs", "not a crs"), None, (), "name the CRS 'not a crs', which is not a coordinate reference system"),
    (None, None, ("--grid", "3000"), "--grid 3000 asks for 9,000,000 cells: the estimate would hold at least "
                                     "0.576 GB of per-cell arrays"),
    (_set("epsilon", "two"), None, (), "rel.csv.tracs.json: epsilon must be a finite number > 0, got 'two'"),
])
def test_tampered_or_implausible_parameters_are_refused(sidecar_change, release_change, options, message,
                                                        releases, cli, tmp_path):
    _copy(releases, tmp_path, "rel.csv", "rel.csv.tracs.json")
    release = tmp_path / "rel.csv"
    if release_change is not None:
        _edit_release(release, release_change)
    if sidecar_change is not None:
        _edit_sidecar(sidecar_path(release), sidecar_change)
    result = cli("estimate", release, "-o", tmp_path / "est.csv", *(options or ("--grid", "4")))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "unexpected" not in result.stderr, result.stderr
    assert message in result.stderr, result.stderr
    assert not (tmp_path / "est.csv").exists()


def test_off_lattice_reports_are_counted_and_clipped_only_when_asked(releases, cli, tmp_path):
    _copy(releases, tmp_path, "rel.csv", "rel.csv.tracs.json")
    release = tmp_path / "rel.csv"
    _edit_release(release, _move_row_off_lattice)
    _edit_sidecar(sidecar_path(release), _set("rows_sha256", rows_digest(read_release(release))))
    result = cli("estimate", release, "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 1
    assert "1 of 60 reports are off the lattice of tracs-c of rel.csv.tracs.json" in result.stderr
    result = cli("estimate", release, "--grid", "4", "--clip-reports", "-o", tmp_path / "est.csv")
    assert result.returncode == 0, result.stderr
    assert "note: --clip-reports: 1 of 60 reports are off the lattice of tracs-c" in result.stderr


def test_map_refuses_a_sidecar_of_other_rows(releases, cli, checkins_csv, tmp_path):
    _copy(releases, tmp_path, "rel.csv", "rel.csv.tracs.json")
    _edit_release(tmp_path / "rel.csv", _move_row)
    result = cli("map", checkins_csv, tmp_path / "rel.csv", "-o", tmp_path / "map.html", "--offline")
    assert result.returncode == 1
    assert "rel.csv.tracs.json does not belong to rel.csv" in result.stderr
    assert not (tmp_path / "map.html").exists()


def test_the_sidecar_is_in_place_before_the_release(cli, checkins_csv, tmp_path, monkeypatch):
    """A crash between the two renames leaves a new sidecar beside the old release: refused."""
    import os

    from tracs.release import paths

    out = tmp_path / "rel.csv"
    assert cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION).returncode == 0
    real = os.replace

    def crash(src, dst):
        if str(dst) == str(out):
            raise OSError("disk gone")
        real(src, dst)

    monkeypatch.setattr(paths.os, "replace", crash)
    assert cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "2", *REGION).returncode == 1
    monkeypatch.undo()
    result = cli("estimate", out, "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 1
    assert "rel.csv.tracs.json does not belong to rel.csv" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel.csv", "rel.csv.tracs.json"]


# ------------------------------------------------------------------------- break 3: no figure of the true points

def test_no_error_figure_unless_asked(cli, checkins_csv, tmp_path):
    out = tmp_path / "rel.csv"
    plain = cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION)
    assert plain.returncode == 0 and "AE" not in plain.stdout + plain.stderr and " m " not in plain.stdout
    asked = cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", "--report-error",
                *REGION)
    assert asked.returncode == 0
    assert ", AE = " in asked.stdout and " m (not private) -> " in asked.stdout
    assert plain.stdout.replace(" -> ", asked.stdout[asked.stdout.index(", AE"):asked.stdout.index(" -> ")]
                                + " -> ") == asked.stdout


def test_the_help_says_the_error_figure_is_not_private(cli):
    from tracs.cli import build_parser

    text = " ".join(build_parser()._subparsers._group_actions[0].choices["perturb"].format_help().split())
    assert "--report-error" in text and "NOT private" in text


# ------------------------------------------------------------------------- break 4: leftovers

def test_leftovers_of_an_interrupted_run_are_removed(cli, checkins_csv, tmp_path):
    out = tmp_path / "out.gpkg"
    ours = [tmp_path / ".out.gpkg.tracs-tmp-ab12cd_9", tmp_path / ".out.k3j4h5g6.gpkg",
            tmp_path / ".out.k3j4h5g6.gpkg-journal", tmp_path / ".out.gpkg.tracs.json.tracs-tmp-zz99yy88.tmp"]
    ours[0].mkdir()
    (ours[0] / "out.gpkg").write_bytes(b"\0" * 1000)
    for path in ours[1:]:
        path.write_bytes(b"partial")
    others = [tmp_path / ".out.gpkg.keep", tmp_path / ".other.k3j4h5g6.gpkg", tmp_path / ".out.k3j4h5g6.csv",
              tmp_path / ".out.gpkg.tracs-tmp-toolong123"]
    for path in others:
        path.write_bytes(b"not ours")
    result = cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION)
    assert result.returncode == 0, result.stderr
    for path in ours:
        assert not path.exists()
        assert f"note: removed {path.name}, left by an interrupted run writing out.gpkg" in result.stderr
    assert all(path.read_bytes() == b"not ours" for path in others)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["out.gpkg",
                                                                                        "out.gpkg.tracs.json"]


def test_geojson_name_is_the_outputs_and_runs_are_identical(cli, checkins_csv, tmp_path):
    texts = []
    for _ in range(2):
        out = tmp_path / "released.geojson"
        assert cli("perturb", checkins_csv, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", *REGION).returncode == 0
        texts.append(out.read_bytes())
    assert texts[0] == texts[1]
    assert json.loads(texts[0])["name"] == "released"


def test_parquet_keeps_its_geo_metadata(releases):
    meta = pq.read_schema(releases / "rel.parquet").metadata
    assert b"geo" in meta and json.loads(meta[b"tracs"])["method"] == "tracs-d"


def test_an_older_shared_sidecar_is_not_read_for_a_file_with_its_own_parameters(releases, cli, tmp_path):
    _copy(releases, tmp_path, "rel.parquet")
    data = json.loads((releases / "rel.csv.tracs.json").read_text())  # TraCS-C, ε = 2: another release
    data.pop("rows_sha256")
    legacy_sidecar_path(tmp_path / "rel.parquet").write_text(json.dumps(data))
    result = cli("estimate", tmp_path / "rel.parquet", "--grid", "4", "-o", tmp_path / "est.csv")
    assert result.returncode == 0, result.stderr
    assert "tracs-d at ε = 8" in result.stdout
    assert "note: rel.tracs.json (the sidecar name of older releases, shared by every release named rel.*) is " \
           "not read: rel.parquet carries its own parameters" in " ".join(result.stderr.split())
