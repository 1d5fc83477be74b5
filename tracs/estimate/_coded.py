"""The point test of TraCS-D and Strawman likelihoods, cell by cell (the reference of :mod:`._runs`).

For a report ``y`` with public reference ``o`` (the previous report of its
trajectory, or the anchor), write ``(φ', u')`` for its direction and normalised
distance seen from ``o``.  For a true point ``τ`` with direction ``φ`` the
distance input is ``u = |τ − o| / R(o, φ')`` (normalised along the *released*
direction, as the perturbers do; ``distance_along="true"``, the registry's
``tracs-d-paper``: ``u = |τ − o| / R(o, φ)``, the region's gauge about ``o``,
:func:`gauge`), and the law of ``(φ', u')`` is
``f(φ' | φ)·g(u' | u)``; both factors are two-level (piecewise
mechanisms, or k-RR sectors for the Strawman), so up to a factor of the report
alone the likelihood of ``τ`` is::

    (e^{-ε_φ} + (1 − e^{-ε_φ})·W) · (e^{-ε_r} + (1 − e^{-ε_r})·R)

with ``W = [φ' in the high-density arc (or sector) of φ]`` and
``R = [u' in the central interval of u]``.  The density of the released point in
the plane is this times the polar-to-plane Jacobian ``1/(R(o, φ')·|y − o|)``,
which depends on the report only and cancels in EM.  Each cell is represented
by ``S`` public sub-points; the code of (report, cell) counts how many
sub-points have ``W``, ``R`` and both: ``nW + (S+1)·nR + (S+1)²·nWR``, one byte.
:func:`coded_em_pass` runs an E-step over such codes through a per-report table of
weights.  The estimator itself uses :mod:`tracs.estimate._runs`, whose runs hold
exactly the points this test accepts; the codes (one per report and cell) are its
reference in the tests.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._numba_cache import key_on_sources

__all__ = ["code_reports", "coded_em_pass", "code_table"]

MODE_ARC = 0
MODE_SECTORS = 1


@numba.njit(cache=True, nogil=True)
def _normalised_distance(ox, oy, dx, dy, nx, ny, hb):
    """``u = |d| / R(o, φ(d))`` edge by edge (as ``Region.direction_distance``); 0 if ``d = 0``."""
    u = 0.0
    for e in range(nx.shape[0]):
        nd = dx * nx[e] + dy * ny[e]
        if nd > 0.0:
            slack = hb[e] - (ox * nx[e] + oy * ny[e])
            if slack > 0.0:
                v = nd / slack
                if v > u:
                    u = v
            else:
                return 0.0
    return min(u, 1.0)


@numba.njit(cache=True, nogil=True)
def gauge(vx, vy, nx, ny, slack):
    """``u`` of a true point ``o + v`` along its own direction (``distance_along="true"``):
    ``min(max_k n_k·v / s_k, 1)`` over the edges ``v`` leaves by, ``s_k = b_k − n_k·o`` (the
    region's gauge about ``o``, as :func:`_normalised_distance`); 1 when ``v`` leaves by an
    edge through ``o`` (``s_k <= 0``: the point lies beyond it), so every set ``u <= ρ < 1``
    is the region scaled about ``o``, ``o + ρ·(Region − o)``."""
    u = 0.0
    for e in range(nx.shape[0]):
        nd = vx * nx[e] + vy * ny[e]
        if nd > 0.0:
            if slack[e] <= 0.0:
                return 1.0
            v = nd / slack[e]
            if v > u:
                u = v
    return min(u, 1.0)


@numba.njit(cache=True, nogil=True)
def report_frame(reports, refs, r, nx, ny, hb):
    """Report ``r`` seen from its reference ``o``: ``(ox, oy, dx, dy, ex, ey, u', R(o, φ'))``.

    ``e`` is the unit released direction (``(1, 0)`` when the report is ``o``), ``u'``
    the released normalised distance and ``R(o, φ')`` the reach along the released
    direction (0 when ``u' = 0``): the distance input of a point ``τ`` is ``|τ − o| / R``.
    """
    ox, oy = refs[r, 0], refs[r, 1]
    dx, dy = reports[r, 0] - ox, reports[r, 1] - oy
    norm = math.sqrt(dx * dx + dy * dy)
    ex, ey = (dx / norm, dy / norm) if norm > 0.0 else (1.0, 0.0)
    u2 = _normalised_distance(ox, oy, dx, dy, nx, ny, hb)
    reach = norm / u2 if u2 > 0.0 else 0.0
    return ox, oy, dx, dy, ex, ey, u2, reach


@numba.njit(cache=True, nogil=True)
def _sector(dx, dy, k):
    phi = math.atan2(dy, dx)
    if phi < 0.0:
        phi += 2.0 * math.pi
    j = int(phi / (2.0 * math.pi / k))
    return min(j, k - 1)


@numba.njit(cache=True, nogil=True)
def code_reports(reports, refs, start, stop, points, nx, ny, hb, mode, cos_half, sectors,
                 half_r, out, along_true=False):
    """Codes of reports ``start..stop`` against every cell's sub-points.

    Parameters
    ----------
    reports, refs : float64 (N, 2)
        Reports and their public references.
    points : float64 (K, S, 2)
        Sub-points of every cell.
    mode : int
        ``MODE_ARC`` (TraCS-D: ``W`` iff the angle between ``τ − o`` and ``φ'`` is
        below the arc half-width ``C_φ < π/2``, tested without square roots as
        ``v·e' ≥ 0`` and ``(v·e')² ≥ cos²C_φ·|v|²``) or ``MODE_SECTORS`` (Strawman:
        same sector of ``sectors``).
    half_r : float64 (N,)
        Half-width ``C_r`` of the distance mechanism's central interval per report.
    out : uint8 or uint16 (stop − start, K)
    along_true : bool
        ``u`` along the true direction (``distance_along="true"``, :func:`gauge`) instead
        of ``|τ − o| / R(o, φ')``.
    """
    K, S = points.shape[0], points.shape[1]
    E = nx.shape[0]
    inv = np.empty(E)
    slacks = np.empty(E)
    cell_x = np.ascontiguousarray(points[:, 0, 0])
    cell_y = np.ascontiguousarray(points[:, 0, 1])
    for r in range(start, stop):
        ox, oy, dx, dy, ex, ey, u2, reach = report_frame(reports, refs, r, nx, ny, hb)
        c = half_r[r]
        ch2 = cos_half[r] * cos_half[r]
        sec2 = _sector(dx, dy, sectors) if mode == MODE_SECTORS else 0
        boundary = False
        for e in range(E):
            slack = hb[e] - (ox * nx[e] + oy * ny[e])
            slacks[e] = slack
            if slack > 0.0:
                inv[e] = 1.0 / slack
            else:
                boundary = True
                inv[e] = 0.0
        if S == 1 and mode == MODE_ARC and not boundary and reach > 0.0 and not along_true:
            _arc_row(cell_x, cell_y, ox, oy, ex, ey, ch2, u2, c, reach, out[r - start])
            continue
        for k in range(K):
            nw = 0
            nr = 0
            nwr = 0
            for s in range(S):
                vx, vy = points[k, s, 0] - ox, points[k, s, 1] - oy
                if mode == MODE_ARC:
                    dot = vx * ex + vy * ey
                    vv = vx * vx + vy * vy
                    if vv > 0.0:
                        w = dot >= 0.0 and dot * dot >= ch2 * vv
                    else:
                        w = ex * ex >= ch2 and ex >= 0.0  # τ = o: direction 0 by convention
                else:
                    w = (_sector(vx, vy, sectors) if vx != 0.0 or vy != 0.0 else 0) == sec2
                if along_true:
                    u = gauge(vx, vy, nx, ny, slacks)
                else:
                    u = min(math.sqrt(vx * vx + vy * vy) / reach, 1.0) if reach > 0.0 else 0.0
                left = min(max(u - c, 0.0), 1.0 - 2.0 * c)
                rr = (left <= u2 and u2 < left + 2.0 * c) or (u2 >= 1.0 and left + 2.0 * c >= 1.0)
                nw += w
                nr += rr
                nwr += w and rr
            out[r - start, k] = nw + (S + 1) * nr + (S + 1) * (S + 1) * nwr
    return out


@numba.njit(cache=True, nogil=True, fastmath=True)
def _arc_row(cx, cy, ox, oy, ex, ey, ch2, u2, c, reach, out):
    """TraCS-D codes of one report against cell centres, reference inside the region."""
    top = 1.0 - 2.0 * c
    inv_reach = 1.0 / reach
    for k in range(cx.shape[0]):
        vx = cx[k] - ox
        vy = cy[k] - oy
        dot = vx * ex + vy * ey
        vv = vx * vx + vy * vy
        w = (dot >= 0.0) & (dot * dot >= ch2 * vv) if vv > 0.0 else (ex >= 0.0) & (ex * ex >= ch2)
        u = min(math.sqrt(vv) * inv_reach, 1.0)
        left = min(max(u - c, 0.0), top)
        rr = ((left <= u2) & (u2 < left + 2.0 * c)) | ((u2 >= 1.0) & (left + 2.0 * c >= 1.0))
        out[k] = np.uint8(w) + np.uint8(2) * np.uint8(rr) + np.uint8(4) * np.uint8(w & rr)


def code_dtype(subpoints: int):
    """One byte per code while ``(S+1)³ <= 256`` (``S <= 5`` sub-points), else two."""
    return np.uint8 if (subpoints + 1) ** 3 <= 256 else np.uint16


def code_table(eps_dir, eps_dist, subpoints: int) -> np.ndarray:
    """Weights of every code for each (ε_φ, ε_r) pair: shape (len(eps_dir), (S+1)³)."""
    s = subpoints
    n = np.arange((s + 1) ** 3)
    nw, nr, nwr = n % (s + 1), (n // (s + 1)) % (s + 1), n // (s + 1) ** 2
    w0 = np.exp(-np.asarray(eps_dir, dtype=np.float64))[:, None]
    v0 = np.exp(-np.asarray(eps_dist, dtype=np.float64))[:, None]
    # mean over sub-points of (w0 + (1 − w0)W)(v0 + (1 − v0)R)
    return (w0 * v0 + (1 - w0) * v0 * nw / s + w0 * (1 - v0) * nr / s
            + (1 - w0) * (1 - v0) * nwr / s)


@numba.njit(cache=True, nogil=True)
def coded_em_pass(codes, table_index, tables, theta, back):
    """One fused E-step over a chunk: returns the log-likelihood, adds to ``back``.

    ``d_r = Σ_k tables[t_r, codes[r, k]]·θ_k``; ``back_k += tables[t_r, codes[r, k]] / d_r``.
    """
    n, K = codes.shape
    ll = 0.0
    row = np.empty(tables.shape[1])
    for r in range(n):
        t = table_index[r]
        for c in range(tables.shape[1]):
            row[c] = tables[t, c]
        d = 0.0
        for k in range(K):
            d += row[codes[r, k]] * theta[k]
        if d <= 0.0:
            continue
        ll += math.log(d)
        inv = 1.0 / d
        for k in range(K):
            back[k] += row[codes[r, k]] * inv
    return ll


key_on_sources(globals())  # cached kernels follow every source they compile in
