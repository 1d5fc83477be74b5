"""The square-error optimal piecewise mechanism: the paper's reduced form, solved numerically.

Zheng, Mishra & Hu (PETS 2025) state that one closed form (their Theorem 3.7 on an
interval, Theorem 4.2 on the circle: central density ``e^{ε/2}``) is optimal for both
the absolute and the square error.  For the square error it is not: the worst-case
``E(Y − x)²`` of the three-piece family is minimised by a different central density,
found here with a SciPy optimiser over the paper's own reduced form (Appendix B.4,
Figure 5).

Reduced form (unit interval ``[0, 1]``; Theorem 3.6 carries it to any ``[low, high]``)
----------------------------------------------------------------------------------
A three-piece mechanism has density ``p`` on a central piece ``[l(x), l(x) + s)`` and
``q = p·e^{−ε}`` elsewhere (ratio ``e^ε``: ε-LDP for every ``p``).  Write
``p = e^{εu}`` with ``u ∈ [0, 1]``; normalisation ``s·p + (1 − s)·q = 1`` gives

* central width ``s = E(ε(1 − u))/E(ε)`` with ``E = expm1``,
* low-density mass ``(p − 1)/(e^ε − 1) = E(εu)/E(ε)``.

*Placement.*  For fixed ``p`` the error at ``x`` is
``q·∫₀¹(y − x)² dy + (p − q)·∫_l^{l+s}(y − x)² dy``; the second integral is convex in
``l`` with derivative ``(p − q)·s·(2l + s − 2x)``, so the best ``l`` is ``x − s/2``
clipped to ``[0, 1 − s]`` — the same centred, slid-at-the-ends placement as the
absolute-error mechanism.

*Worst case.*  With that placement ``Err(x)`` is largest at the end points (the
paper's Lemma 3.2; directly: both terms decrease as ``x`` moves inwards), so the
worst case is

``Err(0) = D(u)/3``,  ``D(u) = e^{−εv}·(1 + E(εv)³/E(ε)²)``,  ``v = 1 − u``.

*The optimum.*  With ``a = e^ε``, ``dD/dp`` has the sign of
``h(p) = (a − 2)p³ + 3ap − 2a²``; ``h(1) = −2(a − 1)² < 0 < a²(a − 1)² = h(a)``
and ``h`` has a single sign change on ``[1, a]``, so ``D`` is unimodal in ``u`` and
:func:`square_exponent` finds its unique minimiser with a bounded scalar optimiser.
For the absolute error the same reduction gives ``u = 1/2`` exactly (Theorem 3.7);
for the square error ``u → 1 − 1/√3 ≈ 0.42`` as ``ε → 0`` and ``u → 1/3`` (with
``p ≈ (2e^ε)^{1/3}``) as ``ε → ∞``, so its worst-case error decays like ``e^{−2ε/3}``
where Theorem 3.7's decays like ``e^{−ε/2}``.

*The circle.*  On a circle of period 1 with the arc centred at ``x`` the squared
circular distance has the constant expectation
``2·[q·(1/2)³/3 + (p − q)·(s/2)³/3] = D(u)/12``: the same function of ``u``, hence the
same optimum (the paper's Figure 5 reduction, Lemma 4.1).

Guarantee
---------
The mechanism minimises the worst-case square error among *all* generalized piecewise
mechanisms from ``[0, 1]`` to itself, with any number of pieces (the paper's
Definition 3.1), to the optimiser's tolerance (``|Δu| <= 1e-8``; checked against a
brute-force grid and random five-piece mechanisms in the tests).  Argument: a GPM's
densities do not depend on ``x`` and lie in ``[m, e^ε·m]`` for its smallest density
``m``, so its worst case is at least its error at ``x = 0``, ``∫ y² f(y) dy``, and among
densities with values in ``[m, e^ε·m]`` and mass 1 this integral is smallest for
``e^ε·m`` on ``[0, s)`` and ``m`` after (moving mass towards 0 lowers it); minimising
over ``m`` is the one-dimensional problem above, whose optimum the mechanism attains at
its worst-case input.  So the paper's Hypothesis 3.1 is not needed here (the same
argument applies to the absolute error and Theorem 3.7).  Privacy does not depend on the
solver's accuracy: every ``u`` gives density ratio ``e^ε``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

from ..errors import InputError

__all__ = ["LOSSES", "check_loss", "square_exponent", "SquareShape", "square_shape", "worst_square_error"]

#: the losses the optimal mechanisms are built for
LOSSES = ("absolute", "square")

def check_loss(loss) -> str:
    """Validate the ``loss`` of an optimal mechanism: ``"absolute"`` or ``"square"``."""
    if not isinstance(loss, str) or loss not in LOSSES:
        raise InputError(f"loss must be 'absolute' (worst-case E|y - x|) or 'square' "
                         f"(worst-case E(y - x)^2), got {loss!r}")
    return loss

def _log_expm1(t: float) -> float:
    """``log(e^t − 1)`` for ``t >= 0`` without overflow (``-inf`` at 0)."""
    if t <= 0.0:
        return -math.inf
    return t + math.log(-math.expm1(-t))

def log_worst_square(u: float, epsilon: float) -> float:
    """``log D(u)``: the log of three times the worst-case square error on ``[0, 1]``."""
    v = 1.0 - u
    return -epsilon * v + math.log1p(math.exp(3.0 * _log_expm1(epsilon * v) - 2.0 * _log_expm1(epsilon)))

def log_square_gain(u: float, epsilon: float) -> float:
    """``log(1 − D(u))``, accurate where ``D`` is close to 1 (small ε).

    ``1 − D = E(εu)·E(εv)·(E(ε)(1 + p) − E(εu)) / (p·E(ε)²)`` with ``p = e^{εu}``; the
    bracket is at least ``E(ε)`` (no cancellation).  Used only where ``D(1/2) >= 1/2``
    (ε below about 2), so nothing overflows.
    """
    eu, ev, e1 = math.expm1(epsilon * u), math.expm1(epsilon * (1.0 - u)), math.expm1(epsilon)
    if eu <= 0.0 or ev <= 0.0:
        return -math.inf
    p = math.exp(epsilon * u)
    log_bracket = math.log(e1 * (1.0 + p) - eu)
    return math.log(eu) + math.log(ev) + log_bracket - epsilon * u - 2.0 * _log_expm1(epsilon)

@functools.lru_cache(maxsize=512)
def square_exponent(epsilon: float) -> float:
    """The exponent ``u`` of the square-error optimal central density ``p = e^{εu}``.

    Solved by :func:`scipy.optimize.minimize_scalar` (bounded Brent on ``(0, 1)``,
    ``xatol = 1e-12``) on the reduced worst-case objective ``D(u)`` of the module
    docstring: on ``log D`` where ``D`` is small, on ``−log(1 − D)`` where ``D`` is
    close to 1 (small ε), so that the objective keeps its resolution at every ε.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0`` (validated by the mechanisms).

    Returns
    -------
    float
        ``u`` in ``(0, 1)``.
    """
    epsilon = float(epsilon)
    if math.exp(log_worst_square(0.5, epsilon)) < 0.5:
        objective = functools.partial(_safe, log_worst_square, epsilon, 1.0)
    else:
        objective = functools.partial(_safe, log_square_gain, epsilon, -1.0)
    from scipy.optimize import minimize_scalar  # imported here: scipy.optimize costs 0.4 s to import

    result = minimize_scalar(objective, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    return float(result.x)

def _safe(f, epsilon, sign, u):
    value = sign * f(u, epsilon)
    return value if math.isfinite(value) else math.inf

class SquareShape(NamedTuple):
    """The square-error optimal mechanism on the unit interval (or circle of period 1).

    ``high = e^{εu}`` and ``low = e^{ε(u − 1)}`` are the densities, ``width`` the
    central piece's length, ``central_mass = high·width`` and ``side_mass`` the rest
    (each computed without cancellation).
    """

    exponent: float
    high: float
    low: float
    width: float
    central_mass: float
    side_mass: float

@functools.lru_cache(maxsize=512)
def square_shape(epsilon: float) -> SquareShape:
    """:class:`SquareShape` at ``epsilon`` (cached; see :func:`square_exponent`)."""
    epsilon = float(epsilon)
    u = square_exponent(epsilon)
    log_e1 = _log_expm1(epsilon)
    log_width = _log_expm1(epsilon * (1.0 - u)) - log_e1
    side = math.exp(_log_expm1(epsilon * u) - log_e1)
    return SquareShape(u, math.exp(epsilon * u), math.exp(epsilon * (u - 1.0)), math.exp(log_width),
                       math.exp(epsilon * u + log_width), side)

def worst_square_error(epsilon: float, exponent: float | None = None) -> float:
    """``max_x E(Y − x)²`` on ``[0, 1]`` of the three-piece mechanism with ``p = e^{ε·exponent}``.

    Defaults to the optimal exponent.  Multiply by ``(high − low)²`` for another
    interval, and divide by 4 for the circle of period 1 (see the module docstring).
    """
    u = square_exponent(epsilon) if exponent is None else float(exponent)
    return math.exp(log_worst_square(u, float(epsilon))) / 3.0
