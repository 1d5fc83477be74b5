"""Denoising over the POIs: the posterior of every report's true POI (tracs.estimate.poi_posterior)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import Density
from tracs.estimate.denoising import denoise
from tracs.estimate.grid_density import axis_mechanisms
from tracs.estimate.poi_posterior import _AxesRows, _DirectionalRows, prior_at_pois
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)


def _uniform(grid=(4, 3)):
    return Density(np.full(grid, 1.0 / (grid[0] * grid[1])),
                   (np.linspace(0, 2, grid[0] + 1), np.linspace(0, 1, grid[1] + 1)))


def _uniform_over(pois, grid=(4, 3)):
    """A density whose mass per cell is its share of the POIs: the uniform prior over the POIs."""
    edges = (np.linspace(0, 2, grid[0] + 1), np.linspace(0, 1, grid[1] + 1))
    counts = np.histogram2d(pois[:, 0], pois[:, 1], bins=edges)[0]
    return Density(counts / counts.sum(), edges)


def _pois(n=40, seed=21):
    return np.random.default_rng(seed).uniform([0.01, 0.01], [1.99, 0.99], (n, 2))


def _release(pert, pois, seed, n=60, length=10):
    rng = np.random.default_rng(seed)
    truth = pois[rng.integers(0, len(pois), n)]
    off = np.arange(0, n + 1, length)
    return truth, off, pert.perturb_many(truth, off, rng=seed + 1)


def test_axes_likelihood_is_the_lattice_law_at_each_poi():
    # TraCS-C on a coarse lattice (resolution 1/64, so lattice_pmf enumerates the rows): the likelihood
    # of every (report, POI) is the product of the two axes' exact realised pmfs at the POI, to 1e-12;
    # with a uniform prior the posterior is that likelihood normalised.  Seeds 21 (POIs), 22/23 (release).
    pert = TraCSC(REGION, 3.0, resolution=1 / 64)
    pois = _pois()
    _, off, reports = _release(pert, pois, 22)
    rows = _AxesRows(reports, off, pert, pois).rows(np.arange(len(reports)))
    mx, my = axis_mechanisms(pert, 3.0)
    px = np.array([mx.lattice_pmf(x) for x in pois[:, 0]])  # (POIs, lattice)
    py = np.array([my.lattice_pmf(y) for y in pois[:, 1]])
    jx, jy = mx.lattice.index(reports[:, 0]), my.lattice.index(reports[:, 1])
    brute = px[:, jx].T * py[:, jy].T
    np.testing.assert_allclose(rows, brute, rtol=1e-12, atol=0)
    posterior = brute / brute.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(prior_at_pois(_uniform_over(pois), pois), 1 / len(pois), rtol=1e-12)
    modes = denoise(reports, pert, _uniform_over(pois), offsets=off, pois=pois, rule="mode")
    chosen = np.array([np.flatnonzero(np.all(pois == m, axis=1))[0] for m in modes])
    # the mode: a POI of the largest posterior (ties, equal to rounding, may go either way)
    np.testing.assert_allclose(posterior[np.arange(len(modes)), chosen], posterior.max(axis=1), rtol=1e-12)
    means = posterior @ pois
    nearest = np.argmin(((means[:, None, :] - pois[None]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(denoise(reports, pert, _uniform_over(pois), offsets=off, pois=pois, rule="mean"),
                                  pois[nearest])


@pytest.mark.parametrize("make", [lambda r: TraCSD(r, 2.0), lambda r: Strawman(r, 2.0)], ids=["tracs-d", "strawman"])
def test_directional_posterior_at_cell_centres_equals_the_grid_posterior(make):
    # POIs at the centres of a 4×3 grid, one per cell: the POI posterior's mean equals the grid
    # posterior mean of denoise(subcells=1) (the same point test at the same points), to 1e-12,
    # for a skewed prior (seed 25).  Seeds 23/24: the release.
    pert = make(REGION)
    xe, ye = np.linspace(0, 2, 5), np.linspace(0, 1, 4)
    centres = np.stack(np.meshgrid((xe[:-1] + xe[1:]) / 2, (ye[:-1] + ye[1:]) / 2, indexing="ij"), -1).reshape(-1, 2)
    p = np.random.default_rng(25).random((4, 3))
    prior = Density(p / p.sum(), (xe, ye))
    _, off, reports = _release(pert, centres, 23, n=120, length=30)
    rows = _DirectionalRows(reports, off, pert, centres).rows(np.arange(len(reports)))
    weights = rows * prior_at_pois(prior, centres)
    means = weights @ centres / weights.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(means, denoise(reports, pert, prior, offsets=off, subcells=1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [lambda r: TraCSC(r, 1.0), lambda r: TraCSD(r, 1.0), lambda r: Strawman(r, 1.0),
                                  lambda r: PlanarLaplace(r, 1.0)], ids=["tracs-c", "tracs-d", "strawman", "laplace"])
@pytest.mark.parametrize("rule", ["mode", "mean"])
def test_a_point_mass_on_one_poi_returns_it(make, rule):
    # the prior's whole mass in the one cell holding POI 0 (seed 21 POIs, seed 26 release)
    pert = make(REGION)
    pois = np.vstack([[[1.25, 0.5]], _pois()])
    pois = pois[(np.abs(pois[:, 0] - 1.25) >= 0.25) | (np.abs(pois[:, 1] - 0.5) >= 1 / 6) | (np.arange(len(pois)) == 0)]
    mass = np.zeros((4, 3))
    mass[2, 1] = 1.0
    prior = Density(mass, (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    _, off, reports = _release(pert, pois, 26)
    out = denoise(reports, pert, prior, offsets=off, pois=pois, rule=rule)
    np.testing.assert_array_equal(out, np.tile(pois[0], (len(reports), 1)))


def test_laplace_posterior_at_pois_is_the_density_at_each_poi():
    # planar Laplace at ε = 3 (seed 45 release): interior reports' likelihood at every POI is the
    # Laplace density of the report around it, so the uniform-prior mode is the POI nearest the report
    pert = PlanarLaplace(REGION, 3.0)
    pois = _pois()
    _, off, reports = _release(pert, pois, 45)
    inside = np.all((reports > [0, 0]) & (reports < [2, 1]), axis=1)
    modes = denoise(reports, pert, _uniform_over(pois), offsets=off, pois=pois, rule="mode")
    nearest = pois[np.argmin(np.linalg.norm(reports[:, None] - pois[None], axis=2), axis=1)]
    np.testing.assert_array_equal(modes[inside], nearest[inside])


def test_prior_at_pois_shares_each_cell_among_its_pois():
    pois = np.array([[0.1, 0.1], [0.2, 0.2], [1.9, 0.9]])  # two POIs in cell (0, 0), one in (3, 2)
    p = np.arange(1, 13, dtype=float).reshape(4, 3)
    prior = Density(p / p.sum(), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    expected = np.array([1 / 2, 1 / 2, 12]) / 13
    np.testing.assert_allclose(prior_at_pois(prior, pois), expected, rtol=1e-12)


@pytest.mark.parametrize("make, trajectory", [(lambda r: TraCSC(r, 2.0), False), (lambda r: TraCSD(r, 2.0), False),
                                              (lambda r: TraCSC(r, 2.0), True), (lambda r: TraCSD(r, 2.0), True)],
                         ids=["tracs-c", "tracs-d", "tracs-c-trajectory", "tracs-d-trajectory"])
def test_a_users_points_depend_on_the_others_only_through_the_model(make, trajectory):
    # the fitted model (the prior; with trajectory, its scale and jump too) held fixed: redrawing the
    # reports of trajectories 1..5 leaves trajectory 0's denoised POIs unchanged, bit for bit
    pert = make(REGION)
    pois = _pois()
    _, off, reports = _release(pert, pois, 27)
    _, _, others = _release(pert, pois, 29)
    changed = np.vstack([reports[:off[1]], others[off[1]:]])
    p = np.random.default_rng(28).random((4, 3))
    prior = Density(p / p.sum(), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    options = dict(offsets=off, pois=pois, trajectory=trajectory, **({"scale": 0.5, "jump": 0.2} if trajectory else {}))
    first, second = denoise(reports, pert, prior, **options), denoise(changed, pert, prior, **options)
    np.testing.assert_array_equal(first[:off[1]], second[:off[1]])
    assert not np.array_equal(first[off[1]:], second[off[1]:])


def test_the_trajectory_prior_is_the_predictive_of_the_other_reports_by_enumeration():
    # TraCS-C at ε = 2, one trajectory of 3 reports (seed 31), 4×3 cells, a skewed prior (seed 32),
    # scale 0.6, jump 0.2: every point's prior over the cells is Σ over the paths of the other points'
    # cells of θ(x1)·Π P(x_{s+1} | x_s)·Π_{s≠t} L_s(x_s), enumerated; a POI gets its cell's share.
    from tracs.estimate import smoothing as sm
    from tracs.estimate.poi_posterior import _cells_of, _smoothed_priors

    pert = TraCSC(REGION, 2.0)
    off = np.array([0, 3])
    reports = pert.perturb_many(np.random.default_rng(31).uniform([0, 0], [2, 1], (3, 2)), off, rng=31)
    p = np.random.default_rng(32).random((4, 3)) + 0.1
    prior = Density(p / p.sum(), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    pois = _pois()
    [(_, chunk_rows)] = _smoothed_priors(reports, off, pert, prior, "axes", pois, 0.6, 0.2)
    rows = chunk_rows()
    grid, theta, tables = sm._tables(reports, off, pert, prior, "axes", 1)
    lik = tables.chunk(0, 3)[0].reshape(3, -1)
    model = sm._Model(theta, grid, 0.6, 0.2)
    cx, cy = (0.5 * (e[:-1] + e[1:]) for e in grid)
    k = np.kron(sm._kernel(cx, 0.6), sm._kernel(cy, 0.6))  # (cells, cells)
    th = theta.ravel()
    step = (1 - 0.2) * k * th[None, :] * model.inv_z.ravel()[:, None] + 0.2 * th[None, :]
    cells = th.size
    a, b, c = np.meshgrid(np.arange(cells), np.arange(cells), np.arange(cells), indexing="ij")
    paths = th[a] * step[a, b] * step[b, c]
    own = (lik[0][a], lik[1][b], lik[2][c])
    cell, count = _cells_of(grid, pois)
    for t, x in enumerate((a, b, c)):
        weight = paths * np.prod([own[s] for s in range(3) if s != t], axis=0)
        predictive = np.bincount(x.ravel(), weight.ravel(), minlength=cells)
        expected = predictive[cell] / count
        np.testing.assert_allclose(rows[t], expected / expected.sum(), rtol=1e-10)


@pytest.mark.parametrize("options, exc, fragment", [
    ({"rule": "median"}, ValueError, "rule must be one of 'mode', 'mean', got 'median'"),
    ({"iterations": -1}, ValueError, "iterations must be >= 0, got -1"),
    ({"iterations": 1.5}, TypeError, "iterations must be an int, got float"),
    ({"pois": np.empty((0, 2))}, ValueError, "pois is empty"),
    ({"pois": np.array([[0.5, 0.5], [2.5, 0.5]])}, ValueError, "pois"),
    ({"pois": np.array([0.5, 0.5])}, ValueError, "pois must have shape (n, 2), got (2,)"),
    ({"scale": 1.0}, ValueError, "scale and jump are parameters of trajectory=True"),
    ({"trajectory": True, "iterations": 2}, ValueError, "iterations refine the shared prior"),
    ({"trajectory": True, "offsets": None}, ValueError, "trajectory=True needs offsets"),
    ({"perturber": PlanarLaplace(REGION, 2.0), "trajectory": True}, ValueError,
     "trajectory=True supports TraCS-C, TraCS-D and Strawman reports"),
    ({"perturber": TraCSD(REGION, 2.0), "offsets": None}, ValueError, "TraCS-D and the Strawman need offsets"),
    ({"revisit": 0}, ValueError, "revisit must be a finite number > 0 or None, got 0"),
    ({"revisit": -1.0}, ValueError, "revisit must be a finite number > 0 or None, got -1.0"),
    ({"revisit": float("inf")}, ValueError, "revisit must be a finite number > 0 or None, got inf"),
    ({"revisit": float("nan")}, ValueError, "revisit must be a finite number > 0 or None, got nan"),
    ({"revisit": True}, TypeError, "revisit must be a number or None, got bool"),
    ({"revisit": "4"}, TypeError, "revisit must be a number or None, got str"),
])
def test_bad_arguments(options, exc, fragment):
    args = {"perturber": TraCSC(REGION, 2.0), "offsets": np.array([0, 1]), "pois": _pois(), **options}
    with pytest.raises(exc, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        denoise(np.array([[0.5, 0.5]]), args.pop("perturber"), _uniform(), **args)
