"""TraCS-D and the Strawman draw the input-free half of every point ahead, a block at a time.

The kernel must release exactly what a one-point-at-a-time recursion reading its
words on demand releases; block edges must not show; the shortcuts it uses (the
branch-free band parts, the rectangle's exit distance, the unit-vector tables)
must give the exact paths' numbers.
"""

import math

import numpy as np
import pytest

from tracs.mechanisms.band import (band_part, circular_band_index, classical_band_index, fast_band_part,
                                    threshold_compiled)
from tracs.mechanisms.lattice_kernels import below, split_word, uniform_index
from tracs.perturbers import Strawman, TraCSD
from tracs.perturbers._angles import angle_tables, unit_vector, unit_vectors
from tracs.perturbers._kernels import (BLOCK, DRAW_CELL, DRAW_OTHER, EXT_FIRST, EXT_SECOND, INT_FIRST, INT_SECOND,
                                       box_exit, exit_distance, sector_position, wrap_angle)
from tracs.perturbers._sequential import keyed_trajectories
from tracs.random.kernels import draw_u64_pair
from tracs.region import ConvexRegion, Rectangle

REGION = Rectangle(-500.0, 100.0, 20000.0, 9000.0)
HEXAGON = ConvexRegion([(10000 + 4000 * math.cos(a), 4500 + 4000 * math.sin(a)) for a in np.arange(6) * math.pi / 3])


def _batch(region, seed=5, lengths=None):
    rng = np.random.default_rng(seed)
    # trajectory lengths chosen so that many trajectories straddle block edges
    lengths = np.r_[BLOCK - 1, 2, BLOCK + 3, rng.integers(1, 700, 12), 1] if lengths is None else lengths
    offsets = np.r_[0, np.cumsum(lengths)]
    n = int(offsets[-1])
    x0, y0, x1, y1 = region.bounds
    pts = np.column_stack([rng.uniform(x0, x1, 4 * n), rng.uniform(y0, y1, 4 * n)])
    pts = pts[region.contains(pts)][:n]
    pts[5:9] = pts[4]  # repeated points: the point equals its reference's input
    return pts, offsets


def _one_at_a_time(p, pts, offsets, rng):
    """Indices and points of a plain recursion that reads each point's words when it needs them."""
    kind, key, streams = keyed_trajectories(rng, offsets)
    params = p._point_params(offsets, p._params)
    n_a, h_a = p._angle_constants()
    n_a = int(n_a)
    n_r, h_r = p._cells, p.lattice.distance.spacing
    k = p._sectors
    lat = p.lattice
    idx = np.empty(pts.shape, dtype=np.int64)
    out = np.empty_like(pts)
    for t in range(len(offsets) - 1):
        o = np.asarray(p.anchor_point, dtype=np.float64)
        row = params[t if len(params) > 1 else 0]
        for i in range(offsets[t], offsets[t + 1]):
            st, ix = streams[t], i - offsets[t]
            w0, w1 = (np.uint64(w) for w in draw_u64_pair(kind, key, st, ix, 0))
            w2, w3 = (np.uint64(w) for w in draw_u64_pair(kind, key, st, ix, 1))
            # the kernels' argument types (a word's first bits unsigned), so the band helpers
            # run as the kernels compiled them instead of compiling a variant for this test
            f0, b0 = split_word(w0)
            f1, b1 = split_word(w2)
            f0, f1 = np.uint64(f0), np.uint64(f1)
            dx, dy = pts[i] - o
            phi = wrap_angle(math.atan2(dy, dx)) + 0.0
            if k == 0:
                ja = circular_band_index(phi / h_a, n_a, int(row[0]), row[1], f0, b0, w1, kind, key, st, ix,
                                         EXT_FIRST, INT_FIRST)
            else:
                m = n_a // k
                j = min(int(sector_position(phi, 2 * math.pi / k)), k - 1)
                if below(f0, row[0], kind, key, st, ix, EXT_FIRST, False):
                    j = (j + 1 + uniform_index(k - 1, kind, key, st, ix, DRAW_OTHER)) % k
                ja = j * m + uniform_index(m, kind, key, st, ix, DRAW_CELL)
            unit = lat.unit_vectors([ja])
            reach = float(p.region._exit_distance(o[None], unit[:, 0], unit[:, 1])[0])
            u = min(1.0, math.hypot(dx, dy) / reach) if reach > 0 else 0.0
            jr = classical_band_index(u * n_r, n_r, int(row[2]), row[3], f1, b1, w3, kind, key, st, np.uint64(ix),
                                      EXT_SECOND, INT_SECOND)
            step = (0.0 + jr * h_r) * reach
            o = p.region._clamp_from(o[None], (o + step * unit[0])[None])[0]
            idx[i] = ja, jr
            out[i] = o
    return idx, out


@pytest.mark.parametrize("make", [
    lambda: TraCSD(REGION, epsilon=1.0), lambda: TraCSD(REGION, epsilon_per_trajectory=40.0),
    lambda: TraCSD(HEXAGON, epsilon=0.3, resolution=1 / 63), lambda: TraCSD(REGION, epsilon=30.0, anchor="corner"),
    lambda: Strawman(REGION, epsilon=2.0), lambda: Strawman(REGION, epsilon_per_trajectory=25.0, sectors=5),
    lambda: Strawman(HEXAGON, epsilon=0.5)],
    ids=["tracsd", "tracsd-per-trajectory", "tracsd-hexagon-coarse", "tracsd-large-eps",
         "strawman", "strawman-per-trajectory", "strawman-hexagon"])
def test_block_kernel_equals_the_one_point_recursion(make):
    p = make()
    region = p.region
    pts, offsets = _batch(region, lengths=np.r_[3, 1, 250, 40, 2, 120])
    want_idx, want_out = _one_at_a_time(p, pts, offsets, 21)
    idx = p.lattice_indices(pts, offsets, rng=21)
    out = p.perturb_many(pts, offsets, rng=21)
    assert np.array_equal(idx, want_idx)
    assert np.allclose(out, want_out, rtol=0, atol=1e-9 * region.diameter)
    if isinstance(region, Rectangle):  # clamping only: the same doubles
        assert np.array_equal(out, want_out)


@pytest.mark.parametrize("make", [lambda: TraCSD(REGION, epsilon=1.0), lambda: TraCSD(REGION, epsilon_per_trajectory=40.0),
                                  lambda: Strawman(REGION, epsilon=2.0)], ids=["tracsd", "per-trajectory", "strawman"])
def test_batch_equals_trajectory_by_trajectory(make):
    p = make()
    pts, offsets = _batch(REGION)
    assert len(pts) > 3 * BLOCK
    keys = [f"user-{t}" for t in range(len(offsets) - 1)]
    batch = p.perturb_many(pts, offsets, rng=9, keys=keys)
    for t, key in enumerate(keys):
        one = p.perturb(pts[offsets[t]:offsets[t + 1]], rng=9, key=key)
        assert np.array_equal(batch[offsets[t]:offsets[t + 1]], one), t


@pytest.mark.parametrize("n", [2**20, 1048578, 63, 1])
def test_unit_vectors_compiled_equal_numpy_and_are_within_ulps_of_cos_sin(n):
    h = 2 * math.pi / n
    tables = angle_tables(n, h)
    a = np.unique(np.r_[np.arange(min(n, 5000)), np.random.default_rng(1).integers(0, n, 20000), n - 1])
    got = unit_vectors(a, tables)
    compiled = np.array([unit_vector(int(j), tables) for j in a[::97]])
    assert np.array_equal(compiled, got[::97])
    want = np.column_stack([np.cos(a * h), np.sin(a * h)])
    assert np.max(np.abs(got - want)) <= 1e-15  # a few ulp of 1
    assert np.array_equal(got[a == 0], [[1.0, 0.0]])


def test_box_exit_is_the_half_plane_exit_distance():
    normals, offsets = REGION.halfplanes
    nx, ny, hb = (np.ascontiguousarray(v) for v in (normals[:, 0], normals[:, 1], offsets))
    bbox = np.array(REGION.bounds)
    rng = np.random.default_rng(4)
    x0, y0, x1, y1 = REGION.bounds
    origins = np.r_[rng.uniform([x0, y0], [x1, y1], (400, 2)), [[x0, y0], [x1, y1], [x0, 5000.0], [7.0, y1]]]
    angles = np.r_[rng.uniform(0, 2 * math.pi, 400), np.arange(8) * math.pi / 4]
    units = [(math.cos(a), math.sin(a)) for a in angles] + [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0),
                                                           (-0.0, -1.0), (1.0, -0.0)]
    for ox, oy in origins:
        for c, s in units:
            assert box_exit(ox, oy, c, s, bbox) == exit_distance(ox, oy, c, s, nx, ny, hb), (ox, oy, c, s)


@pytest.mark.parametrize("m, count, c", [(7, 40, 0.3), (1, 2, 0.5), (300_001, 2**20 + 1, 0.02), (5, 9, 1.0),
                                         (5, 9, 0.0), (2**32 + 3, 2**33, 0.4)])
def test_fast_band_part_equals_the_exact_part_where_sure(m, count, c):
    top, fraction = threshold_compiled(c)
    rng = np.random.default_rng(8)
    words = rng.integers(0, 2**64, size=(3000, 2), dtype=np.uint64)
    words[:20, 0] = (np.uint64(top) << np.uint64(11)) | np.uint64(5)  # first 53 bits tie with c
    sure = 0
    for t, (w0, w1) in enumerate(words):
        part, unsure = fast_band_part(w0 >> np.uint64(11), w1, m, count, np.uint64(top), fraction)
        # the exact path reads the extension words only on a tie or a rejection
        exact = band_part(w0 >> np.uint64(11), w1, m, count, c, 0, np.array([3, 4], dtype=np.uint64),
                          np.uint64(7), np.uint64(t), 4, 128)
        if not unsure:
            sure += 1
            assert part == exact, t
        assert -(count - m) <= exact < m
    assert sure >= (0 if m >= 2**32 else 2900)
