"""Budget splits that minimise the expected squared error, from the closed forms.

Criterion (both perturbers): the expected squared Euclidean error
``E‖Y − τ‖²`` of one released point, averaged over a true point ``τ`` uniform in
the region (and, for TraCS-D, a reference ``o`` uniform in the region too: the
previous output of a long trajectory is spread over the region).  Squared error
is used because it separates into the closed-form one-dimensional moments; the
shares are found by a grid search refined by golden-section search on the share.

* TraCS-C: ``E‖Y − τ‖² = W²·A(ε_x) + H²·A(ε_y)`` with ``A(ε)`` the mean over
  ``x ~ U[0, 1]`` of ``E(Y − x)²`` of the optimal classical mechanism (a cubic on
  three pieces, integrated exactly by Gauss–Legendre).
* TraCS-D: for fixed ``(o, τ)`` and output direction ``φ'`` the error is
  ``|a|² + 2·E[u'|u]·(a·v) + E[u'²|u]·|v|²`` with ``a = o − τ``,
  ``v = R(o, φ')·e(φ')`` and ``u = min(1, |τ − o| / R(o, φ'))`` (the distance is
  measured along the released direction); the moments of ``u'`` are closed forms, and ``φ'`` is
  integrated with the exact mass of the circular mechanism on each of ``K``
  equal cells (the geometry taken at the cell's centre).  ``(o, τ)`` run over a fixed
  pseudo-random sample of ``M`` pairs, the same for every ε (so the objective is
  a deterministic function of the share).

With a per-trajectory budget the per-point ε differs between trajectory
lengths; the perturbers then take the shares from a fixed grid of nodes
``ε = 2^(k/8)``, interpolated in ``log ε`` between the two nodes around each ε, so
that a trajectory's share depends on its own length only (never on the other
lengths in the batch); a per-point budget gets the exact minimiser.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import InputTypeError
from ..mechanisms import OptimalClassical
from ..mechanisms.closed_forms import circular_half_width, classical_half_width
from ..region import Rectangle, Region

__all__ = ["optimal_direction_share", "optimal_x_share", "tracsc_mse", "tracsd_mse"]

_LOW, _HIGH = 1e-9, 1.0 - 1e-9  # both parts keep a positive budget
_PAIRS, _CELLS = 384, 720


def _minimise(f, grid=41, iterations=40) -> float:
    """Minimiser of ``f`` on ``[_LOW, _HIGH]``: grid search, then golden section."""
    xs = np.linspace(_LOW, _HIGH, grid)
    values = [f(x) for x in xs]
    i = int(np.argmin(values))
    a, b = xs[max(i - 1, 0)], xs[min(i + 1, grid - 1)]
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    best = min([(fc, c), (fd, d), (values[i], xs[i])])
    return float(best[1])


#: nodes of the fixed interpolation grid in ε, per octave (ε = 2^(k/8))
_NODES_PER_OCTAVE = 8


def _per_value(func, region, eps: np.ndarray, grid: bool = False) -> np.ndarray:
    """Apply a cached scalar ``func(region, ε)`` to every ε.

    ``grid=False``: exactly, at every distinct ε.  ``grid=True``: at the two nodes of
    the fixed grid ``ε = 2^(k/8)`` around each ε, linearly in ``log ε`` between them
    (exact at a node).  Either way each ε's share depends on that ε alone, never on
    the other values of the call (a batch of trajectories of many lengths gets, for
    each trajectory, the share its own length gives).
    """
    eps = np.asarray(eps, dtype=np.float64)
    values, inverse = np.unique(eps.ravel(), return_inverse=True)
    if not grid:
        shares = np.array([func(region, float(e)) for e in values])
        return shares[inverse].reshape(eps.shape)
    position = np.log2(values) * _NODES_PER_OCTAVE
    low = np.floor(position)
    nodes = np.unique(np.concatenate([low, low + 1.0]))
    at_node = dict(zip(nodes.tolist(), (func(region, float(2.0 ** (k / _NODES_PER_OCTAVE))) for k in nodes)))
    lo_share = np.array([at_node[k] for k in low.tolist()])
    hi_share = np.array([at_node[k + 1.0] for k in low.tolist()])
    weight = position - low
    shares = np.where(weight == 0.0, lo_share, lo_share + weight * (hi_share - lo_share))
    return shares[inverse].reshape(eps.shape)


# -- TraCS-C ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _mean_unit_mse(epsilon: float) -> float:
    """Mean over ``x ~ U[0, 1]`` of ``E(Y − x)²`` for the optimal classical mechanism."""
    mech = OptimalClassical(epsilon=epsilon)
    c = mech.half_width
    nodes, weights = np.polynomial.legendre.leggauss(3)  # exact for the cubic pieces
    total = 0.0
    for a, b in ((0.0, 2 * c), (2 * c, 1.0 - 2 * c), (1.0 - 2 * c, 1.0)):
        if b > a:
            x = 0.5 * (a + b) + 0.5 * (b - a) * nodes
            total += 0.5 * (b - a) * float(weights @ mech.expected_error(x, p=2))
    return total


def tracsc_mse(region: Rectangle, epsilon: float, x_share: float) -> float:
    """Expected ``‖Y − τ‖²`` of TraCS-C for ``τ`` uniform in the rectangle."""
    eps_x = x_share * epsilon
    return (region.width ** 2 * _mean_unit_mse(eps_x)
            + region.height ** 2 * _mean_unit_mse(epsilon - eps_x))


@functools.lru_cache(maxsize=4096)
def _x_share(region: Rectangle, epsilon: float) -> float:
    return _minimise(lambda s: tracsc_mse(region, epsilon, s))


def optimal_x_share(region: Rectangle, epsilon, grid: bool = False) -> np.ndarray:
    """``ε_x / ε`` minimising :func:`tracsc_mse`, for each ε (array in, array out).

    ``grid=True`` interpolates on the fixed grid of :func:`_per_value` (used for
    per-trajectory budgets, whose per-point ε take as many values as there are lengths).
    """
    if not isinstance(region, Rectangle):
        raise InputTypeError("TraCS-C's split needs a Rectangle")
    return _per_value(_x_share, region, epsilon, grid)


# -- TraCS-D ------------------------------------------------------------------------------
class _Geometry:
    """Fixed pairs ``(o, τ)`` and the output geometry on a grid of directions."""

    def __init__(self, region: Region):
        rng = np.random.default_rng(20260101)  # fixed: the objective must be deterministic
        xmin, ymin, xmax, ymax = region.bounds
        points = np.empty((0, 2))
        while len(points) < 2 * _PAIRS:
            cand = rng.uniform((xmin, ymin), (xmax, ymax), size=(4 * _PAIRS, 2))
            points = np.concatenate([points, cand[region.contains(cand)]])
        o, tau = points[:_PAIRS], points[_PAIRS:2 * _PAIRS]
        self.o, self.tau = o, tau
        self.phi, self.u = region.direction_distance(o, tau)
        self.a2 = np.sum((o - tau) ** 2, axis=1)
        edges = np.linspace(0.0, 2 * np.pi, _CELLS + 1)
        mid = 0.5 * (edges[:-1] + edges[1:])
        gap = np.abs(mid[None, :] - self.phi[:, None])
        self.delta = np.minimum(gap, 2 * np.pi - gap)  # circular distance φ ↔ cell centre
        c, s = np.cos(mid), np.sin(mid)
        reach = region._exit_distance(o[:, None, :], np.broadcast_to(c, (_PAIRS, _CELLS)),
                                      np.broadcast_to(s, (_PAIRS, _CELLS)))
        a = o - tau
        self.av = reach * (a[:, 0, None] * c + a[:, 1, None] * s)  # a·v
        self.v2 = reach ** 2  # |v|²
        dist = np.sqrt(self.a2)[:, None]
        self.u_cell = np.where(reach > 0, np.minimum(1.0, dist / np.where(reach > 0, reach, 1.0)), 0.0)


@functools.lru_cache(maxsize=32)
def _geometry(region: Region) -> _Geometry:
    return _Geometry(region)


def _classical_moments(u: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``E[u']`` and ``E[u'²]`` of the optimal classical mechanism on ``[0, 1]`` given ``u``."""
    c = classical_half_width(epsilon)
    p, q = math.exp(epsilon / 2.0), math.exp(-epsilon / 2.0)
    left = np.clip(u - c, 0.0, 1.0 - 2.0 * c)
    right = left + 2.0 * c
    m1 = q * left ** 2 / 2 + p * (right ** 2 - left ** 2) / 2 + q * (1.0 - right ** 2) / 2
    m2 = q * left ** 3 / 3 + p * (right ** 3 - left ** 3) / 3 + q * (1.0 - right ** 3) / 3
    return m1, m2


def tracsd_mse(region: Region, epsilon: float, direction_share: float) -> float:
    """Expected ``‖Y − τ‖²`` of one TraCS-D step, averaged over uniform ``(o, τ)``."""
    geo = _geometry(region)
    eps_dir = direction_share * epsilon
    # exact mass of each cell: q·(cell) + (p − q)·(overlap of the cell with the
    # high-density arc [φ − C, φ + C]); two arcs of half-widths C and h with centres
    # δ apart overlap by clip(C + h − δ, 0, 2·min(C, h)) when C + h <= π
    c, h = circular_half_width(eps_dir, 2 * math.pi), np.pi / _CELLS
    p, q = math.exp(eps_dir / 2.0) / (2 * np.pi), math.exp(-eps_dir / 2.0) / (2 * np.pi)
    mass = q * (2.0 * h) + (p - q) * np.clip(c + h - geo.delta, 0.0, 2.0 * min(c, h))
    m1, m2 = _classical_moments(geo.u_cell, epsilon - eps_dir)
    per_pair = (geo.a2 + 2.0 * np.sum(mass * m1 * geo.av, axis=1)
                + np.sum(mass * m2 * geo.v2, axis=1))
    return float(np.mean(per_pair))


@functools.lru_cache(maxsize=4096)
def _direction_share(region: Region, epsilon: float) -> float:
    return _minimise(lambda s: tracsd_mse(region, epsilon, s), grid=21, iterations=25)


def optimal_direction_share(region: Region, epsilon, grid: bool = False) -> np.ndarray:
    """``ε_φ / ε`` minimising :func:`tracsd_mse`, for each ε (array in, array out); ``grid``
    as in :func:`optimal_x_share`."""
    return _per_value(_direction_share, region, epsilon, grid)
