"""``tracs denoise``, ``synthesize`` and ``estimate`` of a discrete baseline's release (its reports are POIs).

Each release is written by ``tracs perturb --pois`` from a small check-in file of this module (three
users with ids ``007``, ``12`` and ``a-3`` at 20 venues in Tokyo, ε = 2 per point, seed 1); the
commands are given the same POI file.  EM and L-SRR run end to end; NGram and ATP either run or are
refused with their name.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from tracs.cli._discrete import poi_space
from tracs.estimate import sidecar_path
from tracs.estimate.sidecar import read_sidecar
from tracs.io.parameters import embedded_parameters
from tracs.io.release import read_release
from tracs.public import city_box, read_pois

#: the users' ids as written (a leading zero, a word)
USERS = ("007", "12", "a-3")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The check-in file and the POI file (lat, lng) of its 20 venues."""
    folder = tmp_path_factory.mktemp("discrete")
    rng = np.random.default_rng(7)
    venues = np.column_stack([35.62 + 0.12 * rng.random(20), 139.62 + 0.16 * rng.random(20)])
    rows = []
    for uid in USERS:
        for k, v in enumerate(rng.integers(0, 20, 12)):
            rows.append({"uid": uid, "datetime": f"2012-04-0{1 + k // 6} {10 + k % 6}:00:00",
                         "lat": venues[v, 0], "lng": venues[v, 1]})
    pd.DataFrame(rows).to_csv(folder / "checkins.csv", index=False)
    pd.DataFrame({"lat": venues[:, 0], "lng": venues[:, 1]}).to_csv(folder / "pois.csv", index=False)
    return folder / "checkins.csv", folder / "pois.csv"


def _perturb(files, method, name, *extra):
    from tracs.cli import main

    checkins, pois = files
    out = checkins.with_name(name)
    if not out.exists():
        given = ["--pois", str(pois)] if method != "tracs-c" else []
        assert main(["perturb", str(checkins), "-o", str(out), "-m", method, "-e", "2", "--region", "tky",
                     *given, "--seed", "1", "-q", *extra]) == 0
    return out


@pytest.fixture(scope="module")
def releases(files):
    """A release of every discrete baseline tested here, by method."""
    return {m: _perturb(files, m, f"rel_{m}.csv") for m in ("em", "lsrr", "ngram", "atp")}


@pytest.fixture(scope="module")
def per_trajectory(files):
    """Releases with ε = 20 per trajectory of the check-ins cut to 12, 7 and 4 points a user (three per-point
    ε: 20/12, 20/7, 5), by method."""
    from tracs.cli import main

    checkins, pois = files
    rows = pd.read_csv(checkins, dtype=str)
    keep = rows.groupby("uid", sort=False).cumcount() < rows["uid"].map({"007": 12, "12": 7, "a-3": 4})
    cut = checkins.with_name("checkins_cut.csv")
    rows[keep].to_csv(cut, index=False)
    out = {}
    for method in ("em", "lsrr", "ngram", "atp"):
        out[method] = checkins.with_name(f"rel_{method}_traj.csv")
        assert main(["perturb", str(cut), "-o", str(out[method]), "-m", method, "-e", "20", "--per-trajectory",
                     "--region", "tky", "--pois", str(pois), "--seed", "1", "-q"]) == 0
    return out


def _library(release, pois):
    """The baseline rebuilt from the release's sidecar on the POIs (the library's own path), and the
    released points in metres in file order."""
    import pyproj

    from tracs.estimate.sidecar import perturber_from_sidecar, read_sidecar
    from tracs.poi_space import POISpace

    data = read_sidecar(release)
    to_metric = pyproj.Transformer.from_crs(4326, data["crs"], always_xy=True)
    venues = pd.read_csv(pois)
    space = POISpace(np.column_stack(to_metric.transform(venues["lng"].to_numpy(), venues["lat"].to_numpy())),
                     region=data["region"])
    rows = pd.read_csv(release, dtype=str)
    points = np.column_stack(to_metric.transform(rows["lng"].astype(float).to_numpy(),
                                                 rows["lat"].astype(float).to_numpy()))
    return perturber_from_sidecar(data, poi_space=space), points, data["crs"]


def _at_pois(frame, pois) -> np.ndarray:
    """Distance in degrees from every row of ``frame`` to the nearest POI of the file ``pois``."""
    venues = pd.read_csv(pois)
    lat, lng = frame["lat"].astype(float).to_numpy(), frame["lng"].astype(float).to_numpy()
    return np.hypot(lat[:, None] - venues["lat"].to_numpy(), lng[:, None] - venues["lng"].to_numpy()).min(axis=1)


@pytest.mark.parametrize("method", ["em", "lsrr", "ngram", "atp"])
@pytest.mark.parametrize("rule, how", [(None, "POI nearest the posterior mean"), ("mode", "posterior mode at a POI")])
def test_denoise_gives_every_report_its_posterior_poi(cli, files, releases, method, rule, how, tmp_path):
    """The release's rows, columns and ids as written, lat/lng the POI of the library's
    baseline_posterior (to the WGS84 round trip), read back as a release by tracs map."""
    import pyproj

    from tracs.estimate import baseline_posterior

    release, pois = releases[method], files[1]
    out = tmp_path / "den.csv"
    result = cli("denoise", release, "--pois", pois, "-o", out, *(["--rule", rule] if rule else []))
    assert result.returncode == 0, result.stderr
    assert f"36 points denoised onto 20 POIs ({rule or 'mean'} of the posterior" in result.stdout
    raw, den = pd.read_csv(release, dtype=str), pd.read_csv(out, dtype=str)
    assert list(den.columns) == list(raw.columns) + ["denoised"] and (den["denoised"] == how).all()
    kept = [c for c in raw.columns if c not in ("lat", "lng")]
    pd.testing.assert_frame_equal(den[kept], raw[kept])  # ids, times and ε as written, in file order
    assert set(den["uid"]) == set(USERS)
    baseline, points, crs = _library(release, pois)
    keys = (raw["uid"] + "\x00" + raw.get("trajectory", "")).to_numpy()  # one trajectory per run of rows
    offsets = np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1, len(keys)]
    picked = baseline_posterior(points, baseline, offsets=offsets, rule=rule or "mean")
    lng, lat = pyproj.Transformer.from_crs(crs, 4326, always_xy=True).transform(*baseline.poi_space.points[picked].T)
    np.testing.assert_allclose(den["lat"].astype(float), lat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(den["lng"].astype(float), lng, rtol=0, atol=1e-12)
    assert _at_pois(den, pois).max() < 1e-9
    assert len(read_release(out)) == len(raw)
    page = tmp_path / "map.html"
    drawn = cli("map", files[0], out, "-o", page, "--tiles", "none", "-q")
    assert drawn.returncode == 0, drawn.stderr
    assert page.stat().st_size > 0


@pytest.mark.parametrize("method", ["em", "lsrr", "atp"])
@pytest.mark.parametrize("revisit, weight", [((), 4.0), (("--revisit", "0.5"), 0.5)])
def test_denoise_given_the_trajectory_takes_the_revisit_prior(cli, files, releases, method, revisit, weight,
                                                             tmp_path):
    """--trajectory: every report's POI under the revisit prior, as the library's
    baseline_posterior(..., revisit=weight) gives it (to the WGS84 round trip)."""
    import pyproj

    from tracs.estimate import baseline_posterior

    release, pois = releases[method], files[1]
    out = tmp_path / "den.csv"
    result = cli("denoise", release, "--pois", pois, "--trajectory", "-o", out, *revisit)
    assert result.returncode == 0, result.stderr
    assert f"(mean of the posterior, revisit weight {weight:g}, the POI frequencies" in result.stdout
    raw, den = pd.read_csv(release, dtype=str), pd.read_csv(out, dtype=str)
    assert (den["denoised"] == "POI nearest the posterior mean given the trajectory").all()
    baseline, points, crs = _library(release, pois)
    keys = (raw["uid"] + "\x00" + raw.get("trajectory", "")).to_numpy()
    offsets = np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1, len(keys)]
    picked = baseline_posterior(points, baseline, offsets=offsets, revisit=weight)
    lng, lat = pyproj.Transformer.from_crs(crs, 4326, always_xy=True).transform(*baseline.poi_space.points[picked].T)
    np.testing.assert_allclose(den["lat"].astype(float), lat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(den["lng"].astype(float), lng, rtol=0, atol=1e-12)


def test_denoise_given_the_trajectory_refuses_ngram(cli, files, releases, tmp_path):
    result = cli("denoise", releases["ngram"], "--pois", files[1], "--trajectory", "-o", tmp_path / "den.csv")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("tracs denoise --trajectory: rel_ngram.csv was released by ngram (NGram), whose posterior given the "
            "trajectory (the revisit prior) is not built: its reports are denoised per point only (leave out "
            "--trajectory)") in result.stderr
    assert not (tmp_path / "den.csv").exists()


def test_denoise_writes_parquet_read_back(cli, files, releases, tmp_path):
    out = tmp_path / "den.parquet"
    assert cli("denoise", releases["em"], "--pois", files[1], "-o", out).returncode == 0
    back, raw = read_release(out), pd.read_csv(releases["em"], dtype=str)
    assert back["uid"].astype(str).tolist() == raw["uid"].tolist()
    assert _at_pois(back, files[1]).max() < 1e-9


@pytest.mark.parametrize("method", ["em", "lsrr", "ngram", "atp"])
@pytest.mark.parametrize("with_pois", [False, True])
def test_synthesize_a_discrete_release(cli, files, releases, method, with_pois, tmp_path):
    out = tmp_path / "syn.csv"
    result = cli("synthesize", releases[method], "-n", 9, "-o", out, "--seed", 2, "--grid", 6,
                 *(["--pois", files[1]] if with_pois else []))
    assert result.returncode == 0, result.stderr
    assert ("(binned denoised POIs (nearest the posterior means))" if with_pois else "(binned)") in result.stdout
    note = "its released POIs are binned as they are (as --binned; their noise stays in the model)"
    assert (note in result.stderr) is not with_pois
    frame = read_release(out, need=("lat", "lng", "trajectory"))
    assert frame["uid"].nunique() == 9
    lon, lat = frame["lng"].to_numpy(float), frame["lat"].to_numpy(float)
    assert np.all((lon > 139) & (lon < 140.5) & (lat > 35) & (lat < 36.5))


def test_synthesize_with_pois_fits_the_binned_denoised_pois(cli, files, releases, tmp_path):
    """With --pois the model is the binned model of the reports' denoised POIs (nearest the posterior
    means, as tracs denoise writes them): the same synthetic file as the library's binned_mobility_model
    of baseline_posterior's POIs, sampled with the seed."""
    from tracs.cli.estimate import _read_frame, _release_points
    from tracs.estimate import baseline_posterior
    from tracs.estimate.synthesize import binned_mobility_model, synthesize

    release, pois = releases["lsrr"], files[1]
    out = tmp_path / "syn.csv"
    assert cli("synthesize", release, "-n", 6, "-o", out, "--seed", 4, "--grid", 5, "--pois", pois).returncode == 0
    baseline, _, crs = _library(release, pois)
    points, offsets, _ = _release_points(_read_frame(release), crs)
    denoised = baseline.poi_space.points[baseline_posterior(points, baseline, offsets=offsets, rule="mean")]
    model = binned_mobility_model(denoised, baseline.poi_space.region, offsets=offsets, grid=5, crs=crs)
    expected = synthesize(model, 6, rng=4).lonlat()
    got = pd.read_csv(out)
    np.testing.assert_allclose(got[["lng", "lat"]].to_numpy(), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("method", ["em", "lsrr", "ngram"])
@pytest.mark.parametrize("budget, said", [("point", "at ε = 2: 36 reports, 20 POIs"),
                                          ("trajectory", "at ε = 20 per trajectory: 23 reports, 20 POIs")])
def test_estimate_writes_the_poi_frequencies(cli, files, releases, per_trajectory, method, budget, said, tmp_path):
    """Per point, and per trajectory (every report at its trajectory's per-point ε, three of them): the
    library's frequencies of the rebuilt baseline."""
    from tracs.estimate import frequencies
    from tracs.cli.estimate import _read_frame, _release_points

    release, pois = (releases if budget == "point" else per_trajectory)[method], files[1]
    out = tmp_path / "freq.csv"
    result = cli("estimate", release, "--pois", pois, "-o", out)
    assert result.returncode == 0, result.stderr
    assert f"{method} {said}" in result.stdout
    table = pd.read_csv(out)
    assert list(table.columns) == ["lat", "lng", "probability"] and len(table) == 20
    assert table["probability"].sum() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(table[["lat", "lng"]], pd.read_csv(pois)[["lat", "lng"]], rtol=0, atol=1e-9)
    baseline, _, crs = _library(release, pois)
    points, offsets, _ = _release_points(_read_frame(release), crs)
    expected = frequencies(points, baseline, offsets=offsets).probabilities
    np.testing.assert_allclose(table["probability"], expected, rtol=0, atol=1e-15)


def _subset_pois(files, tmp_path):
    """A POI file without the first 5 venues."""
    venues = pd.read_csv(files[1])
    venues.iloc[5:].to_csv(tmp_path / "fewer.csv", index=False)
    return tmp_path / "fewer.csv"


@pytest.mark.parametrize("command, options, fragment", [
    ("denoise", ("-o", "{tmp}/den.csv"),
     "tracs denoise: error: rel_em.csv was released by em (EM), a discrete baseline: its reports are points of "
     "interest, and the posterior of every report needs the public POI space: give --pois FILE (the POI file "
     "given to 'tracs perturb')"),
    ("denoise", ("-o", "{tmp}/den.geojson", "--pois", "{pois}"),
     "tracs denoise: error: cannot tell the output format of den.geojson: use .csv, .tsv, .parquet"),
    ("denoise", ("-o", "{tmp}/den.csv", "--pois", "{tmp}/none.csv"), "tracs denoise: error: no such POI file:"),
    ("denoise", ("-o", "{tmp}/den.csv", "--pois", "{fewer}"), "MISMATCH"),
    ("synthesize", ("-n", "3", "-o", "{tmp}/syn.csv", "--pois", "{fewer}"), "MISMATCH"),
    ("denoise", ("-o", "{tmp}/den.csv", "--pois", "{one}"),
     "tracs denoise: error: one.csv: a POI space needs at least two distinct points (its diameter would be 0), "
     "got 1 row(s) at a single location"),
    ("denoise", ("-o", "{tmp}/den.csv", "--pois", "{nolat}"),
     "tracs denoise: error: nolat.csv: a POI file needs a latitude column (lat) and a longitude column (lng); "
     "found ['name', 'lng']"),
    ("estimate", ("-o", "{tmp}/freq.csv", "--pois", "{fewer}"), "MISMATCH"),
    ("estimate", ("-o", "{tmp}/freq.csv"),
     "tracs estimate: error: rel_em.csv was released by em (EM), a discrete baseline: its reports are points of "
     "interest, and the estimate of its POI frequencies needs the public POI space: give --pois FILE"),
    ("estimate", ("-o", "{tmp}/freq.geojson", "--pois", "{pois}"),
     "tracs estimate: error: the POI frequencies of a discrete baseline's release are written as .csv, not "
     "freq.geojson"),
    ("estimate", ("-o", "{tmp}/freq.csv", "--pois", "{pois}", "--queries", "{pois}"),
     "tracs estimate: error: --queries goes with a density estimate; rel_em.csv was released by em (EM), a "
     "discrete baseline"),
])
def test_bad_inputs_of_a_discrete_release(cli, files, releases, tmp_path, command, options, fragment):
    fewer = _subset_pois(files, tmp_path)
    (tmp_path / "one.csv").write_text("lat,lng\n35.65,139.7\n")
    (tmp_path / "nolat.csv").write_text("name,lng\na,139.7\n")
    args = [a.format(tmp=tmp_path, pois=files[1], fewer=fewer, one=tmp_path / "one.csv", nolat=tmp_path / "nolat.csv")
            for a in options]
    result = cli(command, releases["em"], *args)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    if fragment == "MISMATCH":  # the sidecar's digest of the POI space
        fragment = (f"tracs {command}: error: fewer.csv is not the POI set of rel_em.csv: the release used 20 POIs, "
                    "fewer.csv holds 15 distinct POIs (5 fewer; pois_sha256 differs): give the POI file the release "
                    "was made with")
    assert fragment in result.stderr
    assert not any(tmp_path.glob("den.*")) and not any(tmp_path.glob("syn.*")) and not any(tmp_path.glob("freq.*"))


@pytest.mark.parametrize("command, options, fragment", [
    ("synthesize", ("-n", "3", "-o", "{tmp}/syn.csv", "--pois", "{pois}"),
     "tracs synthesize: error: --pois goes with a discrete baseline's release; rel_c.csv was released by "
     "tracs-c (TraCS-C), whose reports are not POIs"),
    ("estimate", ("-o", "{tmp}/est.csv", "--pois", "{pois}"),
     "tracs estimate: error: --pois goes with a discrete baseline's release (its POI frequencies)"),
])
def test_pois_refused_for_a_perturber_release(cli, files, tmp_path, command, options, fragment):
    release = _perturb(files, "tracs-c", "rel_c.csv")
    result = cli(command, release, *[a.format(tmp=tmp_path, pois=files[1]) for a in options])
    assert result.returncode == 1 and fragment in result.stderr


def _file_offsets(raw) -> np.ndarray:
    keys = (raw["uid"] + "\x00" + raw["trajectory"]).to_numpy()  # one trajectory per run of rows
    return np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1, len(keys)]


@pytest.mark.parametrize("method", ["em", "lsrr", "ngram", "atp"])
def test_a_release_per_trajectory_is_denoised_at_every_reports_epsilon(cli, files, per_trajectory, method, tmp_path):
    """EM, L-SRR, N-gram and ATP released with ε per trajectory: every report's per-point ε is its
    trajectory's budget over its length; the output has the release's rows, columns and ids, every point a
    POI, the library's baseline_posterior of the rebuilt (per-trajectory) baseline."""
    import pyproj

    from tracs.estimate import baseline_posterior

    release, pois = per_trajectory[method], files[1]
    out = tmp_path / "den.csv"
    result = cli("denoise", release, "--pois", pois, "-o", out)
    assert result.returncode == 0, result.stderr
    assert f"{method} at ε = 20 per trajectory: 23 points denoised onto 20 POIs" in result.stdout
    raw, den = pd.read_csv(release, dtype=str), pd.read_csv(out, dtype=str)
    assert raw["epsilon_point"].astype(float).round(9).nunique() == 3
    kept = [c for c in raw.columns if c not in ("lat", "lng")]
    pd.testing.assert_frame_equal(den[kept], raw[kept])
    assert list(den["uid"].unique()) == list(USERS)
    assert _at_pois(den, pois).max() < 1e-9
    baseline, points, crs = _library(release, pois)
    assert baseline.epsilon is None and baseline.epsilon_per_trajectory == 20
    picked = baseline_posterior(points, baseline, offsets=_file_offsets(raw))
    lng, lat = pyproj.Transformer.from_crs(crs, 4326, always_xy=True).transform(*baseline.poi_space.points[picked].T)
    np.testing.assert_allclose(den["lat"].astype(float), lat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(den["lng"].astype(float), lng, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method, what", [
    ("em", "the law's rows ("),
    ("ngram", "N-gram's normalisers (")])
def test_the_poi_frequencies_are_refused_above_the_memory_budget(cli, files, per_trajectory, method, what, tmp_path):
    result = cli("estimate", per_trajectory[method], "--pois", files[1], "-o", tmp_path / "freq.csv", "--memory", "10kB")
    assert result.returncode == 1
    assert f"tracs estimate: error: --memory: {what}" in result.stderr
    assert "per-point epsilon × 20 POIs) needs at least " in result.stderr
    assert "above the budget memory=1e-05 GB" in result.stderr


@pytest.mark.parametrize("method", ["em", "ngram", "atp"])
def test_a_release_per_trajectory_is_synthesized_from_its_posterior_modes(cli, files, per_trajectory, method,
                                                                          tmp_path):
    out = tmp_path / "syn.csv"
    result = cli("synthesize", per_trajectory[method], "-n", 4, "-o", out, "--seed", 2, "--grid", 5,
                 "--pois", files[1])
    assert result.returncode == 0, result.stderr
    assert "(binned denoised POIs (nearest the posterior means))" in result.stdout
    assert read_release(out)["uid"].nunique() == 4


@pytest.mark.parametrize("command", ["denoise", "estimate", "synthesize"])
def test_a_release_per_trajectory_whose_trajectories_were_cut_is_refused(cli, files, per_trajectory, command,
                                                                         tmp_path):
    """The last 3 of user 007's 12 rows made a trajectory of their own, in a release whose sidecar records no
    digest of its rows (an older tracs): their per-point ε would be 20/3, not the 20/12 written."""
    raw = pd.read_csv(per_trajectory["em"], dtype=str)
    raw.loc[9:11, "trajectory"] = "1"
    release = tmp_path / "rel_cut.csv"
    raw.to_csv(release, index=False)
    data = json.loads(sidecar_path(per_trajectory["em"]).read_text())
    del data["rows_sha256"]
    sidecar_path(release).write_text(json.dumps(data))
    options = {"denoise": ("-o", tmp_path / "den.csv"), "estimate": ("-o", tmp_path / "freq.csv"),
               "synthesize": ("-n", 2, "-o", tmp_path / "syn.csv")}[command]
    result = cli(command, release, "--pois", files[1], *options)
    assert result.returncode == 1
    assert (f"tracs {command}: error: 12 of the 23 points of rel_cut.csv have an epsilon_point other than the budget "
            "per trajectory over their trajectory's length (lines 2, 3, 4, 5, 6, … (7 more)): its trajectories are "
            "not those it was released with") in result.stderr


def test_pois_of_the_box_outside_the_region_move_onto_it_as_perturb_moved_them(cli, files, tmp_path):
    """A POI at the corner of Tokyo's box lies outside the rectangle inscribed in its projection: 'tracs
    perturb' moved it onto the rectangle, and so does denoise (with a note), so the release matches."""
    from tracs.cli import main
    from tracs.public import city_box

    box = city_box("tky")
    venues = pd.read_csv(files[1])
    pois = tmp_path / "pois.csv"
    pd.concat([venues, pd.DataFrame({"lat": [box.min_lat], "lng": [box.min_lon]})]).to_csv(pois, index=False)
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(files[0]), "-o", str(release), "-m", "lsrr", "-e", "2", "--region", "tky",
                 "--pois", str(pois), "--seed", "1", "-q"]) == 0
    result = cli("denoise", release, "--pois", pois, "-o", tmp_path / "den.csv")
    assert result.returncode == 0, result.stderr
    assert "tracs denoise: note: 1 POI(s) of pois.csv outside the release's region moved onto its edge, by at " \
           "most " in result.stderr
    assert "36 points denoised onto 21 POIs" in result.stdout


def _older(release, tmp_path):
    """A copy of ``release`` whose sidecar records no digest of the POIs (as an older tracs wrote it)."""
    old = tmp_path / "rel_old.csv"
    shutil.copy(release, old)
    data = json.loads(sidecar_path(release).read_text())
    del data["pois_sha256"], data["pois_count"]
    sidecar_path(old).write_text(json.dumps(data))
    return old


def _poi_files(files, tmp_path) -> dict:
    """The release's POI file; with one more POI; with one POI moved by about 110 m."""
    venues = pd.read_csv(files[1])
    extra = pd.concat([venues, pd.DataFrame({"lat": [35.7], "lng": [139.7]})])
    moved = venues.copy()
    moved.loc[4, "lat"] += 0.001
    for name, frame in (("extra", extra), ("moved", moved)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    return {"same": files[1], "extra": tmp_path / "extra.csv", "moved": tmp_path / "moved.csv"}


#: the commands' options besides --pois
COMMANDS = {"denoise": ("-o", "{tmp}/out.csv"), "estimate": ("-o", "{tmp}/out.csv"),
            "synthesize": ("-n", "3", "-o", "{tmp}/out.csv")}
NO_DIGEST = ("tracs {command}: note: no digest of the POIs is recorded for rel_old.csv (a release of an older "
             "tracs, or one without its sidecar): the POI set of pois.csv cannot be checked to be the one it was "
             "released with")


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case, code, fragment", [
    ("same", 0, None),
    ("extra", 1, "tracs {command}: error: extra.csv is not the POI set of rel_em.csv: the release used 20 POIs, "
                 "extra.csv holds 21 distinct POIs (1 more; pois_sha256 differs): give the POI file the release was "
                 "made with"),
    ("moved", 1, "tracs {command}: error: moved.csv is not the POI set of rel_em.csv: the release used 20 POIs, "
                 "moved.csv holds 20 distinct POIs (as many, but one or more moved or in another order; pois_sha256 "
                 "differs): give the POI file the release was made with"),
    ("older", 0, NO_DIGEST),
])
def test_the_poi_file_is_checked_against_the_release(cli, files, releases, tmp_path, command, case, code, fragment):
    """The sidecar's ``pois_sha256`` is the digest of the POI space the release used: another POI file
    is refused, naming the release, the file and the counts; a sidecar without it gets a note."""
    pois = _poi_files(files, tmp_path)
    release = _older(releases["em"], tmp_path) if case == "older" else releases["em"]
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    result = cli(command, release, "--pois", pois.get(case, files[1]), *args)
    assert result.returncode == code and "Traceback" not in result.stderr, result.stderr
    if fragment is not None:
        assert fragment.format(command=command) in result.stderr
    if case == "same":
        assert "digest" not in result.stderr and "pois_sha256" not in result.stderr
    assert (tmp_path / "out.csv").exists() == (code == 0)


def test_an_older_release_with_other_pois_is_refused_by_its_points(cli, files, releases, tmp_path):
    """Without a digest of the POIs, a POI file without some released POIs is still refused, by the
    released points that are not among its POIs (counted and named by line)."""
    fewer = _subset_pois(files, tmp_path)
    result = cli("denoise", _older(releases["em"], tmp_path), "--pois", fewer, "-o", tmp_path / "den.csv")
    off = np.flatnonzero(_at_pois(pd.read_csv(releases["em"]), fewer) > 1e-9)
    assert result.returncode == 1 and len(off) > 0
    lines = ", ".join(str(i + 2) for i in off[:5]) + (f", … ({len(off) - 5:,} more)" if len(off) > 5 else "")
    assert (f"tracs denoise: error: {len(off)} of the 36 released points of rel_old.csv are not among the POIs "
            f"given with --pois (lines {lines}): give the POI file the release was made with") in result.stderr


def test_the_digest_is_of_the_poi_space_not_of_the_files_formatting(files, releases, tmp_path):
    """The same POIs in another column order, with other columns, another separator and column names,
    numbers written with trailing zeros and a repeated row: the writer's reading ('tracs perturb',
    :func:`tracs.public.read_pois`) and the commands' (:func:`tracs.cli._discrete.poi_space`) give the
    digest the sidecar records."""
    venues = pd.read_csv(files[1])
    lat, lng = venues["lat"].tolist(), venues["lng"].tolist()
    padded = lambda v: f"{v!r}00" if "e" not in repr(v) else repr(v)  # noqa: E731 - the same float
    (tmp_path / "other.tsv").write_text("name\tLongitude\tkind\tLatitude\n" + "".join(
        f"v{k}\t{padded(x)}\tcafe\t{padded(y)}\n" for k, (y, x) in enumerate(zip(lat + lat[:1], lng + lng[:1]))))
    data = read_sidecar(releases["em"])
    assert data["pois_count"] == 20
    for path in (files[1], tmp_path / "other.tsv"):
        assert read_pois(path, city_box("tky")).digest() == data["pois_sha256"]
        assert poi_space(path, data, "denoise", releases["em"]).digest() == data["pois_sha256"]


def test_a_parquet_release_carries_its_sidecars_poi_digest(cli, files, tmp_path):
    """A release that embeds its parameters: the digest of the POIs is the sidecar's only (the file's
    parameters are as before), and the commands read it from there."""
    release = _perturb(files, "em", "rel_em.parquet")
    side = json.loads(sidecar_path(release).read_text())
    embedded = embedded_parameters(release)
    assert "pois_sha256" not in embedded and side["pois_count"] == 20
    assert embedded == {k: v for k, v in side.items() if k not in ("rows_sha256", "pois_sha256", "pois_count")}
    result = cli("estimate", release, "--pois", _poi_files(files, tmp_path)["extra"], "-o", tmp_path / "f.csv")
    assert result.returncode == 1 and "extra.csv is not the POI set of rel_em.parquet" in result.stderr


@pytest.mark.parametrize("header", ["y,x", "latitude,long", "LAT,LON"])
def test_every_command_reads_the_poi_columns_perturb_reads(cli, files, releases, tmp_path, header):
    """A POI file whose columns are named as 'tracs perturb --pois' accepts them (y/x, long, upper case)
    is read by denoise too, and gives the release's digest."""
    venues = pd.read_csv(files[1])
    path = tmp_path / "named.csv"
    lat_name, lng_name = header.split(",")
    pd.DataFrame({lat_name: venues["lat"], lng_name: venues["lng"]}).to_csv(path, index=False)
    data = read_sidecar(releases["em"])
    assert poi_space(path, data, "denoise", releases["em"]).digest() == data["pois_sha256"]
    out = tmp_path / "dn.csv"
    result = cli("denoise", str(releases["em"]), "-o", str(out), "--pois", str(path))
    assert result.returncode == 0, result.stderr
    assert len(pd.read_csv(out)) == len(pd.read_csv(releases["em"]))
