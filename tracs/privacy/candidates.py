"""Candidate inputs of the audit: where a leak would show, not only where the law is widest.

An ε-LDP claim covers *every* pair of inputs, so the audit tries pairs chosen to
expose the leaks a floating-point sampler is prone to (Mironov, CCS 2012):

* **evenly spaced points**, both ends included (the pairs where a correct
  mechanism's law differs most);
* **adjacent doubles** ``(x, nextafter(x))`` at both ends of the domain and at
  random points: inputs that differ only in their last bit, so a sampler that
  lets the input's low bits reach its output is caught whatever those bits are;
* a **low-bit ladder** ``x, x + 1, 2, 3 ulp`` at a random point (every value of
  the two lowest mantissa bits);
* points **half an input-lattice cell apart** (the snapping's worst case);
* points **close to both ends** (``1/64`` of the width inside), where a leak confined
  to the edge of the domain lives.

For perturbers, each *scenario* fixes the earlier points of a trajectory and
varies one point: the first point (about the public anchor), the second point
after a fixed first one, and the fifth after four fixed ones.  Only inputs of one
scenario are compared with each other (they share the claim: the per-point ε).

The random points come from the audit's own seed (reproducible).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["interval_inputs", "circle_inputs", "Scenario", "perturber_scenarios"]


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
    return _unique(even + ends + bits + [v for v in half if low <= v <= high])


def circle_inputs(period: float, spacing: float | None, gen: np.random.Generator) -> list:
    """Candidate inputs on the circle ``[0, period)``: four evenly spaced points (antipodes
    included), then as :func:`interval_inputs`."""
    even = list(np.linspace(0.0, period, 5)[:-1])
    ends = [_up(0.0, period), _up(period, 0.0), period / 64, period - period / 64]
    r = [float(v) for v in gen.uniform(period / 16, period - period / 16, 3)]
    bits = _ladder(r[0], period, 3) + _ladder(r[1], period, 1) + _ladder(r[2], 0.0, 1)
    half = [] if spacing is None else [r[0] + spacing / 2, spacing / 2]
    return _unique(even + ends + bits + [v for v in half if 0.0 <= v < period])


@dataclass(frozen=True)
class Scenario:
    """Trajectories of ``len(prefix) + 1`` points: ``prefix`` fixed, the last point is the candidate."""

    prefix: np.ndarray
    point: np.ndarray

    @property
    def position(self) -> int:
        """1-based position of the varied point in its trajectory."""
        return len(self.prefix) + 1

    def label(self) -> tuple:
        return tuple(float(v) for v in self.point)


def _interior_point(region, gen) -> np.ndarray:
    """A random point of the region: a random convex combination of the centre and a vertex."""
    vertices = np.asarray(getattr(region, "vertices", None) if getattr(region, "vertices", None) is not None
                          else _corners(region.bounds), dtype=float)
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


def perturber_scenarios(region, gen, *, half_cell: float | None = None, sequences: bool = True) -> list:
    """Scenarios for a perturber on ``region`` (module notes).

    First points: the region's vertices (up to six) and centre, a random point, its
    adjacent double in x and (with ``half_cell``) the point half a cell away in x.
    With ``sequences``: the second point after the centre, and the fifth after
    ``(centre, vertex 0, vertex 2, centre)``, each at two opposite vertices, a random
    point and its adjacent double.
    """
    vertices = np.asarray(region.vertices if getattr(region, "vertices", None) is not None
                          else _corners(region.bounds), dtype=float)
    centre = np.asarray(region.center, dtype=float)
    r = _interior_point(region, gen)
    first = [*vertices[:6], centre, r, _neighbour(region, r)]
    if half_cell is not None:
        h = r + np.array([half_cell, 0.0])
        if region.contains(h[None, :])[0]:
            first.append(h)
    empty = np.empty((0, 2))
    out = [Scenario(empty, np.asarray(p, dtype=float)) for p in first]
    if not sequences:
        return out
    opposite = vertices[len(vertices) // 2]
    later = [vertices[0], opposite, r, _neighbour(region, r)]
    for prefix in (centre[None, :], np.stack([centre, vertices[0], opposite, centre])):
        out.extend(Scenario(prefix, np.asarray(p, dtype=float)) for p in later)
    return out
