"""Output transforms that bring an enlarged output back onto the input interval.

Both are post-processing of the wrapped mechanism's output by a fixed public map,
so they keep its ε-LDP guarantee exactly:

* :class:`Compressed` — the linear map of the output interval ``[A, B]`` onto the
  input interval ``[a, b]`` (PM-C, SW-C).  Densities are scaled by
  ``(B − A)/(b − a)``; no point masses.
* :class:`Truncated` — clipping to ``[a, b]`` (T-PM, T-SW, T-Laplace, truncated
  staircase).  The output has a density inside and two point masses at ``a`` and
  ``b`` (``P(Y ≤ a)`` and ``P(Y > b)`` of the wrapped mechanism), reported by
  :meth:`Truncated.atoms` and included in :meth:`Truncated.cdf`.

This is the one way every transformed variant is built: wrap the mechanism,
e.g. ``Truncated(Laplace(epsilon=1.0))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, InputTypeError
from ._base import Mechanism
from ._domain import Interval
from .lattice import Lattice, lattice_point

__all__ = ["Compressed", "Truncated"]


def _check_wrappable(mechanism) -> None:
    if not isinstance(mechanism, Mechanism):
        raise InputTypeError(f"expected a continuous Mechanism, got {type(mechanism).__name__}")
    if not isinstance(mechanism.input_domain, Interval):
        raise InputTypeError(f"{type(mechanism).__name__} does not take inputs on an interval")


class _Wrapper(Mechanism):
    """A mechanism defined by post-processing another one; ``epsilon`` is the wrapped one's."""

    mechanism: Mechanism

    def __post_init__(self):
        _check_wrappable(self.mechanism)

    @property
    def epsilon(self) -> float:  # type: ignore[override]
        return self.mechanism.epsilon

    @property
    def input_domain(self) -> Interval:
        return self.mechanism.input_domain

    @property
    def max_epsilon(self) -> float:  # type: ignore[override]
        return self.mechanism.max_epsilon

    @property
    def min_epsilon(self) -> float:  # type: ignore[override]
        return self.mechanism.min_epsilon

    @property
    def output_domain(self) -> Interval:
        return self.mechanism.input_domain

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mechanism!r})"

    # -- lattice: the wrapped mechanism's indices, mapped by a public function -----------------
    @property
    def input_lattice(self) -> Lattice:
        return self.mechanism.input_lattice

    def _map_index(self, j):
        """The wrapper's lattice index of the wrapped mechanism's index ``j``."""
        return j

    def sample_index(self, x, *, rng=None) -> np.ndarray:
        return self._map_index(self.mechanism.sample_index(x, rng=rng))

    def _gather(self, row: np.ndarray) -> np.ndarray:
        out = np.zeros(self.lattice.count)
        np.add.at(out, self._map_index(np.arange(row.size)), row)
        return out

    def lattice_row(self, k):
        return self._gather(self.mechanism.lattice_row(k))

    def lattice_pmf(self, x):
        return self._gather(self.mechanism.lattice_pmf(x))

    def lattice_cumulative(self, b, k):
        """``P(index < b | x_k)`` from the wrapped mechanism's (the index map is monotone)."""
        b = np.asarray(b, dtype=np.int64).reshape(-1)
        lo, count = self._index_shift(), self.lattice.count
        cum = self.mechanism.lattice_cumulative(np.clip(b, 1, count - 1) + lo, k)
        cum[b <= 0], cum[b >= count] = 0.0, 1.0
        return cum

    def _index_shift(self) -> int:
        """Wrapped index of the wrapper's index 0 (indices shift by it between the ends)."""
        return 0


@dataclass(frozen=True, repr=False)
class Compressed(_Wrapper):
    """Linear compression of a mechanism's bounded output interval onto its input interval.

    ``Y' = a + (Y − A)·(b − a)/(B − A)`` with ``[A, B]`` the wrapped output domain
    and ``[a, b]`` the input domain.  Post-processing: ε-LDP is kept.

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism from an interval to a bounded interval (``PiecewiseMechanism``,
        ``SquareWave``, ``PTT``, ``OptimalUnbiased``).

    References
    ----------
    ``docs/mechanisms.md`` §4 (PM-C, SW-C).
    """

    mechanism: Mechanism

    def __post_init__(self):
        super().__post_init__()
        out = self.mechanism.output_domain
        if not (isinstance(out, Interval) and math.isfinite(out.low) and math.isfinite(out.high)):
            raise InputTypeError(f"{type(self.mechanism).__name__} has no bounded output interval to compress")

    def _factor(self) -> float:
        """``(b − a)/(B − A)``: how much the map shrinks lengths."""
        return self.output_domain.width / self.mechanism.output_domain.width

    def _forward(self, y):
        a, A = self.output_domain.low, self.mechanism.output_domain.low
        return a + (y - A) * self._factor()

    def _backward(self, y):
        a, A = self.output_domain.low, self.mechanism.output_domain.low
        return A + (y - a) / self._factor()

    @property
    def lattice(self) -> Lattice:
        """The wrapped lattice mapped linearly: the same indices, spacing times the factor."""
        inner = self.mechanism.lattice
        return Lattice(float(self._forward(inner.origin)), inner.spacing * self._factor(), inner.count)

    def _pdf(self, y, x):
        inside = (y >= self.output_domain.low) & (y <= self.output_domain.high)
        return np.where(inside, self.mechanism._pdf(self._backward(y), x) / self._factor(), 0.0)

    def _cdf(self, y, x):
        dom = self.output_domain
        return np.where(y >= dom.high, 1.0, np.where(y < dom.low, 0.0, self.mechanism._cdf(self._backward(y), x)))

    def _sf(self, y, x):
        dom = self.output_domain
        return np.where(y >= dom.high, 0.0, np.where(y < dom.low, 1.0, self.mechanism._sf(self._backward(y), x)))

    def _breakpoints(self, x):
        return self._forward(self.mechanism._breakpoints(x))


@dataclass(frozen=True, repr=False)
class Truncated(_Wrapper):
    """A mechanism's output clipped to its input interval ``[a, b]``.

    ``Y' = min(max(Y, a), b)``: post-processing, so ε-LDP is kept; the point
    masses ``P(Y ≤ a | x)`` at ``a`` and ``P(Y > b | x)`` at ``b`` obey the same
    ``e^ε`` ratio (checked by the contract tests).

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism taking inputs on an interval (``Laplace``, ``Staircase``,
        ``PiecewiseMechanism``, ``SquareWave``, …).

    References
    ----------
    ``docs/mechanisms.md`` §4 (T-PM, T-SW, T-Laplace) and §6.
    """

    mechanism: Mechanism

    def _index_range(self) -> tuple[int, int]:
        """``(j_lo, j_hi)``: wrapped lattice indices whose values lie in ``[a, b]``."""
        (o, h, count), dom = self.mechanism.lattice, self.output_domain

        def value(j):
            return float(lattice_point(o, h, j))

        lo = min(max(int(math.ceil((dom.low - o) / h)), 0), count - 1)
        while lo > 0 and value(lo - 1) >= dom.low:
            lo -= 1
        while lo < count - 1 and value(lo) < dom.low:
            lo += 1
        hi = min(max(int(math.floor((dom.high - o) / h)), lo), count - 1)
        while hi < count - 1 and value(hi + 1) <= dom.high:
            hi += 1
        while hi > lo and value(hi) > dom.high:
            hi -= 1
        return lo, hi

    @property
    def lattice(self) -> Lattice:
        """The wrapped lattice's points inside ``[a, b]``; releases beyond are moved to the ends."""
        inner = self.mechanism.lattice
        lo, hi = self._index_range()
        return Lattice(float(lattice_point(inner.origin, inner.spacing, lo)), inner.spacing, hi - lo + 1)

    def _map_index(self, j):
        lo, hi = self._index_range()
        return np.clip(j, lo, hi) - lo

    def _index_shift(self) -> int:
        return int(self._index_range()[0])

    def _pdf(self, y, x):
        dom = self.output_domain
        return np.where((y >= dom.low) & (y <= dom.high), self.mechanism._pdf(y, x), 0.0)

    def _cdf(self, y, x):
        dom = self.output_domain
        return np.where(y >= dom.high, 1.0, np.where(y < dom.low, 0.0, self.mechanism._cdf(y, x)))

    def _sf(self, y, x):
        dom = self.output_domain
        return np.where(y >= dom.high, 0.0, np.where(y < dom.low, 1.0, self.mechanism._sf(y, x)))

    def _masses(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.mechanism._edge_masses(x)

    def atoms(self, x):
        """Point masses at the two ends: ``([a, b], [P(Y ≤ a | x), P(Y > b | x)])`` for scalar ``x``."""
        x = self.input_domain.validate(x, "x")
        if x.ndim:
            raise InputError("atoms() takes one input value")
        low, high = self._masses(x)
        dom = self.output_domain
        return np.array([dom.low, dom.high]), np.array([float(low), float(high)])

    def _atom_error(self, x, p):
        dom = self.output_domain
        low, high = self._masses(x)
        return low * (x - dom.low) ** p + high * (dom.high - x) ** p

    def _breakpoints(self, x):
        return self.mechanism._breakpoints(x)
