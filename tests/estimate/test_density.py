"""2-D densities from perturbers' reports: recovery, queries, determinism, bad inputs."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from tracs import Batch, ConvexRegion, Rectangle
from tracs.errors import InputTypeError
from tracs.estimate import Density, density, frequencies
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)
GRID = (8, 8)


def _clustered(n, seed):
    """Two Gaussian clusters clipped into REGION, as trajectories of 20 points."""
    rng = np.random.default_rng(seed)
    c = np.where(rng.random(n)[:, None] < 0.6, [0.5, 0.3], [1.5, 0.7])
    pts = np.clip(c + rng.normal(0, 0.12, (n, 2)), [0, 0], [2, 1])
    return pts, np.arange(0, n + 1, 20)


def _truth(pts):
    xe, ye = np.linspace(0, 2, GRID[0] + 1), np.linspace(0, 1, GRID[1] + 1)
    return Density.from_points(pts, (xe, ye))


@pytest.mark.parametrize("make, eps", [
    (lambda e: TraCSC(REGION, e), 2.0),
    (lambda e: TraCSD(REGION, e), 2.0),
    (lambda e: TraCSD(REGION, e, anchor="corner"), 4.0),
    (lambda e: Strawman(REGION, e), 2.0),
    (lambda e: PlanarLaplace(REGION, e), 4.0),
], ids=["tracs-c", "tracs-d", "tracs-d-corner", "strawman", "planar-laplace"])
def test_estimate_beats_raw_reports_in_total_variation(make, eps):
    # data seed 0, perturbation seeds 1, 2, 3; the estimate's TV to the true histogram must be
    # below 0.8 × the raw reports', on average over the three releases (one release's ratio
    # varies between about 0.6 and 0.85 from seed to seed for TraCS-C at ε = 2)
    pts, off = _clustered(4000, 0)
    pert = make(eps)
    truth = _truth(pts)
    ratios, converged = [], []
    for seed in (1, 2, 3):
        rep = pert.perturb_many(pts, off, rng=seed)
        est = density(rep, pert, offsets=off, grid=GRID)
        raw = Density.from_points(rep, truth.grid)
        assert est.probabilities.shape == GRID
        np.testing.assert_allclose(est.probabilities.sum(), 1.0, atol=1e-9)
        converged.append(est.converged)
        ratios.append(est.total_variation(truth) / raw.total_variation(truth))
    assert np.mean(ratios) < 0.8
    # EM stops by its likelihood rule on at least two of the three releases (planar Laplace's
    # first release is still gaining > 1e-7 per report after 2,000 passes: measured ratio 0.57)
    assert sum(converged) >= 2, converged


def test_error_falls_with_n():
    # TraCS-C at ε = 4: TV to the truth shrinks by at least a quarter from 2 000 to 32 000
    # reports (seeded; the variance part alone would fall fourfold, the grid bias does not)
    tv = []
    for n in (2000, 32000):
        pts, off = _clustered(n, 2)
        pert = TraCSC(REGION, 4.0)
        est = density(pert.perturb_many(pts, off, rng=3), pert, grid=GRID)
        tv.append(est.total_variation(_truth(pts)))
    assert tv[1] < 0.75 * tv[0]


def test_deterministic_and_public_only():
    pts, off = _clustered(2000, 4)
    pert = TraCSD(REGION, 2.0)
    rep = pert.perturb_many(pts, off, rng=5)
    a = density(rep, pert, offsets=off, grid=GRID)
    b = density(rep.copy(), TraCSD(REGION, 2.0), offsets=off.copy(), grid=GRID)  # rebuilt from public params
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    # the estimator's inputs are the reports, offsets and the public perturber only
    params = set(inspect.signature(density).parameters)
    assert params == {"reports", "perturber", "offsets", "grid", "iterations", "smoothing", "tol",
                      "subpoints", "output_bins", "refine", "accelerate", "stop", "workers", "memory",
                      "edge_decay"}


def test_a_batch_of_reports_brings_its_offsets():
    pts, off = _clustered(500, 6)
    pert = TraCSD(REGION, 2.0)
    rep = pert.perturb_many(pts, off, rng=7)
    batch = Batch(rep, off, keys=np.repeat(np.arange(len(off) - 1), np.diff(off)))
    np.testing.assert_array_equal(density(batch, pert, grid=GRID).probabilities,
                                  density(rep, pert, offsets=off, grid=GRID).probabilities)
    with pytest.raises(InputTypeError, match="give offsets or a tracs.Batch"):
        density(batch, pert, offsets=off, grid=GRID)


@pytest.mark.parametrize("make", [lambda: TraCSD(REGION, 2.0), lambda: Strawman(REGION, 2.0),
                                  lambda: TraCSC(REGION, 2.0)], ids=["tracs-d", "strawman", "tracs-c"])
def test_workers_bit_identical(make, monkeypatch):
    # small chunks (256 reports) so that 3 000 reports make 12 chunks over 3 threads
    from tracs.estimate import _directional

    monkeypatch.setattr(_directional, "CHUNK", 256)
    pts, off = _clustered(3000, 11)
    pert = make()
    rep = pert.perturb_many(pts, off, rng=12)
    one = density(rep, pert, offsets=off, grid=GRID, subpoints=2, workers=1)
    three = density(rep, pert, offsets=off, grid=GRID, subpoints=2, workers=3)
    np.testing.assert_array_equal(one.probabilities, three.probabilities)
    assert one.iterations == three.iterations


def test_cv_smoothing_is_a_fixed_choice_among_the_candidates():
    # TraCS-C at ε = 2 (seeded): "cv" picks one weight of CV_WEIGHTS from held-out reports and
    # equals the fit with that weight; the choice is a function of the reports alone
    from tracs.estimate import expectation_maximisation as fitting

    pts, off = _clustered(4000, 15)
    pert = TraCSC(REGION, 2.0)
    rep = pert.perturb_many(pts, off, rng=16)
    est = density(rep, pert, offsets=off, grid=GRID, smoothing="cv", refine=1)
    again = density(rep.copy(), TraCSC(REGION, 2.0), offsets=off, grid=GRID, smoothing="cv", refine=1)
    np.testing.assert_array_equal(est.probabilities, again.probabilities)
    weight = 0.0 if est.method == "em" else float(est.method.split("=")[1])
    assert weight in fitting.CV_WEIGHTS
    plain = density(rep, pert, offsets=off, grid=GRID, smoothing=weight or None, refine=1)
    np.testing.assert_array_equal(est.probabilities, plain.probabilities)


def test_cv_smoothing_fits_only_smoothed_candidates_warm_started(monkeypatch):
    # plain EM is no candidate of "cv": on the fine grids it ran to the 2000-pass safeguard
    # (16 s of a 17 s estimate on CHI at 64×64).  Each split fits the weights largest first,
    # every fit after the first starting from the previous fit's estimate; the final fit
    # starts from the uniform density (it equals the fit with the chosen weight, above)
    from tracs.estimate import expectation_maximisation as fitting

    calls, original = [], fitting.run_em

    def spy(blocks, support, **kwargs):
        fit = original(blocks, support, **kwargs)
        calls.append((kwargs.get("smoothing"), kwargs.get("initial"), fit.theta))
        return fit

    monkeypatch.setattr(fitting, "run_em", spy)
    pts, off = _clustered(4000, 15)
    pert = TraCSC(REGION, 2.0)
    density(pert.perturb_many(pts, off, rng=16), pert, offsets=off, grid=GRID, smoothing="cv", refine=2)
    weights = fitting.CV_WEIGHTS
    assert 0.0 not in weights and list(weights) == sorted(weights, reverse=True)
    held_out, final = calls[:-1], calls[-1]
    assert [w for w, _, _ in held_out] == list(weights) * fitting.CV_SPLITS
    for k, (_, start, _) in enumerate(held_out):
        if k % len(weights) == 0:
            assert start is None
        else:
            assert start is held_out[k - 1][2]
    assert final[0] in weights and final[1] is None


def test_refine_keeps_fine_estimate_for_queries():
    # TraCS-C at ε = 8 (seeded): EM on a 16×16 grid, cell sums on 8×8; the fine estimate answers
    # range queries, and "auto" refines exactly when every report's ε is at least 4
    pts, off = _clustered(4000, 13)
    pert = TraCSC(REGION, 8.0)
    rep = pert.perturb_many(pts, off, rng=14)
    est = density(rep, pert, offsets=off, grid=GRID, refine=2)
    assert est.probabilities.shape == GRID and est.detail.probabilities.shape == (16, 16)
    np.testing.assert_allclose(est.probabilities,
                               est.detail.probabilities.reshape(8, 2, 8, 2).sum(axis=(1, 3)), atol=1e-15)
    np.testing.assert_array_equal(est.grid[0], est.detail.grid[0][::2])
    box = [[0.3, 0.1, 0.9, 0.55]]
    assert est.range_queries(box)[0] == est.detail.range_queries(box)[0]
    assert density(rep, pert, offsets=off, grid=GRID, refine="auto", smoothing=None).detail is not None
    low = TraCSC(REGION, 2.0)
    assert density(low.perturb_many(pts, off, rng=14), low, offsets=off, grid=GRID,
                   refine="auto", smoothing=None).detail is None


def test_auto_smoothing_and_refine_rules():
    # TraCS-C (seeded): from ε = 2 the default is the held-out EMS weight on a grid twice as fine;
    # below 2, plain EM on the requested grid; TraCS-D: never smoothed, refined from ε = 4 only
    pts, off = _clustered(3000, 17)
    for eps, same_as in ((1.0, {"smoothing": None, "refine": 1}), (2.0, {"smoothing": "cv", "refine": 2}),
                         (4.0, {"smoothing": "cv", "refine": 2})):
        pert = TraCSC(REGION, eps)
        rep = pert.perturb_many(pts, off, rng=18)
        auto = density(rep, pert, offsets=off, grid=GRID)
        other = density(rep, pert, offsets=off, grid=GRID, **same_as)
        np.testing.assert_array_equal(auto.probabilities, other.probabilities)
        assert auto.method == other.method and auto.iterations == other.iterations
        assert (auto.detail is None) == (same_as["refine"] == 1)
    # an explicit smoothing=None at ε = 2 keeps plain EM on the requested grid
    pert = TraCSC(REGION, 2.0)
    rep = pert.perturb_many(pts, off, rng=18)
    assert density(rep, pert, offsets=off, grid=GRID, smoothing=None).detail is None
    # with smoothing="cv" chosen explicitly at ε = 1 the grid is not refined
    pert = TraCSC(REGION, 1.0)
    assert density(pert.perturb_many(pts, off, rng=18), pert, offsets=off, grid=GRID,
                   smoothing="cv").detail is None
    pert = TraCSD(REGION, 2.0)
    rep = pert.perturb_many(pts[:600], off[off <= 600], rng=19)
    auto = density(rep, pert, offsets=off[off <= 600], grid=GRID)
    assert auto.method == "em" and auto.detail is None


def test_polygon_region_support():
    region = ConvexRegion([(0, 0), (2, 0), (2, 1)])
    rng = np.random.default_rng(6)
    pts = rng.random((3000, 2)) * [2, 1]
    pts = pts[region.contains(pts)]
    off = np.arange(0, len(pts) + 1, 10) if len(pts) % 10 == 0 else np.array([0, len(pts)])
    pert = TraCSD(region, 2.0)
    est = density(pert.perturb_many(pts, off, rng=7), pert, offsets=off, grid=GRID)
    centres = est.centers.reshape(-1, 2)
    outside = ~region.contains(centres)
    assert outside.any() and np.all(est.probabilities.ravel()[outside] == 0)


def test_queries():
    probs = np.zeros((4, 4))
    probs[0, 0], probs[3, 3] = 0.25, 0.75
    d = Density(probs, (np.linspace(0, 4, 5), np.linspace(0, 4, 5)))
    assert d.range_query((0, 0, 4, 4)) == pytest.approx(1.0)
    assert d.range_query((0, 0, 0.5, 1)) == pytest.approx(0.125)
    np.testing.assert_allclose(d.range_queries([[0, 0, 1, 1], [3, 3, 4, 4], [1, 1, 3, 3]]), [0.25, 0.75, 0])
    hot = d.hotspots(2)
    np.testing.assert_array_equal(hot.cells, [[3, 3], [0, 0]])
    np.testing.assert_allclose(hot.centers, [[3.5, 3.5], [0.5, 0.5]])
    gdf = d.to_geodataframe()
    assert len(gdf) == 16 and gdf.probability.sum() == pytest.approx(1.0)


def test_frequencies_lsrr():
    from tracs.baselines import LSRR
    from tracs.poi_space import POISpace

    rng = np.random.default_rng(8)
    space = POISpace(rng.random((30, 2)))
    true = rng.choice(30, size=6000, p=np.r_[np.full(5, 0.12), np.full(25, 0.4 / 25)])
    base = LSRR(space, 4.0)
    out = base.perturb_indices(true, np.array([0, 6000]), rng=9)
    est = frequencies(out, base)
    h = np.bincount(true, minlength=30) / 6000
    raw = np.bincount(out, minlength=30) / 6000
    assert np.abs(est.probabilities - h).sum() < 0.8 * np.abs(raw - h).sum()


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda: density(np.zeros((3, 2)), "tracs-d"), TypeError, "perturber"),
    (lambda: density(np.full((3, 2), 0.5), TraCSD(REGION, 1.0)), ValueError, "offsets"),
    (lambda: density(np.full((3, 2), 5.0), TraCSC(REGION, 1.0)), ValueError, "outside"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), grid=1), ValueError, ">= 2"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), grid="8"), TypeError, "grid"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), smoothing="gauss"), ValueError, "smoothing"),
    (lambda: density(np.full((3, 2), 0.5), TraCSD(REGION, 1.0), offsets=[0, 3], subpoints=9),
     ValueError, "subpoints"),
    (lambda: density(np.full((3, 2), np.nan), TraCSC(REGION, 1.0)), ValueError, "NaN"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), refine=0), ValueError, "refine"),
    (lambda: density(np.full((3, 2), 0.5), TraCSD(REGION, 1.0), offsets=[0, 3], smoothing="cv"),
     ValueError, "counted in bins"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), refine="fine"), ValueError, "refine"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), refine=2.0), TypeError, "refine"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), workers=0), ValueError, "workers"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), stop="early"), ValueError, "stop must be"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), stop=None), ValueError, "stop must be"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), stop="cv"), ValueError, "holds out trajectories"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), workers="2"), TypeError, "workers"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay=-1.0), ValueError,
     "edge_decay must be a finite number >= 0, got -1.0"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay=np.nan), ValueError,
     "edge_decay must be a finite number >= 0, got nan"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay=np.inf), ValueError,
     "edge_decay must be a finite number >= 0, got inf"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay="4"), TypeError,
     "edge_decay must be a number >= 0, got str"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay=True), TypeError,
     "edge_decay must be a number >= 0, got bool"),
    (lambda: density(np.full((3, 2), 0.5), TraCSC(REGION, 1.0), edge_decay=None), TypeError,
     "edge_decay must be a number >= 0, got NoneType"),
    (lambda: Density(np.ones((2, 2)) / 4, (np.arange(3.0), np.arange(3.0))).range_queries([[1, 1, 0, 0]]),
     ValueError, "xmin <= xmax"),
    (lambda: Density(np.ones((2, 2)) / 4, (np.arange(3.0), np.arange(3.0))).hotspots(0), ValueError, ">= 1"),
])
def test_bad_inputs(call, exc, fragment):
    with pytest.raises(exc, match=fragment):
        call()
