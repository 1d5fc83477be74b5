"""TraCS-D and Strawman likelihoods as runs of public points per row: O(rows) per report.

The likelihood of a true point ``τ`` for a report ``y`` with public reference ``o``
(:mod:`tracs.estimate._coded` derives it) is, up to a factor of the report alone::

    L(τ) = c₀ + c_W·W(τ) + c_R·R(τ) + c_WR·W(τ)·R(τ)

with ``c₀ = e^{-ε_φ}e^{-ε_r}``, ``c_W = (1 − e^{-ε_φ})e^{-ε_r}``, ``c_R = e^{-ε_φ}(1 − e^{-ε_r})``,
``c_WR = (1 − e^{-ε_φ})(1 − e^{-ε_r})`` and two indicators:

* ``W``: ``τ − o`` lies in the wedge of the released direction (TraCS-D: within the
  arc half-width ``C_φ < π/2`` of ``φ'``; the Strawman: in the released sector) — a
  convex cone with apex ``o``;
* ``R``: ``u'`` lies in the central interval of ``u = min(|τ − o| / R(o, φ'), 1)``.
  The interval's left end is non-decreasing in ``u``, so ``R = A \\ L`` for two discs
  around ``o``, ``L ⊆ A`` (``A``: the left end is at most ``u'``; ``L``: the right
  end is at most ``u'`` too).  With ``distance_along="true"`` (``tracs-d-paper``) ``u``
  is the region's gauge about ``o`` (``R(o, φ)`` along the true direction), and ``A``,
  ``L`` are the region scaled about ``o``, ``o + ρ·(Region − o)``
  (:mod:`tracs.estimate._distance_sets`).

Every cell is represented by ``S`` public points on a lattice (rows of equal ``y``).
A convex cone, a disc or a scaled region meets a row in a run of consecutive columns,
so a report is six column indices per row (the runs of ``W``, ``A``, ``L``), not one value per
cell: the E-step is four prefix-sum differences per row for ``d = Σ θ L`` and the
M-step's sums ``Σ_r L_r / d_r`` are difference arrays, one per row, summed once per
pass.  The runs come from the cone's and the discs' boundaries; a column within
1e-6 of a boundary is decided by the point test itself (the same floating-point
test as :func:`tracs.estimate._coded.code_reports`), so the runs hold exactly the
points the test accepts.

The runs of a chunk of reports are kept (``rows × 6`` bytes per report, one byte per
index up to 255 columns) or, when they do not fit the memory budget, recomputed
on every pass (:class:`RunBlock`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._numba_cache import key_on_sources
from ._coded import MODE_ARC, _sector, report_frame
from ._distance_sets import LOWER, UPPER, in_set, scale, scaled_run
from ._threads import run_chunks

__all__ = ["row_runs", "runs_pass", "runs_moments", "RunBlock", "coefficients", "run_dtype"]

_TIE = 1e-6
#: columns of a difference array beyond the points' (where empty runs write)
SPARE = 5
_WEDGE = 0
_U = np.uint64


@numba.njit(cache=True, nogil=True)
def _member(kind, vx, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c):
    """The point test of :func:`tracs.estimate._coded.code_reports` for one set."""
    if kind == _WEDGE:
        if mode == MODE_ARC:
            dot = vx * ex + vy * ey
            vv = vx * vx + vy * vy
            if vv > 0.0:
                return dot >= 0.0 and dot * dot >= ch2 * vv
            return ex >= 0.0 and ex * ex >= ch2
        if vx != 0.0 or vy != 0.0:
            return _sector(vx, vy, sectors) == sec2
        return sec2 == 0
    vv = vx * vx + vy * vy
    return in_set(kind, min(math.sqrt(vv) / reach, 1.0) if reach > 0.0 else 0.0, u2, c)


@numba.njit(cache=True, nogil=True)
def _run(kind, lo_x, hi_x, xs, x0, inv_dx, ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c):
    """Columns ``[l, r)`` of the row whose points lie in ``[lo_x, hi_x]``, ties decided by the test."""
    n = xs.shape[0]
    if not hi_x >= lo_x:
        return n, n
    fl = min(max((lo_x - x0) * inv_dx, -1.0), n + 1.0)
    fr = min(max((hi_x - x0) * inv_dx, -2.0), n + 1.0)
    k = math.floor(fl + 0.5)
    if abs(fl - k) < _TIE and 0 <= k < n:
        inside = _member(kind, xs[k] - ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c)
        l = k if inside else k + 1
    else:
        l = min(max(math.ceil(fl), 0), n)
    k = math.floor(fr + 0.5)
    if abs(fr - k) < _TIE and 0 <= k < n:
        inside = _member(kind, xs[k] - ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c)
        r = k + 1 if inside else k
    else:
        r = min(max(math.floor(fr) + 1, 0), n)
    if r <= l:
        return n, n
    return l, r


@numba.njit(cache=True, nogil=True)
def _scan(kind, xs, ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c):
    """The run of a row by testing every column (the row through the apex)."""
    l, r = -1, -1
    for i in range(xs.shape[0]):
        if _member(kind, xs[i] - ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c):
            if l < 0:
                l = i
            r = i + 1
    if l < 0:
        return xs.shape[0], xs.shape[0]
    return l, r


@numba.njit(cache=True, nogil=True)
def _cotangents(lo, hi, low, high):
    """The part ``[a, b]`` of the arc ``[lo, hi]`` (mod 2π) inside ``(low, high)``, as ``cot a, cot b``
    (``±inf`` where it reaches ``low`` / ``high``); ``nan`` when it misses."""
    two_pi = 2.0 * math.pi
    for shift in (-two_pi, 0.0, two_pi):
        a = max(lo + shift, low)
        b = min(hi + shift, high)
        if b > a:
            ca = math.inf if a <= low else math.cos(a) / math.sin(a)
            cb = -math.inf if b >= high else math.cos(b) / math.sin(b)
            return ca, cb
    return math.nan, math.nan


@numba.njit(cache=True, nogil=True)
def _disc_radius(upper, reach, u2, c):
    """Radius of disc ``A`` (``upper``) or ``L``: ``inf`` for every point, ``-1`` for none."""
    if reach <= 0.0:  # u = 0 for every point: the set is all or nothing
        return math.inf if in_set(UPPER if upper else LOWER, 0.0, u2, c) else -1.0
    rho = scale(upper, u2, c)
    return rho if rho < 0.0 or rho == math.inf else reach * rho


@numba.njit(cache=True, nogil=True)
def row_runs(reports, refs, start, stop, xs, ys, nx, ny, hb, mode, cos_half, half_dir, sectors,
             half_r, along_true, out):
    """Runs of reports ``start..stop`` on every row ``j``: ``out[r − start, j] = (W_l, W_r, A_l, A_r,
    L_l, L_r)``, columns ``[l, r)``; an empty run is ``(columns, columns)``.

    Parameters
    ----------
    reports, refs : float64 (N, 2)
        Reports and their public references.
    xs, ys : float64
        Columns and rows of the public points (increasing, evenly spaced).
    nx, ny, hb : float64
        The region's half-planes.
    mode : int
        ``MODE_ARC`` (TraCS-D) or ``MODE_SECTORS`` (Strawman, ``sectors`` sectors).
    cos_half, half_dir : float64 (N,)
        Cosine of the arc half-width and the half-width (TraCS-D).
    half_r : float64 (N,)
        Half-width of the distance mechanism's central interval.
    along_true : bool
        ``u`` along the true direction (``distance_along="true"``): ``A`` and ``L`` are the
        region scaled about ``o`` (:func:`tracs.estimate._distance_sets.scaled_run`), not discs.
    out : uint8 or uint16 (stop − start, len(ys), 6)
    """
    n = xs.shape[0]
    slack = np.empty(nx.shape[0])
    x0 = xs[0]
    inv_dx = (n - 1) / (xs[n - 1] - xs[0]) if n > 1 else 1.0
    two_pi = 2.0 * math.pi
    for r in range(start, stop):
        ox, oy, dx, dy, ex, ey, u2, reach = report_frame(reports, refs, r, nx, ny, hb)
        c = half_r[r]
        ch2 = cos_half[r] * cos_half[r]
        if mode == MODE_ARC:
            phi = math.atan2(ey, ex)
            lo, hi = phi - half_dir[r], phi + half_dir[r]
            sec2 = 0
        else:
            sec2 = _sector(dx, dy, sectors)
            width = two_pi / sectors
            lo, hi = sec2 * width, (sec2 + 1) * width
            if sectors == 1:
                lo, hi = -math.inf, math.inf
        if hi - lo >= two_pi:
            up_a, up_b, dn_a, dn_b = math.inf, -math.inf, math.inf, -math.inf
        else:
            up_a, up_b = _cotangents(lo, hi, 0.0, math.pi)
            dn_a, dn_b = _cotangents(lo, hi, math.pi, two_pi)
        if along_true:  # A and L: the region scaled about o by ρ
            ra, rl = scale(True, u2, c), scale(False, u2, c)
            for e in range(nx.shape[0]):
                slack[e] = hb[e] - (ox * nx[e] + oy * ny[e])
        else:  # A and L: discs about o
            ra = _disc_radius(True, reach, u2, c)
            rl = _disc_radius(False, reach, u2, c)
        for j in range(ys.shape[0]):
            vy = ys[j] - oy
            if vy == 0.0:
                wl, wr = _scan(_WEDGE, xs, ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c)
            else:
                if vy > 0.0:
                    lo_x, hi_x = ox + vy * up_b, ox + vy * up_a
                else:
                    lo_x, hi_x = ox + vy * dn_a, ox + vy * dn_b
                wl, wr = _run(_WEDGE, lo_x, hi_x, xs, x0, inv_dx, ox, vy, ex, ey, ch2, mode, sec2,
                              sectors, reach, u2, c)
            if along_true:
                al, ar = scaled_run(UPPER, ra, xs, x0, inv_dx, ox, vy, nx, ny, slack, u2, c)
                ll, lr = scaled_run(LOWER, rl, xs, x0, inv_dx, ox, vy, nx, ny, slack, u2, c)
            elif vy == 0.0:
                al, ar = _scan(UPPER, xs, ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c)
                ll, lr = _scan(LOWER, xs, ox, vy, ex, ey, ch2, mode, sec2, sectors, reach, u2, c)
            else:
                h2 = ra * ra - vy * vy
                h = math.sqrt(h2) if h2 >= 0.0 else -1.0
                al, ar = _run(UPPER, ox - h, ox + h, xs, x0, inv_dx, ox, vy, ex, ey, ch2, mode, sec2,
                              sectors, reach, u2, c)
                h2 = rl * rl - vy * vy
                h = math.sqrt(h2) if (h2 >= 0.0 and rl >= 0.0) else -1.0
                ll, lr = _run(LOWER, ox - h, ox + h, xs, x0, inv_dx, ox, vy, ex, ey, ch2, mode, sec2,
                              sectors, reach, u2, c)
            o = out[r - start, j]
            o[0], o[1], o[2], o[3], o[4], o[5] = wl, wr, al, ar, ll, lr
    return out


@numba.njit(cache=True, nogil=True)
def _ends(o):
    """The six ends of a row's runs (unsigned: no negative-index test where they index)
    and the unclamped ends of ``W ∩ A`` and ``W ∩ L``."""
    wl, wr, al, ar, ll_, lr = _U(o[0]), _U(o[1]), _U(o[2]), _U(o[3]), _U(o[4]), _U(o[5])
    return wl, wr, al, ar, ll_, lr, max(wl, al), min(wr, ar), max(wl, ll_), min(wr, lr)


@numba.njit(cache=True, nogil=True, fastmath=True)
def runs_pass(runs, table_index, coefs, weights, prefix, total, diff):
    """One E-step over a chunk: returns ``(Σ w log d, Σ w c₀ / d)``; adds the runs' terms to ``diff``.

    ``runs`` is (reports, rows, 6) (:func:`row_runs`).  ``prefix`` (rows, columns + 1)
    holds the cumulative sums of ``θ`` along every row (``prefix[j, 0] = 0``);
    ``total = Σ θ``.  ``diff`` is (rows, columns + :data:`SPARE`); row ``j`` of the
    M-step sums is ``cumsum(diff[j, :columns])`` plus the returned constant.  One
    report at a time: its runs are contiguous, its three sums stay in registers and
    ``prefix`` and ``diff`` (a few tens of kB) stay in cache; the writes take no
    branch on the runs' order (1.65× faster than folding the intersections' jumps
    into six writes).  Empty runs are ``(columns, columns)``: they add nothing to
    ``d`` and write to spare columns the sums leave out.
    """
    n, rows = runs.shape[0], runs.shape[1]
    # unsigned indices (:func:`_ends`): no negative-index wrap-around test on every access (15 % faster)
    void = _U(prefix.shape[1] - 1)
    ll = 0.0
    base = 0.0
    for r in range(n):
        sw = 0.0
        sr = 0.0
        swr = 0.0
        rr = runs[r]
        for j in range(rows):
            p = prefix[j]
            wl, wr, al, ar, ll_, lr, lo1, hi1, lo2, hi2 = _ends(rr[j])
            hi1, hi2 = max(hi1, lo1), max(hi2, lo2)
            sw += p[wr] - p[wl]
            sr += (p[ar] - p[al]) - (p[lr] - p[ll_])
            swr += (p[hi1] - p[lo1]) - (p[hi2] - p[lo2])
        t = table_index[r]
        c0, cw, cr, cwr = coefs[t, 0], coefs[t, 1], coefs[t, 2], coefs[t, 3]
        d = c0 * total + cw * sw + cr * sr + cwr * swr
        w = weights[r]
        if w == 0.0 or d <= 0.0:
            continue
        ll += w * math.log(d)
        v = w / d
        base += c0 * v
        vw, vr, vwr = cw * v, cr * v, cwr * v
        for j in range(rows):
            q = diff[j]
            wl, wr, al, ar, ll_, lr, lo1, hi1, lo2, hi2 = _ends(rr[j])
            # five runs, ±v at their ends: W, A, −L and W∩A, −W∩L (W·R = W∩A − W∩L);
            # an empty W, A or L is (columns, columns), an empty intersection goes to
            # spare columns: every write outside the row's points cancels or is left out
            e1 = hi1 <= lo1
            e2 = hi2 <= lo2
            lo1 = void + _U(1) if e1 else lo1
            hi1 = void + _U(2) if e1 else hi1
            lo2 = void + _U(3) if e2 else lo2
            hi2 = void + _U(4) if e2 else hi2
            q[wl] += vw
            q[wr] -= vw
            q[al] += vr
            q[ar] -= vr
            q[ll_] -= vr
            q[lr] += vr
            q[lo1] += vwr
            q[hi1] -= vwr
            q[lo2] -= vwr
            q[hi2] += vwr
    return ll, base


@numba.njit(cache=True, nogil=True)
def runs_moments(runs, table_index, coefs, prefix, prefix_x, ys, totals, out):
    """Posterior means of a chunk's true points: ``out[r] = Σ_p θ_p L_r(p)·(x_p, y_p) / Σ_p θ_p L_r(p)``.

    ``prefix`` and ``prefix_x`` (rows, columns + 1) hold the cumulative sums of ``θ``
    and of ``θ·x`` along every row; ``ys`` the rows' coordinates; ``totals`` is
    ``(Σ θ, Σ θ·x, Σ θ·y)``.  The sums over the runs are those of :func:`runs_pass`.
    """
    n, rows = runs.shape[0], runs.shape[1]
    s = np.zeros((3, 3))  # rows: θ, θ·x, θ·y; columns: W, R, W·R
    for r in range(n):
        s[:] = 0.0
        rr = runs[r]
        for j in range(rows):
            wl, wr, al, ar, ll_, lr, lo1, hi1, lo2, hi2 = _ends(rr[j])
            hi1, hi2 = max(hi1, lo1), max(hi2, lo2)
            for m in range(2):
                p = prefix[j] if m == 0 else prefix_x[j]
                s[m, 0] += p[wr] - p[wl]
                s[m, 1] += (p[ar] - p[al]) - (p[lr] - p[ll_])
                s[m, 2] += (p[hi1] - p[lo1]) - (p[hi2] - p[lo2])
            p = prefix[j]
            s[2, 0] += ys[j] * (p[wr] - p[wl])
            s[2, 1] += ys[j] * ((p[ar] - p[al]) - (p[lr] - p[ll_]))
            s[2, 2] += ys[j] * ((p[hi1] - p[lo1]) - (p[hi2] - p[lo2]))
        t = table_index[r]
        c0, cw, cr, cwr = coefs[t, 0], coefs[t, 1], coefs[t, 2], coefs[t, 3]
        d = c0 * totals[0] + cw * s[0, 0] + cr * s[0, 1] + cwr * s[0, 2]
        for m in range(1, 3):
            out[r, m - 1] = (c0 * totals[m] + cw * s[m, 0] + cr * s[m, 1] + cwr * s[m, 2]) / d
    return out


def coefficients(eps_dir, eps_dist) -> np.ndarray:
    """``(c₀, c_W, c_R, c_WR)`` of every (ε_φ, ε_r) pair: shape (pairs, 4)."""
    w0 = np.exp(-np.asarray(eps_dir, dtype=np.float64))
    v0 = np.exp(-np.asarray(eps_dist, dtype=np.float64))
    return np.column_stack([w0 * v0, (1 - w0) * v0, w0 * (1 - v0), (1 - w0) * (1 - v0)])


def run_dtype(columns: int):
    """One byte per run index (``0 … columns``) up to 255 columns, else two."""
    return np.uint8 if columns <= 255 else np.uint16


class RunBlock:
    """TraCS-D / Strawman reports as runs per row; the EM pass runs compiled over chunks.

    Parameters
    ----------
    geometry : dict
        ``reports``, ``refs``, ``cos_half``, ``half_dir``, ``half_r`` (per report),
        ``mode``, ``sectors``, the region's ``halfplanes``, the points' ``xs``, ``ys`` and
        ``along_true`` (optional, default False: :func:`row_runs`).
    per_cell : int
        Points per cell along each axis (``θ`` of a cell is spread over its points).
    table_index, coefs
        Every report's (ε_φ, ε_r) pair and :func:`coefficients`.
    chunk : int
        Reports per chunk; chunks are fixed, and their partial sums are added in
        chunk order, so the result does not depend on ``workers``.
    keep : bool
        Keep the runs of every chunk (``rows × 6 × itemsize`` bytes per report) or
        recompute them on every pass.
    """

    def __init__(self, geometry, per_cell, table_index, coefs, *, chunk, keep, workers=1,
                 weights=None, runs=None):
        self.geometry = geometry
        self.per_cell = int(per_cell)
        self.table_index = table_index
        self.coefs = np.ascontiguousarray(coefs, dtype=np.float64)
        n = len(table_index)
        self.weights = np.ones(n) if weights is None else weights
        self.weight = float(self.weights.sum())
        self.chunk = int(chunk)
        self.workers = int(workers)
        self.starts = list(range(0, n, self.chunk))
        self.runs = runs
        if keep and runs is None:
            self.runs = run_chunks(self._compute_runs, len(self.starts), self.workers)

    def _compute_runs(self, i):
        g = self.geometry
        start = self.starts[i]
        stop = min(start + self.chunk, len(self.table_index))
        xs, ys = g["xs"], g["ys"]
        out = np.empty((stop - start, len(ys), 6), dtype=run_dtype(len(xs)))
        nx, ny, hb = g["halfplanes"]
        row_runs(g["reports"], g["refs"], start, stop, xs, ys, nx, ny, hb, g["mode"], g["cos_half"],
                 g["half_dir"], g["sectors"], g["half_r"], g.get("along_true", False), out)
        return out

    def subset(self, keep):
        """The block of the reports where ``keep`` holds (the runs are shared, not copied)."""
        weights = np.where(np.asarray(keep, dtype=bool), self.weights, 0.0)
        block = RunBlock(self.geometry, self.per_cell, self.table_index, self.coefs, chunk=self.chunk,
                         keep=False, workers=self.workers, weights=weights, runs=self.runs)
        block.rows = getattr(self, "rows", None)
        return block

    def posterior_means(self, theta) -> np.ndarray:
        """Every report's posterior mean of its true point, prior ``θ`` spread evenly over each
        cell's points (:func:`runs_moments`): shape (reports, 2)."""
        m, g = self.per_cell, self.geometry
        pts = np.repeat(np.repeat(np.asarray(theta, dtype=np.float64).T, m, axis=0), m, axis=1)
        prefix = np.zeros((pts.shape[0], pts.shape[1] + 1))
        prefix_x = np.zeros_like(prefix)
        np.cumsum(pts, axis=1, out=prefix[:, 1:])
        np.cumsum(pts * g["xs"], axis=1, out=prefix_x[:, 1:])
        totals = np.array([pts.sum(), (pts * g["xs"]).sum(), (pts * g["ys"][:, None]).sum()])

        def chunk(i):
            runs = self.runs[i] if self.runs is not None else self._compute_runs(i)
            start = self.starts[i]
            out = np.empty((runs.shape[0], 2))
            return runs_moments(runs, self.table_index[start:start + runs.shape[0]], self.coefs, prefix,
                                prefix_x, g["ys"], totals, out)

        parts = run_chunks(chunk, len(self.starts), self.workers)
        return np.concatenate(parts) if parts else np.empty((0, 2))

    def predict_and_back(self, theta):
        m = self.per_cell
        gx, gy = theta.shape
        # θ of every point, rows = y: point (column i, row j) lies in cell (i // m, j // m)
        pts = np.repeat(np.repeat(np.asarray(theta, dtype=np.float64).T, m, axis=0), m, axis=1)
        prefix = np.zeros((pts.shape[0], pts.shape[1] + 1))
        np.cumsum(pts, axis=1, out=prefix[:, 1:])
        total = float(pts.sum())

        def chunk(i):
            runs = self.runs[i] if self.runs is not None else self._compute_runs(i)
            start = self.starts[i]
            stop = start + runs.shape[0]
            diff = np.zeros((prefix.shape[0], prefix.shape[1] + SPARE - 1))
            ll, base = runs_pass(runs, self.table_index[start:stop], self.coefs, self.weights[start:stop],
                                 prefix, total, diff)
            return ll, base, diff

        ll, base, diff = 0.0, 0.0, 0.0
        for part_ll, part_base, part in run_chunks(chunk, len(self.starts), self.workers):
            ll += part_ll
            base += part_base
            diff = diff + part
        back_pts = np.cumsum(diff[:, :pts.shape[1]], axis=1) + base
        back = back_pts.reshape(gy, m, gx, m).sum(axis=(1, 3)).T
        if m > 1:  # d of a cell is the mean over its points: log d = log Σ − log S
            ll -= self.weight * math.log(m * m)
        return ll, np.ascontiguousarray(back)


key_on_sources(globals())  # cached kernels follow every source they compile in
