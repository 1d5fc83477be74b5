"""The planar Laplace density integrated over the part of the plane clamped onto an edge or a corner.

In units of ``1 / rate`` (``u`` the distance of the true point from the edge, ``v`` its
offset along it), a report clamped onto an edge has the likelihood

    F(u, v) = ∫_u^∞ exp(−√(s² + v²)) ds = v ∫_{t₀}^∞ cosh t · exp(−v cosh t) dt,   t₀ = asinh(u / v)

(``s = v sinh t``; ``F(u, 0) = e^{−u}``, ``F(0, v) = v K₁(v)``), and a report clamped onto a
corner, in polar coordinates about it (``r = a cosh τ`` beyond each of the two sides),

    Q(u, w) = H(u) + H(w),   H(a) = ∫_{acosh(R/a)}^∞ (1 + a cosh τ) exp(−a cosh τ) / cosh τ dτ,

``R = √(u² + w²)`` (``Q(0, 0) = π/2``).  Both integrands are smooth and fall doubly
exponentially in ``t`` (``τ``), so one Gauss–Legendre rule of :data:`NODES` nodes up to
where the exponent has fallen by :data:`REACH` gives them to about 1e-13 relative
(:func:`edge_scaled` and :func:`quadrant` return them times ``e^R``, ``R = √(u² + v²)``).

A report on an edge needs ``F`` at every (report, point): the points' distances ``u`` from the
edge are few (a grid's columns), so :func:`edge_tables` tabulates ``F·e^R`` for each ``u`` as a
function of ``v`` on the intervals ``[0, u)``, ``[u, 2u)``, ``[2u, 4u)`` … (``F`` is analytic in
``v`` but for the branch points ``v = ±iu``: polynomials of :data:`DEGREE` terms through
Chebyshev nodes of these intervals, each halved, are good to about 1e-12), and
:func:`edge_rows` evaluates them (in powers of ``x``, Estrin's scheme) in one compiled pass;
:func:`interior_rows` is the density of the reports inside the region.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np

from .._numba_cache import key_on_sources

__all__ = ["edge_scaled", "quadrant", "edge_tables", "edge_rows", "interior_rows", "NODES", "DEGREE", "REACH"]

#: Gauss–Legendre nodes of the integrals in t (τ)
NODES = 128
#: the integrals stop where the exponent has fallen by REACH (e^-50 of the integrand left)
REACH = 50.0
#: Chebyshev terms per interval of the edge tables
DEGREE = 12
#: the smallest distance from an edge a table is scaled by (a point on the edge itself)
_FLOOR = 1e-12


@functools.cache
def _rule():
    t, w = np.polynomial.legendre.leggauss(NODES)
    return 0.5 * (t + 1.0), 0.5 * w  # on [0, 1]


@numba.njit(cache=True, nogil=True)
def _edge_one(u, v, t, w):
    """``F(u, v)·e^R`` (module notes) for ``u, v >= 0``."""
    if v * v <= 1e-17 * u or v < 1e-250:  # F·e^R = 1 + O(v²/u): 1 in binary64
        return 1.0
    r = math.sqrt(u * u + v * v)
    t0, t1 = math.asinh(u / v), math.acosh((r + REACH) / v)
    span = t1 - t0
    total = 0.0
    for a in range(t.size):
        c = math.cosh(t0 + span * t[a])
        total += w[a] * c * math.exp(r - v * c)
    return v * span * total


@numba.njit(cache=True, nogil=True)
def _half_quadrant(a, b, r, t, w):
    """``H(a)·e^R`` (module notes), ``b`` the other side's distance, ``r = √(a² + b²)``; 0 for
    ``a = 0``.  ``acosh(R/a)`` is taken as ``asinh(b/a)`` (exact where ``b ≪ a``)."""
    if a < 1e-250:  # H(a) = O(a)
        return 0.0
    t1, t2 = math.asinh(b / a), math.acosh((r + REACH) / a)
    span = t2 - t1
    total = 0.0
    for k in range(t.size):
        c = math.cosh(t1 + span * t[k])
        total += w[k] * (1.0 + a * c) * math.exp(r - a * c) / c
    return span * total


@numba.njit(cache=True, nogil=True)
def _edge_many(u, v, t, w, out):
    for i in range(u.size):
        out[i] = _edge_one(u[i], v[i], t, w)


@numba.njit(cache=True, nogil=True)
def _quadrant_many(u, v, t, w, out):
    for i in range(u.size):
        r = math.sqrt(u[i] * u[i] + v[i] * v[i])
        if r == 0.0:
            out[i] = 0.5 * math.pi
        else:
            out[i] = (_half_quadrant(u[i], v[i], r, t, w) + _half_quadrant(v[i], u[i], r, t, w)) * math.exp(-r)


def edge_scaled(u, v) -> np.ndarray:
    """``F(u, v)·e^{√(u² + v²)}`` elementwise (module notes), ``u, v >= 0`` in units of ``1 / rate``."""
    u, v = (np.ascontiguousarray(a, dtype=np.float64).ravel() for a in np.broadcast_arrays(u, v))
    out = np.empty(u.size)
    _edge_many(u, np.abs(v), *_rule(), out)
    return out


def quadrant(u, w) -> np.ndarray:
    """``Q(u, w)`` elementwise (module notes): the density ``e^{−r}`` over the quadrant beyond
    ``(u, w) >= 0``."""
    u, w = (np.ascontiguousarray(a, dtype=np.float64).ravel() for a in np.broadcast_arrays(u, w))
    out = np.empty(u.size)
    _quadrant_many(u, w, *_rule(), out)
    return out


def edge_tables(u, v_max: float) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, coefs)``: per distance ``u[i]`` from the edge, ``coefs[i, k]`` the polynomial
    (coefficients of ``1, x, x², …``, ``x`` on ``[-1, 1]``) interpolating ``F(u[i], v)·e^R`` at
    Chebyshev nodes on the ``k``-th interval of ``v / s`` up to ``v_max / s``
    (``s = scale[i] = max(u[i], 1e-12)``): ``[0, ½)``, ``[½, 1)``, then ``[a, 1.5a)`` and
    ``[1.5a, 2a)`` for ``a = 1, 2, 4`` … (:func:`_segment`)."""
    u = np.asarray(u, dtype=np.float64)
    scale = np.maximum(u, _FLOOR)
    octaves = max(1, math.frexp(float(v_max) * (1.0 + 1e-9) / float(scale.min()))[1])
    j = np.arange(DEGREE)
    x = np.cos(np.pi * (j + 0.5) / DEGREE)  # Chebyshev nodes on [-1, 1]
    low = np.concatenate([[0.0, 0.5], np.repeat(np.ldexp(1.0, np.arange(octaves)), 2) * np.tile([1.0, 1.5], octaves)])
    width = np.concatenate([[0.5, 0.5], np.repeat(np.ldexp(0.5, np.arange(octaves)), 2)])
    nodes = low[:, None] + width[:, None] * 0.5 * (x + 1.0)  # (segments, DEGREE), in units of s
    values = edge_scaled(np.repeat(u, nodes.size), (scale[:, None, None] * nodes).ravel())
    basis = (2.0 / DEGREE) * np.cos(np.pi * np.outer(j, j + 0.5) / DEGREE)
    basis[0] *= 0.5  # values at the nodes -> Chebyshev coefficients
    powers = np.zeros((DEGREE, DEGREE))  # row k: T_k in powers of x (T_k+1 = 2x·T_k − T_k-1)
    powers[0, 0], powers[1, 1] = 1.0, 1.0
    for k in range(2, DEGREE):
        powers[k, 1:] = 2.0 * powers[k - 1, :-1]
        powers[k] -= powers[k - 2]
    coefs = values.reshape(len(u), len(low), DEGREE) @ (powers.T @ basis).T
    return scale, np.ascontiguousarray(coefs)


@numba.njit(cache=True, nogil=True)
def _segment(q, last):
    """The interval of :func:`edge_tables` holding ``q = v / s`` and ``q``'s place in it on
    ``[-1, 1]`` (past the last interval, that one's series a little beyond)."""
    if q < 1.0:
        seg = 1 if q >= 0.5 else 0
        return seg, 4.0 * q - 1.0 - 2.0 * seg
    m, e = math.frexp(q)
    upper = 1 if m >= 0.75 else 0
    seg = 2 * e + upper
    if seg > last:
        return last, 8.0 * q / math.ldexp(1.0, (last - 1) // 2) - 7.0
    return seg, 8.0 * m - 5.0 - 2.0 * upper


@numba.njit(cache=True, nogil=True)
def interior_rows(y, rows, rates, centres, out):
    """``out[r, k] = exp(−rates[r]·|y[r] − centres[k]|)`` for the reports ``r`` in ``rows``."""
    for r in rows:
        a, b, e = y[r, 0], y[r, 1], rates[r]
        for k in range(centres.shape[0]):
            dx, dy = a - centres[k, 0], b - centres[k, 1]
            out[r, k] = math.exp(-e * math.sqrt(dx * dx + dy * dy))


@numba.njit(cache=True, nogil=True, fastmath={"contract"})
def edge_rows(along, rows, rate, position, column, u, scale, coefs, out):
    """``out[rows[r], k] = F(u_k, rate·|along[r] − position[k]|) / rate`` from :func:`edge_tables`:
    point ``k`` is at ``u[k]`` (in ``1 / rate``) from the edge, its table ``column[k]``."""
    last = coefs.shape[1] - 1
    n = coefs.shape[2]
    for r in range(along.size):
        row = rows[r]
        for k in range(position.size):
            v = rate * abs(along[r] - position[k])
            i = column[k]
            seg, x = _segment(v / scale[i], last)
            c = coefs[i, seg]  # Estrin's scheme, DEGREE = 12 terms
            x2 = x * x
            x4 = x2 * x2
            g = ((c[0] + c[1] * x) + x2 * (c[2] + c[3] * x)
                 + x4 * ((c[4] + c[5] * x) + x2 * (c[6] + c[7] * x))
                 + x4 * x4 * ((c[8] + c[9] * x) + x2 * (c[10] + c[11] * x)))
            out[row, k] = g * math.exp(-math.sqrt(u[k] * u[k] + v * v)) / rate


key_on_sources(globals())
