"""Type-II piecewise transformation technique (II-PTT) of the OPTT paper.

Ma, Zhu & Wang, "OPTT: Optimal piecewise transformation technique for analyzing
numerical data under local differential privacy", §3.3.2, Theorem 6, Eqs. (21)–(22).

In standard coordinates ``t = (2x − low − high)/(high − low) ∈ [−1, 1]`` the output
``u ∈ [−B, B]`` (``B = η a``) has the density

``f(u | t) = p − (p/a)(1 − e^{−ε})·|u − k t|`` on ``[k t − a, k t + a]`` and
``p e^{−ε}`` on the rest of ``[−B, B]``,

a tent of peak ``p`` falling to ``p e^{−ε}`` at its ends on a flat floor.  Eq. (21):
``p = e^ε/(a k (e^ε − 1))``.  Equivalently: a floor ``q₀ = 1/(a k (e^ε − 1))`` on
``[−B, B]`` plus a triangle of height ``1/(a k)`` and mass ``1/k`` centred at ``k t``.
Total mass 1 and ``k + a = B`` fix ``k = 1 + 2η/(e^ε − 1)`` and ``a = k/(η − 1)``
(the paper leaves ``k`` free; Theorem 6's ``q`` is the tent's mass).  Then
``E[u] = t`` (unbiased) and Eq. (22),
``Var = (k − 1) t² + (4η³/(e^ε − 1) + 1)·a/(6(η − 1))`` in standard units.

Guarantee: the density takes values in ``[q₀, q₀ e^ε]`` for every input, so the
ratio of densities of any two inputs is at most ``e^ε`` (ε-LDP).  Releases are
cells of the public lattice over the output interval, drawn exactly from the cdf:
the cdf and sf are compiled (:mod:`tracs.mechanisms._cdf_kernels`) and serve both
the rows and the compiled sampler, which realises the generic law of
:mod:`tracs.mechanisms.lattice` exactly (:mod:`tracs.mechanisms._inversion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import _cdf_kernels
from ._base import Mechanism
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._domain import Interval
from ._inversion import CompiledInversion
from ._numeric import over_expm1
from ._params import IntervalInput, check_parameter

__all__ = ["IIPTT", "ii_ptt_worst_variance", "ii_ptt_best_eta"]


def _standard(epsilon: float, eta: float) -> tuple[float, float, float]:
    """``(k, a, q₀)`` in standard coordinates for budget ``epsilon`` and ``η = B/a``."""
    k = 1.0 + over_expm1(2.0 * eta, epsilon)
    a = k / (eta - 1.0)
    return k, a, over_expm1(1.0, epsilon) / (a * k)


def ii_ptt_worst_variance(epsilon: float, eta: float) -> float:
    """Eq. (22) at ``|t| = 1`` (its maximum over ``t ∈ [−1, 1]``), in standard units."""
    k, a, _ = _standard(epsilon, eta)
    return (k - 1.0) + (4.0 * eta**3 * over_expm1(1.0, epsilon) + 1.0) * a / (6.0 * (eta - 1.0))


@lru_cache(maxsize=256)
def ii_ptt_best_eta(epsilon: float) -> float:
    """The ``η`` minimising :func:`ii_ptt_worst_variance` (bounded scalar search on ``ln(η − 1)``)."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(lambda w: ii_ptt_worst_variance(epsilon, 1.0 + math.exp(w)),
                          bounds=(-10.0, 250.0), method="bounded", options={"xatol": 1e-10})
    return 1.0 + math.exp(res.x)


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class IIPTT(IntervalInput, CompiledInversion, Mechanism):
    """II-PTT: a tent on a floor, unbiased, from ``[low, high]`` (default ``[−1, 1]``).

    See the module notes for the density, its parameters and the ε-LDP argument.

    %(interval_parameters)s
    eta : float, optional
        ``η = B/a > 1``; default: :func:`ii_ptt_best_eta` (least worst-case
        variance, Eq. 22 at ``|t| = 1``).

    Notes
    -----
    Against Duchi's mechanism (worst-case variance ``((e^ε + 1)/(e^ε − 1))²``)
    with ``η = 1.9``, Eq. (22) gives the crossover ε ≈ 2.40: II-PTT has the larger
    worst-case variance below it.  The crossover ε ≈ 1.45 belongs to I-PTT with
    ``η = 1.9`` (:class:`~tracs.mechanisms.PTT`), the paper's own example, which
    the paper states beats Duchi's at every ε > 0.

    References
    ----------
    Ma, Zhu & Wang, "OPTT", §3.3.2, Theorem 6, Eqs. (21)–(22).
    """

    epsilon: float
    low: float = -1.0
    high: float = 1.0
    eta: float | None = None
    resolution: float | None = None

    #: ``e^{−ε}`` stays a normal double up to here
    max_epsilon = 700.0
    #: the output window grows like ``1/ε`` (``docs/privacy.md``, "Smallest budgets")
    min_epsilon = 1e-3
    _LAW = _cdf_kernels.TENT

    def _validate_parameters(self):
        super()._validate_parameters()
        check_parameter(self, "eta", lambda v: v > 1.0, "be > 1", optional=True)

    def _eta(self) -> float:
        return ii_ptt_best_eta(self.epsilon) if self.eta is None else self.eta

    def _params(self):
        """``(mid, half, k, a, B, q₀)``."""
        k, a, q0 = _standard(self.epsilon, self._eta())
        mid, half = (self.low + self.high) / 2.0, (self.high - self.low) / 2.0
        return mid, half, k, a, k + a, q0

    @property
    def output_domain(self) -> Interval:
        mid, half, _, _, B, _ = self._params()
        return Interval(mid - B * half, mid + B * half)

    def _pdf(self, y, x):
        mid, half, k, a, B, q0 = self._params()
        u, c = (y - mid) / half, k * (x - mid) / half
        tent = np.maximum(1.0 - np.abs(u - c) / a, 0.0) / (a * k)
        return np.where(np.abs(u) <= B, q0 + tent, 0.0) / half

    def _law_parameters(self) -> np.ndarray:
        """``(mid, half, k, a, B, q₀)``: in standard units the cdf is
        ``min(q₀(u + B) + T((u − c)/a)/k, 1)`` with ``c = k·t`` and ``T`` the unit triangle's cdf."""
        return np.array(self._params(), dtype=np.float64)

    def _breakpoints(self, x):
        mid, half, k, a, _, _ = self._params()
        centre = mid + k * (np.asarray(x, dtype=float) - mid)
        return np.stack([centre - a * half, centre, centre + a * half], axis=-1)
