"""The Purkayastha (von-Mises-like Laplace) mechanism on the circle."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..random import resolve_streams
from . import _circular_geometric
from ._base import Mechanism
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._numeric import exp_tail_ratio
from ._params import CircleDomain

__all__ = ["Purkayastha"]


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Purkayastha(CircleDomain, Mechanism):
    """Purkayastha mechanism on the circle ``[0, period)``: density ∝ ``exp(−κ·d(y, x))``.

    ``d`` is the circular distance (at most ``L = period/2``) and
    ``κ = ε/L`` (``ε/π`` on ``[0, 2π)``), so the density ratio between any two
    inputs is at most ``e^{κL} = e^ε`` (ε-LDP over the whole circle).  The
    normalised density is ``κ e^{−κd}/(2(1 − e^{−ε}))``.

    Releases are the ``n`` cells of the circle's lattice: the snapped input's
    index plus a signed offset ``D`` with ``P(D = d) ∝ e^{−κh|d|}`` for circular
    distances ``|d| <= n/2`` (``h = period/n``), drawn by exact inversion of its
    truncated tails with a compiled sampler (:mod:`tracs.mechanisms._circular_geometric`,
    proof there), sign by a random bit.  ε up to 600.  Errors of the continuous
    law do not depend on ``x``:
    ``E d = L·(e^ε − 1 − ε)/(ε(e^ε − 1))`` and
    ``E d² = 2L²·(e^ε − 1 − ε − ε²/2)/(ε²(e^ε − 1))``, evaluated without
    cancellation or overflow.

    %(circle_parameters)s

    References
    ----------
    Weggenmann & Kerschbaum, "Differential privacy for directional data",
    CCS 2021; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    period: float = 2 * math.pi
    resolution: float | None = None

    #: cells of mass about ε·resolution: below this their cumulative thresholds are too coarse
    min_epsilon = 1e-3

    @property
    def concentration(self) -> float:
        """``κ = ε/L = 2ε/period``."""
        return 2.0 * self.epsilon / self.period

    # -- lattice: the discrete offset law (tracs.mechanisms._circular_geometric) ------------
    #: the antipode's cells have mass about ``e^{-ε}·ε/n``: a normal double up to here even at 2^40 cells
    max_epsilon = 600.0

    def _law(self):
        """``(n, H, ln r, ln c', shift)`` of the truncated magnitude on this lattice."""
        n = self._cells()
        return (n, *_circular_geometric.circle_constants(self.epsilon, n))

    def _row(self, k):
        return _circular_geometric.circle_row(k, *self._law())

    def lattice_cumulative(self, b, k):
        return _circular_geometric.circle_cumulative(b, k, *self._law())

    def _sample_indices(self, flat, rng):
        return self._compiled_indices(flat, resolve_streams(rng, None, 1))

    def _compiled_indices(self, flat, ks, fast=True):
        """Lattice indices of ``flat`` from the keyed streams ``ks`` (``fast=False``: the
        reference path that always compares the thresholds)."""
        n, top, log_r, log_c, shift = self._law()
        return _circular_geometric.snapped_circle(flat, self.input_lattice.spacing, n, top, log_r, log_c, shift,
                                                  ks.kind, ks.key, np.uint64(ks.streams[0]), fast)

    def _pdf(self, y, x):
        kappa = self.concentration
        d = self.output_domain.distance(y, x)
        density = kappa * np.exp(-kappa * d) / (-2.0 * math.expm1(-self.epsilon))
        return np.where((y >= 0.0) & (y < self.period), density, 0.0)

    def _signed_mass(self, y, x):
        """Mass of the arc from ``x`` to ``y`` along the shorter way, signed (in ``[-1/2, 1/2]``)."""
        half = self.period / 2.0
        signed = np.mod(y - x + half, self.period) - half  # offset in [−L, L)
        part = np.expm1(-self.concentration * np.abs(signed)) / (2.0 * math.expm1(-self.epsilon))
        return np.sign(signed) * part

    def _cdf(self, y, x):
        # mass of [0, y]: the difference of signed masses, plus 1 when the arc passes
        # the antipode of x (decided geometrically, not from the sign of a rounded
        # difference: near 0 and 1 the masses round to the same number)
        yc = np.clip(y, 0.0, self.period)
        antipode = np.mod(x + self.period / 2.0, self.period)
        mass = self._signed_mass(yc, x) - self._signed_mass(np.zeros_like(yc), x)
        mass = mass + np.where((antipode > 0.0) & (antipode <= yc), 1.0, 0.0)
        mass = np.where(yc >= self.period, 1.0, np.where(yc <= 0.0, 0.0, mass))
        return np.clip(mass, 0.0, 1.0)

    def _breakpoints(self, x):
        x = np.asarray(x, dtype=float)
        return np.mod(np.stack([x, x + self.period / 2.0], axis=-1), self.period)

    def _constant_error(self, p: int) -> float:
        half, eps = self.period / 2.0, self.epsilon
        if p == 1:
            return half * exp_tail_ratio(eps, 2) / eps
        return 2.0 * half**2 * exp_tail_ratio(eps, 3) / eps**2

    def _expected_error(self, x, p):
        return np.full(x.shape, self._constant_error(p))

    def _worst_case_error(self, p):
        return self._constant_error(p)
