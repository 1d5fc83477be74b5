"""Abstract bases of the one-dimensional mechanisms.

Public methods validate and broadcast; the private ``_sample``/``_pdf``/``_cdf``
hooks are pure math on validated float arrays (the scipy.stats pattern).

Every concrete mechanism is a frozen, keyword-only dataclass whose first field is
``epsilon``.  Nothing random is stored on a mechanism: randomness comes from the
``rng`` argument of :meth:`Mechanism.sample` only.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

import numpy as np

from .._validation import as_float_array, check_epsilon
from . import band as banded
from .closed_forms import band
from ..errors import InputError
from ._domain import Circle, Interval
from ..random import resolve_streams
from .lattice import LatticeMixin, _check_enumerable

__all__ = ["Mechanism", "PiecewiseConstantMechanism", "check_error_power"]


def check_error_power(p) -> int:
    """Validate the error exponent ``p`` (1: absolute error, 2: squared error)."""
    if p not in (1, 2) or isinstance(p, bool):
        raise InputError(f"p must be 1 (absolute error) or 2 (squared error), got {p!r}")
    return int(p)


@functools.lru_cache(maxsize=1)
def _gauss_legendre(n: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the ``n``-point Gauss–Legendre rule on ``[-1, 1]``."""
    return np.polynomial.legendre.leggauss(n)


def _signed_power_integral(t: np.ndarray, p: int) -> np.ndarray:
    """Antiderivative of ``|t|**p``: ``sign(t)·|t|**(p+1)/(p+1)``."""
    return np.sign(t) * np.abs(t) ** (p + 1) / (p + 1)


class Mechanism(LatticeMixin, ABC):
    """A continuous one-dimensional ε-LDP mechanism ``x ↦ Y``.

    Guarantee (checked by the contract test suite): for all inputs ``x1, x2`` in
    :attr:`input_domain` and every output ``y``,
    ``pdf(y, x1) <= exp(epsilon) * pdf(y, x2)``; point masses returned by
    :meth:`atoms` obey the same bound.  Releases are values of the public
    :attr:`lattice` whose exact law (:meth:`lattice_pmf`) obeys the same bound
    (:mod:`tracs.mechanisms.lattice`).
    """

    epsilon: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, maximum=self.max_epsilon))
        if self.epsilon < self.min_epsilon:
            raise InputError(f"epsilon = {self.epsilon:g} is below {self.min_epsilon:g}, the smallest budget "
                             f"{type(self).__name__} samples on its lattice within the stated accuracy "
                             "(its output window is then so wide that the cells' masses fall below "
                             "the resolution of their cumulative thresholds)")
        self._validate_parameters()
        self._cells()  # validates ``resolution``

    def _validate_parameters(self) -> None:  # pragma: no cover - default: nothing more
        """Hook for subclasses: validate parameters other than ``epsilon``."""

    # -- domains ---------------------------------------------------------------
    @property
    @abstractmethod
    def input_domain(self):
        """The domain of valid inputs (an :class:`~tracs.mechanisms.Interval` or ``Circle``)."""

    @property
    @abstractmethod
    def output_domain(self):
        """The domain every output lies in."""

    # -- public API ------------------------------------------------------------
    def pdf(self, y, x) -> np.ndarray:
        """Density of the continuous part of the output at ``y`` given input ``x`` (broadcast)."""
        x = self.input_domain.validate(x, "x")
        y = as_float_array(y, "y")
        return self._pdf(*np.broadcast_arrays(y, x))

    def cdf(self, y, x) -> np.ndarray:
        """``P(Y <= y | x)`` including point masses (broadcast)."""
        x = self.input_domain.validate(x, "x")
        y = as_float_array(y, "y")
        return self._cdf(*np.broadcast_arrays(y, x))

    def sf(self, y, x) -> np.ndarray:
        """``P(Y > y | x)``, computed directly (accurate where it is tiny)."""
        x = self.input_domain.validate(x, "x")
        y = as_float_array(y, "y")
        return self._sf(*np.broadcast_arrays(y, x))

    def atoms(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Point masses of the output given scalar ``x``: ``(locations, probabilities)``.

        Mechanisms with a density everywhere return two empty arrays.
        """
        self.input_domain.validate(x, "x")
        return np.empty(0), np.empty(0)

    def expected_error(self, x, p: int = 1) -> np.ndarray:
        """``E[d(Y, x)**p]`` for ``p`` in {1, 2}, with ``d`` the output domain's distance."""
        p = check_error_power(p)
        x = self.input_domain.validate(x, "x")
        return self._expected_error(x, p)

    def worst_case_error(self, p: int = 1) -> float:
        """``max_x E[d(Y, x)**p]`` over the input domain.

        Closed form where the maximiser is known (the optimal mechanisms, the
        additive and circular ones, Duchi, k-RR); otherwise the maximum over an
        even grid of inputs that includes both ends (2001 points for
        piecewise-constant densities, 401 for the rest), which can fall short
        of the true maximum by the grid's curvature error only when it is
        attained inside.
        """
        p = check_error_power(p)
        return float(self._worst_case_error(p))

    # -- hooks -------------------------------------------------------------------
    @abstractmethod
    def _pdf(self, y: np.ndarray, x: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _cdf(self, y: np.ndarray, x: np.ndarray) -> np.ndarray: ...

    def _sf(self, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``P(Y > y | x)``; override where ``1 - cdf`` would cancel."""
        return 1.0 - self._cdf(y, x)

    def _breakpoints(self, x: np.ndarray) -> np.ndarray:
        """Points where the density given ``x`` is not smooth, shape ``x.shape + (m,)``.

        Used to split numerical integration into smooth pieces; points outside
        the output domain are ignored.
        """
        return np.asarray(x, dtype=float)[..., None]

    def _expected_error(self, x: np.ndarray, p: int) -> np.ndarray:
        """Numerical integration of ``d(y, x)**p`` against the output law, vectorised over ``x``.

        The output domain is cut at :meth:`_breakpoints` (and at ``x`` and its
        antipode on a circle) into pieces on which the integrand is smooth; each
        piece gets a 64-point Gauss–Legendre rule, exact for the piecewise
        polynomial integrands of piecewise-constant densities and accurate to
        ~1e-15 for exponential ones.  Point masses are added exactly.
        """
        flat = x.reshape(-1)
        dom = self.output_domain
        cuts = [np.broadcast_to(np.array([dom.low, dom.high], dtype=float), (flat.size, 2)),
                self._breakpoints(flat), flat[:, None]]
        if isinstance(dom, Circle):
            cuts.append(np.mod(flat + dom.period / 2.0, dom.period)[:, None])
        cuts = np.sort(np.clip(np.concatenate(cuts, axis=1), dom.low, dom.high), axis=1)
        nodes, weights = _gauss_legendre()
        a, b = cuts[:, :-1, None], cuts[:, 1:, None]  # (n, pieces, 1)
        t = 0.5 * (a + b) + 0.5 * (b - a) * nodes  # (n, pieces, nodes)
        xs = np.broadcast_to(flat[:, None, None], t.shape)
        integrand = dom.distance(t, xs) ** p * self._pdf(t, xs)
        total = np.sum(0.5 * (b - a)[..., 0] * (integrand @ weights), axis=1)
        atom_part = self._atom_error(flat, p)
        return (total + atom_part).reshape(x.shape)

    def _edge_masses(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(P(Y <= low | x), P(Y > high | x))`` for the input interval's ends.

        Used by :class:`~tracs.mechanisms.Truncated` for its point masses;
        subclasses override it where a closed form avoids cancellation.
        """
        dom = self.input_domain
        return (self._cdf(np.full(x.shape, float(dom.low)), x),
                self._sf(np.full(x.shape, float(dom.high)), x))

    def _atom_error(self, x: np.ndarray, p: int) -> np.ndarray:
        """``Σ mass·d(location, x)**p`` over point masses, for a flat ``x``; none by default."""
        return np.zeros(x.shape)

    def _worst_case_error(self, p: int) -> float:
        domain = self.input_domain
        grid = np.linspace(domain.low, domain.high, 401)
        if grid[-1] >= domain.high and not bool(domain.contains(domain.high)):
            grid = grid[:-1]
        return float(np.max(self.expected_error(grid, p)))

    def __repr__(self) -> str:  # compact, stable
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self.__dataclass_fields__  # type: ignore[attr-defined]
        )
        return f"{type(self).__name__}({fields})"


class PiecewiseConstantMechanism(Mechanism):
    """A mechanism whose output density given ``x`` takes two values on an interval.

    The output domain is ``[A, B]``; given ``x`` the density is ``p`` on the central
    interval ``[l(x), l(x) + W)`` and ``q = p·exp(-epsilon)`` on the rest.  Subclasses
    provide :meth:`_support`, :meth:`_densities`, :meth:`_central_width`,
    :meth:`_central_left` and (for numerical stability) :meth:`_central_mass` and
    :meth:`_side_mass`, in
    the mechanism's *real* output coordinates.

    Releases are cells of the output interval (:mod:`tracs.mechanisms.lattice`)
    drawn from the *banded* law of :mod:`tracs.mechanisms.band`: at input lattice
    point ``x_k`` the ``m ≈ W/h`` cells around the central piece's centre share
    probability ``1 − c``, the other cells ``c``, with the ratio of the two cell
    probabilities exactly ``e^ε`` (the proof is in that module).
    """

    @abstractmethod
    def _support(self) -> tuple[float, float]:
        """``(A, B)``: the output interval."""

    @abstractmethod
    def _densities(self) -> tuple[float, float]:
        """``(p, q)``: the high and low densities."""

    @abstractmethod
    def _central_width(self) -> float:
        """``W``: the width of the central interval (the same for every input)."""

    @abstractmethod
    def _central_left(self, x: np.ndarray) -> np.ndarray:
        """``l(x)``: the left end of the central interval."""

    @property
    def output_domain(self):
        """The output interval ``[A, B]``."""
        A, B = self._support()
        return Interval(A, B)

    def _central_mass(self) -> float:
        """``p·W``: probability of the central interval (override with a stable form)."""
        p, _ = self._densities()
        return p * self._central_width()

    def _side_mass(self) -> float:
        """``1 − p·W``: probability of the two side pieces (override with a stable form)."""
        return 1.0 - self._central_mass()

    # -- lattice: the banded law (tracs.mechanisms.band) --------------------------------
    def _lattice_left(self, k: np.ndarray) -> np.ndarray:
        """``l(x_k)``: left end of the central piece at input lattice points ``k``."""
        return self._central_left(self._input_point(k))

    def band(self) -> tuple[int, float]:
        """``(m, c)``: band width in cells and probability of the cells outside the band."""
        _, _, _, h, count = self._grid()
        return band(self.epsilon, self._central_width(), h, count)

    def _band_line(self) -> tuple[float, float]:
        """``(α, β)``: the central piece's centre at input lattice point ``k`` is output cell
        ``α·k + β`` (the centre is affine in the input for every mechanism of this kind)."""
        A, _, _, h, _ = self._grid()
        n, half = self._cells(), 0.5 * self._central_width()
        ends = self._lattice_left(np.array([0, n]))
        first, last = (float(v) for v in (ends + half - A) / h)
        return (last - first) / n, first

    def _band_start(self, k: np.ndarray) -> np.ndarray:
        """First band cell at input lattice points ``k``."""
        m, _ = self.band()
        alpha, beta = self._band_line()
        return banded.affine_starts(np.asarray(k, dtype=np.int64).reshape(-1), alpha, beta, m, self._grid()[4])

    def _row(self, k):
        count = self._grid()[4]
        _check_enumerable(count)
        m, c = self.band()
        return banded.band_row(int(self._band_start(np.array([k]))[0]), m, count, c)

    def lattice_cumulative(self, b, k):
        m, c = self.band()
        return banded.band_cumulative(b, self._band_start(k), m, self._grid()[4], c)

    def _sample_indices(self, flat, rng):
        ks = resolve_streams(rng, None, 1)
        m, c = self.band()
        alpha, beta = self._band_line()
        return banded.snapped_affine_band(self._snap_t(flat), self._cells(), alpha, beta, m, self._grid()[4], c,
                                         ks.kind, ks.key, np.uint64(ks.streams[0]))

    def _pdf(self, y, x):
        A, B = self._support()
        p, q = self._densities()
        l = self._central_left(x)
        density = np.where((y >= l) & (y < l + self._central_width()), p, q)
        return np.where((y >= A) & (y <= B), density, 0.0)

    def _cdf(self, y, x):
        A, B = self._support()
        p, q = self._densities()
        width = self._central_width()
        l = self._central_left(x)
        yc = np.clip(y, A, B)
        left = q * (np.minimum(yc, l) - A)
        central = p * np.clip(yc - l, 0.0, width)
        right = q * np.maximum(yc - (l + width), 0.0)
        # exact 0 and 1 at the ends: ``l`` is rounded, and with a central piece
        # 1e-11 wide (ε = 50) that rounding is a relative 1e-5 of its mass
        return np.where(y >= B, 1.0, np.where(y < A, 0.0, np.clip(left + central + right, 0.0, 1.0)))

    def _sf(self, y, x):
        A, B = self._support()
        p, q = self._densities()
        width = self._central_width()
        l = self._central_left(x)
        r = l + width
        yc = np.clip(y, A, B)
        right = q * (B - np.maximum(yc, r))
        central = p * np.clip(r - yc, 0.0, width)
        left = q * np.maximum(l - yc, 0.0)
        return np.where(y >= B, 0.0, np.where(y < A, 1.0, np.clip(left + central + right, 0.0, 1.0)))

    def _breakpoints(self, x):
        x = np.asarray(x, dtype=float)
        l = self._central_left(x)
        return np.stack([l, l + self._central_width(), x], axis=-1)

    def _expected_error(self, x, p):
        """Exact: the density is constant on three pieces, each integrates in closed form."""
        A, B = self._support()
        hi, lo = self._densities()
        l = self._central_left(x)
        r = l + self._central_width()

        def piece(a, b, density):
            return density * (_signed_power_integral(b - x, p) - _signed_power_integral(a - x, p))

        return piece(A, l, lo) + piece(l, r, hi) + piece(r, B, lo)

    def _gaps(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(l(x) − A, B − r(x))``: lengths of the two side pieces.

        Override with closed forms: with a central piece 1e-11 wide (ε = 50), a
        length taken as the difference of two rounded end points near 1 carries
        a relative error of 1e-5, and the point masses of a truncated output
        would miss the exact ``e^ε`` ratio by that much.
        """
        A, B = self._support()
        l = self._central_left(x)
        return l - A, B - (l + self._central_width())

    def _overhang(self) -> tuple[float, float]:
        """``(low − A, B − high)``: how far the output interval reaches past the input one."""
        A, B = self._support()
        return self.input_domain.low - A, B - self.input_domain.high

    def _edge_masses(self, x):
        """Masses beyond the input interval's ends, from side-piece lengths (no cancellation)."""
        hi, lo = self._densities()
        width = self._central_width()

        def beyond(gap, overhang):
            # the piece [A, A + overhang): low density up to the central piece, then high
            return np.where(gap >= overhang, lo * overhang,
                            lo * gap + hi * np.minimum(overhang - gap, width))

        left_gap, right_gap = self._gaps(x)
        left_over, right_over = self._overhang()
        return beyond(left_gap, left_over), beyond(right_gap, right_over)

    def _worst_case_error(self, p):
        domain = self.input_domain
        grid = np.linspace(domain.low, domain.high, 2001)
        return float(np.max(self._expected_error(grid, p)))
