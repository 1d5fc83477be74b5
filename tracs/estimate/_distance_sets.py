"""The sets ``A`` and ``L`` of a report's distance test (:mod:`tracs.estimate._runs`).

A point whose distance input is ``u`` lies in ``A`` when the left end of ``u``'s central
interval (half-width ``C_r``) is at most the released ``u'``, and in ``L`` when its right
end is too; ``R = A \\ L``.  Both are ``u <= ρ`` (:func:`scale`).  With ``u = |τ − o| / R(o, φ')``
they are discs about the reference ``o``; with ``distance_along="true"`` (``tracs-d-paper``)
``u`` is the region's gauge about ``o`` and they are the region scaled by ``ρ`` about ``o``,
whose runs per row :func:`scaled_run` finds.
"""

from __future__ import annotations

import math

import numba

from .._numba_cache import key_on_sources
from ._coded import gauge

__all__ = ["UPPER", "LOWER", "in_set", "scale", "scaled_run"]

#: the two sets (``0`` is the wedge of :mod:`tracs.estimate._runs`)
UPPER, LOWER = 1, 2


@numba.njit(cache=True, nogil=True)
def in_set(kind, u, u2, c):
    """``A`` (``UPPER``: the left end of ``u``'s central interval is at most ``u'``) or ``L``
    (its right end is too) for a point of distance input ``u``."""
    left = min(max(u - c, 0.0), 1.0 - 2.0 * c)
    if kind == UPPER:
        return left <= u2
    return left + 2.0 * c <= u2 and not (u2 >= 1.0 and left + 2.0 * c >= 1.0)


@numba.njit(cache=True, nogil=True)
def scale(upper, u2, c):
    """The bound ``ρ`` on ``u`` of ``A`` (``upper``: ``u <= ρ``) or ``L`` (``u <= ρ``; ``u < ρ`` when
    ``u' = 1``, a tie the point test decides): ``inf`` for every point, ``-1`` for none."""
    if upper:
        if u2 + c >= 1.0 or u2 >= 1.0 - 2.0 * c:
            return math.inf
        return u2 + c
    if u2 >= 1.0:
        return 1.0 - c
    if u2 - 2.0 * c < 0.0:
        return -1.0
    return u2 - c


@numba.njit(cache=True, nogil=True)
def scaled_run(kind, rho, xs, x0, inv_dx, ox, vy, nx, ny, slack, u2, c):
    """Columns ``[l, r)`` of the row ``vy`` (about ``o``) in ``A`` or ``L`` when ``u`` is the gauge
    (``distance_along="true"``, :func:`tracs.estimate._coded.gauge`): the region scaled by ``ρ``
    about ``o``, ``n_k·v <= ρ·max(s_k, 0)`` for every edge ``k``.  The interval is widened by a
    bound on the rounding of both sides and then narrowed by the point test at its ends, so the
    run holds exactly the points the test accepts (a convex set meets the row in one run)."""
    n = xs.shape[0]
    if rho < 0.0:
        return n, n
    lo, hi = -math.inf, math.inf
    if rho != math.inf:
        for e in range(nx.shape[0]):
            s = max(slack[e], 0.0)
            a = nx[e]
            bound = rho * s - ny[e] * vy
            tol = 64.0 * 2.2e-16 * ((1.0 + rho) * s + abs(ny[e] * vy))
            if a == 0.0:
                if bound + tol < 0.0:
                    return n, n
            elif a > 0.0:
                hi = min(hi, ox + (bound + tol) / a)
            else:
                lo = max(lo, ox + (bound + tol) / a)
    if not hi >= lo:
        return n, n
    fl = min(max((lo - x0) * inv_dx - 1e-6, -1.0), n + 1.0)
    fr = min(max((hi - x0) * inv_dx + 1e-6, -2.0), n + 1.0)
    l = min(max(math.ceil(fl), 0), n)
    r = min(max(math.floor(fr) + 1, 0), n)
    while l < r and not in_set(kind, gauge(xs[l] - ox, vy, nx, ny, slack), u2, c):
        l += 1
    while r > l and not in_set(kind, gauge(xs[r - 1] - ox, vy, nx, ny, slack), u2, c):
        r -= 1
    if r <= l:
        return n, n
    return l, r


key_on_sources(globals())  # cached kernels follow every source they compile in
