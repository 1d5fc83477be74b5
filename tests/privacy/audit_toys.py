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


# -- planted leaks that a sampler on a public lattice can still have -------------------------

def low_bit(x) -> np.ndarray:
    """The lowest mantissa bit of each double (0 or 1)."""
    return (np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64) & np.uint64(1)).astype(np.int64)


class _OnLattice:
    """A leaky wrapper that releases only values of ``base``'s lattice (the lattice check passes)."""

    def __init__(self, base):
        self.base = base
        self.lattice = base.lattice
        self.input_domain = base.input_domain
        self.input_lattice = base.input_lattice


class ParityLeak(_OnLattice):
    """The released index's parity is the input's lowest mantissa bit (a low-bit channel)."""

    def sample(self, x, *, rng=None):
        x = np.asarray(x, dtype=np.float64)
        k = self.base.sample_index(x, rng=rng)
        k = (k & ~1) | low_bit(x)
        k = np.where(k >= self.lattice.count, k - 2, k)
        return self.lattice.points(k)


class TailLeak(_OnLattice):
    """Inputs in the last 5 % of the domain (its end excluded) are released at ``factor``·ε."""

    def __init__(self, base, factor=4.0):
        super().__init__(base)
        self.hot = type(base)(epsilon=factor * base.epsilon)

    def sample(self, x, *, rng=None):
        x = np.asarray(x, dtype=np.float64)
        low, high = self.input_domain.low, self.input_domain.high
        tail = (x >= low + 0.95 * (high - low)) & (x < high)
        return np.where(tail, self.hot.sample(x, rng=rng), self.base.sample(x, rng=rng))


class BandLeak(_OnLattice):
    """Inputs in the interior band ``[start, start + width)`` (fractions of the domain) are released at ε = 20."""

    def __init__(self, base, start, width, hot=20.0):
        super().__init__(base)
        self.hot = type(base)(epsilon=hot)
        low, high = self.input_domain.low, self.input_domain.high
        self.band = (low + start * (high - low), low + (start + width) * (high - low))

    def sample(self, x, *, rng=None):
        x = np.asarray(x, dtype=np.float64)
        inside = (x >= self.band[0]) & (x < self.band[1])
        return np.where(inside, self.hot.sample(x, rng=rng), self.base.sample(x, rng=rng))


class OddBitAtom(_OnLattice):
    """An input whose lowest mantissa bit is 1 is released at its nearest lattice point half the
    time: evenly spaced inputs (0, 0.25, …, 1) all have that bit 0 and never show it."""

    def sample(self, x, *, rng=None):
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=np.float64)
        y = self.base.sample(x, rng=rng)
        near = self.lattice.points(self.lattice.index(x))
        return np.where((low_bit(x) == 1) & (rng.random(x.shape) < 0.5), near, y)


def second_point_leak(region, epsilon):
    """TraCS-D whose *second* point is released at its reference (distance index 0) 90 % of the
    time when the true point lies in the left half of the region: P(E | x1) = 0.90 against
    P(E | x2) = 0.00 for E = "the second release equals the first"; first points are exact."""
    from tracs import TraCSD

    class SecondPointLeak(TraCSD):
        def _release(self, coords, offsets, rng, indices=True, out=None):
            out, idx = super()._release(coords, offsets, rng, indices=True, out=out)
            starts = np.asarray(offsets[:-1], dtype=np.int64) - offsets[0]
            lengths = np.diff(offsets)
            second = starts[lengths >= 2] + 1
            xmid = 0.5 * (self.region.bounds[0] + self.region.bounds[2])
            hit = second[(coords[second, 0] < xmid) & (idx[second, 0] % 10 != 0)]
            out[hit] = out[hit - 1]
            idx[hit, 1] = 0
            return out, (idx if indices else None)

        def release_into(self, coords, offsets, streams, out):
            """The chunk path of tracs.engine.perturb_many (tracs perturb): through the leak too."""
            out[...] = self._release(coords, offsets, self._keyed_source(streams, None, offsets), indices=False)[0]

    return SecondPointLeak(region, epsilon)


def _region():
    from tracs import Rectangle

    return Rectangle(0.0, 0.0, 2000.0, 1000.0)


def planted_leaks(samples_1d, samples_2d) -> list:
    """``(name, run)`` of every planted leak the audit must flag at 99 %; ``run(rng=0)`` -> AuditReport.

    Each is claimed ε = 1 and audited with its default candidate inputs; ``None`` draws: the
    audit's default.
    """
    import tracs
    import tracs.mechanisms as m

    oc = m.OptimalClassical(epsilon=1.0)
    one = {} if samples_1d is None else {"samples": samples_1d}
    two = {} if samples_2d is None else {"samples": samples_2d}
    return [
        ("input's low bit in the index parity", lambda rng=0: tracs.audit(ParityLeak(oc), 1.0, rng=rng, **one)),
        ("4ε on the last 5 % of the domain (its end excluded)",
         lambda rng=0: tracs.audit(TailLeak(oc), 1.0, rng=rng, **one)),
        ("odd low bit released at its lattice point half the time",
         lambda rng=0: tracs.audit(OddBitAtom(oc), 1.0, rng=rng, **one)),
        ("TraCS-D leaking at the second point only",
         lambda rng=0: tracs.audit_perturber(second_point_leak(_region(), 1.0), rng=rng, **two)),
        ("returns its input 2 % of the time",
         lambda rng=0: tracs.audit(ReturnsInput(oc, 0.02), 1.0, rng=rng, **one)),
        ("optimal classical at 1.5ε", lambda rng=0: tracs.audit(m.OptimalClassical(epsilon=1.5), 1.0, rng=rng, **one)),
        ("ε = 20 on an interior band of 2 % of the domain",
         lambda rng=0: tracs.audit(BandLeak(oc, 0.61, 0.02), 1.0, rng=rng, **one)),
    ]
