"""Runs per row against the point test cell by cell: the same likelihood, the same EM sums."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import ConvexRegion, Rectangle
from tracs.estimate import _coded, _directional
from tracs.estimate.grid_density import _axis_points, _epsilons, _subpoints
from tracs.perturbers import Strawman, TraCSD

RECT = Rectangle(0.0, 0.0, 2.0, 1.0)
HEXAGON = ConvexRegion([(0.2, 0.0), (1.8, 0.0), (2.0, 0.5), (1.8, 1.0), (0.2, 1.0), (0.0, 0.5)])


def _reference(block, reports, refs, eps, pert, points, theta):
    """``(Σ log d, Σ_r L_r / d_r)`` from one code per (report, cell) (:func:`_coded.code_reports`)."""
    g = block.geometry
    codes = np.empty((len(g["reports"]), len(points)), dtype=_coded.code_dtype(points.shape[1]))
    nx, ny, hb = g["halfplanes"]
    _coded.code_reports(g["reports"], g["refs"], 0, len(codes), points, nx, ny, hb, g["mode"],
                        g["cos_half"], g["sectors"], g["half_r"], codes)
    eps_dir, eps_dist, _ = _directional._split(pert, eps)
    table = _coded.code_table(eps_dir, eps_dist, points.shape[1])
    back = np.zeros(len(points))
    ll = _coded.coded_em_pass(codes, block.table_index, table, theta.ravel().copy(), back)
    return ll, back.reshape(theta.shape), codes


@pytest.mark.parametrize("region", [RECT, HEXAGON], ids=["rectangle", "hexagon"])
@pytest.mark.parametrize("make", [lambda r: TraCSD(r, 1.0), lambda r: TraCSD(r, 6.0, anchor="corner"),
                                  lambda r: Strawman(r, 2.0), lambda r: Strawman(r, 2.0, sectors=2)],
                         ids=["tracs-d-1", "tracs-d-6", "strawman", "strawman-2"])
@pytest.mark.parametrize("sub", [1, 3])
def test_runs_match_the_point_test(region, make, sub):
    # seeds 0 (points) and 1 (release); 600 reports, 9×7 cells: the log-likelihood and the
    # M-step sums of the runs equal the cell-by-cell codes' to 1e-12 (relative)
    rng = np.random.default_rng(0)
    pts = region.clip(rng.uniform([0, 0], [2, 1], (600, 2)))
    off = np.arange(0, 601, 30)
    pert = make(region)
    rep = pert.perturb_many(pts, off, rng=1)
    eps = _epsilons(pert, off, len(rep))
    xe, ye = np.linspace(0, 2, 10), np.linspace(0, 1, 8)
    points = _subpoints(xe, ye, sub)
    blocks = _directional.directional_blocks(rep, off, pert, eps, _axis_points(xe, sub),
                                             _axis_points(ye, sub), sub, points)
    block = blocks[0]
    theta = np.random.default_rng(2).random((9, 7))
    theta /= theta.sum()
    ll, back = block.predict_and_back(theta)
    refs = _directional.references(rep, off, pert.anchor_point)
    ll_ref, back_ref, codes = _reference(block, rep, refs, eps, pert, points, theta)
    assert len(np.unique(codes)) > 3  # the test exercises every kind of cell
    np.testing.assert_allclose(ll, ll_ref, rtol=1e-12)
    np.testing.assert_allclose(back, back_ref, rtol=1e-12)


def test_kept_and_recomputed_runs_agree_and_subsets_share_them():
    rng = np.random.default_rng(0)
    pts = rng.uniform([0, 0], [2, 1], (3000, 2))
    off = np.arange(0, 3001, 50)
    pert = TraCSD(RECT, 2.0)
    rep = pert.perturb_many(pts, off, rng=1)
    eps = _epsilons(pert, off, len(rep))
    xe, ye = np.linspace(0, 2, 13), np.linspace(0, 1, 9)
    args = (rep, off, pert, eps, _axis_points(xe, 1), _axis_points(ye, 1), 1, _subpoints(xe, ye, 1))
    kept = _directional.directional_blocks(*args)[0]
    streamed = _directional.directional_blocks(*args, memory=400_000)[0]
    assert kept.runs is not None and streamed.runs is None
    theta = np.full((12, 8), 1 / 96)
    for a, b in zip(kept.predict_and_back(theta), streamed.predict_and_back(theta)):
        np.testing.assert_allclose(a, b, rtol=1e-12)  # other chunks: other summation order
    keep = np.arange(len(rep)) % 3 == 0
    part = kept.subset(keep[kept.rows])
    assert part.runs is kept.runs and part.weight == keep[kept.rows].sum()


def test_budget_too_small_is_refused_naming_it():
    with pytest.raises(MemoryError, match=r"above the budget memory=0.001 GB"):
        _directional.plan_memory(10**6, 0, 64, 64, 4096, 1, 10**6)
