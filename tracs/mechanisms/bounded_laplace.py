"""Bounded Laplace: the Laplace density renormalised on the input interval.

Holohan, Antonatos, Braghin & Mac Aonghusa, "The bounded Laplace mechanism in
differential privacy", Journal of Privacy and Confidentiality 10(1), 2020 (arXiv
2018); the OGPM paper (Zheng, Mishra & Hu, PETS 2025) compares against it as
"B-Laplace".

Given ``x ∈ [l, h]`` the output density on ``[l, h]`` is
``f(y | x) = exp(−|y − x|/b) / (b·C(x))`` with
``C(x) = 2 − e^{−(x−l)/b} − e^{−(h−x)/b}`` (the Laplace mass inside the interval).

Privacy: for inputs ``x1, x2`` and output ``y``,
``ln f(y|x1) − ln f(y|x2) = (|y − x2| − |y − x1|)/b + ln C(x2) − ln C(x1)``.
Holohan et al. (Theorem 3.5) show the mechanism is ε-DP for sensitivity ``Δ_f``
exactly when ``b ≥ Δ_f / (ε − ln ΔC(b))`` with ``ΔC(b) = C(l + Δ_f)/C(l)``; the
scale is the smallest such ``b``, found numerically (:func:`bounded_laplace_scale`).
Under local DP every pair of inputs is "neighbouring", so ``Δ_f = h − l`` and
``ΔC = C(h)/C(l) = 1`` by symmetry: the solution is ``b = Δ/ε``, and the worst
pair ``x1 = y = l``, ``x2 = h`` attains the ratio ``e^ε`` (checked on grids by the
tests).  Releases are on the public lattice: the cdf and sf are compiled
(:mod:`tracs.mechanisms._cdf_kernels`) and serve both the rows and the compiled
sampler, which realises the generic law of :mod:`tracs.mechanisms.lattice`
exactly (:mod:`tracs.mechanisms._inversion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _cdf_kernels
from ..errors import InputError
from ._base import Mechanism
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._domain import Interval
from ._inversion import CompiledInversion
from ._params import IntervalInput

__all__ = ["BoundedLaplace", "bounded_laplace_scale"]


def _mass(x, low, high, b):
    """``C(x)``: the Laplace(x, b) mass inside ``[low, high]`` (stable for large and small b)."""
    return -np.expm1(-(x - low) / b) - np.expm1(-(high - x) / b)


def bounded_laplace_scale(epsilon: float, low: float, high: float, sensitivity: float | None = None) -> float:
    """The smallest scale ``b`` with ``b ≥ Δ_f / (ε − ln ΔC(b))`` (Holohan et al., Theorem 3.5).

    ``sensitivity`` defaults to the interval's width (local DP), where the answer is
    ``(high − low)/ε``.  Solved by bracketing and Brent's method (SciPy).
    """
    from scipy.optimize import brentq

    width = high - low
    delta = width if sensitivity is None else float(sensitivity)
    if not 0 < delta <= width:
        raise InputError(f"sensitivity must lie in (0, high - low], got {sensitivity}")

    def gap(b):
        ratio = _mass(low + delta, low, high, b) / _mass(low, low, high, b)
        return delta / b + math.log(ratio) - epsilon

    lo = delta / epsilon  # gap(lo) >= 0 since ln ΔC >= 0 ...
    if gap(lo) <= 0:
        return lo  # ... and equals 0 when ΔC = 1 (local DP)
    hi = lo
    while gap(hi) > 0:
        hi *= 2.0
    return brentq(gap, lo, hi, xtol=1e-15 * hi, rtol=4 * np.finfo(float).eps)


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class BoundedLaplace(IntervalInput, CompiledInversion, Mechanism):
    """Bounded Laplace ("B-Laplace") from ``[low, high]`` (default ``[0, 1]``) onto the same interval.

    Density ``exp(−|y − x|/b) / (b·C(x))`` on ``[low, high]`` with the scale
    ``b = Δ/ε`` (``Δ = high − low``) that makes it ε-LDP (see the module notes for
    the argument).  Releases are cells of the public lattice over ``[low, high]``,
    drawn exactly from the cdf over each cell at the snapped input.

    %(interval_parameters)s

    References
    ----------
    Holohan et al., "The bounded Laplace mechanism in differential privacy", JPC 2020.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    resolution: float | None = None

    #: ``e^{-Δ/b} = e^{-ε}`` stays a normal double up to here
    max_epsilon = 700.0
    _LAW = _cdf_kernels.BOUNDED_LAPLACE

    @property
    def scale(self) -> float:
        """The Laplace scale ``b`` (:func:`bounded_laplace_scale`)."""
        return bounded_laplace_scale(self.epsilon, self.low, self.high)

    @property
    def output_domain(self) -> Interval:
        return Interval(self.low, self.high)

    def _pdf(self, y, x):
        b = self.scale
        return np.exp(-np.abs(y - x) / b) / (b * _mass(x, self.low, self.high, b))

    def _law_parameters(self) -> np.ndarray:
        """``(low, high, b)``: the cdf is ``(e^{−(x−y)/b} − e^{−(x−low)/b})/C(x)`` for ``y <= x``
        and ``(2 − e^{−(x−low)/b} − e^{−(y−x)/b})/C(x)`` above, written with ``expm1``."""
        return np.array([self.low, self.high, self.scale])

    def _breakpoints(self, x):
        return np.asarray(x, dtype=float)[..., None]
