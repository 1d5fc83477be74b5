"""The density estimator of ``tracs-d-paper`` releases (TraCS-D with ``distance_along="true"``).

Its distance input is the region's gauge about the reference, so the sets ``A`` and ``L`` of
:mod:`tracs.estimate._runs` are the region scaled about the reference: the runs must hold
exactly the points the point test (:func:`tracs.estimate._coded.code_reports`) accepts, the
likelihood must be the mechanisms' ``f(φ'|φ)·g(u'|u)`` and a fit must find the data; plain
TraCS-D and the Strawman keep their results.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs import ConvexRegion, Rectangle
from tracs.estimate import _coded, _directional, _runs, density
from tracs.estimate.denoising import denoise
from tracs.estimate.grid_density import _axis_points, _epsilons, _subpoints
from tracs.mechanisms import OptimalCircular, OptimalClassical
from tracs.mechanisms.closed_forms import circular_half_widths, classical_half_widths
from tracs.methods import MethodContext, get
from tracs.perturbers import Strawman, TraCSD

RECT = Rectangle(0.0, 0.0, 2.0, 1.0)
HEXAGON = ConvexRegion([(0.2, 0.0), (1.8, 0.0), (2.0, 0.5), (1.8, 1.0), (0.2, 1.0), (0.0, 0.5)])
CORNERS = {id(RECT): [(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (0.0, 1.0)],
           id(HEXAGON): [(0.2, 0.0), (1.8, 0.0), (2.0, 0.5), (1.8, 1.0), (0.2, 1.0), (0.0, 0.5)]}
XS, YS = np.linspace(0.0, 2.0, 41), np.linspace(0.0, 1.0, 21)  # public points 0.05 apart


def _paper(region, epsilon, **options):
    return TraCSD(region, epsilon, distance_along="true", **options)


def _geometry(region, reports, refs, half_r, cos_half, half_dir):
    normals, hb = region.halfplanes
    return {"reports": np.ascontiguousarray(reports, dtype=np.float64),
            "refs": np.ascontiguousarray(refs, dtype=np.float64),
            "cos_half": np.asarray(cos_half, dtype=np.float64), "half_dir": np.asarray(half_dir, dtype=np.float64),
            "half_r": np.asarray(half_r, dtype=np.float64), "mode": _coded.MODE_ARC, "sectors": 1,
            "halfplanes": tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (normals[:, 0], normals[:, 1], hb)),
            "xs": XS, "ys": YS, "along_true": True}


def _indicators(geometry):
    """``W`` and ``R = A \\ L`` of every (report, row, column) from the runs; asserts ``L ⊆ A``."""
    n = len(geometry["reports"])
    block = _runs.RunBlock(geometry, 1, np.zeros(n, dtype=np.int64), np.ones((1, 4)), chunk=64, keep=True)
    runs = np.concatenate(block.runs).astype(np.int64)
    cols = np.arange(len(XS))

    def inside(k):
        return (runs[..., 2 * k, None] <= cols) & (cols < runs[..., 2 * k + 1, None])

    w, a, low = inside(0), inside(1), inside(2)
    assert not (low & ~a).any()
    return w, a & ~low


def _codes(geometry):
    """``W`` and ``R`` of every (report, row, column) from the point test, one point per cell."""
    gx, gy = np.meshgrid(XS, YS)  # [row, column]
    points = np.ascontiguousarray(np.stack([gx, gy], axis=-1).reshape(-1, 1, 2))
    n = len(geometry["reports"])
    codes = np.empty((n, len(points)), dtype=np.uint8)
    g = geometry
    _coded.code_reports(g["reports"], g["refs"], 0, n, points, *g["halfplanes"], g["mode"], g["cos_half"],
                        g["sectors"], g["half_r"], codes, True)
    codes = codes.reshape(n, len(YS), len(XS))
    return (codes & 1).astype(bool), (codes & 2).astype(bool)


def _special_refs(region):
    """References inside, on every edge and at every corner, and reports that tie with the lattice."""
    corners = np.asarray(CORNERS[id(region)], dtype=np.float64)
    mids = 0.5 * (corners + np.roll(corners, -1, axis=0))
    thirds = corners + (np.roll(corners, -1, axis=0) - corners) / 3.0
    return np.concatenate([corners, mids, thirds, [[1.0, 0.5], [0.55, 0.35], [1.5, 0.75]]])


@pytest.mark.parametrize("region", [RECT, HEXAGON], ids=["rectangle", "hexagon"])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_runs_hold_exactly_the_points_of_the_point_test(region, epsilon):
    # seed 0: 1,500 reports of a tracs-d-paper release (references: the anchor at a corner, and
    # releases clamped onto edges), and every (reference, report) pair of the special references
    pert = _paper(region, epsilon, anchor="corner")
    rng = np.random.default_rng(0)
    pts = region.clip(rng.uniform([0, 0], [2, 1], (1500, 2)))
    off = np.arange(0, 1501, 15)
    rep = pert.perturb_many(pts, off, rng=1)
    refs = _directional.references(rep, off, pert.anchor_point)
    special = _special_refs(region)
    pair_refs = np.repeat(special, len(special), axis=0)
    pair_reports = np.tile(special, (len(special), 1))
    reports = np.concatenate([rep, pair_reports])
    refs = np.concatenate([refs, pair_refs])
    keep = ~np.all(reports == refs, axis=1)
    reports, refs = reports[keep], refs[keep]
    eps_dir, eps_dist, _ = _directional._split(pert, np.array([epsilon]))
    half_dir = np.full(len(reports), float(circular_half_widths(eps_dir, 2 * np.pi)[0]))
    # half-widths of the mechanism and round ones that put the scaled regions' edges on the lattice
    for c in (float(classical_half_widths(eps_dist)[0]), 0.25, 0.125):
        g = _geometry(region, reports, refs, np.full(len(reports), c), np.cos(half_dir), half_dir)
        w_runs, r_runs = _indicators(g)
        w_codes, r_codes = _codes(g)
        assert np.array_equal(w_runs, w_codes)
        assert np.array_equal(r_runs, r_codes)
        assert 0 < r_codes.mean() < 1 and 0 < w_codes.mean() < 1


def test_runs_match_the_point_test_on_ties_of_rows_and_columns():
    # reference at the centre, u' and C_r with ρ = u' ± C_r in {0.5, 0.25}: the scaled rectangles'
    # edges fall on rows and columns of the public points, decided by the point test alone
    refs = np.array([[1.0, 0.5], [1.0, 0.5], [1.0, 0.5], [0.0, 0.0], [2.0, 1.0], [1.0, 0.0]])
    reports = np.array([[1.375, 0.5], [1.0, 0.875], [0.625, 0.6875], [0.75, 0.375], [1.25, 0.625], [1.0, 0.75]])
    half_dir = np.full(len(refs), 0.6)
    g = _geometry(RECT, reports, refs, np.full(len(refs), 0.125), np.cos(half_dir), half_dir)
    w_runs, r_runs = _indicators(g)
    w_codes, r_codes = _codes(g)
    assert np.array_equal(w_runs, w_codes) and np.array_equal(r_runs, r_codes)
    assert r_codes.any(axis=(1, 2)).all()


def _angle(v):
    """Directions in ``[0, 2π)``."""
    phi = np.mod(np.arctan2(v[..., 1], v[..., 0]), 2 * np.pi)
    return np.where(phi >= 2 * np.pi, 0.0, phi)


@pytest.mark.parametrize("region", [RECT, HEXAGON], ids=["rectangle", "hexagon"])
def test_likelihood_is_the_mechanisms_densities_up_to_a_factor_per_report(region):
    # seed 0, ε = 3: every (report, public point inside the region) of 200 reports with u' < 1:
    # the runs' c₀ + c_W·W + c_R·R + c_WR·W·R over f(φ' | φ)·g(u' | u), φ the point's direction from
    # the reference and u = |τ − o| / R(o, φ) its distance along it, is one number per report (1e-9)
    epsilon = 3.0
    pert = _paper(region, epsilon)
    rng = np.random.default_rng(0)
    pts = region.clip(rng.uniform([0, 0], [2, 1], (200, 2)))
    off = np.arange(0, 201, 10)
    rep = pert.perturb_many(pts, off, rng=1)
    refs = _directional.references(rep, off, pert.anchor_point)
    eps = _epsilons(pert, off, len(rep))
    block = _directional.directional_blocks(rep, off, pert, eps, XS, YS, 1, _subpoints(XS, YS, 1))[0]
    runs = np.concatenate(block.runs).astype(np.int64)
    cols = np.arange(len(XS))

    def inside(k):
        return ((runs[..., 2 * k, None] <= cols) & (cols < runs[..., 2 * k + 1, None])).astype(float)

    w, r = inside(0), inside(1) - inside(2)
    c0, cw, cr, cwr = block.coefs[0]
    lik = c0 + cw * w + cr * r + cwr * w * r  # (reports, rows, columns)
    eps_dir, eps_dist, _ = _directional._split(pert, np.array([epsilon]))
    f = OptimalCircular(epsilon=float(eps_dir[0]))
    g = OptimalClassical(epsilon=float(eps_dist[0]))
    gx, gy = np.meshgrid(XS, YS)
    grid = np.stack([gx, gy], axis=-1)
    mask = region.contains(grid.reshape(-1, 2)).reshape(gx.shape)
    rows = block.rows
    checked = 0
    for i, k in enumerate(rows):
        o, y = refs[k], rep[k]
        phi2 = _angle(y - o)
        u2 = np.hypot(*(y - o)) / region._exit_distance(o, np.cos(phi2), np.sin(phi2))
        if u2 >= 1.0 - 1e-9:
            continue
        v = grid - o
        dist = np.hypot(v[..., 0], v[..., 1])
        phi = _angle(v)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.where(dist > 0, dist / region._exit_distance(o, np.cos(phi), np.sin(phi)), 0.0)
        sel = mask & np.isfinite(u)
        brute = f.pdf(phi2, phi[sel]) * g.pdf(u2, np.clip(u[sel], 0.0, 1.0))
        ratio = lik[i][sel] / brute
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
        checked += 1
    assert checked > 150


def _city(region, n, seed):
    """``n`` points around two hotspots, (0.5, 0.3) and (1.4, 0.7), standard deviation 0.08."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.5, 0.3], [1.4, 0.7]])
    return region.clip(centres[rng.integers(0, 2, n)] + rng.normal(0, 0.08, (n, 2)))


def test_a_fit_of_a_paper_release_finds_the_hotspots():
    # seed 0 (points), seed 1 (release), ε = 4, 6,000 points in trajectories of 20 on 8×4 cells:
    # each hotspot's 2×2 cells hold ≥ 40 % of the mass (true 50 % and 48 %; fitted 49 % and 45 %),
    # the total variation distance to the true histogram is ≤ 0.10 (0.056; seeds 1 and 2: 0.072,
    # 0.068) and below that of the plain TraCS-D likelihood on the same reports (0.102)
    pts = _city(RECT, 6000, 0)
    off = np.arange(0, 6001, 20)
    pert = _paper(RECT, 4.0)
    rep = pert.perturb_many(pts, off, rng=1)
    est = density(rep, pert, offsets=off, grid=(8, 4))
    p = np.asarray(est.probabilities)
    truth = np.histogram2d(pts[:, 0], pts[:, 1], bins=[np.linspace(0, 2, 9), np.linspace(0, 1, 5)])[0] / len(pts)
    assert p[1:3, 0:2].sum() >= 0.40 and p[5:7, 2:4].sum() >= 0.40
    tv = 0.5 * np.abs(p - truth).sum()
    assert tv <= 0.10
    plain = density(rep, TraCSD(RECT, 4.0), offsets=off, grid=(8, 4))
    assert tv < 0.5 * np.abs(np.asarray(plain.probabilities) - truth).sum()


#: plain TraCS-D and Strawman results before the paper mode existed (the code of commit 1df9cca,
#: same cases): (Σ, Σ·sin(index)) of the density, the denoised points, per trajectory, onto POIs
BEFORE = {
    ("rect", "tracs-d"): ((1.0, 0.8321326261729685), (870.3520803603383, -9.16556979520557),
                          (870.3671099123728, -7.324996820767643), (956.7436028536956, -16.736338328167125)),
    ("rect", "strawman"): ((1.0, 0.4138793275212028), (849.7310167972556, 0.7283710996843236),
                           (864.9636080887626, 1.5174627920549209), (1200.0438645069426, -7.384425203950228)),
    ("hex", "tracs-d"): ((1.0, 0.787953240152204), (886.3111817615178, -11.49418442148582),
                         (888.8334976984574, -8.99878279012667), (1024.9641535812134, -19.5469990034407)),
    ("hex", "strawman"): ((1.0, 0.4885880690340422), (862.1706860567704, 0.11840246237797536),
                          (865.284939322376, 0.15098999209791963), (1206.7919956002884, 3.5502923478536275)),
}


@pytest.mark.parametrize("key", sorted(BEFORE), ids=lambda k: "-".join(k))
def test_plain_tracs_d_and_strawman_results_are_unchanged(key):
    region = {"rect": RECT, "hex": HEXAGON}[key[0]]
    pert = {"tracs-d": TraCSD, "strawman": Strawman}[key[1]](region, 2.0)
    rng = np.random.default_rng(0)
    centres = np.array([[0.5, 0.3], [1.4, 0.7]])
    pts = region.clip(centres[rng.integers(0, 2, 600)] + rng.normal(0, 0.08, (600, 2)))
    off = np.arange(0, 601, 20)
    rep = pert.perturb_many(pts, off, rng=1)
    est = density(rep, pert, offsets=off, grid=(12, 6), subpoints=2, iterations=20)
    pois = np.random.default_rng(5).uniform([0.3, 0.1], [1.7, 0.9], (40, 2))
    arrays = (est.probabilities, denoise(rep, pert, est, offsets=off),
              denoise(rep, pert, est, offsets=off, trajectory=True), denoise(rep, pert, est, offsets=off, pois=pois, rule="mode"))
    for a, before in zip(arrays, BEFORE[key]):
        a = np.asarray(a, dtype=np.float64).ravel()
        # 1e-9: the compiled kernels may sum in another order on another CPU (fastmath)
        np.testing.assert_allclose((a.sum(), (a * np.sin(np.arange(a.size))).sum()), before, rtol=1e-9)


def test_the_registry_entry_names_the_directional_estimator():
    method = get("tracs-d-paper")
    assert method.estimator == "directional"
    built = method.build(MethodContext(region=RECT), 2.0)
    assert built.distance_along == "true" and _directional.along_true(built)
    assert not _directional.along_true(TraCSD(RECT, 2.0)) and not _directional.along_true(Strawman(RECT, 2.0))


def test_denoise_and_estimate_commands_read_a_paper_release(tmp_path, tky_path, capsys):
    import pandas as pd

    from tracs.cli import main
    from tracs.estimate.sidecar import perturber_from_sidecar, read_sidecar, sidecar_path
    from tracs.io.release import read_release

    pd.read_csv(tky_path, nrows=300).to_csv(tmp_path / "in.csv", index=False)
    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tmp_path / "in.csv"), "-m", "tracs-d-paper", "-e", "4", "--seed", "1",
                 "--region", "tky", "-o", str(release), "-q"]) == 0
    assert main(["estimate", str(release), "--grid", "8", "-o", str(tmp_path / "est.csv"), "-q"]) == 0
    assert main(["denoise", str(release), "--grid", "8", "-o", str(tmp_path / "den.csv"), "-q"]) == 0
    assert main(["denoise", str(release), "--grid", "8", "--trajectory", "-o", str(tmp_path / "trj.csv"), "-q"]) == 0
    assert main(["synthesize", str(release), "-n", "5", "--grid", "8", "-o", str(tmp_path / "syn.csv"), "-q"]) == 0
    rebuilt = perturber_from_sidecar(read_sidecar(sidecar_path(release)))  # what the commands estimate with
    assert rebuilt.distance_along == "true" and _directional.along_true(rebuilt)
    raw = read_release(release)
    for name in ("den.csv", "trj.csv"):
        den = read_release(tmp_path / name)
        assert len(den) == len(raw) and not np.allclose(den["lat"], raw["lat"])
        assert den["uid"].astype(str).tolist() == raw["uid"].astype(str).tolist()
    est = pd.read_csv(tmp_path / "est.csv")
    assert len(est) > 0
    assert (tmp_path / "syn.csv").stat().st_size > 0
