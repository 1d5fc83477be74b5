"""Compiled (numba) kernels of the perturbers.

The kernels consume uniforms drawn by the caller from a numpy ``Generator`` (one
row of ``width`` uniforms per point, in point order), so results are reproducible
and do not depend on how the points are cut into chunks.  The one-dimensional
draws are those of :class:`tracs.mechanisms.OptimalClassical` and
:class:`tracs.mechanisms.OptimalCircular`: the same compiled functions
(``tracs.mechanisms._kernels``, inlined), two uniforms per draw (one picks the
sides or the central piece, one places the value); the tests check that both
give the same numbers.  Every yes/no choice compares its uniform against the
probability of the *rare* branch (the sides' mass, the k-RR lie probability):
uniforms are multiples of ``2^-53``, so that rounding can only make the rare
branch more likely, never impossible, and every ratio stays within ``e^ε``.

numba's on-disk cache keys a kernel on its own source file only, not on the
functions it inlines from ``tracs.mechanisms._kernels``; :func:`drop_stale_cache`
runs at import and deletes this module's cached kernels whenever that file has
changed since they were compiled (for the default cache folder, ``__pycache__``
beside this file; a cache moved elsewhere with ``NUMBA_CACHE_DIR`` is not checked).

A region enters as half-planes ``nx·x + ny·y <= hb`` plus a flag saying whether
it is an axis-aligned rectangle (clamped coordinate-wise, exactly) or a general
convex polygon (a point found beyond ``tol`` is pulled back towards its reference
along the segment, which stays in the region by convexity).

Sampling modes of :func:`sequential_kernel` (direction part):
``0`` — optimal circular mechanism on ``[0, 2π)`` (TraCS-D);
``1`` — k-RR over ``k`` equal sectors, then a uniform angle inside the reported
sector (Strawman).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numba import njit

from ..mechanisms import _kernels as _mechanism_kernels
from ..mechanisms._kernels import circular_one, classical_one, wrap_period


def drop_stale_cache(cache_dir: Path, dependency: Path, prefix: str) -> bool:
    """Delete cached numba kernels ``prefix.*.nbi|nbc`` in ``cache_dir`` if ``dependency`` changed.

    The dependency's modification time and size are recorded in
    ``cache_dir/prefix.deps``; when they differ from the recorded ones the cached
    kernels are deleted (numba then compiles afresh) and the record is renewed.
    Returns whether anything was deleted.  File-system errors are ignored: at
    worst numba keeps its own caching behaviour.
    """
    try:
        info = dependency.stat()
        stamp = f"{info.st_mtime_ns}:{info.st_size}"
        record = cache_dir / f"{prefix}.deps"
        if record.is_file() and record.read_text() == stamp:
            return False
        stale = [*cache_dir.glob(f"{prefix}.*.nbi"), *cache_dir.glob(f"{prefix}.*.nbc")]
        for path in stale:
            path.unlink(missing_ok=True)
        if cache_dir.is_dir():
            record.write_text(stamp)
        return bool(stale)
    except OSError:
        return False


drop_stale_cache(Path(__file__).parent / "__pycache__", Path(_mechanism_kernels.__file__), "_kernels")

TWO_PI = 2.0 * math.pi

MODE_CIRCULAR = 0
MODE_SECTORS = 1

#: sector edges: ``phi / w`` within this many ulps of an integer is that integer
SNAP_ULPS = 4.0
EPS = 2.0 ** -52


@njit(cache=True, nogil=True, inline="always")
def classical(x, low, high, side, half, sel, v):
    """Optimal classical mechanism on ``[low, high]`` with side mass ``side`` and
    unit half-width ``half``, driven by the uniforms ``sel`` and ``v``."""
    width = high - low
    central = 2.0 * half * width
    return classical_one(x, sel, v, low, high, half, side, central, width - central)


@njit(cache=True, nogil=True, inline="always")
def wrap_angle(y):
    """``y mod 2π`` in ``[0, 2π)`` for ``y`` in ``[−2π, 4π)``, as ``numpy.mod`` computes it."""
    return wrap_period(y, TWO_PI)


@njit(cache=True, nogil=True, inline="always")
def circular(x, side, half, sel, v):
    """Optimal circular mechanism on ``[0, 2π)`` with half-width ``half`` (radians) and
    low-density arc mass ``side``."""
    return circular_one(x, sel, v, TWO_PI, half, side)


@njit(cache=True, nogil=True, inline="always")
def sector_position(phi, w):
    """``phi / w`` snapped to the nearest integer when within 4 ulp of it.

    A bearing exactly on a sector edge can come out of ``atan2`` one ulp to either
    side depending on the library; snapping puts it in the upper sector in every
    engine (the numpy twin is :func:`tracs.perturbers._sequential.sector_position_step`).
    """
    t = phi / w
    r = math.floor(t + 0.5)
    if abs(t - r) <= SNAP_ULPS * EPS * r:
        t = r
    return t


@njit(cache=True, nogil=True, inline="always")
def sectors(phi, lie, k, sel, pick, v):
    """k-RR over ``k`` equal sectors of ``[0, 2π)`` (lie probability ``lie``), then a
    uniform angle in the reported sector."""
    w = TWO_PI / k
    j = int(sector_position(phi, w))
    if j >= k:
        j = k - 1
    if sel < lie:
        other = int(pick * (k - 1))
        if other > k - 2:
            other = k - 2
        j = (j + 1 + other) % k
    return wrap_angle((j + v) * w)


@njit(cache=True, nogil=True, inline="always")
def normalised_distance(ox, oy, dx, dy, nx, ny, hb):
    """``u = |d| / R(o, angle of d)`` computed edge by edge without trigonometry.

    ``u = max over edges with n·d > 0 of (n·d)/(b − n·o)``, clipped to 1; 0 for
    ``d = 0`` and 0 when the ray leaves at once (``R = 0``).
    """
    u = 0.0
    for e in range(nx.shape[0]):
        nd = nx[e] * dx + ny[e] * dy
        if nd > 0.0:
            slack = hb[e] - (nx[e] * ox + ny[e] * oy)
            if slack <= 0.0:
                return 0.0
            r = nd / slack
            if r > u:
                u = r
    if u > 1.0:
        u = 1.0
    return u


@njit(cache=True, nogil=True, inline="always")
def exit_distance(ox, oy, c, s, nx, ny, hb):
    """Ray exit distance from ``(ox, oy)`` along the unit vector ``(c, s)``."""
    r = np.inf
    for e in range(nx.shape[0]):
        nd = nx[e] * c + ny[e] * s
        if nd > 0.0:
            slack = hb[e] - (nx[e] * ox + ny[e] * oy)
            if slack < 0.0:
                slack = 0.0
            t = slack / nd
            if t < r:
                r = t
    if r == np.inf:
        r = 0.0
    return r


@njit(cache=True, nogil=True, inline="always")
def pull_back(ox, oy, px, py, nx, ny, hb, tol):
    """Bring ``p`` back onto the segment ``[o, p]`` ∩ region if it lies beyond ``tol``."""
    outside = False
    for e in range(nx.shape[0]):
        if nx[e] * px + ny[e] * py - hb[e] > tol:
            outside = True
    if not outside:
        return px, py
    dx = px - ox
    dy = py - oy
    # exit "distance" along the unnormalised d is the largest t with o + t·d inside
    tmax = min(1.0, exit_distance(ox, oy, dx, dy, nx, ny, hb))
    return ox + tmax * dx, oy + tmax * dy


@njit(cache=True, nogil=True)
def sequential_kernel(coords, offsets, start, stop, traj, uniforms, params, anchor,
                      nx, ny, hb, rect, bbox, tol, mode, k, out):
    """Perturb points ``start..stop-1`` of the flat array, each from its reference.

    The reference of a trajectory's first point is ``anchor``; of any other point,
    the previous *output* ``out[i-1]``, so points must be processed in order (a
    chunk may start inside a trajectory once the chunk before it is done).

    Parameters
    ----------
    coords : (N, 2) float64
    offsets : (T+1,) int64
    start, stop : int
        The chunk; ``uniforms[i - start]`` drives point ``i``.
    traj : int
        The trajectory that contains point ``start``.
    uniforms : (stop - start, 4 or 5) float64 in [0, 1)
        Columns: direction select, direction position, distance select,
        distance position, [sector pick].
    params : (1 or T, 4) float64
        Per trajectory (one row when all are equal): direction side mass (or
        k-RR lie probability), direction half-width, distance side mass,
        distance half-width.
    anchor : (2,) float64
    nx, ny, hb : (m,) float64
        Half-planes of the region.
    rect : bool
        Clamp to ``bbox`` = (xmin, ymin, xmax, ymax) exactly, else pull back.
    mode, k : int
        Direction mechanism (see the module docstring) and sector count.
    out : (N, 2) float64
        Filled in place.

    Returns
    -------
    int
        The trajectory that contains point ``stop - 1`` (to start the next chunk).
    """
    per_traj = params.shape[0] > 1
    for i in range(start, stop):
        while i >= offsets[traj + 1]:
            traj += 1
        if i == offsets[traj]:
            ox = anchor[0]
            oy = anchor[1]
        else:
            ox = out[i - 1, 0]
            oy = out[i - 1, 1]
        row = traj if per_traj else 0
        dx = coords[i, 0] - ox
        dy = coords[i, 1] - oy
        phi = wrap_angle(math.atan2(dy, dx)) + 0.0  # -0.0 becomes 0.0, as Circle.wrap
        u = normalised_distance(ox, oy, dx, dy, nx, ny, hb)
        r = i - start
        if mode == MODE_CIRCULAR:
            phi2 = circular(phi, params[row, 0], params[row, 1], uniforms[r, 0], uniforms[r, 1])
        else:
            phi2 = sectors(phi, params[row, 0], k, uniforms[r, 0], uniforms[r, 4], uniforms[r, 1])
        u2 = classical(u, 0.0, 1.0, params[row, 2], params[row, 3], uniforms[r, 2], uniforms[r, 3])
        c = math.cos(phi2)
        s = math.sin(phi2)
        reach = u2 * exit_distance(ox, oy, c, s, nx, ny, hb)
        px = ox + reach * c
        py = oy + reach * s
        if rect:
            px = min(max(px, bbox[0]), bbox[2])
            py = min(max(py, bbox[1]), bbox[3])
        else:
            px, py = pull_back(ox, oy, px, py, nx, ny, hb, tol)
        out[i, 0] = px
        out[i, 1] = py
    return traj


@njit(cache=True, nogil=True)
def coordinate_kernel(coords, offsets, start, stop, traj, uniforms, params, bbox, out):
    """TraCS-C on the rectangle ``bbox``: each coordinate through the optimal
    classical mechanism on its side (``params`` rows: x side mass, x half-width,
    y side mass, y half-width; one row, or one per trajectory)."""
    per_traj = params.shape[0] > 1
    for i in range(start, stop):
        if per_traj:
            while i >= offsets[traj + 1]:
                traj += 1
        row = traj if per_traj else 0
        r = i - start
        out[i, 0] = classical(coords[i, 0], bbox[0], bbox[2], params[row, 0], params[row, 1],
                              uniforms[r, 0], uniforms[r, 1])
        out[i, 1] = classical(coords[i, 1], bbox[1], bbox[3], params[row, 2], params[row, 3],
                              uniforms[r, 2], uniforms[r, 3])
    return traj
