"""The closed-form optimal piecewise mechanisms (Zheng, Mishra & Hu, PETS 2025).

* :class:`OptimalClassical` — optimal for bounded classical domains, interval to
  itself (the paper's Theorem 3.7, "OGPM" on ``[0, 1]``, transformation-invariant
  by its Theorem 3.6).
* :class:`OptimalCircular` — optimal for the circle (Theorem 4.2).

Both take ``loss="absolute"`` (default: the closed forms above, optimal for the
worst-case ``E|Y − x|``) or ``loss="square"`` (optimal for the worst-case
``E(Y − x)²``: the same three-piece shape with the central density found by
:mod:`tracs.mechanisms.optimal_square`; the paper's closed form is not optimal
for that loss).
* :class:`OptimalUnbiased` — the unbiased variant for mean estimation (Theorem 5.1).

Each has high density ``p`` on a central interval and ``q = p·e^{-ε}`` elsewhere, so
the density ratio between any two inputs is at most ``e^ε`` (ε-LDP), with
equality attained.  All constants are written with ``s = e^{ε/2}`` in forms that
never overflow for ε up to 50 (and far beyond).

Releases are values of a public lattice drawn from the banded law of
:mod:`tracs.mechanisms.band` (the central piece becomes a band of cells, the ratio
of the two cell probabilities is exactly ``e^ε``); the optimal circular
mechanism's row depends on the offset ``j − k`` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import band
from ._base import Mechanism, PiecewiseConstantMechanism
from .closed_forms import arc_band, circular_half_width, classical_central_width, classical_half_width
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._domain import Interval
from ._numeric import logistic, rare_probability
from ._params import CircleDomain, IntervalInput
from .optimal_square import check_loss, square_shape
from ..random import resolve_streams

__all__ = ["OptimalClassical", "OptimalCircular", "OptimalUnbiased"]


def _logistic_half(epsilon: float) -> float:
    """``s/(s+1)`` with ``s = e^{ε/2}``: the probability of the central interval."""
    return 1.0 / (1.0 + math.exp(-epsilon / 2.0))


def side_mass(epsilon: float) -> float:
    """``1/(s+1)`` with ``s = e^{ε/2}``: the probability of the low-density part.

    The threshold of the sampler's rare branch (``u < side_mass``), never 0
    (:func:`~tracs.mechanisms._numeric.rare_probability`).
    """
    return rare_probability(logistic(-epsilon / 2.0))


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class OptimalClassical(IntervalInput, PiecewiseConstantMechanism):
    """Optimal piecewise mechanism from ``[low, high]`` to itself.

    On the unit interval (``t = (x - low)/(high - low)``): ``s = e^{ε/2}``, high
    density ``s``, low density ``1/s``, central interval of width
    ``2C = 1/(s + 1)`` placed at ``[t - C, t + C)`` and slid inside ``[0, 1)`` at
    the ends.  Minimises the worst-case expected ``|Y - x|`` among generalized
    piecewise mechanisms (any number of pieces) with output in the input domain
    (argument in :mod:`~tracs.mechanisms.optimal_square`); the paper claims the
    same for ``(Y - x)²``, which does not hold: see ``loss="square"``.

    With ``loss="square"`` the high density is ``e^{εu}`` and the low one
    ``e^{ε(u-1)}`` with ``u`` minimising the worst-case ``E(Y - x)²``
    (:func:`~tracs.mechanisms.optimal_square.square_exponent`; ``u`` falls from
    0.423 at small ε to 1/3 at large ε), with the same centred, slid placement.

    %(interval_parameters)s
    loss : {"absolute", "square"}
        The worst-case error the mechanism minimises: ``E|Y - x|`` (default) or
        ``E(Y - x)²``.

    References
    ----------
    Zheng, Mishra & Hu, "Optimal piecewise-based mechanism for collecting bounded
    numerical data under local differential privacy", PETS 2025, Theorems 3.6–3.7.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    resolution: float | None = None
    loss: str = "absolute"

    def _validate_parameters(self):
        IntervalInput._validate_parameters(self)
        check_loss(self.loss)

    @property
    def output_domain(self) -> Interval:
        return Interval(self.low, self.high)

    @property
    def half_width(self) -> float:
        """``C`` on the unit interval: ``1/(2(s + 1))`` (square loss: half the optimal width)."""
        if self.loss == "square":
            return 0.5 * square_shape(self.epsilon).width
        return classical_half_width(self.epsilon)

    def _support(self):
        return self.low, self.high

    def _densities(self):
        width = self.high - self.low
        if self.loss == "square":
            shape = square_shape(self.epsilon)
            return shape.high / width, shape.low / width
        half = self.epsilon / 2.0
        return math.exp(half) / width, math.exp(-half) / width

    def _central_width(self):
        if self.loss == "square":
            return 2.0 * self.half_width * (self.high - self.low)
        return classical_central_width(self.epsilon, self.high - self.low)

    def _central_mass(self):
        if self.loss == "square":
            return square_shape(self.epsilon).central_mass
        return _logistic_half(self.epsilon)

    def _side_mass(self):
        if self.loss == "square":
            return rare_probability(square_shape(self.epsilon).side_mass)
        return side_mass(self.epsilon)

    def _central_left(self, x):
        width = self.high - self.low
        c = self.half_width
        t = (x - self.low) / width
        return self.low + width * np.clip(t - c, 0.0, 1.0 - 2.0 * c)

    def _band_line(self):
        # output lattice = input lattice: the band is centred on k itself (slid inside at the ends)
        return 1.0, 0.0

    def _worst_case_error(self, p):
        # Lemma 3.2: the worst case is at the end points (equal by symmetry).
        return float(self._expected_error(np.array([self.low]), p)[0])


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class OptimalCircular(CircleDomain, Mechanism):
    """Optimal piecewise mechanism on the circle ``[0, period)``.

    Density ``p = s/period`` on the arc ``[x - C, x + C)`` (mod ``period``) and
    ``q = 1/(s·period)`` elsewhere, with ``s = e^{ε/2}`` and
    ``C = period/(2(s + 1))``.  Errors are measured with the circular distance and
    do not depend on ``x`` (Theorem 4.4).  Outputs lie in ``[0, period)``, never
    ``period`` itself.

    With ``loss="square"`` the densities are ``e^{εu}/period`` and
    ``e^{ε(u-1)}/period`` with the same ``u`` as :class:`OptimalClassical`'s square
    loss (the circle's squared-distance error is a quarter of the interval's
    end-point error as a function of ``u``; :mod:`tracs.mechanisms.optimal_square`).

    %(circle_parameters)s
    loss : {"absolute", "square"}
        The worst-case error the mechanism minimises: ``E d(Y, x)`` (default) or
        ``E d(Y, x)²``, ``d`` the circular distance.

    References
    ----------
    Zheng, Mishra & Hu, PETS 2025, Theorems 4.2 and 4.4.
    """

    epsilon: float
    period: float = 2 * math.pi
    resolution: float | None = None
    loss: str = "absolute"

    def _validate_parameters(self):
        CircleDomain._validate_parameters(self)
        check_loss(self.loss)

    @property
    def half_width(self) -> float:
        """``C = period/(2(s + 1))``: half the length of the high-density arc."""
        if self.loss == "square":
            return 0.5 * self.period * square_shape(self.epsilon).width
        return circular_half_width(self.epsilon, self.period)

    def _densities(self):
        if self.loss == "square":
            shape = square_shape(self.epsilon)
            return shape.high / self.period, shape.low / self.period
        half = self.epsilon / 2.0
        return math.exp(half) / self.period, math.exp(-half) / self.period

    # -- lattice: the banded law on the circle, centred on the snapped input ----------------
    def band(self) -> tuple[int, float]:
        """``(m, c)``: band width in cells (odd) and probability of the cells outside the band."""
        n = self._cells()
        return arc_band(self.epsilon, self.half_width, self.period, n)

    def _row(self, k):
        n = self._cells()
        m, c = self.band()
        return np.roll(band.band_row(0, m, n, c), k - (m - 1) // 2)

    def lattice_cumulative(self, b, k):
        n = self._cells()
        m, c = self.band()
        starts = np.mod(np.asarray(k, dtype=np.int64).reshape(-1) - (m - 1) // 2, n)
        return band.band_cumulative(b, starts, m, n, c)

    def _sample_indices(self, flat, rng):
        ks = resolve_streams(rng, None, 1)
        m, c = self.band()
        return band.snapped_circular_band(self._snap_t(flat), self._cells(), m, c, ks.kind, ks.key,
                                           np.uint64(ks.streams[0]))

    def _pdf(self, y, x):
        p, q = self._densities()
        offset = np.mod(y - (x - self.half_width), self.period)
        density = np.where(offset < 2.0 * self.half_width, p, q)
        return np.where((y >= 0.0) & (y < self.period), density, 0.0)

    def _arc_mass(self, d):
        """Mass of the arc from ``x - C`` going forward a length ``d ∈ [0, period]``."""
        p, q = self._densities()
        two_c = 2.0 * self.half_width
        return p * np.minimum(d, two_c) + q * np.maximum(d - two_c, 0.0)

    def _cdf(self, y, x):
        start = np.mod(x - self.half_width, self.period)
        yc = np.clip(y, 0.0, self.period)
        to_y = self._arc_mass(np.mod(yc - start, self.period))
        to_zero = self._arc_mass(np.mod(-start, self.period))
        # [0, y] holds the start of the arcs exactly when the measured masses wrap;
        # decided geometrically, not from the sign of a rounded difference
        mass = to_y - to_zero + np.where((start > 0.0) & (start <= yc), 1.0, 0.0)
        mass = np.where(yc >= self.period, 1.0, np.where(yc <= 0.0, 0.0, mass))
        return np.clip(mass, 0.0, 1.0)

    def _breakpoints(self, x):
        c = self.half_width
        x = np.asarray(x, dtype=float)
        return np.mod(np.stack([x - c, x + c, x, x + self.period / 2], axis=-1), self.period)

    def _expected_error(self, x, p):
        return np.full(x.shape, self._constant_error(p))

    def _constant_error(self, p: int) -> float:
        if self.loss == "square":
            # the arc centred at x: 2·[q·(T/2)^(p+1) + (hi − q)·C^(p+1)]/(p + 1)
            hi, lo = self._densities()
            c = self.half_width
            return 2.0 * (lo * (self.period / 2.0) ** (p + 1) + (hi - lo) * c ** (p + 1)) / (p + 1)
        # Theorem 4.4 on [0, 2π), scaled to the period.
        s = math.exp(self.epsilon / 2.0)
        hi, lo = s / (2 * math.pi), 1.0 / (2 * math.pi * s)
        c = math.pi / (s + 1.0)
        if p == 1:
            value = hi * c**2 + lo * (math.pi**2 - c**2)
        else:
            value = (2.0 / 3.0) * (hi * c**3 + lo * (math.pi**3 - c**3))
        return value * (self.period / (2 * math.pi)) ** p

    def _worst_case_error(self, p):
        return self._constant_error(p)


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class OptimalUnbiased(IntervalInput, PiecewiseConstantMechanism):
    """Unbiased optimal piecewise mechanism for mean estimation ("OGPM-U").

    On the unit interval: output ``[-C, C + 1]`` with ``C = (s + 1)/(s - 1)``,
    high density ``p = s/(2C + 1)`` on ``[l(t), r(t))`` with
    ``l(t) = (C+1)/2·t − (3C+1)(C−1)/(4C)`` and
    ``r(t) = (C+1)/2·t + (C+1)(C−1)/(4C)``, low density ``p/e^ε``.
    ``E[Y] = x`` for every input.

    %(interval_parameters)s

    References
    ----------
    Zheng, Mishra & Hu, PETS 2025, Theorem 5.1.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    resolution: float | None = None

    #: the output interval grows like 1/ε; below this its cells are too fine
    min_epsilon = 1e-3

    @property
    def enlargement(self) -> float:
        """``C = (s + 1)/(s - 1) = 1 + 2/(s - 1)`` on the unit interval."""
        return 1.0 + 2.0 / math.expm1(self.epsilon / 2.0)

    def _support(self):
        width = self.high - self.low
        c = self.enlargement
        return self.low - c * width, self.high + c * width

    def _densities(self):
        width = self.high - self.low
        c = self.enlargement
        half = self.epsilon / 2.0
        # p = s/(2C + 1); written with e^{±ε/2} so that nothing overflows
        p = 1.0 / ((2.0 * c + 1.0) * math.exp(-half))
        q = 1.0 / ((2.0 * c + 1.0) * math.exp(half))
        return p / width, q / width

    def _central_width(self):
        c = self.enlargement
        c_minus_1 = 2.0 / math.expm1(self.epsilon / 2.0)
        return (self.high - self.low) * c_minus_1 * (2.0 * c + 1.0) / (2.0 * c)

    # the same central and side masses as the classical mechanism: s/(s+1) and 1/(s+1)
    def _central_mass(self):
        return _logistic_half(self.epsilon)

    def _side_mass(self):
        return side_mass(self.epsilon)

    def _central_left(self, x):
        width = self.high - self.low
        c = self.enlargement
        c_minus_1 = 2.0 / math.expm1(self.epsilon / 2.0)
        t = (x - self.low) / width
        return self.low + width * ((c + 1.0) / 2.0 * t - (3.0 * c + 1.0) * c_minus_1 / (4.0 * c))

    def _gaps(self, x):
        # l + C = (C+1)/2·t + (C+1)²/(4C),  C + 1 − r = (C+1)·((1 − t)/2 + (C+1)/(4C))
        width = self.high - self.low
        c = self.enlargement
        return (width * (c + 1.0) * ((x - self.low) / (2.0 * width) + (c + 1.0) / (4.0 * c)),
                width * (c + 1.0) * ((self.high - x) / (2.0 * width) + (c + 1.0) / (4.0 * c)))

    def _overhang(self):
        w = self.enlargement * (self.high - self.low)
        return w, w
