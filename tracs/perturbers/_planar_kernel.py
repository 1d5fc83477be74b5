"""Compiled (numba) sampler of the discrete planar Laplace perturber.

Law of one release (grid ``xmin + i·h_x``, ``ymin + j·h_y``, ``0 <= i, j <= n``):

1. each coordinate is snapped to the grid by randomised rounding
   (:func:`~tracs.mechanisms._lattice_kernels.snap`), giving the index ``k``;
2. an offset ``d ∈ Z²`` is drawn with probability ∝ ``exp(−a‖v‖)``,
   ``v = (d_x h_x, d_y h_y)``, by rejection: each axis proposes a two-sided
   geometric ``D = ±M`` with ``P(D = d) ∝ r^{|d|}``, ``r = e^{−b h}``,
   ``b = a/√2`` — the magnitude ``M`` by exact inversion of its tails
   ``T_m = P(M >= m) = 2r^m/(1 + r)`` (:func:`~tracs.mechanisms._geometric.magnitude`),
   the sign by one bit — and the pair is accepted when ``u < exp(g)``,
   ``g = b‖v‖₁ − a‖v‖ <= 0`` (``‖v‖₁ <= √2‖v‖``); otherwise a fresh attempt;
3. the released index is ``clamp(k + d, 0, n)`` per axis.

The proposal has mass ∝ ``exp(−b‖v‖₁)`` and acceptance ``exp(−a‖v‖ + b‖v‖₁)``,
so an accepted offset has mass ∝ ``exp(−a‖v‖)`` (about ``π/4`` of attempts
are accepted).  The realised law is exactly this one for the computed doubles
``T_m`` and ``exp(g)``: every comparison of a uniform with them is exact
(:func:`~tracs.mechanisms._lattice_kernels.below`).

**Speed without changing the law.**  ``M`` and the acceptance are decided from
``ln u`` when the computed logarithm lies farther from the threshold than every
rounding and the unread bits of ``u`` can move it (:func:`quick_accept`,
:func:`~tracs.mechanisms._geometric.quick_magnitude`); the rare rest (ties within
a few ulps, about ``1e-7`` of draws) is compared exactly.  Either way the answer
is the exact comparison's.  :func:`planar_kernel` handles each point's first
attempt in a loop without data-dependent control flow over chunks of points,
then takes the rejected (about 21 %) and the undecided draws through the exact
scalar path (:func:`exact_offset`), which yields the same numbers as running the
exact path alone (:func:`planar_reference`; the tests compare them).

**Random words of point i** (``stream_of[i]``, ``index_of[i]``; a release
depends on nothing else): attempt ``t = 0, 1, …`` reads words ``3t`` (x),
``3t + 1`` (y) and ``3t + 2`` (acceptance).  The first 53 bits of each are its
uniform; the low 11 bits of words 0 and 1 are the snapping bits of x and y; bits
0 and 1 of word ``3t + 2`` are the signs of ``d_x`` and ``d_y``.  A tie of
uniform ``q`` (the number of its word) extends it from words
``EXT_BASE + EXT_SPAN·q`` on.  Reading beyond these ranges (more than
``EXT_SPAN`` extension words, or ``EXT_BASE/3`` attempts) has probability below
``2^-1000``.

**Range.**  The search for ``M`` works on int64: the perturber refuses budgets
for which ``T_m`` would not vanish (underflow to 0) before ``m = 2^61``
(:data:`MIN_LOG_RATE`), so every magnitude and ``k + d`` fits.

numba's on-disk cache keys a kernel on its own source file only;
:func:`~tracs._numba_cache.drop_stale_cache` runs at import and deletes this
module's cached kernels when one of the files it inlines from has changed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numba import njit

from .._numba_cache import drop_stale_cache
from ..mechanisms import _geometric, _lattice_kernels
from ..mechanisms._geometric import magnitude, quick_magnitude
from ..mechanisms._lattice_kernels import TWO53, below, snap, split_word
from ..random import kernels as _random_kernels
from ..random.kernels import draw_u64, draw_u64_pair

__all__ = ["planar_constants", "planar_kernel", "planar_reference", "exact_offset", "quick_accept",
           "log_acceptance", "MIN_LOG_RATE"]

drop_stale_cache(Path(__file__).parent / "__pycache__",
                 [Path(_geometric.__file__), Path(_lattice_kernels.__file__), Path(_random_kernels.__file__)],
                 "_planar_kernel")

#: extension words of uniform ``q``: ``EXT_BASE + EXT_SPAN·q`` on (module notes)
EXT_BASE = 1 << 24
EXT_SPAN = 64
#: smallest ``b·h`` (per cell and axis): ``T_m`` is 0 for ``m >= 2^61`` (``exp`` below −745 underflows)
MIN_LOG_RATE = 750.0 * 2.0 ** -61
#: points per chunk of the first pass (its words stay in the first-level cache)
CHUNK = 256

_U1 = np.uint64(1)
_ONE = np.uint64(1)


def planar_constants(a, hx: float, hy: float) -> np.ndarray:
    """Rows ``(a, b, ln r_x, ln c_x, ln r_y, ln c_y)`` of the kernel for the rates ``a``.

    ``b = a/√2``, ``ln r = −b·h`` per axis and ``ln c = ln(2/(1 + r))``: the tails
    ``T_m = exp(m·ln r + ln c)`` of the magnitudes
    (:func:`tracs.mechanisms._geometric.tail`).
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = a / math.sqrt(2.0)
    rows = [a, b]
    for h in (hx, hy):
        log_r = -b * h
        rows += [log_r, math.log(2.0) - np.log1p(np.exp(log_r))]
    return np.ascontiguousarray(np.column_stack(rows))


@njit(cache=True, nogil=True, inline="always")
def log_acceptance(mx, my, a, b, hx, hy):  # pragma: no cover
    """``g = b‖v‖₁ − a‖v‖`` for the magnitudes ``mx, my`` (``v = (mx·hx, my·hy)``)."""
    vx = mx * hx
    vy = my * hy
    return b * (vx + vy) - a * math.sqrt(vx * vx + vy * vy)


@njit(cache=True, nogil=True, inline="always")
def quick_accept(first, g):  # pragma: no cover
    """``u < exp(g)`` decided from ``ln u``: 1 (yes), 0 (no) or −1 (compare exactly).

    ``u`` lies in ``[f, f + 1)·2^-53`` (``f = first``), so ``ln u`` is within
    ``1/f`` of ``ln((f + ½)·2^-53)`` (``f + ½`` itself rounded when ``f >= 2^52``),
    above it by at most ``ln 2`` when ``f = 0`` (``1.5/max(f, ½)`` covers both);
    the computed logarithm, the difference and ``ln exp(g)`` of the rounded
    exponential (a normal double whenever ``g`` is near ``ln u >= −38``) are
    each within a few ulps (``2^-48`` relative covers them).  No branch on the draw.
    """
    f = float(np.int64(first))
    lu = math.log((f + 0.5) / TWO53)
    err = 1.5 / max(f, 0.5) + (abs(lu) + abs(g) + 1.0) * 2.0 ** -48
    d = lu - g
    yes = d < -err
    no = (f >= 1.0) & (d > err)
    return 1 if yes else (0 if no else -1)


@njit(cache=True, nogil=True, inline="always")
def _ext(q):  # pragma: no cover
    return EXT_BASE + EXT_SPAN * q


@njit(cache=True, nogil=True)
def exact_offset(attempt, a, b, lrx, lcx, lry, lcy, hx, hy, kind, key, stream, index):  # pragma: no cover
    """The offset ``(d_x, d_y)`` of the first accepted attempt from ``attempt`` on (module
    notes), every comparison exact."""
    t = attempt
    while True:
        q = 3 * t
        fx, _ = split_word(draw_u64(kind, key, stream, index, q))
        fy, _ = split_word(draw_u64(kind, key, stream, index, q + 1))
        w2 = draw_u64(kind, key, stream, index, q + 2)
        fa, _ = split_word(w2)
        mx = magnitude(fx, lrx, lcx, kind, key, stream, index, _ext(q))
        my = magnitude(fy, lry, lcy, kind, key, stream, index, _ext(q + 1))
        g = log_acceptance(mx, my, a, b, hx, hy)
        if below(fa, math.exp(g), kind, key, stream, index, _ext(q + 2), False):
            dx = mx if (w2 & _ONE) else -mx
            dy = my if ((w2 >> _U1) & _ONE) else -my
            return dx, dy
        t += 1


@njit(cache=True, nogil=True)
def planar_reference(coords, offsets, kind, key, stream_of, index_of, params, grid, n, idx):  # pragma: no cover
    """The released indices by the exact scalar path alone (what :func:`planar_kernel` must equal)."""
    per_traj = params.shape[0] > 1
    traj = 0
    for i in range(coords.shape[0]):
        if per_traj:
            while i >= offsets[traj + 1] - offsets[0]:
                traj += 1
        p = params[traj if per_traj else 0]
        w0, w1 = draw_u64_pair(kind, key, stream_of[i], index_of[i], 0)
        _, bx = split_word(w0)
        _, by = split_word(w1)
        kx = snap((coords[i, 0] - grid[0]) / grid[2], n, bx)
        ky = snap((coords[i, 1] - grid[1]) / grid[3], n, by)
        dx, dy = exact_offset(0, p[0], p[1], p[2], p[3], p[4], p[5], grid[2], grid[3],
                              kind, key, stream_of[i], index_of[i])
        idx[i, 0] = min(max(kx + dx, 0), n)
        idx[i, 1] = min(max(ky + dy, 0), n)


@njit(cache=True, nogil=True)
def planar_kernel(coords, offsets, kind, key, stream_of, index_of, params, grid, n, out, idx):  # pragma: no cover
    """Discrete planar Laplace on the grid ``(xmin + i·hx, ymin + j·hy)``, ``0 <= i, j <= n``.

    Parameters
    ----------
    coords : (N, 2) float64
    offsets : (T+1,) int64
    kind, key, stream_of, index_of
        Keyed randomness: point ``i`` reads stream ``stream_of[i]`` at ``index_of[i]``.
    params : (1 or T, 6) float64
        :func:`planar_constants` (one row, or one per trajectory).
    grid : (4,) float64
        ``(xmin, ymin, hx, hy)``.
    n : int
        Cells per side.
    out : (N, 2) float64, idx : (N, 2) int64
        Released points and their grid indices.

    Per chunk of points, a first loop draws the words of every first attempt
    (two Philox blocks per point) and a second decides the attempts that need no
    further word; a last pass takes the rejected and undecided ones through
    :func:`exact_offset`.
    """
    size = coords.shape[0]
    per_traj = params.shape[0] > 1
    hx = grid[2]
    hy = grid[3]
    status = np.empty(size, dtype=np.int8)  # 0 done, 1 first attempt rejected, 2 undecided
    words = np.empty((3, CHUNK), dtype=np.uint64)
    traj = 0
    for start in range(0, size, CHUNK):
        stop = min(start + CHUNK, size)
        for i in range(start, stop):
            w0, w1 = draw_u64_pair(kind, key, stream_of[i], index_of[i], 0)
            w2, _ = draw_u64_pair(kind, key, stream_of[i], index_of[i], 1)
            words[0, i - start] = w0
            words[1, i - start] = w1
            words[2, i - start] = w2
        for i in range(start, stop):
            if per_traj:
                while i >= offsets[traj + 1] - offsets[0]:
                    traj += 1
            p = params[traj if per_traj else 0]
            w0 = words[0, i - start]
            w1 = words[1, i - start]
            w2 = words[2, i - start]
            fx, bx = split_word(w0)
            fy, by = split_word(w1)
            fa, _ = split_word(w2)
            kx = snap((coords[i, 0] - grid[0]) / hx, n, bx)
            ky = snap((coords[i, 1] - grid[1]) / hy, n, by)
            mx, _ = quick_magnitude(fx, p[2], p[3])
            my, _ = quick_magnitude(fy, p[4], p[5])
            acc = quick_accept(fa, log_acceptance(mx, my, p[0], p[1], hx, hy))
            known = (mx >= 0) & (my >= 0)
            dx = mx if (w2 & _ONE) else -mx
            dy = my if ((w2 >> _U1) & _ONE) else -my
            done = known & (acc == 1)
            status[i] = 0 if done else (1 if known & (acc == 0) else 2)
            idx[i, 0] = min(max(kx + dx, 0), n) if done else kx
            idx[i, 1] = min(max(ky + dy, 0), n) if done else ky
    traj = 0
    for i in range(size):
        if per_traj:
            while i >= offsets[traj + 1] - offsets[0]:
                traj += 1
        if status[i]:
            p = params[traj if per_traj else 0]
            dx, dy = exact_offset(2 - status[i], p[0], p[1], p[2], p[3], p[4], p[5], hx, hy,
                                  kind, key, stream_of[i], index_of[i])
            idx[i, 0] = min(max(idx[i, 0] + dx, 0), n)
            idx[i, 1] = min(max(idx[i, 1] + dy, 0), n)
    for i in range(size):
        out[i, 0] = grid[0] + idx[i, 0] * hx
        out[i, 1] = grid[1] + idx[i, 1] * hy
