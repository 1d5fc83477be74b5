"""Per-trajectory smoothing: forward–backward posterior means (tracs.estimate.smoothing)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import Density, density
from tracs.estimate.denoising import denoise, smooth_trajectories
from tracs.estimate.transition import bin_index
from tracs.perturbers import TraCSC, TraCSD

from _axis_tables import axis_tables

REGION = Rectangle(0.0, 0.0, 2.0, 1.0)


def _walks(seed, trajectories=30, longest=30, step=0.05):
    """Random walks inside the region: (points, offsets)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, longest, trajectories)
    off = np.concatenate([[0], np.cumsum(lengths)])
    steps = rng.normal(0.0, step, (off[-1], 2))
    starts = rng.uniform([0.3, 0.3], [1.7, 0.7], (trajectories, 2))
    walks = [np.clip(s + np.cumsum(steps[a:b], axis=0), [0, 0], [2, 1]) for s, a, b in zip(starts, off[:-1], off[1:])]
    return np.concatenate(walks), off


def _ae(points, truth):
    return float(np.linalg.norm(points - truth, axis=1).mean())


@pytest.mark.parametrize("make", [TraCSC, TraCSD])
@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
def test_smoothing_a_random_walk_lowers_the_error(make, epsilon):
    # seeds 0 (walks) and 1 (reports), 30 walks, 8×8 prior: the smoothed points are at least
    # 10 % closer to the truth than both the reports and the per-point posterior means
    # (measured: 17 to 68 % closer)
    truth, off = _walks(0)
    pert = make(REGION, epsilon)
    reports = pert.perturb_many(truth, off, rng=1)
    est = density(reports, pert, offsets=off, grid=8)
    per_point = _ae(denoise(reports, pert, est, offsets=off), truth)
    smoothed = smooth_trajectories(reports, pert, est, offsets=off)
    assert _ae(smoothed.points, truth) <= 0.9 * min(per_point, _ae(reports, truth))
    assert smoothed.log_likelihood[(smoothed.scale, smoothed.jump)] == max(smoothed.log_likelihood.values())


@pytest.mark.parametrize("make", [TraCSC, TraCSD])
@pytest.mark.parametrize("scale, jump", [(0.1, 1.0), (np.inf, 0.3), (np.inf, 0.0)])
def test_steps_independent_of_the_last_point_give_the_per_point_posterior(make, scale, jump):
    # a transition that draws every point from the density afresh (jump 1 or no distance decay)
    truth, off = _walks(2, trajectories=10)
    pert = make(REGION, 2.0)
    reports = pert.perturb_many(truth, off, rng=3)
    est = density(reports, pert, offsets=off, grid=6)
    np.testing.assert_allclose(denoise(reports, pert, est, offsets=off, trajectory=True, scale=scale, jump=jump),
                               denoise(reports, pert, est, offsets=off), rtol=0, atol=1e-12)


def _enumerate_paths(reports, pert, prior, scale, jump):
    """Posterior means by summing over every path of cells (cell centres, dense transition)."""
    (xe, ye), theta = prior.grid, prior.probabilities
    ox, oy, ax, ay = axis_tables(pert, prior)
    cx, cy = 0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:])
    centres = np.array([(x, y) for x in cx for y in cy])
    th = theta.ravel()
    d2 = ((centres[:, None] - centres[None]) ** 2).sum(axis=2)
    k = np.exp(-0.5 * d2 / scale ** 2) * th[None]
    move = (1 - jump) * k / k.sum(axis=1, keepdims=True) + jump * th[None]
    i, j = bin_index(reports[:, 0], ox), bin_index(reports[:, 1], oy)
    emit = np.array([[ax[a, c // len(cy)] * ay[b, c % len(cy)] for c in range(len(th))] for a, b in zip(i, j)])
    num, z = np.zeros((len(reports), 2)), 0.0
    for path in itertools.product(range(len(th)), repeat=len(reports)):
        w = th[path[0]] * emit[0, path[0]]
        for t in range(1, len(path)):
            w *= move[path[t - 1], path[t]] * emit[t, path[t]]
        num += w * centres[list(path)]
        z += w
    return num / z


@pytest.mark.parametrize("scale, jump", [(0.3, 0.1), (1.0, 0.0), (0.05, 0.5)])
def test_forward_backward_equals_enumeration_of_paths(scale, jump):
    # 3×3 cells, one trajectory of 3 TraCS-C reports (seed 4), skewed prior: all 27 paths
    xe, ye = np.linspace(0, 2, 4), np.linspace(0, 1, 4)
    p = np.arange(1, 10, dtype=float).reshape(3, 3)
    prior = Density(p / p.sum(), (xe, ye))
    pert = TraCSC(REGION, 1.5)
    off = np.array([0, 3])
    reports = pert.perturb_many(np.array([[0.2, 0.2], [0.5, 0.3], [0.9, 0.4]]), off, rng=4)
    np.testing.assert_allclose(denoise(reports, pert, prior, offsets=off, subcells=1, trajectory=True,
                                       scale=scale, jump=jump),
                               _enumerate_paths(reports, pert, prior, scale, jump), rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [TraCSC, TraCSD])
def test_a_trajectory_depends_on_the_others_only_through_the_model(make):
    # with the prior and the transition fixed, changing the other users' reports (same
    # lengths) leaves every point of the first trajectory as it was
    truth, off = _walks(5, trajectories=8)
    pert = make(REGION, 2.0)
    reports = pert.perturb_many(truth, off, rng=6)
    est = density(reports, pert, offsets=off, grid=6)
    other = reports.copy()
    other[off[1]:] = pert.perturb_many(truth[off[1]:] [::-1].copy(), off[1:] - off[1], rng=7)
    a = denoise(reports, pert, est, offsets=off, trajectory=True, scale=0.2, jump=0.1)
    b = denoise(other, pert, est, offsets=off, trajectory=True, scale=0.2, jump=0.1)
    np.testing.assert_allclose(a[:off[1]], b[:off[1]], rtol=0, atol=1e-12)
    assert not np.allclose(a[off[1]:], b[off[1]:])


def test_single_points_and_empty_trajectories():
    pert = TraCSC(REGION, 2.0)
    reports = pert.perturb_many(np.array([[0.5, 0.5], [1.5, 0.5]]), np.array([0, 1, 2]), rng=8)
    est = Density(np.full((4, 3), 1 / 12), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))
    off = np.array([0, 0, 1, 1, 2])
    np.testing.assert_allclose(denoise(reports, pert, est, offsets=off, trajectory=True),
                               denoise(reports, pert, est, offsets=off), rtol=0, atol=1e-12)
    empty = smooth_trajectories(np.empty((0, 2)), pert, est, offsets=np.array([0, 0]))
    assert empty.points.shape == (0, 2)


PRIOR = Density(np.full((4, 3), 1 / 12), (np.linspace(0, 2, 5), np.linspace(0, 1, 4)))


@pytest.mark.parametrize("kwargs, exc, fragment", [
    ({"trajectory": True}, ValueError, "trajectory=True needs offsets"),
    ({"offsets": [0, 1], "trajectory": True, "scale": 0.0}, ValueError, "scale must be > 0 (inf allowed), got 0.0"),
    ({"offsets": [0, 1], "trajectory": True, "scale": float("nan")}, ValueError, "scale must be > 0"),
    ({"offsets": [0, 1], "trajectory": True, "jump": 1.5}, ValueError, "jump must be in [0, 1], got 1.5"),
    ({"offsets": [0, 1], "scale": 1.0}, ValueError, "scale and jump are parameters of trajectory=True"),
    ({"offsets": [0, 1], "jump": 0.5}, ValueError, "scale and jump are parameters of trajectory=True"),
])
def test_bad_smoothing_arguments(kwargs, exc, fragment):
    with pytest.raises(exc) as info:
        denoise(np.array([[0.5, 0.5]]), TraCSC(REGION, 2.0), PRIOR, **kwargs)
    assert fragment in str(info.value)


def test_denoise_command_smooths_every_trajectory(tmp_path, tky_path, capsys):
    from tracs.cli import main
    from tracs.io.release import read_release

    release = tmp_path / "rel.csv"
    assert main(["perturb", str(tky_path), "-m", "tracs-d", "-e", "4", "--seed", "1", "--region", "tky",
                 "-o", str(release), "-q"]) == 0
    out, per_point = tmp_path / "smoothed.parquet", tmp_path / "den.csv"
    assert main(["denoise", str(release), "--grid", "8", "--trajectory", "-o", str(out), "-q"]) == 0
    assert "points smoothed per trajectory (8×8 prior" in capsys.readouterr().out
    assert main(["denoise", str(release), "--grid", "8", "-o", str(per_point), "-q"]) == 0
    raw, smoothed, den = read_release(release), read_release(out), read_release(per_point)
    assert list(smoothed.columns) == list(raw.columns) + ["denoised"] and len(smoothed) == len(raw)
    assert (smoothed["denoised"] == "smoothed").all()
    assert smoothed["uid"].astype(str).tolist() == raw["uid"].astype(str).tolist()
    assert not np.allclose(smoothed["lat"], den["lat"])


@pytest.mark.parametrize("seed", range(6))
def test_compiled_recursions_equal_the_numpy_steps(seed):
    # random grids (up to 40 × 40: several blocks of a banded kernel), priors, likelihood tables and
    # trajectory lengths (seeds 0..5): the compiled forward–backward and log-likelihoods (banded
    # kernels) equal the former batched NumPy steps (dense kernels) to 1e-9
    from benchmarks.reference import smoothing as former
    from tracs.estimate import smoothing

    rng = np.random.default_rng(seed)
    gx, gy = rng.integers(2, 41, 2)
    grid = (np.sort(rng.uniform(0, 2, gx + 1)), np.sort(rng.uniform(0, 1, gy + 1)))
    theta = rng.random((gx, gy)) ** 3
    theta /= theta.sum()
    lengths = rng.integers(1, 12, rng.integers(1, 6))
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    n = int(lengths.sum())
    lik = rng.uniform(0.05, 1.0, (n, gx, gy))
    mx, my = rng.uniform(0, 2, (n, gx, 1)), rng.uniform(0, 1, (n, gx, gy))
    for scale, jump in [(0.2, 0.1), (1.5, 0.0), (np.inf, 0.4), (0.05, 1.0), (0.01, 0.0), (0.03, 0.2)]:
        new = smoothing._Model(theta, grid, scale, jump)
        old = former._Model(theta, grid, scale, jump)
        np.testing.assert_allclose(smoothing._smooth_chunk(lik, mx, my, starts, lengths, new),
                                   former._smooth_chunk(lik, mx, my, starts, lengths, old), rtol=0, atol=1e-9)
    models = [(s, w) for s in (0.02, 0.1, 0.7, np.inf) for w in (0.0, 0.2, 1.0)]
    np.testing.assert_allclose(
        smoothing._log_likelihoods(lik, starts, lengths, theta, [smoothing._Model(theta, grid, *m) for m in models]),
        former._log_likelihoods(lik, starts, lengths, theta, [former._Model(theta, grid, *m) for m in models]),
        rtol=1e-12, atol=1e-9)
