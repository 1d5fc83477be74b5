"""Utility: the paper's continuous setting, and the optimal budget splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracs.metrics import average_error
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.perturbers._split import (_geometry, optimal_direction_share, optimal_x_share,
                                     tracsc_mse, tracsd_mse)
from tracs.region import Rectangle

EPSILONS = [2.0, 4.0, 6.0, 8.0, 10.0]
REGIONS = {"unit": Rectangle(0, 0, 1, 1), "tall": Rectangle(0, 0, 2, 10)}
METHODS = {
    "TraCS-D": lambda r, e: TraCSD(r, e, anchor="corner"),
    "TraCS-C": lambda r, e: TraCSC(r, e),
    "Strawman": lambda r, e: Strawman(r, e, anchor="corner"),
    "PlanarLaplace": lambda r, e: PlanarLaplace(r, e),
}
TRAJECTORIES, POINTS = 300, 100  # 30 000 points per cell: AE standard error ≈ 0.1 % of AE


@pytest.fixture(scope="module", params=list(REGIONS))
def ae_table(request):
    """AE for every method and ε, on 300 trajectories of 100 uniform points (paper setting)."""
    region = REGIONS[request.param]
    table = {}
    for name, make in METHODS.items():
        for eps in EPSILONS:
            rng = np.random.default_rng([int(eps), len(name)])
            pts = rng.uniform((0, 0), (region.width, region.height), (TRAJECTORIES * POINTS, 2))
            offsets = np.arange(0, TRAJECTORIES * POINTS + 1, POINTS)
            out = make(region, eps).perturb_many(pts, offsets, rng=rng)
            table[name, eps] = average_error(pts, out, offsets)
    return request.param, table


def test_error_falls_with_epsilon(ae_table):
    _, table = ae_table
    for name in METHODS:
        errors = [table[name, eps] for eps in EPSILONS]
        # margins in a 2000-trajectory, 10-repetition run are >= 25 standard errors
        assert all(a > b for a, b in zip(errors, errors[1:])), (name, errors)


def test_tracs_beats_the_strawman_at_high_epsilon(ae_table):
    _, table = ae_table
    for eps in (6.0, 8.0, 10.0):
        assert table["TraCS-C", eps] < table["Strawman", eps]
        assert table["TraCS-D", eps] < table["Strawman", eps]
        assert table["TraCS-D", eps] < table["PlanarLaplace", eps]
        assert table["TraCS-C", eps] < table["PlanarLaplace", eps]


def test_strawman_flattens(ae_table):
    """k-RR sectors with a uniform angle keep a floor: its gain from ε = 8 to 10 is small
    next to TraCS-C's (paper, section 4.1)."""
    _, table = ae_table
    straw = table["Strawman", 8.0] / table["Strawman", 10.0]
    tracsc = table["TraCS-C", 8.0] / table["TraCS-C", 10.0]
    assert straw < 1.1 < tracsc


# -- budget split -------------------------------------------------------------------------------------
def test_tracsc_split_formula_and_optimum():
    square, tall = REGIONS["unit"], REGIONS["tall"]
    for eps in (0.5, 2.0, 8.0):
        assert float(optimal_x_share(square, eps)) == pytest.approx(0.5, abs=1e-6)  # symmetry
        share = float(optimal_x_share(tall, eps))
        assert share < 0.5  # the long side gets more budget
        assert tracsc_mse(tall, eps, share) <= tracsc_mse(tall, eps, 0.5)
    # Monte Carlo check of the closed form (4e5 points: relative SE ≈ 0.3 %)
    rng = np.random.default_rng(4)
    pts = rng.uniform((0, 0), (2, 10), (400_000, 2))
    out = TraCSC(tall, 4.0, x_share=0.3).perturb(pts, rng=rng)
    assert np.mean(np.sum((out - pts) ** 2, axis=1)) == pytest.approx(tracsc_mse(tall, 4.0, 0.3), rel=0.015)


def test_tracsd_split_formula_matches_simulation():
    """tracsd_mse is E‖Y − τ‖² over its fixed sample of (o, τ) pairs: compare with the
    compiled kernel run on those same pairs, each o as the public anchor of one-point
    trajectories (the sample itself is 5 % off the uniform average on this region, so
    fresh uniform pairs would test the sample, not the formula)."""
    region = REGIONS["tall"]
    geo = _geometry(region)
    draws = 520  # 199,680 draws in all
    for eps, share in ((2.0, 0.5), (8.0, 0.7)):
        errors = []
        for t, (o, tau) in enumerate(zip(geo.o, geo.tau)):
            perturber = TraCSD(region, eps, direction_share=share, anchor=tuple(o))
            out = perturber.perturb_many(np.tile(tau, (draws, 1)), np.arange(draws + 1), rng=t)
            errors.append(np.sum((out - tau) ** 2, axis=1))
        simulated = np.mean(np.concatenate(errors))
        # Monte Carlo error about 0.5 % (observed 0.1–0.2 %), plus the formula's direction cells
        assert simulated == pytest.approx(tracsd_mse(region, eps, share), rel=0.02)


def test_optimal_direction_share_minimises_and_helps():
    for region in REGIONS.values():
        for eps in (2.0, 10.0):
            share = float(optimal_direction_share(region, eps))
            best = tracsd_mse(region, eps, share)
            default = tracsd_mse(region, eps, math.pi / (math.pi + 1))
            assert best <= default
            for other in (share - 0.05, share + 0.05):
                if 0 < other < 1:
                    assert best <= tracsd_mse(region, eps, other) + 1e-12
    # the optimal split reduces the simulated AE at ε = 10 on the unit square
    region = REGIONS["unit"]
    rng = np.random.default_rng(6)
    pts = rng.uniform(0, 1, (20_000, 2))
    offsets = np.arange(0, 20_001, 100)
    ae = {s: average_error(pts, TraCSD(region, 10.0, direction_share=s).perturb_many(pts, offsets, rng=7),
                           offsets) for s in (math.pi / (math.pi + 1), "optimal")}
    assert ae["optimal"] < 0.95 * ae[math.pi / (math.pi + 1)]


@pytest.mark.slow  # an optimal share per distinct length
def test_optimal_shares_with_per_trajectory_budget():
    """Many distinct per-point ε (one per length): interpolated shares stay close to exact ones."""
    region = REGIONS["tall"]
    eps = 20.0 / np.arange(1, 40)
    shares = optimal_x_share(region, eps)
    exact = np.array([float(optimal_x_share(region, e)) for e in eps[::7]])
    assert np.allclose(shares[::7], exact, atol=0.02)
    p = TraCSD(region, epsilon_per_trajectory=20.0, direction_share="optimal")
    pts = np.random.default_rng(0).uniform((0, 0), (2, 10), (60, 2))
    out = p.perturb_many(pts, [0, 1, 10, 60], rng=0)
    assert region.contains(out).all()
