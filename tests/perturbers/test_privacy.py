"""Privacy: every released point is ε-LDP over the whole region.

Two kinds of checks:

* exact — the output law has a closed-form density (TraCS-D: ``f(φ'|φ)·g(u'|u)``
  in the coordinates ``(φ', u')``; TraCS-C: a product of two classical densities;
  Strawman: a k-RR mass times a density).  At adversarial input pairs (corners,
  edge points, the centre, the point equal to its reference) the ratio of the
  densities at every output of a grid must be at most ``e^ε`` and, for the
  optimal mechanisms, reach it.  The map ``(φ', u') → point`` is one-to-one away
  from the reference, with a Jacobian that does not depend on the input, so the
  ratio carries over to the output points; the only atom is the reference itself
  (``R(o, φ') = 0``), whose probability is checked exactly and on samples.
* sample-based — histograms of many outputs for two inputs: in every cell the
  frequency ratio must stay within ``e^ε`` up to Clopper–Pearson confidence
  bounds (family-wise false-alarm probability at most 1e-6 per test, Bonferroni).
  The same check is shown to reject a sampler with a small leaking shortcut.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tracs.mechanisms import KRR, OptimalCircular, OptimalClassical
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.region import ConvexRegion, Rectangle

UNIT = Rectangle(0, 0, 1, 1)
TALL = Rectangle(0, 0, 2, 10)
HEXAGON = ConvexRegion([(math.cos(a), math.sin(a)) for a in np.arange(6) * math.pi / 3])
EPSILONS = [1e-6, 0.1, 1.0, 5.0, 20.0, 50.0]
RTOL = 1e-9  # floating-point slack on ratios


def adversarial_points(region):
    """Vertices, edge midpoints, points just inside the edges, the centre."""
    v = region.vertices
    mid = 0.5 * (v + np.roll(v, -1, axis=0))
    c = np.array(region.center)
    return np.concatenate([v, mid, c + 0.999 * (mid - c), [c], c + 0.37 * (v[:1] - c)])


def grid_with_specials(low, high, n, specials):
    """A regular grid plus the given points and their neighbours (jumps of the density)."""
    specials = np.asarray(specials, dtype=float).ravel()
    near = np.concatenate([specials, np.nextafter(specials, -np.inf), np.nextafter(specials, np.inf)])
    g = np.concatenate([np.linspace(low, high, n, endpoint=False), near])
    return np.unique(g[(g >= low) & (g < high)])


def max_log_ratio(density):
    """``max over input pairs and outputs of log(density[i]/density[j])`` (rows: inputs)."""
    log = np.log(density)
    return float(np.max(np.max(log, axis=0) - np.min(log, axis=0)))


# -- TraCS-D ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("region", [UNIT, TALL, HEXAGON], ids=["unit", "tall", "hexagon"])
@pytest.mark.parametrize("eps", EPSILONS)
def test_tracsd_density_ratio_exact(region, eps):
    perturber = TraCSD(region, eps)
    eps_dir, eps_dist = perturber.split()
    circ, lin = OptimalCircular(epsilon=eps_dir), OptimalClassical(epsilon=eps_dist)
    pts = adversarial_points(region)
    worst = 0.0
    for o in pts:  # the public reference: a corner, an edge point, the centre, ...
        tau = np.concatenate([pts, [o]])  # ... and the input equal to the reference
        phi, u = region.direction_distance(np.broadcast_to(o, tau.shape), tau)
        phi_grid = grid_with_specials(0, 2 * np.pi, 720, np.mod(
            np.concatenate([phi - circ.half_width, phi + circ.half_width, phi]), 2 * np.pi))
        u_grid = np.append(grid_with_specials(0, 1, 400, np.concatenate(
            [u, np.clip(u - lin.half_width, 0, 1), np.clip(u + lin.half_width, 0, 1)])), 1.0)
        f = circ.pdf(phi_grid[None, :], phi[:, None])
        g = lin.pdf(u_grid[None, :], u[:, None])
        assert np.all(f > 0) and np.all(g > 0)
        # the joint density is a product, so its largest ratio is the product of the largest ones
        log_ratio = max_log_ratio(f) + max_log_ratio(g)
        assert log_ratio <= eps * (1 + RTOL) + 1e-12
        worst = max(worst, log_ratio)
        # the atom at the reference: R(o, φ') = 0 on the outward directions
        outward = region.exit_distance(np.broadcast_to(o, (len(phi_grid), 2)), phi_grid) == 0.0
        if outward.any():
            mass = np.diff(circ.cdf(np.append(phi_grid, 2 * np.pi)[None, :], phi[:, None]), axis=1)
            atom = np.sum(mass[:, outward], axis=1)
            assert np.max(atom) / np.min(atom) <= math.exp(eps_dir) * (1 + 1e-6)
    if eps >= 0.1:  # the bound is attained: the optimal mechanisms leave no slack
        assert worst == pytest.approx(eps, rel=1e-6)


@pytest.mark.parametrize("anchor, outward", [((0.0, 0.0), (0.5 * np.pi, 2 * np.pi)),
                                             ((0.5, 0.0), (np.pi, 2 * np.pi))])
def test_tracsd_atom_at_reference_on_samples(anchor, outward):
    """The output equals a boundary reference exactly with probability P(φ' outward | φ)."""
    eps = 1.0
    perturber = TraCSD(UNIT, eps, anchor=anchor)
    circ = OptimalCircular(epsilon=perturber.split()[0])
    n = 100_000
    for tau in ([0.5, 0.5], [1.0, 1.0], [0.0, 1.0], anchor):
        phi, _ = UNIT.direction_distance(np.array([anchor]), np.array([tau]))
        want = float(circ.cdf(outward[1], phi[0]) - circ.cdf(outward[0], phi[0]))
        out = perturber.perturb_many(np.tile(tau, (n, 1)), np.arange(n + 1), rng=31)
        hits = int(np.count_nonzero(np.all(out == anchor, axis=1)))
        # binomial: 5 standard deviations (two-sided false alarm < 1e-6)
        assert abs(hits - n * want) <= 5 * math.sqrt(n * want * (1 - want)) + 1


@pytest.mark.parametrize("tau", [(0.5, 0.5), (1.0, 0.0), (0.2, 0.9), (0.3, 0.4)])
def test_tracsd_samples_follow_the_declared_laws(tau):
    """Released direction indices follow OptimalCircular(ε_φ).lattice_pmf(φ) and every point is
    o + ũ·R(o, φ')·e(φ') of its indices (seeded; TV < 0.03 over 31 cells from 40,000 draws)."""
    o = np.array([0.3, 0.4])
    res = 1 / 31
    perturber = TraCSD(UNIT, 2.0, anchor=tuple(o), resolution=res)
    eps_dir, _ = perturber.split()
    n = 40_000
    pts = np.tile(tau, (n, 1))
    out = perturber.perturb_many(pts, np.arange(n + 1), rng=11)
    idx = perturber.lattice_indices(pts, np.arange(n + 1), rng=11)
    phi, _ = UNIT.direction_distance(o[None], np.array([tau]))
    pmf = OptimalCircular(epsilon=eps_dir, resolution=res).lattice_pmf(phi[0])
    counts = np.bincount(idx[:, 0], minlength=pmf.size)
    assert 0.5 * np.abs(counts / n - pmf).sum() < 0.03
    lat = perturber.lattice
    angle = lat.direction.points(idx[:, 0])
    reach = UNIT.exit_distance(np.broadcast_to(o, (n, 2)), angle)
    step = lat.distance.points(idx[:, 1]) * reach
    want = UNIT.clip(o + step[:, None] * np.column_stack([np.cos(angle), np.sin(angle)]))
    assert np.allclose(out, want, rtol=0, atol=1e-12)


# -- TraCS-C, Strawman, planar Laplace ----------------------------------------------------------------
@pytest.mark.parametrize("region", [UNIT, TALL], ids=["unit", "tall"])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("x_share", [0.5, "optimal"])
def test_tracsc_density_ratio_exact(region, eps, x_share):
    perturber = TraCSC(region, eps, x_share=x_share)
    eps_x, eps_y = perturber.split()
    assert eps_x + eps_y == pytest.approx(eps)
    pts = adversarial_points(region)
    xmin, ymin, xmax, ymax = region.bounds
    worst = 0.0
    for axis, (lo, hi, e) in enumerate(((xmin, xmax, eps_x), (ymin, ymax, eps_y))):
        mech = OptimalClassical(epsilon=e, low=lo, high=hi)
        x = pts[:, axis]
        c = mech.half_width * (hi - lo)
        grid = np.append(grid_with_specials(lo, hi, 400, np.clip(np.concatenate([x, x - c, x + c]), lo, hi)), hi)
        worst += max_log_ratio(mech.pdf(grid[None, :], x[:, None]))
    assert worst <= eps * (1 + RTOL) + 1e-12
    if eps >= 0.1:
        assert worst == pytest.approx(eps, rel=1e-6)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("sectors", [3, 6, 12])
def test_strawman_ratio_exact(eps, sectors):
    perturber = Strawman(UNIT, eps, sectors=sectors)
    eps_dir, eps_dist = perturber.split()
    krr, lin = KRR(epsilon=eps_dir, k=sectors), OptimalClassical(epsilon=eps_dist)
    pts = adversarial_points(UNIT)
    o = np.array(UNIT.center)
    phi, u = UNIT.direction_distance(np.broadcast_to(o, pts.shape), pts)
    true_sector = np.minimum((phi / (2 * np.pi / sectors)).astype(int), sectors - 1)
    # angle density inside a reported sector: P(sector)/width — the width cancels in ratios
    mass = krr.pmf(np.arange(sectors)[None, :], true_sector[:, None])
    u_grid = np.append(grid_with_specials(0, 1, 400, u), 1.0)
    log_ratio = max_log_ratio(mass) + max_log_ratio(lin.pdf(u_grid[None, :], u[:, None]))
    assert log_ratio <= eps * (1 + RTOL) + 1e-12


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 20.0])
def test_planar_laplace_calibration(eps):
    """Offset law ∝ exp(−a‖d‖) with a = ε/(diam + 2‖h‖): the ratio for two points of the
    region never exceeds e^ε; releases are grid centres; far from the edges the mean
    distance is 2/a (seeded, 20,000 draws, within 4 standard errors)."""
    region = TALL
    scale = region.diameter / eps
    tau = region.vertices
    z = np.random.default_rng(0).uniform(-30, 40, (20_000, 2))
    z = np.concatenate([z, [[-1e-9 * k, -5.0 * k] for k in range(1, 5)]])
    dist = np.hypot(*(z[None, :, :] - tau[:, None, :]).transpose(2, 0, 1))
    log_ratio = np.max(dist, axis=0) - np.min(dist, axis=0)
    assert np.max(log_ratio) / scale <= eps * (1 + RTOL)
    p = PlanarLaplace(region, eps)
    assert p.rate * eps <= eps / region.diameter
    n = 20_000
    tau0 = np.tile(region.center, (n, 1))
    out = p.perturb_many(tau0, np.arange(n + 1), rng=2)
    idx = p.lattice_indices(tau0, np.arange(n + 1), rng=2)
    lx, ly = p.lattice
    assert np.array_equal(out[:, 0], lx.points(idx[:, 0])) and np.array_equal(out[:, 1], ly.points(idx[:, 1]))
    # far from the edges: a big square around the noise (radius law Gamma(2, 1/a))
    big = Rectangle(0, 0, 1e4, 1e4)
    q = PlanarLaplace(big, 400.0, resolution=1 / 8192)
    centre = np.tile(big.center, (n, 1))
    r = np.hypot(*(q.perturb_many(centre, [0, n], rng=3) - centre).T)
    mean = 2.0 / (400.0 * q.rate)
    assert abs(r.mean() - mean) < 4 * math.sqrt(2.0) / (400.0 * q.rate) / math.sqrt(n) + 0.01 * mean


# -- sample-based histogram check ------------------------------------------------------------------------
def ratio_violations(a, b, n, eps, alpha=1e-6):
    """Cells where the counts ``a`` (of ``n``) and ``b`` (of ``n``) prove a ratio above ``e^ε``.

    Clopper–Pearson bounds at level ``alpha / (2·cells)`` each (Bonferroni over cells and
    both directions), so an ε-LDP sampler is flagged with probability at most ``alpha``.
    """
    level = alpha / (2 * len(a))
    lower = lambda k: np.where(k > 0, stats.beta.ppf(level, k, n - k + 1), 0.0)  # noqa: E731
    upper = lambda k: np.where(k < n, stats.beta.ppf(1 - level, k + 1, n - k), 1.0)  # noqa: E731
    bound = math.exp(eps)
    return np.flatnonzero((lower(a) > bound * upper(b)) | (lower(b) > bound * upper(a)))


def histogram(out, region, bins=8, atom=None):
    xmin, ymin, xmax, ymax = region.bounds
    h, _, _ = np.histogram2d(out[:, 0], out[:, 1], bins=bins, range=[[xmin, xmax], [ymin, ymax]])
    counts = h.ravel()
    if atom is not None:  # the exact point mass at the reference gets its own cell
        at = np.all(out == atom, axis=1)
        h2, _, _ = np.histogram2d(out[at, 0], out[at, 1], bins=bins, range=[[xmin, xmax], [ymin, ymax]])
        counts = np.append(counts - h2.ravel(), np.count_nonzero(at))
    return counts


class LeakyTraCSD(TraCSD):
    """A broken TraCS-D that returns the true point 2 % of the time (the shortcut to catch)."""

    def _run(self, coords, offsets, rng, **kwargs):
        out = super()._run(coords, offsets, rng, **kwargs)
        # rng: the batch's keyed streams; the leak draws from a generator seeded by the first one
        leak = np.random.default_rng(int(rng.stream[0])).random(len(coords)) < 0.02
        out[leak] = coords[leak]
        return out


def sample_pair(perturber, tau1, tau2, n, seed):
    outs = []
    for k, tau in enumerate((tau1, tau2)):
        outs.append(perturber.perturb_many(np.tile(tau, (n, 1)), np.arange(n + 1), rng=np.random.SeedSequence([seed, k])))
    return outs


CASES = [
    (TraCSD, {"anchor": (0.0, 0.0)}, (0.0, 0.0), (1.0, 1.0)),  # reference at a corner
    (TraCSD, {"anchor": (0.5, 0.0)}, (0.5, 0.0), (0.5, 1.0)),  # τ equal to a reference on an edge
    (TraCSD, {}, (1.0, 0.0), (0.0, 1.0)),  # centre reference, opposite corners
    (TraCSC, {}, (0.0, 0.0), (1.0, 1.0)),
    (Strawman, {"anchor": (0.0, 0.0)}, (1.0, 0.0), (0.0, 1.0)),
    (PlanarLaplace, {}, (0.0, 0.0), (1.0, 1.0)),
]


@pytest.mark.parametrize("cls, kwargs, tau1, tau2", CASES)
@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_histogram_ratio_bounded(cls, kwargs, tau1, tau2, eps):
    n = 100_000
    perturber = cls(UNIT, eps, **kwargs)
    atom = np.array(kwargs["anchor"]) if "anchor" in kwargs else None
    out1, out2 = sample_pair(perturber, tau1, tau2, n, seed=17)
    a, b = histogram(out1, UNIT, atom=atom), histogram(out2, UNIT, atom=atom)
    assert a.sum() == b.sum() == n
    assert len(ratio_violations(a, b, n, eps)) == 0


def test_histogram_check_catches_a_leak():
    """The same check, same sizes, rejects a sampler that leaks the true point 2 % of the time."""
    eps, n = 1.0, 100_000
    for cls, expect_flag in ((TraCSD, False), (LeakyTraCSD, True)):
        out1, out2 = sample_pair(cls(UNIT, eps), (1.0, 0.0), (0.0, 1.0), n, seed=17)
        flagged = ratio_violations(histogram(out1, UNIT, bins=16), histogram(out2, UNIT, bins=16), n, eps)
        assert (len(flagged) > 0) == expect_flag, cls.__name__
