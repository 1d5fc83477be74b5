"""Extra per-run metrics of an evaluation grid (range queries, hotspots)."""

from __future__ import annotations

import numpy as np
from dataclasses import dataclass
from typing import Callable


from . import estimated as _est
from ..metrics import average_error
from ..query_metrics import hotspot_count_error, hotspot_ndcg, hotspot_precision, range_preservation, range_query_error
from ..errors import InputError
from .choices import _parse_names


#: units on a continuous region
RANGE_DELTA = 0.1
#: share of the distinct true locations taken as hotspots by ``hotspot_count_error``
HOTSPOT_SHARE = 0.2


def _range_query(true, pert, offsets, dataset, rng):
    return range_query_error(true, pert, dataset.region.bounds, rng=rng)


def _hotspot_precision(true, pert, offsets, dataset, rng):
    return hotspot_precision(true, pert, dataset.region.bounds)


def _hotspot_ndcg(true, pert, offsets, dataset, rng):
    return hotspot_ndcg(true, pert, dataset.region.bounds)


def _range_preservation(true, pert, offsets, dataset, rng):
    if dataset.degree_scale is None and dataset.normalise:
        raise InputError(f"range_preservation measures δ = {RANGE_DELTA} degree, but data set "
                         f"{dataset.name!r} has no CRS to convert its units to degrees")
    return range_preservation(true, pert, offsets, radius=RANGE_DELTA, scale=dataset.degree_scale)


def in_degrees(coords, dataset):
    """Coordinates divided by the data's units per degree (east, north): distances in degrees.

    Raises ``ValueError`` when the data set has no geographic reference.
    """
    if dataset.degree_scale is None:
        raise InputError(f"errors in degrees need a geographic reference, but data set {dataset.name!r} "
                         "has none (a continuous region, or data without a CRS)")
    return np.asarray(coords, dtype=np.float64) / np.asarray(dataset.degree_scale, dtype=np.float64).reshape(1, 2)


def _ae_degrees(true, pert, offsets, dataset, rng):
    """Average error in degrees (:func:`in_degrees`); region units on a continuous region."""
    if dataset.degree_scale is None and not dataset.normalise:
        return average_error(true, pert, offsets)
    return average_error(in_degrees(true, dataset), in_degrees(pert, dataset), offsets)


def _hotspot_count_error(true, pert, offsets, dataset, rng):
    return hotspot_count_error(true, pert, offsets, share=HOTSPOT_SHARE)


@dataclass(frozen=True)
class MetricSpec:
    """An extra per-run metric of :func:`run_grid`.

    ``function(true, perturbed, offsets, dataset, rng) -> float`` scores one run:
    the true and released coordinates ``(N, 2)``, the trajectory boundaries
    ``offsets (T + 1,)``, the :class:`Dataset` (its public region, POIs and units) and
    a generator that is the same for every method of a repetition (the random range
    queries).  ``needs_pois``: the metric matches locations exactly and is only
    meaningful on a discrete location space (check-in data).
    """

    name: str
    function: Callable[..., float]
    help: str
    higher_is_better: bool
    needs_pois: bool = False
    #: the function also takes ``perturber=`` (the public perturber of the run)
    needs_perturber: bool = False


#: extra per-run metrics by name (``run_grid(metrics=…)``, ``tracs evaluate --metrics``)
EXTRA_METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in [
        MetricSpec("range_query_error", _range_query,
                   "mean relative count error of 200 random rectangles (0 is perfect)", False),
        MetricSpec("hotspot_precision", _hotspot_precision,
                   "share of the 10 busiest true cells of a 20x20 grid recovered", True),
        MetricSpec("hotspot_ndcg", _hotspot_ndcg, "NDCG@10 of the busiest grid cells", True),
        MetricSpec("range_preservation", _range_preservation,
                   "the paper's range query: per trajectory, the share of points released within "
                   "0.1 degree of the true point (0.1 region units on a continuous region), "
                   "averaged over trajectories; higher is better", True),
        MetricSpec("hotspot_count_error", _hotspot_count_error,
                   "the paper's hotspot error: per trajectory, |#released - #true points on one of "
                   "the top 20 % most visited true locations|, averaged; lower is better", False,
                   needs_pois=True),
        MetricSpec("ae_degrees", _ae_degrees,
                   "average error in degrees (east/north differences over the data's units per "
                   "degree at its latitude), to compare with the paper's degree-unit tables; "
                   "region units on a continuous region", False),
        MetricSpec("range_query_raw", _est.range_query_raw,
                   "mean absolute error of the share of points in 200 random boxes (10-50 % of each "
                   "side), counted on the raw reports", False),
        MetricSpec("range_query_estimated", _est.range_query_estimated,
                   "the same boxes answered by the EM density estimate (tracs.estimate.grid_density; "
                   "NaN for methods without an estimator)", False, needs_perturber=True),
        MetricSpec("hotspots_raw", _est.hotspots_raw,
                   "share of the 20 busiest true cells (32x32) among the raw reports' 20 busiest", True),
        MetricSpec("hotspots_estimated", _est.hotspots_estimated,
                   "share of the 20 busiest true cells among the EM estimate's 20 busiest", True,
                   needs_perturber=True),
    ]
}


def parse_metrics(metrics) -> list[str]:
    """Validate extra metric names (a comma-separated string or a sequence, maybe empty); keep their order."""
    return _parse_names(metrics, EXTRA_METRICS, "metric")
