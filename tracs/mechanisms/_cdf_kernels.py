"""Compiled cdfs of the bounded Laplace and II-PTT mechanisms, and their exact lattice sampler.

The masses left (``F``) and right (``S``) of an output ``y`` given an input
``x`` are written once here, as scalar compiled functions (:func:`cdf`,
:func:`sf`); the mechanisms' ``_cdf``/``_sf`` (hence ``lattice_row``,
``lattice_pmf``, ``lattice_cumulative`` and the generic NumPy sampler) and the
compiled sampler :func:`snapped_inversion` all evaluate these, so every
threshold the sampler compares against is the very double the rows are built
from.

**The law** is the generic one of :mod:`tracs.mechanisms.lattice`: with edges
``e_0 = A``, ``e_j = G + j·h`` (``0 < j < count``), ``e_count = B`` and a lazily
read uniform ``u``, the release is the smallest cell ``j`` with ``u < F(e_{j+1})``
when ``u < 1/2``, else the largest ``j`` with ``1 − u < S(e_j)``; for
thresholds non-decreasing in ``j`` (``F``) and non-increasing (``S``) the cell
``j`` then has probability ``|[F_j, F_{j+1}) ∩ [0, ½)| + |[S_{j+1}, S_j) ∩ [0, ½)|``
(:func:`~tracs.mechanisms.lattice.row_from_thresholds`).

**The sampler** finds that cell without a bisection: a closed-form inverse of
the continuous cdf at (about) ``u`` gives a guess ``j``, and exact comparisons
(:func:`~tracs.mechanisms.lattice_kernels.below`) against the two thresholds of
that cell move it until ``F_j <= u < F_{j+1}`` (``j = 0`` and ``j = count − 1``
need only one side) — usually none move it.  For monotone thresholds exactly
one cell satisfies both, the one the bisection finds, so the result is the
bisection's bit for bit (same words: word 0 gives ``u``'s leading 53 bits and the
11 snapping bits, ties read words 1, 2, …).  The guess only affects speed.  A
first pass checks the guesses on the 53 leading bits alone, the right side as the
left side of the mirrored law (:func:`mirror_parameters`, the same doubles as
:func:`sf`), and keeps every guess the check settles; the exact walk takes the
rest.

Monotonicity: II-PTT's thresholds use ``+ − × /`` and clamps only, each
monotone under rounding to nearest, so they are monotone in the edge; the
bounded Laplace ones are products and sums of ``exp``/``expm1`` of arguments
that are monotone in the edge, and adjacent edges differ by a relative
``ε·h/Δ`` of the mass, far above the sub-ulp errors of the library functions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from ..random.kernels import draw_u64
from .lattice_kernels import HALF53, MASK53, TWO53, below, compare, snap, split_word

__all__ = ["BOUNDED_LAPLACE", "TENT", "prepare", "cdf", "sf", "masses", "mirror_parameters", "mirror_state",
           "snapped_inversion"]

#: mechanism codes; parameters ``(low, high, b)`` and ``(mid, half, k, a, B, q0)``
BOUNDED_LAPLACE, TENT = 0, 1
#: first word of the tie extension of a sample
EXT_WORD = 1


# -- bounded Laplace: density e^{−|y − x|/b}/(b·C(x)) on [low, high] ------------------------
# ``near_low = −expm1(−(x − low)/b)`` and ``near_high = −expm1(−(high − x)/b)`` are the
# (unnormalised) masses between x and each end, ``C(x) = near_low + near_high``: the same
# doubles as ``−expm1(·) − expm1(·)`` written out (negation is exact), computed once per input.
@njit(cache=True, nogil=True, inline="always")
def _bl_prepare(x, low, high, b):  # pragma: no cover
    near_low = -math.expm1(-(x - low) / b)
    near_high = -math.expm1(-(high - x) / b)
    return near_low + near_high, near_low, near_high


@njit(cache=True, nogil=True, inline="always")
def _bl_cdf(y, x, low, high, b, mass, near_low):  # pragma: no cover
    y = min(max(y, low), high)
    if y <= x:
        left = -math.exp(-(x - y) / b) * math.expm1(-(y - low) / b)
    else:
        left = near_low - math.expm1(-(y - x) / b)
    return left / mass


@njit(cache=True, nogil=True, inline="always")
def _bl_sf(y, x, low, high, b, mass, near_high):  # pragma: no cover
    y = min(max(y, low), high)
    if y >= x:
        right = -math.exp(-(y - x) / b) * math.expm1(-(high - y) / b)
    else:
        right = near_high - math.expm1(-(x - y) / b)
    return right / mass


@njit(cache=True, nogil=True, inline="always")
def _bl_guess(p, x, end, b, mass, near, sign):  # pragma: no cover
    """About where the mass ``p`` from the end ``end`` is reached (``sign`` = +1 from ``low``).

    Between the end and ``x`` the unnormalised mass is ``e^z − e^ℓ`` (``z`` the
    offset from ``x`` in units of ``b`` towards the end, ``ℓ`` the end's), beyond
    ``x`` it is ``near − expm1(−z)``.
    """
    ell = -abs(x - end) / b
    cp = mass * p
    if cp <= near:
        z = math.log1p(cp - near) if ell > -10.0 else math.log(cp + math.exp(ell))
    else:
        z = -math.log1p(near - cp)
    return x + sign * b * z


# -- II-PTT: a floor q0 on [−B, B] plus a triangle of half width a and mass 1/k at c -------------
@njit(cache=True, nogil=True, inline="always")
def _triangle_cdf(z):  # pragma: no cover
    z = min(max(z, -1.0), 1.0)
    if z <= 0.0:
        return 0.5 * ((1.0 + z) * (1.0 + z))
    return 1.0 - 0.5 * ((1.0 - z) * (1.0 - z))


@njit(cache=True, nogil=True, inline="always")
def _tent_cdf(y, mid, half, k, a, B, q0, c):  # pragma: no cover
    u = min(max((y - mid) / half, -B), B)
    return min(q0 * (u + B) + _triangle_cdf((u - c) / a) / k, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _tent_sf(y, mid, half, k, a, B, q0, c):  # pragma: no cover
    u = min(max((y - mid) / half, -B), B)
    return min(q0 * (B - u) + _triangle_cdf((c - u) / a) / k, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _tent_guess(p, k, a, B, q0, c):  # pragma: no cover
    """About where the standard cdf with the triangle at ``c`` reaches ``p`` (piecewise quadratic)."""
    beta = q0 * a
    f1 = q0 * (c - a + B)
    if p <= f1:
        return p / q0 - B
    if p <= q0 * (c + B) + 0.5 / k:
        d = p - f1
        return c - a + a * (2.0 * d / (beta + math.sqrt(beta * beta + 2.0 * d / k)))
    f3 = q0 * (c + a + B) + 1.0 / k
    if p <= f3:
        d = f3 - p
        return c + a - a * (2.0 * d / (beta + math.sqrt(beta * beta + 2.0 * d / k)))
    return (p - 1.0 / k) / q0 - B


# -- dispatch ------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def prepare(law, x, p):  # pragma: no cover
    """The per-input constants of the masses: ``(C(x), near_low, near_high)`` (bounded Laplace)
    or ``(c, 0, 0)`` with ``c`` the triangle's centre (II-PTT)."""
    if law == BOUNDED_LAPLACE:
        return _bl_prepare(x, p[0], p[1], p[2])
    return p[2] * (x - p[0]) / p[1], 0.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def cdf(law, y, x, s, p):  # pragma: no cover
    """``F(y | x)`` with ``s = prepare(law, x, p)``."""
    if law == BOUNDED_LAPLACE:
        return _bl_cdf(y, x, p[0], p[1], p[2], s[0], s[1])
    return _tent_cdf(y, p[0], p[1], p[2], p[3], p[4], p[5], s[0])


@njit(cache=True, nogil=True, inline="always")
def sf(law, y, x, s, p):  # pragma: no cover
    """``S(y | x)`` with ``s = prepare(law, x, p)``."""
    if law == BOUNDED_LAPLACE:
        return _bl_sf(y, x, p[0], p[1], p[2], s[0], s[2])
    return _tent_sf(y, p[0], p[1], p[2], p[3], p[4], p[5], s[0])


@njit(cache=True, nogil=True, inline="always")
def _guess(law, right, prob, x, s, p):  # pragma: no cover
    """An output near where ``F`` (``right``: ``S``) reaches ``prob``."""
    if law == BOUNDED_LAPLACE:
        if right:
            return _bl_guess(prob, x, p[1], p[2], s[0], s[2], -1.0)
        return _bl_guess(prob, x, p[0], p[2], s[0], s[1], 1.0)
    mid, half = p[0], p[1]
    if right:  # the mirror image: S(y) is F(−y) with the triangle at −c
        return mid - half * _tent_guess(prob, p[2], p[3], p[4], p[5], -s[0])
    return mid + half * _tent_guess(prob, p[2], p[3], p[4], p[5], s[0])


@njit(cache=True, nogil=True)
def masses(law, right, y, x, p):  # pragma: no cover
    """:func:`cdf` (``right``: :func:`sf`) of the 1-D arrays ``y`` and ``x`` (same length)."""
    out = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        s = prepare(law, x[i], p)
        out[i] = sf(law, y[i], x[i], s, p) if right else cdf(law, y[i], x[i], s, p)
    return out


@njit(cache=True, nogil=True, inline="always")
def _cell(law, first, x, s, p, G, h, count, kind, key, stream, index):  # pragma: no cover
    """The cell of the generic law for the uniform whose leading 53 bits are ``first`` (module notes)."""
    last = count - 1
    if first < HALF53:  # u < 1/2: F_j <= u < F_{j+1}
        guess = (_guess(law, False, (float(np.int64(first)) + 0.5) / TWO53, x, s, p) - G) / h
        j = int(min(guess, float(last))) if guess > 0.0 else 0
        while j > 0 and below(first, cdf(law, G + j * h, x, s, p), kind, key, stream, index, EXT_WORD, False):
            j -= 1
        while j < last and not below(first, cdf(law, G + (j + 1) * h, x, s, p), kind, key, stream, index,
                                     EXT_WORD, False):
            j += 1
        return j
    flipped = first ^ MASK53  # the leading bits of 1 − u: S_{j+1} <= 1 − u < S_j
    guess = (_guess(law, True, (float(np.int64(flipped)) + 0.5) / TWO53, x, s, p) - G) / h
    j = int(min(guess, float(last))) if guess > 0.0 else 0
    while j < last and below(flipped, sf(law, G + (j + 1) * h, x, s, p), kind, key, stream, index, EXT_WORD,
                             True):
        j += 1
    while j > 0 and not below(flipped, sf(law, G + j * h, x, s, p), kind, key, stream, index, EXT_WORD, True):
        j -= 1
    return j


@njit(cache=True, nogil=True)
def mirror_parameters(law, p):  # pragma: no cover
    """``p'`` with ``S(y | x) = F'(−y | −x)``: ``(−high, −low, b)`` or ``(−mid, half, k, a, B, q0)``.

    :func:`cdf` with these (and :func:`mirror_state`) gives the very doubles of
    :func:`sf`: negation is exact, ``(−a) − (−b) = b − a`` and ``B + (−u) = B − u``
    in binary64, and the clamps are symmetric (checked bit for bit by the tests).
    """
    if law == BOUNDED_LAPLACE:
        return np.array([-p[1], -p[0], p[2]])
    return np.array([-p[0], p[1], p[2], p[3], p[4], p[5]])


@njit(cache=True, nogil=True, inline="always")
def mirror_state(law, s):  # pragma: no cover
    """:func:`prepare` of the mirrored law: the end masses swapped, or the centre negated."""
    if law == BOUNDED_LAPLACE:
        return s[0], s[2], s[1]
    return -s[0], s[1], s[2]


@njit(cache=True, nogil=True, inline="always")
def _setup(law, first, x, p, mp, G, h, count):  # pragma: no cover
    """The guessed cell of :func:`_cell` and what checking it needs, both sides through :func:`cdf`.

    Returns ``(w, σ, s', p', j, a, b)``: the leading bits ``w`` of ``u`` (``1 − u``
    on the right, then the law is mirrored: ``σ = −1``), the guess ``j``, the edge
    ``a`` whose threshold ``w`` must not be below and the edge ``b`` whose
    threshold it must be below.
    """
    s = prepare(law, x, p)
    right = first >= HALF53
    w = first ^ MASK53 if right else first
    sigma = -1.0 if right else 1.0
    ss = mirror_state(law, s) if right else s
    pp = mp if right else p
    guess = (sigma * (_guess(law, False, (float(np.int64(w)) + 0.5) / TWO53, sigma * x, ss, pp)) - G) / h
    j = int(min(guess, float(count - 1))) if guess > 0.0 else 0
    return w, sigma, ss, pp, j, (j + 1 if right else j), (j if right else j + 1)


@njit(cache=True, nogil=True, inline="always")
def _holds(w, a, b, ta, tb, count):  # pragma: no cover
    """Whether ``ta <= u' < tb`` is settled on the 53 leading bits (inner edges only)."""
    ok_a = (a <= 0) | (a >= count) | (compare(w, ta) == 0)
    ok_b = (b <= 0) | (b >= count) | (compare(w, tb) == 1)
    return ok_a & ok_b


@njit(cache=True, nogil=True)
def snapped_inversion(xs, law, p, n, origin, spacing, top, G, h, count, kind, key, stream):  # pragma: no cover
    """Lattice indices for the inputs ``xs`` (index = position): snap to the input lattice
    ``origin + k·spacing`` (``n`` cells, points capped at ``top``), then the cell of :func:`_cell`.

    Three passes: the words and the snapping (vector code); the guess of every
    element and the check of its two thresholds, two elements at a time (their
    independent chains of library calls overlap), keeping the guess where the
    check settles it — then :func:`_cell` would return it unmoved, with no tie
    read; :func:`_cell` for the rest (a guess off by a cell, or a tie).
    """
    size = xs.shape[0]
    firsts = np.empty(size, dtype=np.uint64)
    points = np.empty(size)
    for i in range(size):
        first, bits = split_word(draw_u64(kind, key, stream, i, 0))
        k = snap((xs[i] - origin) / spacing, n, bits)
        firsts[i] = first
        points[i] = min(origin + float(k) * spacing, top)
    out = np.full(size, -1, dtype=np.int64)
    mp = mirror_parameters(law, p)
    half = size // 2
    for i in range(half):
        i2 = i + half
        x1, x2 = points[i], points[i2]
        w1, g1, s1, p1, j1, a1, b1 = _setup(law, firsts[i], x1, p, mp, G, h, count)
        w2, g2, s2, p2, j2, a2, b2 = _setup(law, firsts[i2], x2, p, mp, G, h, count)
        ta1 = cdf(law, g1 * (G + a1 * h), g1 * x1, s1, p1)
        ta2 = cdf(law, g2 * (G + a2 * h), g2 * x2, s2, p2)
        tb1 = cdf(law, g1 * (G + b1 * h), g1 * x1, s1, p1)
        tb2 = cdf(law, g2 * (G + b2 * h), g2 * x2, s2, p2)
        out[i] = j1 if _holds(w1, a1, b1, ta1, tb1, count) else -1
        out[i2] = j2 if _holds(w2, a2, b2, ta2, tb2, count) else -1
    for i in range(size):
        if out[i] < 0:
            x = points[i]
            out[i] = _cell(law, firsts[i], x, prepare(law, x, p), p, G, h, count, kind, key, stream, i)
    return out


key_on_sources(globals())  # cached kernels follow every source they compile in
