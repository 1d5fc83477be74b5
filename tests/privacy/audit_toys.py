"""Toy samplers with known privacy, for the audit's own tests."""

from __future__ import annotations

import numpy as np


class LatticeExponential:
    """ε-LDP on [0, 1]: output ``j·h`` (``h = 1/(K-1)``) with probability ∝ exp(-ε|jh - x|/2).

    Numerators differ by at most ``e^{ε/2}`` between inputs and so do the
    normalisers, hence the ratio is at most ``e^ε``.  Declares its lattice.
    """

    def __init__(self, epsilon, k=33, leak_low_bits=False):
        self.epsilon, self.k, self.leak = float(epsilon), int(k), leak_low_bits
        self.lattice = (0.0, 1.0 / (k - 1), k)

    def sample(self, x, *, rng=None):
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        grid = np.arange(self.k) * self.lattice[1]
        w = np.exp(-self.epsilon * np.abs(grid[None, :] - x.reshape(-1, 1)) / 2)
        cdf = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
        j = np.minimum((rng.random(x.size)[:, None] > cdf).sum(axis=1), self.k - 1)
        y = grid[j]
        if self.leak:  # the input's low bits ride along: y + tiny multiple of x
            y = y + x.ravel() * 1e-12
        return y.reshape(x.shape)


class ReturnsInput:
    """Correct ε-LDP sampler, except that it returns the input itself with probability ``leak``."""

    def __init__(self, base, leak=0.02):
        self.base, self.leak = base, leak
        self.lattice = getattr(base, "lattice", None)
        self.input_domain = getattr(base, "input_domain", None)

    def sample(self, x, *, rng=None):
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        y = self.base.sample(x, rng=rng)
        return np.where(rng.random(x.shape) < self.leak, x, y)


class GridPerturber:
    """ε-LDP on the unit square: each axis through :class:`LatticeExponential` at ε/2.

    A callable ``(points (n, 2), rng) -> (n, 2)`` with a per-axis lattice; with
    ``leak`` it returns the input point itself with that probability.
    """

    def __init__(self, epsilon, leak=0.0):
        self.axis = LatticeExponential(epsilon / 2.0)
        self.leak = leak
        self.lattice = (self.axis.lattice, self.axis.lattice)

    def __call__(self, points, rng):
        rng = np.random.default_rng(rng)
        points = np.asarray(points, dtype=float)
        out = np.column_stack([self.axis.sample(points[:, 0], rng=rng),
                               self.axis.sample(points[:, 1], rng=rng)])
        keep = rng.random(len(points)) < self.leak
        out[keep] = points[keep]
        return out


def scalar_only(sampler):
    """A callable ``(x, rng) -> y`` that refuses arrays (calls ``sampler`` on one value)."""
    def call(x, rng):
        if np.ndim(x) != 0:
            raise TypeError("scalar input only")
        return float(sampler.sample(np.array([x]), rng=rng)[0])
    return call
