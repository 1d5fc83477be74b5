"""Estimated-vs-raw query metrics: what the collector gains by estimating from the reports.

For one run, both the raw reports' grid histogram and the EM estimate of
:func:`tracs.estimate.grid_density` (from the reports and the public perturber only)
answer the same queries on a ``GRID × GRID`` grid over the public region:

* range queries: mean absolute error of the share of points in ``QUERIES`` random
  boxes with sides of 10–50 % of the region's (drawn from the repetition's query
  stream, so every method and both columns see the same boxes); the raw answer
  counts the reports inside each box exactly, as the true answer counts the true
  points, and the estimate spreads each cell's mass uniformly over the cell;
* hotspot preservation: share of the ``HOT`` busiest true cells among the ``HOT``
  busiest cells of the raw reports / of the estimate.

Methods whose registry entry names no density estimator
(:func:`tracs.estimate.estimators.density_estimator`: the discrete baselines, outputs
rounded to POIs) score NaN in the estimated columns.
"""

from __future__ import annotations

import numpy as np

from ..estimate import Density
from ..estimate import density
from ..estimate.estimators import density_estimator

GRID = 32
QUERIES = 200
HOT = 20

_cache: dict = {}


def _boxes(region, rng):
    xmin, ymin, xmax, ymax = region.bounds
    side = rng.uniform(0.1, 0.5, (QUERIES, 2)) * [xmax - xmin, ymax - ymin]
    low = np.column_stack([rng.uniform(xmin, xmax - side[:, 0]), rng.uniform(ymin, ymax - side[:, 1])])
    return np.column_stack([low, low + side])


def _grid(region):
    xmin, ymin, xmax, ymax = region.bounds
    return np.linspace(xmin, xmax, GRID + 1), np.linspace(ymin, ymax, GRID + 1)


def _estimate(pert, offsets, dataset, perturber):
    """The EM density of this run (computed once per run, shared by the estimated columns)."""
    if density_estimator(perturber) is None:  # no density estimator registered, or rounded to POIs
        return None
    # one entry, matched by identity of the very objects (ids of freed objects are reused)
    hit = _cache.get("run")
    if hit is None or hit[0] is not pert or hit[1] is not perturber or hit[2] is not offsets:
        released = dataset.region.clip(pert)
        est = density(released, perturber, offsets=offsets, grid=(GRID, GRID))
        _cache["run"] = (pert, perturber, offsets, est)
    return _cache["run"][3]


def _answers(points, boxes):
    x, y = points[:, 0, None], points[:, 1, None]
    inside = (x >= boxes[:, 0]) & (x <= boxes[:, 2]) & (y >= boxes[:, 1]) & (y <= boxes[:, 3])
    return inside.mean(axis=0)


def range_query_raw(true, pert, offsets, dataset, rng, perturber=None):
    boxes = _boxes(dataset.region, rng)
    return float(np.abs(_answers(pert, boxes) - _answers(true, boxes)).mean())


def range_query_estimated(true, pert, offsets, dataset, rng, perturber=None):
    boxes = _boxes(dataset.region, rng)
    est = _estimate(pert, offsets, dataset, perturber)
    if est is None:
        return float("nan")
    return float(np.abs(est.range_queries(boxes) - _answers(true, boxes)).mean())


def _hot_share(density, truth):
    a = {tuple(c) for c in density.hotspots(HOT).cells}
    return len(a & {tuple(c) for c in truth.hotspots(HOT).cells}) / HOT


def hotspots_raw(true, pert, offsets, dataset, rng, perturber=None):
    grid = _grid(dataset.region)
    return _hot_share(Density.from_points(pert, grid), Density.from_points(true, grid))


def hotspots_estimated(true, pert, offsets, dataset, rng, perturber=None):
    est = _estimate(pert, offsets, dataset, perturber)
    if est is None:
        return float("nan")
    return _hot_share(est, Density.from_points(true, _grid(dataset.region)))
