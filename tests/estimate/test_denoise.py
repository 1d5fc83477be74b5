"""Per-point denoising: posterior means of the true points under a fitted density."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from tracs import Rectangle
from tracs.estimate import Density, density
from tracs.estimate.denoising import denoise
from tracs.estimate.transition import bin_index
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD

from _axis_tables import axis_tables

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)


def _prior(probabilities, grid=(4, 3)):
    xe, ye = np.linspace(0, 2, grid[0] + 1), np.linspace(0, 1, grid[1] + 1)
    p = np.asarray(probabilities, dtype=np.float64)
    return Density(p / p.sum(), (xe, ye))


def _brute_force(reports, pert, prior):
    """Posterior mean by enumerating every cell for every report (cell centres, no subcells)."""
    (xe, ye), theta = prior.grid, prior.probabilities
    ox, oy, ax, ay = axis_tables(pert, prior)
    out = []
    for x, y in reports:
        i, j = int(bin_index(np.array([x]), ox)[0]), int(bin_index(np.array([y]), oy)[0])
        num, z = np.zeros(2), 0.0
        for a in range(len(xe) - 1):
            for b in range(len(ye) - 1):
                w = theta[a, b] * ax[i, a] * ay[j, b]
                num += w * np.array([(xe[a] + xe[a + 1]) / 2, (ye[b] + ye[b + 1]) / 2])
                z += w
        out.append(num / z)
    return np.array(out)


@pytest.mark.parametrize("probabilities", [np.ones((4, 3)), np.arange(1, 13).reshape(4, 3) ** 2])
def test_equals_enumeration_over_cells(probabilities):
    # TraCS-C at ε = 2 (seed 3): uniform and skewed priors on 4×3 cells, against a loop over cells
    pert = TraCSC(REGION, 2.0)
    rng = np.random.default_rng(3)
    reports = pert.perturb_many(rng.uniform([0, 0], [2, 1], (200, 2)), np.array([0, 200]), rng=4)
    prior = _prior(probabilities)
    np.testing.assert_allclose(denoise(reports, pert, prior, subcells=1), _brute_force(reports, pert, prior),
                               rtol=0, atol=1e-12)


def test_subcells_are_the_cells_of_a_split_prior():
    # subcells=2 on 4×3 cells is subcells=1 on the 8×6 grid holding each cell's mass in equal quarters
    pert = TraCSC(REGION, 2.0)
    reports = pert.perturb_many(np.random.default_rng(5).uniform([0, 0], [2, 1], (100, 2)), np.array([0, 100]),
                                rng=6)
    p = np.arange(1, 13, dtype=float).reshape(4, 3)
    split = _prior(np.repeat(np.repeat(p, 2, axis=0), 2, axis=1), grid=(8, 6))
    np.testing.assert_allclose(denoise(reports, pert, _prior(p), subcells=2),
                               denoise(reports, pert, split, subcells=1), rtol=0, atol=1e-12)


def test_a_point_mass_prior_returns_its_point():
    pert = TraCSC(REGION, 1.0)
    reports = pert.perturb_many(np.random.default_rng(7).uniform([0, 0], [2, 1], (50, 2)), np.array([0, 50]),
                                rng=8)
    mass = np.zeros((4, 3))
    mass[2, 1] = 1.0
    out = denoise(reports, pert, _prior(mass), subcells=1)
    np.testing.assert_allclose(out, np.tile([1.25, 0.5], (50, 1)), rtol=0, atol=1e-12)
    inside = denoise(reports, pert, _prior(mass), subcells=4)  # the mean within the cell
    assert np.all((inside[:, 0] > 1.0) & (inside[:, 0] < 1.5) & (inside[:, 1] > 1 / 3) & (inside[:, 1] < 2 / 3))


@pytest.mark.parametrize("make", [lambda r: TraCSC(r, 2.0), lambda r: PlanarLaplace(r, 4.0)],
                         ids=["tracs-c", "planar-laplace"])
def test_denoising_moves_reports_towards_the_true_points(make):
    # TraCS-C at ε = 2, planar Laplace at ε = 4 (seeds 9, 10), two clusters: the posterior means are
    # closer to the true points than the reports: mean distance below 0.85 of theirs (measured: TraCS-C
    # 0.75, planar Laplace 0.58)
    rng = np.random.default_rng(9)
    c = np.where(rng.random(4000)[:, None] < 0.6, [0.5, 0.3], [1.5, 0.7])
    pts = np.clip(c + rng.normal(0, 0.1, (4000, 2)), [0, 0], [2, 1])
    off = np.arange(0, 4001, 20)
    pert = make(REGION)
    reports = pert.perturb_many(pts, off, rng=10)
    est = density(reports, pert, offsets=off, grid=(8, 8))
    out = denoise(reports, pert, est, offsets=off)
    raw, den = (np.linalg.norm(v - pts, axis=1).mean() for v in (reports, out))
    assert den < 0.85 * raw


@pytest.mark.parametrize("make", [lambda r: TraCSD(r, 2.0), lambda r: Strawman(r, 2.0)], ids=["tracs-d", "strawman"])
def test_directional_equals_enumeration_over_cells(make):
    # seeds 13 (points), 14 (release), 15 (prior); 300 reports in trajectories of 30, 4×3 cells:
    # the runs' posterior means equal those of one likelihood per (report, cell) from the
    # point test (tracs.estimate._coded), to 1e-12
    from tracs.estimate import _coded, _directional
    from tracs.estimate.grid_density import _epsilons, _subpoints

    pert = make(REGION)
    off = np.arange(0, 301, 30)
    reports = pert.perturb_many(np.random.default_rng(13).uniform([0, 0], [2, 1], (300, 2)), off, rng=14)
    prior = _prior(np.random.default_rng(15).random((4, 3)))
    out = denoise(reports, pert, prior, offsets=off, subcells=1)
    refs = _directional.references(reports, off, pert.anchor_point)
    regular = ~np.all(reports == refs, axis=1)
    points = _subpoints(*prior.grid, 1)
    eps = _epsilons(pert, off, len(reports))
    eps_dir, eps_dist, inverse = _directional._split(pert, eps)
    blocks = _directional.directional_blocks(reports, off, pert, eps, points[:, 0, 0][::3], points[:3, 0, 1], 1,
                                             points)
    g = blocks[0].geometry
    codes = np.empty((len(g["reports"]), 12), dtype=_coded.code_dtype(1))
    _coded.code_reports(g["reports"], g["refs"], 0, len(codes), points, *g["halfplanes"], g["mode"],
                        g["cos_half"], g["sectors"], g["half_r"], codes)
    table = _coded.code_table(eps_dir, eps_dist, 1)
    lik = table[inverse[regular]][np.arange(len(codes))[:, None], codes.astype(np.int64)]  # (reports, cells)
    weighted = lik * prior.probabilities.ravel()
    expected = weighted @ points[:, 0, :] / weighted.sum(axis=1)[:, None]
    np.testing.assert_allclose(out[regular], expected, rtol=1e-12)
    assert np.all((out >= [0, 0]) & (out <= [2, 1]))


def test_per_trajectory_budget_needs_offsets():
    pert = TraCSC(REGION, epsilon_per_trajectory=40.0)
    pts = np.random.default_rng(11).uniform([0, 0], [2, 1], (40, 2))
    off = np.array([0, 10, 40])
    reports = pert.perturb_many(pts, off, rng=12)
    prior = _prior(np.ones((4, 3)))
    with pytest.raises(ValueError, match="needs offsets"):
        denoise(reports, pert, prior)
    out = denoise(reports, pert, prior, offsets=off)
    assert out.shape == (40, 2) and np.all(np.isfinite(out))


@pytest.mark.parametrize("perturber, estimate, subcells, exc, fragment", [
    (TraCSD(REGION, 2.0), "prior", 5, ValueError, "subcells must lie in 1..4, got 5"),
    (TraCSD(REGION, 2.0), "prior", 2, ValueError, "TraCS-D and the Strawman need offsets"),
    (TraCSC(REGION, 2.0), np.ones((4, 3)), 2, TypeError, "estimate must be a Density, got ndarray"),
    (TraCSC(REGION, 2.0), "prior", 0, ValueError, "subcells must lie in 1..8, got 0"),
    (TraCSC(REGION, 2.0), "prior", 2.0, TypeError, "subcells must be an int, got float"),
    ("not a perturber", "prior", 2, TypeError, "perturber must be a registered perturber"),
])
def test_bad_arguments(perturber, estimate, subcells, exc, fragment):
    estimate = _prior(np.ones((4, 3))) if isinstance(estimate, str) else estimate
    with pytest.raises(exc, match=fragment):
        denoise(np.array([[0.5, 0.5]]), perturber, estimate, subcells=subcells)


def test_denoise_command_writes_the_release_with_posterior_means(tmp_path, tky_path, capsys):
    from tracs.cli import main
    from tracs.io.release import read_release

    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-c", "-e", "4", "--seed", "1", "--region", "tky",
                 "-o", str(release), "-q"]) == 0
    out = tmp_path / "den.csv"
    assert main(["denoise", str(release), "--grid", "8", "-o", str(out), "-q"]) == 0
    assert "points denoised (8×8 prior" in capsys.readouterr().out
    raw, den = read_release(release), read_release(out)
    assert list(den.columns) == list(raw.columns) + ["denoised"] and len(den) == len(raw)
    assert (den["denoised"] == "posterior mean").all()
    for column in ("uid", "trajectory"):
        assert den[column].astype(str).tolist() == raw[column].astype(str).tolist()
    assert den["datetime"].astype(str).tolist() == raw["datetime"].astype(str).tolist()
    assert not np.allclose(den["lat"], raw["lat"])
    assert den["lat"].between(raw["lat"].min(), raw["lat"].max()).all()  # drawn towards the data
    assert not (tmp_path / "den.tracs.json").exists()


@pytest.mark.parametrize("method, output, fragment", [
    ("planar-laplace", "den.csv --trajectory", "tracs denoise --trajectory supports TraCS-C, TraCS-D and Strawman "
                                               "releases; rel.csv was released by planar-laplace"),
    ("tracs-c", "den.geojson", "cannot tell the output format of den.geojson: use .csv, .tsv, .parquet"),
    ("tracs-c", "rel.csv", "the output would overwrite the release"),
])
def test_denoise_command_refuses(tmp_path, tky_path, capsys, method, output, fragment):
    from tracs.cli import main

    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", method, "-e", "4", "--seed", "1", "--region", "tky",
                 "-o", str(release), "-q"]) == 0
    capsys.readouterr()
    output, *extra = output.split()
    assert main(["denoise", str(release), "-o", str(tmp_path / output), "-q", *extra]) != 0
    assert fragment in capsys.readouterr().err


def _small_release(tmp_path, tky_path, method="tracs-c", rows=300, name="rel.csv"):
    """The first ``rows`` check-ins of TKY released by ``method`` at ε = 2 (seed 1), and a POI file of their venues."""
    import pandas as pd

    from tracs.cli import main

    data = pd.read_csv(tky_path, nrows=rows)
    data.to_csv(tmp_path / "in.csv", index=False)
    pd.DataFrame({"lat": data["Latitude"], "lng": data["Longitude"]}).drop_duplicates().to_csv(
        tmp_path / "pois.csv", index=False)
    release = tmp_path / name
    assert main(["perturb", str(tmp_path / "in.csv"), "-m", method, "-e", "2", "--seed", "1", "--region", "tky",
                 "-o", str(release), "-q"]) == 0
    return release, tmp_path / "pois.csv"


@pytest.mark.parametrize("rule, how", [(None, "POI nearest the posterior mean"), ("mode", "posterior mode at a POI")])
def test_denoise_command_onto_the_pois(tmp_path, tky_path, capsys, rule, how):
    import pandas as pd

    from tracs.cli import main

    release, pois = _small_release(tmp_path, tky_path)
    out = tmp_path / "den.csv"
    assert main(["denoise", str(release), "--grid", "8", "--pois", str(pois), "-o", str(out), "-q",
                 *(["--rule", rule] if rule else [])]) == 0
    assert f"onto {len(pd.read_csv(pois))} POIs" in capsys.readouterr().out
    den, venues = pd.read_csv(out, dtype=str), pd.read_csv(pois)
    assert (den["denoised"] == how).all()
    # every point is a POI (to the WGS84 round trip through metres)
    d = np.hypot(den["lat"].astype(float).to_numpy()[:, None] - venues["lat"].to_numpy(),
                 den["lng"].astype(float).to_numpy()[:, None] - venues["lng"].to_numpy()).min(axis=1)
    assert d.max() < 1e-9
    raw = pd.read_csv(release, dtype=str)
    for column in ("epsilon_point", "epsilon_trajectory"):  # ε as written: 2 stays 2, 222 stays 222
        assert den[column].tolist() == raw[column].tolist()


@pytest.mark.parametrize("revisit, said", [([], "revisit weight 4"), (["--revisit", "0.5"], "revisit weight 0.5"),
                                           (["--revisit", "none"], "no revisits")])
def test_denoise_command_given_the_trajectory_onto_the_pois(tmp_path, tky_path, capsys, revisit, said):
    # TraCS-D, the first 300 TKY check-ins: every output point is a POI; the weight is the library's
    # (the same points as denoise(..., revisit=...)) and the summary line says which
    import pandas as pd

    from tracs.cli import main

    release, pois = _small_release(tmp_path, tky_path, method="tracs-d")
    outs = {}
    for name, extra in (("cli", revisit), ("none", ["--revisit", "none"])):
        outs[name] = tmp_path / f"{name}.csv"
        assert main(["denoise", str(release), "--grid", "8", "--pois", str(pois), "--trajectory", "-o",
                     str(outs[name]), "-q", *extra]) == 0
        text = capsys.readouterr().out
        if name == "cli":
            assert said in text
    den, plain = pd.read_csv(outs["cli"]), pd.read_csv(outs["none"])
    assert (den["denoised"] == plain["denoised"]).all()
    assert (den[["lat", "lng"]].to_numpy() == plain[["lat", "lng"]].to_numpy()).all() == (revisit[-1:] == ["none"])


def test_denoise_and_synthesize_read_a_folder_of_parquet_parts(tmp_path, tky_path, capsys):
    import shutil

    from tracs.cli import main

    release, _ = _small_release(tmp_path, tky_path, name="rel.parquet")
    (tmp_path / "parts").mkdir()
    shutil.copy(release, tmp_path / "parts" / "part.0.parquet")
    shutil.copy(tmp_path / "rel.parquet.tracs.json", tmp_path / "parts.tracs.json")
    assert main(["denoise", str(tmp_path / "parts"), "--grid", "8", "-o", str(tmp_path / "den.csv"), "-q"]) == 0
    assert main(["synthesize", str(tmp_path / "parts"), "-n", "2", "--grid", "8", "-o", str(tmp_path / "syn.csv")]) == 0
    assert (tmp_path / "den.csv").exists() and (tmp_path / "syn.csv").exists()


@pytest.mark.parametrize("args, pois_text, fragment", [
    (["--rule", "mean"], None, "--rule goes with --pois (the denoised point is a POI)"),
    (["--pois", "{tmp}/none.csv"], None, "no such POI file:"),
    (["--pois", "{pois}"], "name,x\na,1\n", "pois.csv: a POI file needs a latitude column (lat) and a longitude "
                                           "column (lng); found ['name', 'x']"),
    (["--pois", "{pois}"], "lat,lng\n35.6,139.7\nx,139.7\n", "pois.csv: 1 POI row(s) without a numeric latitude "
                                                            "and longitude (lines 3)"),
    (["--pois", "{pois}"], "lat,lng\n35.6,139.7\n10.0,139.7\n", "pois.csv: 1 POI(s) outside the release's region "
                                                               "(lines 3)"),
    (["--pois", "{pois}"], "lat,lng\n", "pois.csv: no POI rows"),
    (["--pois", "{pois}", "--rule", "median"], None, "argument --rule: invalid choice: 'median'"),
    (["--revisit", "4"], None, "--revisit goes with --pois and --trajectory (the prior of a POI given the trajectory)"),
    (["--pois", "{pois}", "--revisit", "4"], None, "--revisit goes with --pois and --trajectory"),
    (["--pois", "{pois}", "--trajectory", "--revisit", "0"], None,
     "argument --revisit: expected a finite number > 0 or 'none', got '0'"),
    (["--pois", "{pois}", "--trajectory", "--revisit", "inf"], None,
     "argument --revisit: expected a finite number > 0 or 'none', got 'inf'"),
    (["--pois", "{pois}", "--trajectory", "--revisit", "often"], None,
     "argument --revisit: expected a number > 0 or 'none', got 'often'"),
    ([], None, "no such file:"),
])
def test_denoise_command_refuses_bad_pois_options(tmp_path, tky_path, capsys, args, pois_text, fragment):
    from tracs.cli import main

    release, pois = _small_release(tmp_path, tky_path, rows=50)
    if pois_text is not None:
        pois.write_text(pois_text)
    if not args:  # a release that is neither a file nor a folder of Parquet parts
        release = tmp_path / "missing.csv"
    capsys.readouterr()
    args = [a.format(tmp=tmp_path, pois=pois) for a in args]
    try:
        code = main(["denoise", str(release), "--grid", "8", "-o", str(tmp_path / "den.csv"), "-q", *args])
    except SystemExit as exc:  # argparse
        code = exc.code
    assert code != 0
    assert fragment in capsys.readouterr().err


def _planar_case(epsilon, seeds, n):
    """Planar Laplace reports of ``n`` uniform points, the 4×3 skewed prior, their denoised points
    (subcells=1) and the prior's cell centres and masses."""
    pert = PlanarLaplace(REGION, epsilon)
    reports = pert.perturb_many(np.random.default_rng(seeds[0]).uniform([0, 0], [2, 1], (n, 2)), np.array([0, n]),
                                rng=seeds[1])
    prior = _prior(np.arange(1, 13).reshape(4, 3) ** 2)
    out = denoise(reports, pert, prior, offsets=np.array([0, n]), subcells=1)
    (xe, ye), theta = prior.grid, prior.probabilities
    centres = np.array([[(xe[a] + xe[a + 1]) / 2, (ye[b] + ye[b + 1]) / 2] for a in range(4) for b in range(3)])
    return pert, reports, out, centres, theta.ravel()


def test_planar_laplace_equals_enumeration_over_cells():
    # planar Laplace at ε = 20 (seeds 41, 42), 4×3 skewed prior, subcells=1: the posterior mean over the
    # cells' centres with the Laplace density of the report at each (interior reports; clamped ones
    # integrate beyond the edge), to 1e-12
    pert, reports, out, centres, theta = _planar_case(20.0, (41, 42), 200)
    inside = np.all((reports > [0, 0]) & (reports < [2, 1]), axis=1)
    for r in np.flatnonzero(inside):
        w = theta * np.exp(-20.0 * pert.rate * np.linalg.norm(reports[r] - centres, axis=1))
        np.testing.assert_allclose(out[r], w @ centres / w.sum(), rtol=0, atol=1e-12)
    assert inside.sum() > 100 and np.all((out >= [0, 0]) & (out <= [2, 1]))


def test_planar_laplace_clamped_reports_equal_enumeration_over_cells():
    # planar Laplace at ε = 3 (seeds 45, 46), 4×3 skewed prior, subcells=1: reports clamped onto an
    # edge (the first 12) or a corner (the first 3) get the posterior mean over the cells' centres with
    # their likelihood by SciPy's adaptive quadrature (the density over the outward half-line or
    # quadrant, up to e^-40 of it), to 1e-9
    pert, reports, out, centres, theta = _planar_case(3.0, (45, 46), 150)
    a = 3.0 * pert.rate
    sides = np.where(reports <= [0, 0], -1, np.where(reports >= [2, 1], 1, 0))
    on_edge = np.flatnonzero(np.sum(sides != 0, axis=1) == 1)
    on_corner = np.flatnonzero(np.sum(sides != 0, axis=1) == 2)
    assert len(on_edge) > 20 and len(on_corner) >= 3
    for r in np.concatenate([on_edge[:12], on_corner[:3]]):
        sx, sy = sides[r]
        lik = []
        for c in centres:
            def density(s, t, r=r, c=c, sx=sx, sy=sy):  # the release (clamped) at an outward offset (s, t)
                return np.exp(-a * np.hypot(reports[r, 0] + sx * s - c[0], reports[r, 1] + sy * t - c[1]))
            if sx and sy:
                lik.append(integrate.dblquad(density, 0, 40 / a, 0, 40 / a, epsabs=0, epsrel=1e-11)[0])
            else:
                lik.append(integrate.quad(lambda s: density(s, s), 0, np.inf, epsabs=0, epsrel=1e-12)[0])
        w = theta * np.array(lik)
        np.testing.assert_allclose(out[r], w @ centres / w.sum(), rtol=0, atol=1e-9)


def test_planar_laplace_is_denoised_per_point_only():
    pert = PlanarLaplace(REGION, 4.0)
    off = np.array([0, 20])
    reports = pert.perturb_many(np.random.default_rng(43).uniform([0, 0], [2, 1], (20, 2)), off, rng=44)
    with pytest.raises(ValueError, match="trajectory=True supports TraCS-C, TraCS-D and Strawman reports"):
        denoise(reports, pert, _prior(np.ones((4, 3))), offsets=off, trajectory=True)
