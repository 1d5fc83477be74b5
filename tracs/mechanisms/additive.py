"""Additive-noise mechanisms with real-line output: Laplace and Staircase.

Both add symmetric noise calibrated to the sensitivity ``Δ = high − low`` of the
input interval, so that for two inputs at most ``Δ`` apart the output densities
differ by at most ``e^ε`` (ε-LDP).  Outputs are unbounded; wrap them in
:class:`~tracs.mechanisms.Truncated` to clip onto the input interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_epsilon
from ..random import resolve_streams
from . import geometric, _staircase
from ._base import Mechanism
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._domain import RealLine
from ._numeric import over_expm1
from ._params import IntervalInput, check_parameter
from .lattice import _check_enumerable

__all__ = ["Laplace", "Staircase", "staircase_square_gamma"]


class _AdditiveNoise(IntervalInput, Mechanism):
    """Common part: input ``[low, high]``, output the real line, ``Δ = high − low``."""

    low: float
    high: float

    @property
    def sensitivity(self) -> float:
        """``Δ = high − low``: the largest distance between two inputs."""
        return self.high - self.low

    #: every cell of the window keeps a normal-double probability up to here
    max_epsilon = 600.0
    #: the window grows like 1/ε; below this its cells are too fine (``docs/privacy.md``)
    min_epsilon = 1e-3

    @property
    def output_domain(self) -> RealLine:
        return RealLine()

    @property
    def window_margin(self) -> float:
        """How far the public output window reaches past the input interval on each side.

        ``Δ·min(40/ε, 2^16)``: beyond it the noise has mass below ``e^{-40}``; the
        two end cells absorb the tails (post-processing), so the window costs no
        privacy.
        """
        return self.sensitivity * min(40.0 / self.epsilon, 2.0 ** 16)

    def _output_window(self):
        w = self.window_margin
        return self.low - w, self.high + w

    def _margin_cells(self) -> int:
        """Cells of the public window beyond each end of the input interval."""
        return max(1, math.ceil(self.window_margin / (self.sensitivity / self._cells())))

    def _grid(self):
        # aligned with the input lattice: inputs n cells apart, the window L cells past each end
        n, L = self._cells(), self._margin_cells()
        h = self.sensitivity / n
        A = self.low - L * h
        count = n + 1 + 2 * L
        return A, A + (count - 1) * h, A - h / 2.0, h, count

    # noise law, in terms of z = y − x
    def _pdf(self, y, x):
        return self._noise_pdf(y - x)

    def _cdf(self, y, x):
        z = y - x
        tail = self._noise_tail(np.abs(z))
        return np.where(z < 0, tail, 1.0 - tail)

    def _sf(self, y, x):
        z = y - x
        tail = self._noise_tail(np.abs(z))
        return np.where(z < 0, 1.0 - tail, tail)

    def _worst_case_error(self, p):
        return float(self._expected_error(np.array([self.low]), p)[0])

    def _sample_indices(self, flat, rng):
        return self._compiled_indices(flat, resolve_streams(rng, None, 1))

    def _compiled_indices(self, flat, ks, fast=True):
        """Lattice indices of ``flat`` from the keyed streams ``ks`` (``fast=False``: the
        reference path that always compares the thresholds)."""
        raise NotImplementedError


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Laplace(_AdditiveNoise):
    """Laplace mechanism ``x + Lap(Δ/ε)`` from ``[low, high]`` (default ``[0, 1]``) to the real line.

    Density ``ε/(2Δ)·exp(−ε|y − x|/Δ)``; ratio at most ``e^ε`` for inputs in the
    interval.  ``E|Y − x| = Δ/ε``, ``E(Y − x)² = 2(Δ/ε)²`` for every input.

    %(interval_parameters)s

    Notes
    -----
    Releases are cells of the public window ``[low − w, high + w]``
    (:attr:`window_margin`), on a lattice aligned with the input lattice: the
    snapped input's index plus a discrete Laplace offset ``P(D = d) ∝ e^{−ε|d|/n}``
    (``n`` cells across the input interval), clamped into the window, drawn by exact
    inversion (:mod:`tracs.mechanisms.geometric`, proof there): no raw
    floating-point Laplace draw, so no low-bit leak (Mironov, CCS 2012).  ε up to 600.

    References
    ----------
    Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in private
    data analysis", TCC 2006; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    resolution: float | None = None

    @property
    def scale(self) -> float:
        """``Δ/ε``."""
        return self.sensitivity / self.epsilon

    def _noise_pdf(self, z):
        return np.exp(-np.abs(z) / self.scale) / (2.0 * self.scale)

    def _noise_tail(self, t):
        """``P(Z > t)`` for ``t >= 0``."""
        return 0.5 * np.exp(-t / self.scale)

    def _expected_error(self, x, p):
        return np.full(x.shape, self.scale if p == 1 else 2.0 * self.scale**2)

    # -- lattice: the discrete Laplace offset (tracs.mechanisms.geometric) ---------------------
    def _row(self, k):
        count = self._grid()[4]
        _check_enumerable(count)
        return geometric.laplace_row(k, self._margin_cells(), count,
                                      *geometric.laplace_constants(self.epsilon, self._cells()))

    def lattice_cumulative(self, b, k):
        return geometric.laplace_cumulative(b, k, self._margin_cells(), self._grid()[4],
                                             *geometric.laplace_constants(self.epsilon, self._cells()))

    def _compiled_indices(self, flat, ks, fast=True):
        n = self._cells()
        log_r, log_c = geometric.laplace_constants(self.epsilon, n)
        inp = self.input_lattice
        return geometric.snapped_laplace(flat, inp.origin, inp.spacing, n, self._margin_cells(), self._grid()[4],
                                          log_r, log_c, ks.kind, ks.key, np.uint64(ks.streams[0]), fast)


def staircase_square_gamma(epsilon: float) -> float:
    """The step fraction ``γ`` of :class:`Staircase` that minimises ``E[Z²]``.

    ``γ = −b/(1 − b) + (b − 2b² + 2b⁴ − b⁵)^{1/3} / (2^{1/3}(1 − b)²)`` with
    ``b = e^{−ε}`` (Geng & Viswanath 2016, the staircase mechanism for the cost
    ``x²``); the default ``γ* = 1/(1 + e^{ε/2})`` minimises ``E|Z|`` instead.  The
    tests check it against a numerical minimisation of ``expected_error(x, 2)``.
    """
    b = math.exp(-check_epsilon(epsilon))
    one_minus_b = -math.expm1(-epsilon)
    return -b / one_minus_b + (b - 2 * b**2 + 2 * b**4 - b**5) ** (1.0 / 3.0) / (2.0 ** (1.0 / 3.0) * one_minus_b**2)


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class Staircase(_AdditiveNoise):
    """Staircase mechanism from ``[low, high]`` (default ``[0, 1]``) to the real line.

    Noise density ``a(γ)·e^{−kε}`` on ``|z| ∈ [kΔ, (k + γ)Δ)`` and
    ``a(γ)·e^{−(k+1)ε}`` on ``[(k + γ)Δ, (k + 1)Δ)``, ``k = 0, 1, …``, with
    ``a(γ) = (1 − e^{−ε})/(2Δ(γ + e^{−ε}(1 − γ)))``.  The default
    ``γ* = 1/(1 + e^{ε/2})`` minimises ``E|Z|``, which is then ``Δ·s/(e^ε − 1)``.
    Shifting the input by at most ``Δ`` moves any output by at most one step
    level: ratio at most ``e^ε`` (ε-LDP).

    Releases are cells of a public window (as :class:`Laplace`), on a lattice
    aligned with the input lattice (``n`` cells across the input interval): the
    snapped input's index plus a discrete staircase offset — steps of ``n`` cells,
    an inner part of ``round(γn)`` cells at level ``e^{−jε}`` and an outer part at
    ``e^{−(j+1)ε}`` — clamped into the window, drawn by exact inversion with a
    compiled sampler (:mod:`tracs.mechanisms._staircase`, proof there).

    %(interval_parameters)s
    gamma : float, optional
        Step fraction ``γ ∈ (0, 1)``; default ``γ*`` (optimal for ``E|Z|``).

    References
    ----------
    Geng & Viswanath, "The optimal noise-adding mechanism in differential
    privacy", IEEE Trans. Inf. Theory 2016; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    gamma: float | None = None
    resolution: float | None = None

    #: the window reaches the second step's outer part, whose cells have mass about
    #: ``e^{-2ε}/n``: a normal double up to here even at 2^40 cells
    max_epsilon = 300.0

    def _validate_parameters(self):
        super()._validate_parameters()
        check_parameter(self, "gamma", lambda v: 0.0 < v < 1.0, "lie in (0, 1)", optional=True)

    @property
    def step_fraction(self) -> float:
        """``γ``: the given one, or ``γ* = 1/(1 + e^{ε/2})``."""
        if self.gamma is not None:
            return self.gamma
        return 1.0 / (1.0 + math.exp(self.epsilon / 2.0))

    def _height(self) -> float:
        """``a(γ)``, the density on the first step."""
        g, r = self.step_fraction, math.exp(-self.epsilon)
        return -math.expm1(-self.epsilon) / (2.0 * self.sensitivity * (g + r * (1.0 - g)))

    def _inner_probability(self) -> float:
        """``P(B = 0) = γ/(γ + (1 − γ)e^{−ε})``."""
        g = self.step_fraction
        return g / (g + (1.0 - g) * math.exp(-self.epsilon))

    def _outer_probability(self) -> float:
        """``P(B = 1) = (1 − γ)e^{−ε}/(γ + (1 − γ)e^{−ε})``, without forming ``1 − P(B = 0)``."""
        g = self.step_fraction
        r = (1.0 - g) * math.exp(-self.epsilon)
        return r / (g + r)

    def _split(self, t):
        """``(k, f)`` with ``t/Δ = k + f``, ``0 <= f < 1``."""
        units = t / self.sensitivity
        k = np.floor(units)
        return k, units - k

    def _noise_pdf(self, z):
        k, f = self._split(np.abs(z))
        level = np.exp(-k * self.epsilon) * np.where(f < self.step_fraction, 1.0, math.exp(-self.epsilon))
        return self._height() * level

    def _noise_tail(self, t):
        """``P(Z > t)`` for ``t >= 0``: what is left of step ``k`` beyond ``t`` plus half the mass beyond it.

        A sum of positive terms, ``e^{−kε}·(aΔ·((γ − f)⁺ + e^{−ε}(1 − max(f, γ))) + e^{−ε}/2)``:
        no cancellation, even where the first step holds almost all the mass (large ε).
        """
        g, r = self.step_fraction, math.exp(-self.epsilon)
        k, f = self._split(t)
        step = self._height() * self.sensitivity
        left = step * (np.maximum(g - f, 0.0) + r * (1.0 - np.maximum(f, g))) + r / 2.0
        return np.exp(-k * self.epsilon) * left

    def _breakpoints(self, x):
        x = np.asarray(x, dtype=float)
        g, d = self.step_fraction, self.sensitivity
        k = np.arange(-3, 4, dtype=float)
        offsets = np.concatenate([k * d, k * d + g * d, k * d - g * d])
        return x[..., None] + offsets

    def _expected_error(self, x, p):
        g, eps = self.step_fraction, self.epsilon
        mean_steps = over_expm1(1.0, eps)  # E[G]
        second_steps = mean_steps / math.tanh(eps / 2.0)  # E[G²] = E[G](1 + r)/(1 − r)
        beta = self._inner_probability()
        mean_offset = beta * g / 2.0 + (1.0 - beta) * (1.0 + g) / 2.0
        second_offset = beta * g**2 / 3.0 + (1.0 - beta) * (g**2 + g * (1.0 - g) + (1.0 - g) ** 2 / 3.0)
        d = self.sensitivity
        if p == 1:
            value = d * (mean_steps + mean_offset)
        else:
            value = d**2 * (second_steps + 2.0 * mean_steps * mean_offset + second_offset)
        return np.full(x.shape, value)

    # -- lattice: the discrete staircase offset (tracs.mechanisms._staircase) -------------------
    def _law(self):
        """``(n, G, ln r, ln t)`` of the discrete staircase on this lattice."""
        n = self._cells()
        return (n, *_staircase.staircase_constants(self.epsilon, self.step_fraction, n))

    def _row(self, k):
        count = self._grid()[4]
        _check_enumerable(count)
        return _staircase.staircase_row(k, self._margin_cells(), count, *self._law())

    def lattice_cumulative(self, b, k):
        return _staircase.staircase_cumulative(b, k, self._margin_cells(), self._grid()[4], *self._law())

    def _compiled_indices(self, flat, ks, fast=True):
        n, inner, log_r, log_t = self._law()
        inp = self.input_lattice
        return _staircase.snapped_staircase(flat, inp.origin, inp.spacing, n, self._margin_cells(), self._grid()[4],
                                            inner, log_r, log_t, ks.kind, ks.key, np.uint64(ks.streams[0]), fast)
