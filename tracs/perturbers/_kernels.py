"""Compiled (numba) kernels of the perturbers: every part of a release is a lattice index.

Per point, the kernels read their random words from
:func:`tracs.random.kernels.draw_u64` with the point's ``(stream, index)`` —
the trajectory's keyed stream and the point's position in it — so a release
depends only on the seed, that trajectory and its own records.  Both kernels
derive the stream and index from the trajectory offsets, a block of
:data:`BLOCK` points at a time, and draw a block's words in vector passes before
the per-point work.  Words 0–1 (one
Philox block) drive the first one-dimensional part, words 2–3 the second (the
first word of each pair gives the uniform compared exactly and the snapping
bits, the second the band's uniform integer); ties of the exact comparisons
extend them from words 4 and 40, the Strawman's sector integers use words 64 and
96 on, and rejected band integers are redrawn from words 128 and 160.

The one-dimensional parts are those of :class:`tracs.mechanisms.OptimalClassical`
and :class:`tracs.mechanisms.OptimalCircular` on their lattices: the same
compiled functions (``tracs.mechanisms.band``, inlined), the same snapping,
band constants and law, so the perturbers' indices follow the mechanisms' exact
rows (``lattice_row``) and the tests compare them.  Only after the indices are
drawn is anything mapped to the plane, from the indices, the previous release
and public parameters.

numba's on-disk cache checks a kernel against its own source file only, not against
the helpers it inlines from ``tracs.mechanisms.band``, ``lattice_kernels`` and
``tracs.random.kernels``; :func:`~tracs._numba_cache.key_on_sources` keys this
module's cached kernels on the contents of every tracs source they compile in.

A region enters as half-planes ``nx·x + ny·y <= hb`` plus a flag saying whether
it is an axis-aligned rectangle (clamped coordinate-wise, exactly) or a general
convex polygon (a point found beyond ``tol`` is pulled back towards its reference
along the segment, which stays in the region by convexity).

Direction modes of :func:`sequential_kernel`: ``0`` — optimal circular mechanism
on the angle lattice (TraCS-D); ``1`` — k-RR over ``k`` equal sectors, then a
uniform lattice angle inside the reported sector (Strawman).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from ..mechanisms.band import (affine_start, band_cell_of, band_part, circular_offset_of, classical_band_index,
                               fast_affine_index, fast_band_part, threshold_compiled, wrap_cell)
from ..mechanisms.lattice_kernels import (below, rejection_limit, snap, split_word, uniform_index,
                                           uniform_index_from)
from ._angles import unit_vector
from ..random.kernels import draw_u64, draw_u64_pair


TWO_PI = 2.0 * math.pi

MODE_CIRCULAR = 0
MODE_SECTORS = 1

#: sector edges: ``phi / w`` within this many ulps of an integer is that integer
SNAP_ULPS = 4.0
EPS = 2.0 ** -52

#: first words of the tie extensions, of the sectors' uniform integers and of the
#: bands' integer redraws (module notes)
EXT_FIRST, EXT_SECOND, DRAW_OTHER, DRAW_CELL, INT_FIRST, INT_SECOND = 4, 40, 64, 96, 128, 160

#: points per block of the kernels (their scratch arrays stay in the core's cache)
BLOCK = 2048


@helper
def wrap_angle(y):
    """``y mod 2π`` in ``[0, 2π)`` for ``y`` in ``[−2π, 4π)`` (selects, no branches)."""
    y = y + TWO_PI if y < 0.0 else y
    y = y - TWO_PI if y >= TWO_PI else y
    return 0.0 if y >= TWO_PI else y


@helper
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


@helper
def exit_distance(ox, oy, c, s, nx, ny, hb):
    """Ray exit distance from ``(ox, oy)`` along the unit vector ``(c, s)``.

    Written as selects rather than branches (every quotient is computed, the
    half-planes the ray does not leave through are masked): which sides a random
    direction leaves through is a coin toss, and mispredicted branches cost more
    than the extra divisions.
    """
    r = np.inf
    for e in range(nx.shape[0]):
        nd = nx[e] * c + ny[e] * s
        slack = max(hb[e] - (nx[e] * ox + ny[e] * oy), 0.0)
        leaves = nd > 0.0
        t = slack / (nd if leaves else 1.0)
        t = t if leaves else np.inf
        r = min(r, t)
    return r if r < np.inf else 0.0


@helper
def _axis_exit(o, c, low, high):
    """Exit distance from ``o`` along direction cosine ``c`` through ``[low, high]`` (∞ if ``c = 0``)."""
    num = max(high - o, 0.0) if c > 0.0 else max(o - low, 0.0)
    den = abs(c)
    leaves = den > 0.0
    t = num / (den if leaves else 1.0)
    return t if leaves else np.inf


@helper
def box_exit(ox, oy, c, s, bbox):
    """:func:`exit_distance` for the axis-aligned rectangle ``bbox``: the same double from
    one quotient per axis (its half-planes are ``±x``, ``±y``, so ``n·d`` is ``±c``,
    ``±s`` exactly)."""
    r = min(_axis_exit(ox, c, bbox[0], bbox[2]), _axis_exit(oy, s, bbox[1], bbox[3]))
    return r if r < np.inf else 0.0


@helper
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


@helper
def sector_shift(first, lie, k, kind, key, stream, index):
    """The input-free half of the k-RR over ``k`` sectors: ``0`` (truth, probability
    ``1 − lie``) or ``1 + o`` with ``o`` uniform in ``0 … k − 2`` (the reported
    sector is the true one shifted by it, mod ``k``)."""
    if below(first, lie, kind, key, stream, index, EXT_FIRST, False):
        return 1 + uniform_index(k - 1, kind, key, stream, index, DRAW_OTHER)
    return 0


@helper
def sector_cell(phi, k, m, shift, cell):
    """Angle cell ``cell`` of the sector ``shift`` after the one of ``phi`` (``k`` sectors of ``m`` cells)."""
    w = TWO_PI / k
    j = int(sector_position(phi, w))
    if j >= k:
        j = k - 1
    return wrap_cell(j + shift, k) * m + cell


@helper
def block_streams(start, count, offsets, streams, traj, per_traj, stream, index, row):
    """Stream, index and parameter row (the trajectory, or 0) of points ``start … start + count − 1``,
    ``traj`` being the trajectory of an earlier point; returns the trajectory of the last one."""
    base = offsets[0]
    for j in range(count):
        while start + j >= offsets[traj + 1] - base:
            traj += 1
        stream[j] = streams[traj]
        index[j] = start + j - (offsets[traj] - base)
        row[j] = traj if per_traj else 0
    return traj


@njit(cache=True, nogil=True)
def _draw_parts(start, count, offsets, streams, traj, kind, key, params, n_a, n_r, mode, k, m,
                stream, index, row, w0, w2, d_part, r_part):
    """The random words and input-free parts of points ``start … start + count − 1``.

    Fills, per point of the block: its stream, index and parameter row, the words
    0 and 2 (the snapping bits), the direction part (TraCS-D: :func:`band_part` of
    the circular band; Strawman: the sector cell plus ``(k·m)·`` the sector shift)
    and the distance part (:func:`band_part`).  One row of constants goes through
    branch-free passes (vector code) and the exact scalar path only where those
    are unsure; per-trajectory rows take the exact path.  Returns the trajectory of
    the last point.
    """
    per_traj = params.shape[0] > 1
    traj = block_streams(start, count, offsets, streams, traj, per_traj, stream, index, row)
    m_r = int(params[0, 2])
    top_r, frac_r = threshold_compiled(params[0, 3])
    unsure = np.zeros(count, dtype=np.bool_)
    for j in range(count):
        a, b = draw_u64_pair(kind, key, stream[j], index[j], 1)
        w2[j] = a
        r_part[j], unsure[j] = fast_band_part(a >> np.uint64(11), b, m_r, n_r + 1, top_r, frac_r)
    if mode == MODE_CIRCULAR:
        m_a = int(params[0, 0])
        top_a, frac_a = threshold_compiled(params[0, 1])
        for j in range(count):
            a, b = draw_u64_pair(kind, key, stream[j], index[j], 0)
            w0[j] = a
            part, doubt = fast_band_part(a >> np.uint64(11), b, m_a, n_a, top_a, frac_a)
            d_part[j] = part
            unsure[j] = unsure[j] or doubt
    else:
        limit = rejection_limit(m)
        for j in range(count):
            w0[j] = draw_u64(kind, key, stream[j], index[j], 0)
        for j in range(count):
            st, ix = stream[j], index[j]
            cell = uniform_index_from(draw_u64(kind, key, st, ix, DRAW_CELL), m, limit, kind, key, st, ix,
                                      DRAW_CELL)
            shift = sector_shift(w0[j] >> np.uint64(11), params[row[j], 0], k, kind, key, st, ix)
            d_part[j] = shift * m * k + cell
    for j in range(count):
        if unsure[j] or per_traj:
            st, ix, r = stream[j], index[j], row[j]
            a, b = draw_u64_pair(kind, key, st, ix, 1)
            r_part[j] = band_part(a >> np.uint64(11), b, int(params[r, 2]), n_r + 1, params[r, 3],
                                  kind, key, st, ix, EXT_SECOND, INT_SECOND)
            if mode == MODE_CIRCULAR:
                a, b = draw_u64_pair(kind, key, st, ix, 0)
                d_part[j] = band_part(a >> np.uint64(11), b, int(params[r, 0]), n_a, params[r, 1],
                                      kind, key, st, ix, EXT_FIRST, INT_FIRST)
    return traj


@njit(cache=True, nogil=True)
def sequential_kernel(coords, offsets, kind, key, streams, params, angle, tables, n_r, h_r,
                      anchor, previous, nx, ny, hb, rect, bbox, tol, mode, k, along_true, out, idx):
    """Perturb every point from its reference, in order; fill ``out`` (and ``idx``).

    The reference of a point at index 0 of its trajectory is ``anchor``; of any other
    point, the previous *release* ``out[i-1]``, or ``previous`` for the first row
    (a trajectory continued from index ``offsets[0] − offsets[t]``: one point released
    alone, :meth:`tracs.perturbers._sequential.LatticeReleases.release_at`).  Trajectory
    ``t`` (points ``offsets[t] … offsets[t+1] − 1``) draws from ``streams[t]``, point
    ``i`` of it at index ``i − offsets[t]``.

    The points go in blocks of :data:`BLOCK`.  Half of every draw does not depend on
    the input — whether the released cell is in the band or outside it and which
    of those cells (:func:`tracs.mechanisms.band.band_part`), the k-RR's lie and
    its sector, the cell inside a sector — so :func:`_draw_parts` draws it for the
    whole block first; the recursion, which must wait for the previous release,
    only snaps its input and places the band.  The words read are those of the
    one-point-at-a-time recursion, so the releases are the same.

    Parameters
    ----------
    coords : (N, 2) float64
    offsets : (T+1,) int64
    kind, key, streams
        Keyed randomness: one stream per trajectory.
    params : (1 or T, 4) float64
        Per trajectory (one row when all are equal): direction band ``m, c`` (or
        the k-RR lie probability in column 0), distance band ``m, c``.
    angle : (2,) float64
        Angle lattice: ``n`` angles ``a·h``.
    tables : (4, L) float64
        Its unit vectors' tables (:func:`tracs.perturbers._angles.angle_tables`).
    n_r, h_r : int, float
        Distance input cells on ``[0, 1]`` and the spacing of the ``n_r + 1`` released values.
    anchor, nx, ny, hb, rect, bbox, tol
        The public anchor and region.
    previous : (2,) float64
        The reference of row 0 when its index is not 0 (unused otherwise).
    mode, k : int
        Direction mechanism and sector count.
    along_true : bool
        Normalise the distance by the exit distance along the *true* direction
        (the paper's code) instead of the released one; the released distance is
        scaled by the released direction's exit distance either way.
    out : (N, 2) float64, idx : (N, 2) or (0, 2) int64
        Released points and their (direction, distance) lattice indices (not written
        when ``idx`` has no rows).
    """
    n_a = int(angle[0])
    h_a = angle[1]
    m = n_a // k if k > 0 else 1
    size = coords.shape[0]
    write_idx = idx.shape[0] > 0
    stream = np.empty(BLOCK, dtype=np.uint64)
    index = np.empty(BLOCK, dtype=np.uint64)
    row = np.empty(BLOCK, dtype=np.int64)
    w0 = np.empty(BLOCK, dtype=np.uint64)
    w2 = np.empty(BLOCK, dtype=np.uint64)
    d_part = np.empty(BLOCK, dtype=np.int64)
    r_part = np.empty(BLOCK, dtype=np.int64)
    traj = np.int64(0)  # not a literal: one compiled _draw_parts
    for start in range(0, size, BLOCK):
        count = min(BLOCK, size - start)
        traj = _draw_parts(start, count, offsets, streams, traj, kind, key, params, n_a, n_r, mode, k, m,
                           stream, index, row, w0, w2, d_part, r_part)
        for j in range(count):
            i = start + j
            if index[j] == 0:
                ox = anchor[0]
                oy = anchor[1]
            elif i == 0:
                ox = previous[0]
                oy = previous[1]
            else:
                ox = out[i - 1, 0]
                oy = out[i - 1, 1]
            r = row[j]
            dx = coords[i, 0] - ox
            dy = coords[i, 1] - oy
            phi = wrap_angle(math.atan2(dy, dx)) + 0.0
            if mode == MODE_CIRCULAR:
                ja = snap(phi / h_a, n_a, split_word(w0[j])[1])
                ja = wrap_cell(ja + circular_offset_of(d_part[j], int(params[r, 0])), n_a)
            else:
                shift = d_part[j] // (m * k)
                ja = sector_cell(phi, k, m, shift, d_part[j] - shift * m * k)
            c, s = unit_vector(ja, tables)
            reach = box_exit(ox, oy, c, s, bbox) if rect else exit_distance(ox, oy, c, s, nx, ny, hb)
            dist = math.sqrt(dx * dx + dy * dy)
            scale = reach
            if along_true:
                if dist > 0.0:
                    scale = (box_exit(ox, oy, dx / dist, dy / dist, bbox) if rect else
                             exit_distance(ox, oy, dx / dist, dy / dist, nx, ny, hb))
                else:
                    scale = box_exit(ox, oy, 1.0, 0.0, bbox) if rect else exit_distance(ox, oy, 1.0, 0.0, nx, ny, hb)
            u = 0.0
            if scale > 0.0:
                u = min(1.0, dist / scale)
            m_r = int(params[r, 2])
            kr = snap(u * n_r, n_r, split_word(w2[j])[1])
            jr = band_cell_of(r_part[j], affine_start(kr, 1.0, 0.0, m_r, n_r + 1), m_r)
            step = (0.0 + jr * h_r) * reach
            px = ox + step * c
            py = oy + step * s
            if rect:
                px = min(max(px, bbox[0]), bbox[2])
                py = min(max(py, bbox[1]), bbox[3])
            else:
                px, py = pull_back(ox, oy, px, py, nx, ny, hb, tol)
            out[i, 0] = px
            out[i, 1] = py
            if write_idx:
                idx[i, 0] = ja
                idx[i, 1] = jr


@helper
def _coordinate_point(i, coords, kind, key, stream, index, params, row, bbox, n, sx, sy):
    """The ``(x, y)`` lattice indices of point ``i`` (exact scalar path)."""
    w0, w1 = draw_u64_pair(kind, key, stream, index, 0)
    w2, w3 = draw_u64_pair(kind, key, stream, index, 1)
    f0, b0 = split_word(w0)
    f1, b1 = split_word(w2)
    jx = classical_band_index((coords[i, 0] - bbox[0]) / sx, n, int(params[row, 0]), params[row, 1],
                              f0, b0, w1, kind, key, stream, index, EXT_FIRST, INT_FIRST)
    jy = classical_band_index((coords[i, 1] - bbox[1]) / sy, n, int(params[row, 2]), params[row, 3],
                              f1, b1, w3, kind, key, stream, index, EXT_SECOND, INT_SECOND)
    return jx, jy


@njit(cache=True, nogil=True)
def coordinate_kernel(coords, offsets, kind, key, streams, params, bbox, n, hx, hy, out, idx):
    """TraCS-C on the rectangle ``bbox``: each coordinate through the optimal classical
    mechanism's lattice on its side (``params`` rows: x band ``m, c``, y band ``m, c``;
    one row, or one per trajectory; ``hx``, ``hy`` the spacings of the released values).

    Trajectory ``t`` (points ``offsets[t] … offsets[t+1] − 1``) draws from
    ``streams[t]``, point ``i`` of it at index ``i − offsets[t]``.  The points go in
    blocks of :data:`BLOCK`: per block, the streams and indices of its points, then
    with one row of constants one pass per coordinate without branches (vector
    code: it reads a contiguous copy of the coordinate and writes a contiguous index
    array — strided reads or writes of the ``(n, 2)`` arrays would keep it scalar)
    settles every draw that needs no further word; a scan takes the rest (about
    ``2^-11`` of the points) through the exact scalar path — the same numbers as the
    scalar path alone — and a last pass writes the values (and the indices into
    ``idx`` unless it has no rows).
    """
    sx = (bbox[2] - bbox[0]) / n
    sy = (bbox[3] - bbox[1]) / n
    size = coords.shape[0]
    one_row = params.shape[0] == 1
    mx, my = int(params[0, 0]), int(params[0, 2])
    tx, fx = threshold_compiled(params[0, 1])
    ty, fy = threshold_compiled(params[0, 3])
    stream = np.empty(BLOCK, dtype=np.uint64)
    index = np.empty(BLOCK, dtype=np.uint64)
    row = np.empty(BLOCK, dtype=np.int64)
    axis = np.empty(BLOCK)
    jx = np.empty(BLOCK, dtype=np.int64)
    jy = np.empty(BLOCK, dtype=np.int64)
    traj = 0
    for start in range(0, size, BLOCK):
        count = min(BLOCK, size - start)
        traj = block_streams(start, count, offsets, streams, traj, True, stream, index, row)
        if one_row:
            for j in range(count):
                axis[j] = coords[start + j, 0]
            for j in range(count):
                w0, w1 = draw_u64_pair(kind, key, stream[j], index[j], 0)
                jx[j] = fast_affine_index((axis[j] - bbox[0]) / sx, n, 1.0, 0.0, mx, n + 1, tx, fx, w0, w1)
            for j in range(count):
                axis[j] = coords[start + j, 1]
            for j in range(count):
                w2, w3 = draw_u64_pair(kind, key, stream[j], index[j], 1)
                jy[j] = fast_affine_index((axis[j] - bbox[1]) / sy, n, 1.0, 0.0, my, n + 1, ty, fy, w2, w3)
        for j in range(count):
            if not one_row or jx[j] < 0 or jy[j] < 0:
                jx[j], jy[j] = _coordinate_point(start + j, coords, kind, key, stream[j], index[j], params,
                                                 0 if one_row else row[j], bbox, n, sx, sy)
        for j in range(count):
            out[start + j, 0] = bbox[0] + jx[j] * hx
            out[start + j, 1] = bbox[1] + jy[j] * hy
        if idx.shape[0]:
            for j in range(count):
                idx[start + j, 0] = jx[j]
                idx[start + j, 1] = jy[j]


key_on_sources(globals())  # cached kernels follow every source they compile in
