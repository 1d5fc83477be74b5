"""Compiled (numba) sampler of the discrete planar Laplace perturber.

Law of one release (grid ``xmin + i·h_x``, ``ymin + j·h_y``, ``0 <= i, j <= n``):

1. each coordinate is snapped to the grid by randomised rounding
   (:func:`~tracs.mechanisms.lattice_kernels.snap`), giving the index ``k``;
2. an offset ``d ∈ Z²`` is drawn with probability ∝ ``exp(−a‖v‖)``,
   ``v = (d_x h_x, d_y h_y)``, by rejection: each axis proposes a two-sided
   geometric ``D = ±M`` with ``P(D = d) ∝ r^{|d|}``, ``r = e^{−b h}``,
   ``b = a/√2`` — the magnitude ``M`` by exact inversion of its tails
   ``T_m = P(M >= m) = 2r^m/(1 + r)`` (:func:`~tracs.mechanisms.geometric.magnitude`),
   the sign by one bit — and the pair is accepted when ``u < exp(g)``,
   ``g = b‖v‖₁ − a‖v‖ <= 0`` (``‖v‖₁ <= √2‖v‖``); otherwise a fresh attempt;
3. the released index is ``clamp(k + d, 0, n)`` per axis.

The proposal has mass ∝ ``exp(−b‖v‖₁)`` and acceptance ``exp(−a‖v‖ + b‖v‖₁)``,
so an accepted offset has mass ∝ ``exp(−a‖v‖)`` (as cells shrink, the share of
attempts accepted tends to ``(2π/a²)/(8/a²) = π/4``).  The realised law is exactly
this one for the computed doubles ``T_m`` and ``exp(g)``: every comparison of a
uniform with them is exact (:func:`~tracs.mechanisms.lattice_kernels.below`).

**Speed without changing the law.**  ``M`` and the acceptance are decided from
``ln u`` when the logarithm lies farther from the threshold than every rounding,
the logarithm's own error and the unread bits of ``u`` can move it
(:func:`accept_from_log`, :func:`~tracs.mechanisms.geometric.magnitude_from_log`);
the rare rest (draws within the margin of a threshold) is compared exactly.
Either way the answer is the exact comparison's.  The logarithm is
:func:`~tracs.mechanisms.vector_log.vector_log`, so the passes of
:func:`planar_kernel` — attempt ``t`` for every point still without a release, in
chunks: draw the words, decide, release — compile to vector code.  Undecided draws
go through the exact scalar path (:func:`exact_offset`) from attempt ``t``,
rejected points (about ``1 − π/4 ≈ 21 %`` per attempt) to the next pass.  The
indices are those of the exact scalar path alone (:func:`planar_reference`; the
tests compare them).

**Random words of point i** (``stream_of[i]``, ``index_of[i]``; a release
depends on nothing else): attempt ``t = 0, 1, …`` reads words ``4t`` (x),
``4t + 1`` (y), ``4t + 2`` (acceptance) and ``4t + 3`` (signs): two Philox blocks.
The first 53 bits of each of the first three are its uniform; the low 11 bits of
words 0 and 1 are the snapping bits of x and y; bits 0 and 1 of word ``4t + 3``
are the signs of ``d_x`` and ``d_y``.  A tie of
uniform ``q`` (the number of its word) extends it from words
``EXT_BASE + EXT_SPAN·q`` on.  Reading beyond these ranges (more than
``EXT_SPAN`` extension words, or ``EXT_BASE/4`` attempts) has probability below
``2^-1000``.

**Range.**  The search for ``M`` works on int64: the perturber refuses budgets
for which ``T_m`` would not vanish (underflow to 0) before ``m = 2^61``
(:data:`MIN_LOG_RATE`), so every magnitude and ``k + d`` fits.

numba's on-disk cache checks a kernel against its own source file only;
:func:`~tracs._numba_cache.key_on_sources` keys this module's cached kernels on
the contents of every tracs source they compile in (the modules it inlines from).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..mechanisms.geometric import NO_TOP, magnitude, magnitude_from_log
from ..mechanisms.vector_log import LOG_ERROR, vector_log
from ..mechanisms.lattice_kernels import TWO53, below, snap, split_word
from ..random.kernels import draw_u64_pair

__all__ = ["planar_constants", "planar_kernel", "planar_reference", "exact_offset", "accept_from_log",
           "log_acceptance", "MIN_LOG_RATE"]

#: extension words of uniform ``q``: ``EXT_BASE + EXT_SPAN·q`` on (module notes)
EXT_BASE = 1 << 24
EXT_SPAN = 64
#: smallest ``b·h`` (per cell and axis): ``T_m`` is 0 for ``m >= 2^61`` (``exp`` below −745 underflows)
MIN_LOG_RATE = 750.0 * 2.0 ** -61
#: points per chunk of the first pass (its words stay in the first-level cache)
CHUNK = 256

_U1 = np.uint64(1)
_U11 = np.uint64(11)
_ONE = np.uint64(1)


def planar_constants(a, hx: float, hy: float) -> np.ndarray:
    """Rows ``(a, b, ln r_x, ln c_x, ln r_y, ln c_y)`` of the kernel for the rates ``a``.

    ``b = a/√2``, ``ln r = −b·h`` per axis and ``ln c = ln(2/(1 + r))``: the tails
    ``T_m = exp(m·ln r + ln c)`` of the magnitudes
    (:func:`tracs.mechanisms.geometric.tail`).
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = a / math.sqrt(2.0)
    rows = [a, b]
    for h in (hx, hy):
        log_r = -b * h
        rows += [log_r, math.log(2.0) - np.log1p(np.exp(log_r))]
    return np.ascontiguousarray(np.column_stack(rows))


@helper
def log_acceptance(mx, my, a, b, hx, hy):  # pragma: no cover
    """``g = b‖v‖₁ − a‖v‖`` for the magnitudes ``mx, my`` (``v = (mx·hx, my·hy)``)."""
    vx = mx * hx
    vy = my * hy
    return b * (vx + vy) - a * math.sqrt(vx * vx + vy * vy)


@helper
def accept_from_log(f, lu, lu_error, g):  # pragma: no cover
    """``u < exp(g)`` decided from ``lu ≈ ln((f + ½)·2^-53)``: 1 (yes), 0 (no) or −1 (compare exactly).

    ``f`` is the first 53 bits of ``u`` (a double) and ``lu`` within ``lu_error``
    of ``ln((f + ½)·2^-53)`` plus a few ulps.  ``u`` lies in ``[f, f + 1)·2^-53``,
    so ``ln u`` is within ``1/f`` of that (``f + ½`` itself is rounded when
    ``f >= 2^52``), above it by at most ``ln 2`` when ``f = 0`` (``1.5/max(f, ½)``
    covers both); the difference and ``ln`` of the rounded ``exp(g)`` (a normal
    double whenever ``g`` is near ``ln u >= −38``) are within a few ulps
    (``2^-48`` relative covers them and the ulps of ``lu``).  No branch on the draw.
    """
    err = 1.5 / max(f, 0.5) + (abs(lu) + abs(g) + 1.0) * 2.0 ** -48 + lu_error
    d = lu - g
    yes = d < -err
    no = (f >= 1.0) & (d > err)
    return 1 if yes else (0 if no else -1)


@helper
def _ext(q):  # pragma: no cover
    return EXT_BASE + EXT_SPAN * q


@njit(cache=True, nogil=True)
def exact_offset(attempt, a, b, lrx, lcx, lry, lcy, hx, hy, kind, key, stream, index):  # pragma: no cover
    """The offset ``(d_x, d_y)`` of the first accepted attempt from ``attempt`` on (module
    notes), every comparison exact."""
    t = attempt
    while True:
        q = 4 * t
        w0, w1 = draw_u64_pair(kind, key, stream, index, 2 * t)
        w2, w3 = draw_u64_pair(kind, key, stream, index, 2 * t + 1)
        fx, _ = split_word(w0)
        fy, _ = split_word(w1)
        fa, _ = split_word(w2)
        mx = magnitude(fx, lrx, lcx, 0.0, NO_TOP, kind, key, stream, index, _ext(q))
        my = magnitude(fy, lry, lcy, 0.0, NO_TOP, kind, key, stream, index, _ext(q + 1))
        g = log_acceptance(mx, my, a, b, hx, hy)
        if below(fa, math.exp(g), kind, key, stream, index, _ext(q + 2), False):
            dx = mx if (w3 & _ONE) else -mx
            dy = my if ((w3 >> _U1) & _ONE) else -my
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
        dx, dy = exact_offset(np.int64(0), p[0], p[1], p[2], p[3], p[4], p[5], grid[2], grid[3],
                              kind, key, stream_of[i], index_of[i])
        idx[i, 0] = min(max(kx + dx, 0), n)
        idx[i, 1] = min(max(ky + dy, 0), n)


@helper
def _place(i, jx, jy, grid, n, idx, out):  # pragma: no cover
    """Release point ``i`` at the grid index ``clamp((jx, jy))``."""
    jx = min(max(jx, 0), n)
    jy = min(max(jy, 0), n)
    idx[i, 0] = jx
    idx[i, 1] = jy
    out[i, 0] = grid[0] + jx * grid[2]
    out[i, 1] = grid[1] + jy * grid[3]


@helper
def _decide(j, a, b, lrx, lcx, lry, lcy, hx, hy, words, dxs, dys, state):  # pragma: no cover
    """One attempt from the words in column ``j`` of the buffer: the offset
    and its state, 0 (accepted), 1 (rejected) or 2 (undecided: compare exactly)."""
    fx = float(np.int64(words[0, j] >> _U11))
    fy = float(np.int64(words[1, j] >> _U11))
    fa = float(np.int64(words[2, j] >> _U11))
    signs = words[3, j]
    mx, _ = magnitude_from_log(fx, vector_log((fx + 0.5) / TWO53), LOG_ERROR, lrx, lcx)
    my, _ = magnitude_from_log(fy, vector_log((fy + 0.5) / TWO53), LOG_ERROR, lry, lcy)
    lu = vector_log((fa + 0.5) / TWO53)
    acc = accept_from_log(fa, lu, LOG_ERROR, log_acceptance(mx, my, a, b, hx, hy))
    known = (mx >= 0) & (my >= 0)
    dxs[j] = mx if (signs & _ONE) else -mx
    dys[j] = my if ((signs >> _U1) & _ONE) else -my
    state[j] = 0 if known & (acc == 1) else (1 if known & (acc == 0) else 2)


@njit(cache=True, nogil=True, error_model="numpy")
def _fast_pass(t, count, who, streams, indices, next_who, next_streams, next_indices, coords, kind, key, params,
               row_of, grid, n, idx, out, words, dxs, dys, state):  # pragma: no cover
    """Attempt ``t`` of ``count`` points in chunks: draw the words, decide
    (:func:`_decide`), release the accepted points — each a loop of vector code.

    Point ``c`` of the pass reads ``streams[c]``, ``indices[c]`` and is point ``c`` of the
    batch when ``t = 0`` (then snapped into ``idx`` here), else point ``who[c]`` (whose
    ``idx`` holds its snapped index); an accepted point's ``idx`` and ``out`` get its
    release.  Undecided draws go through :func:`exact_offset`
    at once; the rejected points are written to ``next_*`` (which may be the
    current arrays when ``t > 0``: they are written behind the reading) and counted.
    """
    hx = grid[2]
    hy = grid[3]
    per_traj = params.shape[0] > 1
    p0 = params[0]
    kept = 0
    for start in range(0, count, CHUNK):
        size = min(CHUNK, count - start)
        for j in range(size):
            w0, w1 = draw_u64_pair(kind, key, streams[start + j], indices[start + j], 2 * t)
            w2, w3 = draw_u64_pair(kind, key, streams[start + j], indices[start + j], 2 * t + 1)
            words[0, j] = w0
            words[1, j] = w1
            words[2, j] = w2
            words[3, j] = w3
        if per_traj:
            for j in range(size):
                p = params[row_of[start + j if t == 0 else who[start + j]]]
                _decide(j, p[0], p[1], p[2], p[3], p[4], p[5], hx, hy, words, dxs, dys, state)
        else:
            for j in range(size):
                _decide(j, p0[0], p0[1], p0[2], p0[3], p0[4], p0[5], hx, hy, words, dxs, dys, state)
        if t == 0:
            for j in range(size):
                i = start + j
                _, bx = split_word(words[0, j])
                _, by = split_word(words[1, j])
                kx = snap((coords[i, 0] - grid[0]) / hx, n, bx)
                ky = snap((coords[i, 1] - grid[1]) / hy, n, by)
                done = state[j] == 0
                jx = min(max(kx + dxs[j], 0), n) if done else kx
                jy = min(max(ky + dys[j], 0), n) if done else ky
                idx[i, 0] = jx
                idx[i, 1] = jy
                out[i, 0] = grid[0] + jx * hx
                out[i, 1] = grid[1] + jy * hy
        else:
            for j in range(size):
                i = who[start + j]
                if state[j] == 0:
                    _place(i, idx[i, 0] + dxs[j], idx[i, 1] + dys[j], grid, n, idx, out)
        for j in range(size):  # the rest: undecided ones now, rejected ones to the next pass
            if state[j] != 0:
                c = start + j
                i = c if t == 0 else who[c]
                if state[j] == 2:
                    p = params[row_of[i] if per_traj else 0]
                    dx, dy = exact_offset(t, p[0], p[1], p[2], p[3], p[4], p[5], hx, hy,
                                          kind, key, streams[c], indices[c])
                    _place(i, idx[i, 0] + dx, idx[i, 1] + dy, grid, n, idx, out)
                else:
                    next_who[kept] = i
                    next_streams[kept] = streams[c]
                    next_indices[kept] = indices[c]
                    kept += 1
    return kept


@njit(cache=True, nogil=True, error_model="numpy")
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

    Attempt ``t = 0, 1, …`` runs as one pass (:func:`_fast_pass`) over the points
    still without a release; the few draws it cannot decide go through
    :func:`exact_offset` from attempt ``t``, the rejected ones on to the next pass.
    """
    size = coords.shape[0]
    per_traj = params.shape[0] > 1
    row_of = np.zeros(size if per_traj else 1, dtype=np.int64)
    if per_traj:
        traj = 0
        for i in range(size):
            while i >= offsets[traj + 1] - offsets[0]:
                traj += 1
            row_of[i] = traj
    words = np.empty((4, CHUNK), dtype=np.uint64)
    dxs = np.empty(CHUNK, dtype=np.int64)
    dys = np.empty(CHUNK, dtype=np.int64)
    state = np.empty(CHUNK, dtype=np.int8)
    # the rejected points of each pass (about a fifth; the rest of these arrays is never touched)
    who = np.empty(size, dtype=np.int64)
    streams = np.empty(size, dtype=stream_of.dtype)
    indices = np.empty(size, dtype=index_of.dtype)
    # the attempt number as a plain int64 (a literal would compile a copy of the pass per constant)
    count = _fast_pass(np.int64(0), size, who, stream_of, index_of, who, streams, indices, coords, kind, key,
                       params, row_of, grid, n, idx, out, words, dxs, dys, state)
    t = np.int64(1)
    while count > 0:
        count = _fast_pass(t, count, who, streams, indices, who, streams, indices, coords, kind, key, params,
                           row_of, grid, n, idx, out, words, dxs, dys, state)
        t += 1


key_on_sources(globals())  # cached kernels follow every source they compile in
