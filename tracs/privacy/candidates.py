"""Candidate inputs of the audit: where a leak would show, not only where the law is widest.

An ε-LDP claim covers *every* pair of inputs, so the audit tries pairs chosen to
expose the leaks a floating-point sampler is prone to (Mironov, CCS 2012), and
searches the whole domain for a leak confined to a part of it:

* **evenly spaced points**, both ends included (the pairs where a correct
  mechanism's law differs most);
* **stratified random points**: :data:`STRATA` evenly spaced points at a random
  offset, one in each of ``STRATA`` equal strata of the domain (per axis, paired
  by a random permutation, in 2-D: a Latin hypercube), so that every band of the
  domain wider than ``1/STRATA`` of it (per axis in 2-D) holds a candidate whatever
  the seed — a leak confined to a band of 2 % of the domain is always tried;
* **adjacent doubles** ``(x, nextafter(x))`` at both ends of the domain and at
  random points: inputs that differ only in their last bit, so a sampler that
  lets the input's low bits reach its output is caught whatever those bits are;
* a **low-bit ladder** ``x, x + 1, 2, 3 ulp`` at a random point (every value of
  the two lowest mantissa bits);
* points **half an input-lattice cell apart** (the snapping's worst case);
* points **close to both ends** (``1/64`` of the width inside), where a leak confined
  to the edge of the domain lives; in 2-D, points **near every vertex** (not only at
  it): ``1/512``, ``1/64`` and ``1/8`` of the way to the centre and two random
  points at a log-uniform fraction in ``[1/1024, 1/8]`` of it.

For perturbers, each *scenario* fixes the earlier points of a trajectory and
varies its last point: the first point (about the public anchor), then every
position up to :data:`POSITIONS` and the longer trajectories of :data:`LONG`
points.  The perturbers that take per-user keys are released with ``keys=`` (as
``tracs perturb`` releases) in every scenario, and without them at the lengths
:data:`UNKEYED`.  Only inputs of one scenario are compared with each other (they
share the claim: the per-point ε of a trajectory of that length).

The random points come from the audit's own seed (reproducible).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["interval_inputs", "circle_inputs", "Scenario", "perturber_scenarios", "STRATA", "POSITIONS",
           "LONG", "UNKEYED"]

#: stratified random candidates: one in each of this many equal strata (per axis in 2-D)
STRATA = 64
#: every position up to this one is varied (the trajectory's last point, after fixed ones)
POSITIONS = 8
#: longer trajectories whose last point is varied too
LONG = (16, 32)
#: trajectory lengths also released without keys= (perturbers that take keys)
UNKEYED = (1, 2, 5)


def _up(x: float, towards: float) -> float:
    return float(np.nextafter(x, towards))


def _ladder(x: float, towards: float, steps: int) -> list:
    out = [x]
    for _ in range(steps):
        out.append(_up(out[-1], towards))
    return out


def _unique(values) -> list:
    return list(dict.fromkeys(float(v) + 0.0 for v in values))


def interval_inputs(low: float, high: float, spacing: float | None, gen: np.random.Generator) -> list:
    """Candidate inputs on ``[low, high]`` (module notes); ``spacing`` of the input lattice, if any."""
    width = high - low
    even = list(np.linspace(low, high, 5))
    ends = [_up(low, high), _up(high, low), low + width / 64, high - width / 64]
    r = [float(v) for v in gen.uniform(low + width / 16, high - width / 16, 3)]
    bits = _ladder(r[0], high, 3) + _ladder(r[1], high, 1) + _ladder(r[2], low, 1)
    half = [] if spacing is None else [r[0] + spacing / 2, low + spacing / 2]
    strata = list(low + width * stratified(STRATA, gen))
    return _unique(even + ends + bits + [v for v in half if low <= v <= high] + strata)


def circle_inputs(period: float, spacing: float | None, gen: np.random.Generator) -> list:
    """Candidate inputs on the circle ``[0, period)``: four evenly spaced points (antipodes
    included), then as :func:`interval_inputs`."""
    even = list(np.linspace(0.0, period, 5)[:-1])
    ends = [_up(0.0, period), _up(period, 0.0), period / 64, period - period / 64]
    r = [float(v) for v in gen.uniform(period / 16, period - period / 16, 3)]
    bits = _ladder(r[0], period, 3) + _ladder(r[1], period, 1) + _ladder(r[2], 0.0, 1)
    half = [] if spacing is None else [r[0] + spacing / 2, spacing / 2]
    strata = [v for v in period * stratified(STRATA, gen) if v < period]
    return _unique(even + ends + bits + [v for v in half if 0.0 <= v < period] + strata)


def stratified(count: int, gen: np.random.Generator) -> np.ndarray:
    """``(k + u) / count`` for ``k = 0 … count − 1`` and one uniform ``u`` (systematic sampling):
    a point in each of ``count`` equal strata of ``[0, 1)``, evenly spaced, so every interval
    of ``[0, 1]`` longer than ``1 / count`` holds one."""
    return (np.arange(count) + gen.random()) / count


@dataclass(frozen=True)
class Scenario:
    """Trajectories of ``len(prefix) + 1`` points: ``prefix`` fixed, the last point is the candidate.

    ``keyed``: released with one distinct per-user key per trajectory (``keys=``), as
    ``tracs perturb`` releases; otherwise without ``keys=``.
    """

    prefix: np.ndarray
    point: np.ndarray
    keyed: bool = False

    @property
    def position(self) -> int:
        """1-based position of the varied point in its trajectory (the trajectory's length)."""
        return len(self.prefix) + 1

    def label(self) -> tuple:
        return tuple(float(v) for v in self.point)


def _vertices(region) -> np.ndarray:
    vertices = getattr(region, "vertices", None)
    return np.asarray(vertices if vertices is not None else _corners(region.bounds), dtype=float)


def _inside(region, points) -> np.ndarray:
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    return points[region.contains(points)]


def _interior_point(region, gen) -> np.ndarray:
    """A random point of the region: a random convex combination of the centre and a vertex."""
    vertices = _vertices(region)
    centre = np.asarray(region.center, dtype=float)
    v = vertices[int(gen.integers(len(vertices)))]
    t = float(gen.uniform(0.1, 0.9))
    p = centre + t * (v - centre)
    return p if region.contains(p[None, :])[0] else centre


def _corners(bounds):
    xmin, ymin, xmax, ymax = (float(v) for v in bounds)
    return [(xmin, ymin), (xmax, ymin), (xmax, ymax), (xmin, ymax)]


def _neighbour(region, p) -> np.ndarray:
    """``p`` with its x coordinate moved to the adjacent double (inside the region)."""
    q = p.copy()
    q[0] = np.nextafter(p[0], np.inf)
    if not region.contains(q[None, :])[0]:
        q[0] = np.nextafter(p[0], -np.inf)
    return q


def latin_hypercube(region, gen, count: int = STRATA) -> np.ndarray:
    """``count`` points of the bounding box, one in each of ``count`` strata per axis (evenly
    spaced per axis at random offsets, paired by a random permutation); those outside the
    region are left out."""
    xmin, ymin, xmax, ymax = (float(v) for v in region.bounds)
    u = np.column_stack([gen.permutation(stratified(count, gen)), stratified(count, gen)])
    return _inside(region, np.column_stack([xmin + (xmax - xmin) * u[:, 0], ymin + (ymax - ymin) * u[:, 1]]))


def near_vertices(region, gen) -> np.ndarray:
    """Points near (not at) each vertex: ``1/512``, ``1/64``, ``1/8`` of the way to the centre, and
    two at a log-uniform fraction in ``[1/1024, 1/8]`` of that distance in a random direction."""
    vertices = _vertices(region)[:6]
    centre = np.asarray(region.center, dtype=float)
    out = []
    for v in vertices:
        out.extend(v + f * (centre - v) for f in (1 / 512, 1 / 64, 1 / 8))
        for _ in range(2):
            f = 2.0 ** gen.uniform(-10, -3)
            angle = gen.uniform(-np.pi / 2, np.pi / 2, 16)
            d = centre - v
            tries = v + f * np.column_stack([d[0] * np.cos(angle) - d[1] * np.sin(angle),
                                             d[0] * np.sin(angle) + d[1] * np.cos(angle)])
            inside = _inside(region, tries)
            out.append(inside[0] if len(inside) else v + f * d)
    return _inside(region, out)


def perturber_scenarios(region, gen, *, half_cell: float | None = None, sequences: bool = True,
                        keyed: bool = False, extra=None) -> list:
    """Scenarios for a perturber on ``region`` (module notes).

    First points: the region's vertices (up to six) and centre, points near the vertices,
    :data:`STRATA` stratified random points, a random point, its adjacent double in x and
    (with ``half_cell``) the point half a cell away in x, and the ``extra`` points.  With
    ``sequences``: the last point of trajectories of every length ``2 … POSITIONS`` and of
    ``LONG``, after a fixed tour (the centre, vertex 0, the opposite vertex, the centre,
    then random points), at two opposite vertices, a random point and its adjacent double,
    and (not for ``LONG``) a point near vertex 0 and another random point.  With ``keyed``
    every scenario is released with ``keys=`` and those of the lengths ``UNKEYED`` also
    without.
    """
    vertices = _vertices(region)
    centre = np.asarray(region.center, dtype=float)
    r = _interior_point(region, gen)
    first = [*vertices[:6], centre, r, _neighbour(region, r), *near_vertices(region, gen),
             *latin_hypercube(region, gen)]
    if half_cell is not None:
        first.extend(_inside(region, r + np.array([half_cell, 0.0])))
    if extra is not None:
        first.extend(np.asarray(extra, dtype=float))
    points = {1: [np.asarray(p, dtype=float) for p in first]}
    tour = np.empty((0, 2))
    if sequences:
        opposite = vertices[len(vertices) // 2]
        near = vertices[0] + (centre - vertices[0]) / 64
        tour = np.vstack([centre, vertices[0], opposite, centre,
                          [_interior_point(region, gen) for _ in range(max(LONG) - 5)]])
        for length in [*range(2, POSITIONS + 1), *LONG]:
            ri = _interior_point(region, gen)
            later = [vertices[0], opposite, ri, _neighbour(region, ri)]
            if length <= POSITIONS:
                later += [near, _interior_point(region, gen)]
            points[length] = later
    out = []
    for length, pts in points.items():
        for flag in ((True, False) if keyed and length in UNKEYED else (keyed,)):
            out.extend(Scenario(tour[:length - 1], p, flag) for p in pts)
    return out
