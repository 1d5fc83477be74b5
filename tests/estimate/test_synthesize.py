"""The mobility model fitted from reports, and sampling synthetic trajectories from it."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tracs.estimate.expectation_maximisation import DenseBlock, PairBlock
from tracs.estimate.synthesize import MobilityModel, fit_mobility_model, synthesize
from tracs.perturbers import PlanarLaplace, TraCSC, TraCSD
from tracs.region import Rectangle

REGION = Rectangle(0.0, 0.0, 1000.0, 1000.0)
G = 4  # 250 m cells; cell ix·4 + iy

#: the true chain on the 4 × 4 grid: start in cells 0 (60 %) and 5 (40 %); from any cell
#: go east (70 %) or north (30 %), staying put at the edge; lengths 2..6 uniform
START = {0: 0.6, 5: 0.4}


def _true_chain(seed=0, trajectories=4000):
    """Trajectories of the chain, each point uniform in its cell; and the true start, transition
    and length distributions."""
    rng = np.random.default_rng(seed)
    c = G * G
    trans = np.zeros((c, c))
    for a in range(c):
        ix, iy = divmod(a, G)
        trans[a, min(ix + 1, G - 1) * G + iy] += 0.7
        trans[a, ix * G + min(iy + 1, G - 1)] += 0.3
    start = np.zeros(c)
    for cell, p in START.items():
        start[cell] = p
    lengths = rng.integers(2, 7, trajectories)
    off = np.r_[0, np.cumsum(lengths)]
    cells = np.empty(off[-1], dtype=np.int64)
    cells[off[:-1]] = rng.choice(c, trajectories, p=start)
    for step in range(1, lengths.max()):
        at = off[:-1][lengths > step] + step
        cells[at] = [rng.choice(c, p=trans[a]) for a in cells[at - 1]]
    xy = (np.column_stack(divmod(cells, G)) + rng.uniform(0.02, 0.98, (len(cells), 2))) * 250.0
    pmf = np.bincount(lengths, minlength=7) / trajectories
    return xy, off, start, trans, pmf


def test_noise_free_reports_recover_the_chain():
    """ε = 200 per point (the mechanism's band is far smaller than a cell), seed 0: the start
    within 0.01 of the true points' start frequencies (0.03 of the chain's), lengths exactly,
    and every row of the transition visited 50 times or more within 0.02 of the true points'
    transition frequencies (total variation)."""
    xy, off, start, _, pmf = _true_chain()
    perturber = TraCSC(REGION, epsilon=200.0)
    reports = perturber.perturb_many(xy, off, rng=1)
    model = fit_mobility_model(reports, perturber, offsets=off, grid=G)
    assert model.method == "em"
    cells = (xy[:, 0] // 250).astype(np.int64) * G + (xy[:, 1] // 250).astype(np.int64)
    first = np.bincount(cells[off[:-1]], minlength=G * G) / (len(off) - 1)
    assert np.abs(model.start - first).max() < 0.01
    assert np.abs(model.start - start).max() < 0.03
    assert np.abs(model.lengths[: len(pmf)] - pmf).max() < 1e-12  # lengths are exact
    pairs = np.setdiff1d(np.arange(off[-1]), off[1:] - 1)
    joint = np.bincount(cells[pairs] * G * G + cells[pairs + 1], minlength=G ** 4).reshape(G * G, G * G)
    visited = joint.sum(axis=1) >= 50
    empirical = joint[visited] / joint[visited].sum(axis=1, keepdims=True)
    assert 0.5 * np.abs(model.transition[visited] - empirical).sum(axis=1).max() < 0.02
    assert np.allclose(model.transition.sum(axis=1), 1.0)


def test_noisy_reports_stay_close_and_binned_on_request():
    """Seed 0 for the data, 2 for the reports.  TraCS-C at ε = 4: the deconvolved start within 0.1 of
    the chain's (total variation).  Planar Laplace at ε = 20 (scale 71 m against 250 m cells): within
    0.2, less than half the error of the first reports binned as they are (measured 0.113 against
    0.364).  TraCS-D (ε = 200) binned on request: start within 0.03."""
    xy, off, start, _, _ = _true_chain(trajectories=3000)
    perturber = TraCSC(REGION, epsilon=4.0)
    model = fit_mobility_model(perturber.perturb_many(xy, off, rng=2), perturber, offsets=off, grid=G)
    assert 0.5 * np.abs(model.start - start).sum() < 0.1
    laplace = PlanarLaplace(REGION, epsilon=20.0)
    reports = laplace.perturb_many(xy, off, rng=2)
    model = fit_mobility_model(reports, laplace, offsets=off, grid=G)
    assert model.method == "em" and np.allclose(model.transition.sum(axis=1), 1.0)
    cells = np.clip(reports[off[:-1]] // 250, 0, G - 1).astype(np.int64)
    raw = np.bincount(cells[:, 0] * G + cells[:, 1], minlength=G * G) / (len(off) - 1)
    error = 0.5 * np.abs(model.start - start).sum()
    assert error < 0.2 and error < 0.5 * 0.5 * np.abs(raw - start).sum()
    tracsd = TraCSD(REGION, epsilon=200.0)
    binned = fit_mobility_model(tracsd.perturb_many(xy, off, rng=2), tracsd, offsets=off, grid=G, binned=True)
    assert binned.method == "binned" and binned.iterations == 0
    assert 0.5 * np.abs(binned.start - start).sum() < 0.03
    assert np.allclose(binned.transition.sum(axis=1), 1.0) and binned.start.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [4.0, 8.0])
def test_tracs_d_exact_law_beats_the_binned_reports(eps):
    """TraCS-D, seed 0 for the data, 2 for the reports: the model fitted with the reports' exact law
    (each report's likelihood per cell given the previous report) against the one of the reports
    binned as they are, both against the chain (total variation).  The start within 0.08 (measured
    0.016 at ε = 4, 0.06 at ε = 8; binned 0.51 and 0.22); the joint law of consecutive cells
    (the true points' share of each cell times the model's transition row) within 0.5 and at most
    0.8 of the binned model's error (measured 0.375 against 0.698, 0.123 against 0.503)."""
    xy, off, start, _, _ = _true_chain(trajectories=3000)
    perturber = TraCSD(REGION, epsilon=eps)
    reports = perturber.perturb_many(xy, off, rng=2)
    exact = fit_mobility_model(reports, perturber, offsets=off, grid=G)
    binned = fit_mobility_model(reports, perturber, offsets=off, grid=G, binned=True)
    assert exact.method == "em" and exact.iterations > 0 and binned.method == "binned"
    cells = (xy[:, 0] // 250).astype(np.int64) * G + (xy[:, 1] // 250).astype(np.int64)
    pairs = np.setdiff1d(np.arange(off[-1]), off[1:] - 1)
    joint = np.bincount(cells[pairs] * G * G + cells[pairs + 1], minlength=G ** 4).reshape(G * G, G * G)
    joint = joint / len(pairs)
    share = np.bincount(cells[pairs], minlength=G * G) / len(pairs)
    errors = {m.method: (0.5 * np.abs(m.start - start).sum(),
                         0.5 * np.abs(share[:, None] * m.transition - joint).sum()) for m in (exact, binned)}
    assert errors["em"][0] < 0.08 and errors["em"][0] < 0.5 * errors["binned"][0]
    assert errors["em"][1] < 0.5 and errors["em"][1] <= 0.8 * errors["binned"][1]
    assert np.allclose(exact.transition.sum(axis=1), 1.0)


def test_pair_block_is_the_dense_block_of_the_pairs_of_cells():
    """``PairBlock(F, S)`` predicts and back-projects as a dense block whose row of pair ``i`` is
    ``F[i] ⊗ S[i]`` over the ``K²`` pairs of cells (1e-12, seed 6); with float32 rows, to 1e-5."""
    rng = np.random.default_rng(6)
    first, second = rng.random((50, 5)), rng.random((50, 5))
    theta = rng.dirichlet(np.ones(25)).reshape(5, 5)
    dense = DenseBlock(np.einsum("ia,ib->iab", first, second).reshape(50, 25))
    ll_pair, back_pair = PairBlock(first, second).predict_and_back(theta)
    ll_dense, back_dense = dense.predict_and_back(theta)
    assert ll_pair == pytest.approx(ll_dense, rel=1e-12)
    assert np.allclose(back_pair, back_dense, rtol=1e-12, atol=0)
    single = PairBlock(first.astype(np.float32), second.astype(np.float32))
    assert single.first.dtype == np.float32
    ll_single, back_single = single.predict_and_back(theta)
    assert ll_single == pytest.approx(ll_dense, rel=1e-5) and back_single.dtype == np.float64
    assert np.allclose(back_single, back_dense, rtol=1e-5, atol=0)


def _model(grid=16, max_length=40):
    rng = np.random.default_rng(3)
    c = grid * grid
    trans = rng.random((c, c)) ** 8
    lengths = np.r_[0.0, rng.random(max_length)]
    return MobilityModel(np.linspace(0, 1e4, grid + 1), np.linspace(0, 2e4, grid + 1), rng.dirichlet(np.ones(c)),
                         trans / trans.sum(axis=1, keepdims=True), lengths / lengths.sum(), "EPSG:32654")


def test_sampling_follows_the_model():
    """Start frequencies within 0.01 of the model, every point inside its cell (seed 4)."""
    model = _model(grid=4, max_length=5)
    syn = synthesize(model, 200_000, rng=4)
    first = np.bincount(syn.cells[syn.offsets[:-1]], minlength=16) / 200_000
    assert np.abs(first - model.start).max() < 0.01
    lengths = np.bincount(np.diff(syn.offsets), minlength=6) / 200_000
    assert np.abs(lengths - model.lengths).max() < 0.01
    ix, iy = syn.cells // 4, syn.cells % 4
    assert np.all((syn.coords[:, 0] >= model.xe[ix]) & (syn.coords[:, 0] <= model.xe[ix + 1]))
    assert np.all((syn.coords[:, 1] >= model.ye[iy]) & (syn.coords[:, 1] <= model.ye[iy + 1]))
    # the transition out of cell 0, from the pairs that start there
    pairs = np.setdiff1d(np.arange(len(syn.cells)), syn.offsets[1:] - 1)
    out = syn.cells[pairs + 1][syn.cells[pairs] == 0]
    assert np.abs(np.bincount(out, minlength=16) / len(out) - model.transition[0]).max() < 0.02


def test_sampling_is_fast_and_depends_on_rng_only():
    model = _model()
    start = time.perf_counter()
    syn = synthesize(model, 100_000, rng=5)
    assert time.perf_counter() - start < 10.0
    assert len(syn.offsets) == 100_001
    again = synthesize(model, 100_000, rng=5)
    assert np.array_equal(syn.coords, again.coords)
    lonlat = syn.lonlat()
    assert lonlat.shape == syn.coords.shape and np.all(np.abs(lonlat[:, 1]) < 90)


def test_bad_inputs():
    perturber = TraCSC(REGION, epsilon=2.0)
    pts, off = np.full((4, 2), 500.0), np.array([0, 2, 4])
    cases = [
        (lambda: fit_mobility_model(pts, perturber, offsets=off, grid=1), ValueError, "grid sizes must be >= 2"),
        (lambda: fit_mobility_model(pts, perturber, offsets=off, grid=30), ValueError, "grid sides up to 24"),
        (lambda: fit_mobility_model(pts, perturber, offsets=off, iterations=0), ValueError,
         "iterations must be an int >= 1"),
        (lambda: fit_mobility_model(pts, perturber, offsets=off, tol=0.0), ValueError, "tol must be a finite number"),
        (lambda: fit_mobility_model(pts, TraCSD(REGION, epsilon=2.0), offsets=off, grid=25), ValueError,
         "grid sides up to 24"),
        (lambda: fit_mobility_model(pts + 2000.0, perturber, offsets=off), ValueError, "reports"),
        (lambda: fit_mobility_model(pts, perturber, offsets=off, binned=1), TypeError, "binned must be a bool, got int"),
        (lambda: fit_mobility_model(pts, object(), offsets=off), TypeError, "registered perturber"),
        (lambda: synthesize("model", 3), TypeError, "model must be a MobilityModel"),
        (lambda: synthesize(_model(4, 3), 0), ValueError, "n must be >= 1"),
        (lambda: synthesize(_model(4, 3), 2.0), TypeError, "n must be an int"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_budget_per_trajectory_fits_one_kernel_per_length():
    """ε = 1,000 per trajectory (lengths 2..6: 167 to 500 per point, five kernels), seed 0: the start
    within 0.01 of the true points' start frequencies, lengths exact."""
    xy, off, _, _, pmf = _true_chain(trajectories=1500)
    perturber = TraCSC(REGION, epsilon_per_trajectory=1000.0)
    model = fit_mobility_model(perturber.perturb_many(xy, off, rng=3), perturber, offsets=off, grid=G)
    cells = (xy[:, 0] // 250).astype(np.int64) * G + (xy[:, 1] // 250).astype(np.int64)
    first = np.bincount(cells[off[:-1]], minlength=G * G) / (len(off) - 1)
    assert np.abs(model.start - first).max() < 0.01
    assert np.abs(model.lengths[: len(pmf)] - pmf).max() < 1e-12


def test_planar_laplace_noise_free_reports_recover_the_chain():
    """Planar Laplace at ε = 500 (its largest; scale 2.8 m against 250 m cells), seed 0: the start
    within 0.02 of the true points' start frequencies and the transition rows (visited 100 times or
    more) within 0.05 of the true points' frequencies (total variation)."""
    xy, off, _, _, _ = _true_chain(trajectories=1500)
    laplace = PlanarLaplace(REGION, epsilon=500.0)
    model = fit_mobility_model(laplace.perturb_many(xy, off, rng=4), laplace, offsets=off, grid=G)
    cells = (xy[:, 0] // 250).astype(np.int64) * G + (xy[:, 1] // 250).astype(np.int64)
    assert np.abs(model.start - np.bincount(cells[off[:-1]], minlength=G * G) / (len(off) - 1)).max() < 0.02
    pairs = np.setdiff1d(np.arange(off[-1]), off[1:] - 1)
    joint = np.bincount(cells[pairs] * G * G + cells[pairs + 1], minlength=G ** 4).reshape(G * G, G * G)
    visited = joint.sum(axis=1) >= 100
    empirical = joint[visited] / joint[visited].sum(axis=1, keepdims=True)
    assert 0.5 * np.abs(model.transition[visited] - empirical).sum(axis=1).max() < 0.05


@pytest.mark.parametrize("make", [lambda: TraCSC(REGION, epsilon=50.0), lambda: PlanarLaplace(REGION, epsilon=5.0),
                                  lambda: TraCSD(REGION, epsilon=5.0)],
                         ids=["tracs-c", "planar-laplace", "tracs-d"])
def test_trajectories_of_one_point(make):
    """No consecutive pair: the chain stays put, every synthetic trajectory has one point."""
    perturber = make()
    pts = np.array([[100.0, 100.0], [120.0, 130.0], [900.0, 900.0]])
    model = fit_mobility_model(perturber.perturb_many(pts, np.arange(4), rng=1), perturber, offsets=np.arange(4),
                               grid=G)
    assert model.lengths.tolist() == [0.0, 1.0]
    assert np.allclose(model.transition.sum(axis=1), 1.0)
    syn = synthesize(model, 50, rng=2)
    assert np.array_equal(syn.offsets, np.arange(51))


def test_alias_tables_are_exact():
    """Every row's alias law, ``(prob[k] + Σ_{s: alias[s] = k} (1 − prob[s])) / C``, is the row (1e-12),
    zeros included."""
    from tracs.estimate.synthesize import _alias_tables

    rng = np.random.default_rng(6)
    c = 40
    trans = rng.random((c, c)) ** 6 * (rng.random((c, c)) < 0.3)
    trans[:, 0] += 1e-3
    trans[3] = np.eye(c)[7]  # a row with one possible next cell
    trans /= trans.sum(axis=1, keepdims=True)
    prob, alias = (t.reshape(c, c) for t in _alias_tables(trans))
    law = prob.copy()
    for a in range(c):
        np.add.at(law[a], alias[a], 1.0 - prob[a])
    np.testing.assert_allclose(law / c, trans, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_compiled_sampler_draws_what_the_step_loop_drew(seed):
    """The compiled sampler gives the former NumPy step loop's output bit for bit (same generator), on
    random models (seeds 0..3: grids up to 6×6, lengths up to 1,200 points, some lengths of no mass)."""
    from benchmarks.reference.synthesis import synthesize as former

    rng = np.random.default_rng(seed)
    gx, gy = rng.integers(1, 7, 2)
    c = gx * gy
    trans = rng.random((c, c)) ** 4 * (rng.random((c, c)) < 0.5) + 1e-9
    lengths = rng.random(int(rng.integers(2, 1200))) * (rng.random(1) < 0.5)[0]
    lengths[0], lengths[-1] = 0.0, 1.0
    xe, ye = np.sort(rng.uniform(0, 9, gx + 1)), np.sort(rng.uniform(0, 9, gy + 1))
    model = MobilityModel(xe, ye, rng.dirichlet(np.ones(c)), trans / trans.sum(axis=1, keepdims=True),
                          lengths / lengths.sum())
    new, old = synthesize(model, 700, rng=seed), former(model, 700, rng=seed)
    for field in ("offsets", "cells", "coords"):
        assert np.array_equal(getattr(new, field), getattr(old, field))
