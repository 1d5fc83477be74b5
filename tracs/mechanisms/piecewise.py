"""Peer piecewise-constant mechanisms: Square Wave, the Piecewise Mechanism and PTT (type I).

Each has two density levels ``p`` and ``p·e^{-ε}`` (ratio exactly ``e^ε``:
ε-LDP) on an enlarged output interval, and reuses the exact sampler, pdf, cdf and
closed-form errors of :class:`~tracs.mechanisms.PiecewiseConstantMechanism`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from ._base import PiecewiseConstantMechanism
from ._docs import MECHANISM_PARAMETERS, fill_doc
from ._numeric import EXP_MAX, exp_tail, logistic, over_expm1
from ._params import IntervalInput, check_parameter

__all__ = ["SquareWave", "PiecewiseMechanism", "PTT", "square_wave_b", "ptt_theorem4_eta"]


def square_wave_b(epsilon: float) -> float:
    """Half-width ``b`` of the Square Wave's high-density window on the unit interval.

    ``b = (ε e^ε − e^ε + 1)/(2 e^ε (e^ε − 1 − ε))``, written as
    ``T(−ε)/(2 T(ε))`` with ``T(t) = e^t − 1 − t``: no cancellation for tiny ε
    (``b → 1/2``) and no overflow for large ε (``b ≈ (ε − 1)e^{-ε}/2``).
    """
    if epsilon > 1.0:
        # divide both T's by e^ε
        top = exp_tail(-epsilon, 2) * math.exp(-epsilon)
        bottom = 1.0 - (1.0 + epsilon) * math.exp(-epsilon)
        return top / (2.0 * bottom)
    return exp_tail(-epsilon, 2) / (2.0 * exp_tail(epsilon, 2))


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class SquareWave(IntervalInput, PiecewiseConstantMechanism):
    """Square Wave mechanism (SW) from ``[low, high]`` (default ``[0, 1]``) to an enlarged interval.

    On the unit interval the output lies in ``[−b, 1 + b]`` with ``b`` from
    :func:`square_wave_b`; the density is ``p = e^ε/(2b e^ε + 1)`` on
    ``[x − b, x + b)`` and ``q = 1/(2b e^ε + 1) = p·e^{-ε}`` elsewhere.  Other
    intervals are scaled linearly (widths multiply by ``high − low``).
    Guarantee: density ratio at most ``e^ε`` between any two inputs (ε-LDP).

    %(interval_parameters)s

    References
    ----------
    Li et al., "Estimating numerical distributions under local differential
    privacy", SIGMOD 2020; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    low: float = 0.0
    high: float = 1.0
    resolution: float | None = None

    #: cells of mass about ε·resolution/2 near the window's middle: below this the
    #: cumulative thresholds are too coarse
    min_epsilon = 1e-3

    @property
    def b(self) -> float:
        """Half-width of the high-density window on the unit interval.

        It underflows to 0 for ε above about 745 (it is ``≈ (ε − 1)e^{-ε}/2``); the
        window's probability stays exact (:meth:`_window_odds`), so sampling then
        releases the input itself with that probability, as the true window
        rounds to it.  That is not a faithful continuous law: positions inside the
        window are resolved only while it spans many doubles, i.e. while
        ``2b >= 2^-40`` (ε up to about 31); use larger ε only where that is
        acceptable (ATP caps its radius report there).
        """
        return square_wave_b(self.epsilon)

    def _window_odds(self) -> float:
        """``2b·e^ε``: the odds of the high-density window, finite for every ε.

        ``T(−ε)/T(ε)·e^ε`` with ``T(t) = e^t − 1 − t`` (written as for
        :func:`square_wave_b`); ``≈ ε − 1`` for large ε.
        """
        eps = self.epsilon
        if eps > 1.0:
            return exp_tail(-eps, 2) / (1.0 - (1.0 + eps) * math.exp(-eps))
        return exp_tail(-eps, 2) * math.exp(eps) / exp_tail(eps, 2)

    def _support(self):
        w = (self.high - self.low) * self.b
        return self.low - w, self.high + w

    def _densities(self):
        # q = 1/(2b e^ε + 1),  p = q·e^ε  (per unit of the input interval)
        if self.epsilon >= EXP_MAX:
            raise InputError(f"SquareWave's high density e^ε/(2b e^ε + 1) exceeds the "
                             f"floating-point range for epsilon >= {EXP_MAX} (got "
                             f"{self.epsilon}); sampling is supported, densities and errors "
                             "are not")
        q = 1.0 / ((self._window_odds() + 1.0) * (self.high - self.low))
        return q * math.exp(self.epsilon), q

    def _central_width(self):
        return 2.0 * self.b * (self.high - self.low)

    def _central_mass(self):
        # 2b·p = 2b e^ε/(2b e^ε + 1): odds to probability
        odds = self._window_odds()
        return odds / (odds + 1.0)

    def _side_mass(self):
        # 1/(2b e^ε + 1): about 1/ε for large ε, never tiny
        return 1.0 / (self._window_odds() + 1.0)

    def _central_left(self, x):
        return x - self.b * (self.high - self.low)

    def _gaps(self, x):
        return x - self.low, self.high - x

    def _overhang(self):
        w = self.b * (self.high - self.low)
        return w, w


class _UnbiasedPiecewise(IntervalInput, PiecewiseConstantMechanism):
    #: the output interval grows like 1/ε; below this its cells are too fine
    min_epsilon = 1e-3

    """Type-I piecewise transformation on ``[low, high]`` (default ``[-1, 1]``).

    In standard coordinates ``t = (2x − low − high)/(high − low) ∈ [−1, 1]`` the
    output lies in ``[−B, B]`` and has density ``p`` on ``[k t − a, k t + a)`` and
    ``p·e^{-ε}`` elsewhere.  With ``η = B/a > 1`` as the free parameter, unbiasedness
    (``E[Y] = x``) and total mass 1 fix ``k = 1 + η/(e^ε − 1)``, ``a = k/(η − 1)``,
    ``B = η a`` and ``p = e^ε/(2ak(e^ε − 1))``; the central mass is
    ``1/(k(1 − e^{-ε}))``.  Subclasses give ``η`` (:meth:`_eta`).
    """

    low: float
    high: float

    def _eta(self) -> float:
        raise NotImplementedError

    def _standard(self) -> tuple[float, float, float]:
        """``(k, a, B)`` in standard coordinates."""
        eta = self._eta()
        k = 1.0 + over_expm1(eta, self.epsilon)
        a = k / (eta - 1.0)
        return k, a, eta * a

    @property
    def slope(self) -> float:
        """``k``: the centre of the high-density piece is ``k·t``."""
        return self._standard()[0]

    def _half(self) -> float:
        return (self.high - self.low) / 2.0

    def _support(self):
        mid, half = (self.low + self.high) / 2.0, self._half()
        bound = self._standard()[2] * half
        return mid - bound, mid + bound

    def _densities(self):
        k, a, _ = self._standard()
        half = self._half()
        # p = 1/(2ak(1 − e^{-ε})),  q = p·e^{-ε} = 1/(2ak(e^ε − 1))
        return 1.0 / (-2.0 * a * k * math.expm1(-self.epsilon) * half), \
            over_expm1(1.0 / (2.0 * a * k * half), self.epsilon)

    def _central_width(self):
        return 2.0 * self._standard()[1] * self._half()

    def _central_mass(self):
        return 1.0 / (-self._standard()[0] * math.expm1(-self.epsilon))

    def _side_mass(self):
        # k(1 − e^{-ε}) = 1 + (η − 1)e^{-ε}, so the sides hold t/(1 + t), t = (η − 1)e^{-ε}
        t = (self._eta() - 1.0) * math.exp(-self.epsilon)
        return t / (1.0 + t)

    def _central_left(self, x):
        k, a, _ = self._standard()
        mid, half = (self.low + self.high) / 2.0, self._half()
        return mid + half * (k * ((x - mid) / half) - a)

    def _gaps(self, x):
        # l − A = k(x − low),  B − r = k(high − x)  (B = k + a in standard units)
        k = self._standard()[0]
        return k * (x - self.low), k * (self.high - x)

    def _overhang(self):
        # B − 1 = (k − 1) + a, with k − 1 = η/(e^ε − 1) in closed form
        a = self._standard()[1]
        w = self._half() * (over_expm1(self._eta(), self.epsilon) + a)
        return w, w


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class PiecewiseMechanism(_UnbiasedPiecewise):
    """Piecewise Mechanism (PM) from ``[low, high]`` (default ``[-1, 1]``), unbiased.

    On ``[-1, 1]``: output ``[−C, C]`` with ``C = (s + 1)/(s − 1)``, ``s = e^{ε/2}``;
    density ``p = (e^ε − s)/(2s + 2)`` on ``[l(x), l(x) + C − 1)`` with
    ``l(x) = (C + 1)/2·x − (C − 1)/2``, and ``p·e^{-ε}`` elsewhere; ``E[Y] = x``.
    It is the member ``η = s + 1`` of the type-I family (:class:`PTT`).
    Guarantee: density ratio at most ``e^ε`` (ε-LDP).

    %(interval_parameters)s

    References
    ----------
    Wang et al., "Collecting and analyzing multidimensional data with local
    differential privacy", ICDE 2019; ``docs/mechanisms.md`` §4.
    """

    epsilon: float
    low: float = -1.0
    high: float = 1.0
    resolution: float | None = None

    def _eta(self):
        return math.exp(self.epsilon / 2.0) + 1.0

    def _standard(self):
        # closed forms: k = s/(s − 1) = 1 + 1/(s − 1),  a = 1/(s − 1),  B = (s + 1)/(s − 1)
        a = 1.0 / math.expm1(self.epsilon / 2.0)
        return 1.0 + a, a, 1.0 + 2.0 * a

    def _central_mass(self):
        return logistic(self.epsilon / 2.0)  # s/(s + 1)

    def _side_mass(self):
        return logistic(-self.epsilon / 2.0)  # 1/(s + 1)


def ptt_theorem4_eta(epsilon: float) -> float:
    """``η₀ = 1 + u^{1/3} + u^{-1/3}`` with ``u = e^ε + √(e^{2ε} − 1)`` (OPTT paper, Theorem 4).

    ``η₀ − 1`` is the real root of ``w³ − 3w − 2e^ε = 0``.  Written with
    ``u^{-1/3}`` instead of the cube root of ``e^ε − √(e^{2ε} − 1)``, which
    cancels catastrophically for large ε.
    """
    # log u = ε + log(1 + √(1 − e^{−2ε})): no overflow for any ε
    log_u = epsilon + math.log1p(math.sqrt(-math.expm1(-2.0 * epsilon)))
    return 1.0 + math.exp(log_u / 3.0) + math.exp(-log_u / 3.0)


@fill_doc(MECHANISM_PARAMETERS)
@dataclass(frozen=True, kw_only=True, repr=False)
class PTT(_UnbiasedPiecewise):
    """Type-I piecewise transformation technique (I-PTT) with the OPTT paper's variance-optimal ``a``.

    In standard coordinates ``t = (2x − low − high)/(high − low) ∈ [−1, 1]``:
    density ``p`` on ``[k t − a, k t + a)`` and ``p·e^{-ε}`` on the rest of
    ``[−B, B]``, ``B = η a``; unbiasedness and total mass 1 fix
    ``k = 1 + η/(e^ε − 1)``, ``a = k/(η − 1)``, ``p = e^ε/(2ak(e^ε − 1))``.
    By default ``η = B/a`` is the paper's Theorem 4 value
    :func:`ptt_theorem4_eta`, i.e. ``a = k/(η₀ − 1)`` (its Eq. 19); pass ``eta``
    to choose another member (``eta = e^{ε/2} + 1`` gives PM).
    Guarantee: density ratio at most ``e^ε`` (ε-LDP; its Theorem 1).

    %(interval_parameters)s
    eta : float, optional
        ``η = B/a > 1``; default: Theorem 4's ``η₀``.

    Notes
    -----
    The paper minimises its Eq. (A.1) over ``η`` with ``k`` held fixed, but total
    mass 1 ties them: ``k = 1 + η/(e^ε − 1)``.  With that constraint ``η₀`` is
    close to the minimiser of the variance at the interval's centre for ε ≳ 3,
    not of the worst-case variance (e.g. ε = 1: worst-case variance 5.97 for
    ``η₀`` vs 5.22 for PM).  Its Eq. (17) for PM, ``k = 2s/(s − 1)``,
    ``a = 2/(s − 1)``, is twice the normalised ``k = s/(s − 1)``, ``a = 1/(s − 1)``.

    References
    ----------
    Ma, Zhu & Wang, "OPTT: Optimal piecewise transformation technique for
    analyzing numerical data under local differential privacy", Theorems 1–4 and
    Appendix A.
    """

    epsilon: float
    low: float = -1.0
    high: float = 1.0
    eta: float | None = None
    resolution: float | None = None

    def _validate_parameters(self):
        super()._validate_parameters()
        check_parameter(self, "eta", lambda v: v > 1.0, "be > 1", optional=True)

    def _eta(self):
        return ptt_theorem4_eta(self.epsilon) if self.eta is None else self.eta
