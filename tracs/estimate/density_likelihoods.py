"""The likelihoods of the shipped density estimators: their entries' callables.

Each function is named by an entry of :mod:`tracs.estimate.estimators` and called
with the :class:`tracs.estimate.grid_density.DensityPlan` of the fit (public
perturber, grid, options):

* ``"axes"`` (TraCS-C): product blocks of exact per-axis lattice matrices;
  partitions' blocks are merged by :func:`merge_binned`.
* ``"grid"`` (planar Laplace): counts of distinct keys, then the blocks of all counts.
* ``"directional"`` (TraCS-D, Strawman): runs of columns per row about each report's
  reference (:mod:`tracs.estimate._directional`); the cells with a public point in
  the region are the support; ``stop="auto"`` holds out trajectories for TraCS-D at
  small ε.
"""

from __future__ import annotations

import numpy as np

from ..perturbers import TraCSD
from . import _directional
from . import expectation_maximisation as fitting
from ._laplace import laplace_blocks, laplace_counts, merge_counts
from .memory import refuse_above
from .grid_density import AUTO_CV_EPSILON, _axis_points, _subpoints, _tracsc_blocks

__all__ = ["axes_blocks", "directional_blocks", "directional_stop", "grid_blocks", "grid_blocks_from_counts",
           "grid_counts", "merge_binned", "region_support"]


def _refuse_binned(plan, pts, dense: bool) -> None:
    """Refuse up front a fit of binned reports above ``plan.memory``."""
    (gx, gy), bins = plan.shape, plan.output_bins
    bins = (2 * gx if bins is None else int(bins)) * (2 * gy if bins is None else int(bins))
    held = 8 * gx * gy * min(len(pts), 9 * bins) if dense else 0
    refuse_above(40 * len(pts) + 64 * bins + held, plan.memory, f"estimating {len(pts):,} reports on {gx * gy:,} cells")


def axes_blocks(plan, pts, off, eps, weights=None) -> list:
    """``"axes"`` (TraCS-C): one product block per distinct per-point ε."""
    _refuse_binned(plan, pts, False)
    return _tracsc_blocks(pts, plan.perturber, eps, plan.xe, plan.ye, plan.output_bins, weights)


def grid_counts(plan, pts, eps):
    """``"grid"`` (planar Laplace): the reports' counts of distinct keys."""
    return laplace_counts(pts, plan.perturber, eps, plan.xe, plan.ye, plan.output_bins)


def grid_blocks_from_counts(plan, parts) -> list:
    """``"grid"``: the blocks of the reports whose :func:`grid_counts` are ``parts``."""
    return laplace_blocks(merge_counts(parts), plan.perturber, plan.xe, plan.ye, plan.output_bins)


def grid_blocks(plan, pts, off, eps, weights=None) -> list:
    """``"grid"`` (planar Laplace): the blocks of the reports' counts."""
    _refuse_binned(plan, pts, True)
    return grid_blocks_from_counts(plan, [grid_counts(plan, pts, eps)])


def directional_blocks(plan, pts, off, eps, weights=None) -> list:
    """``"directional"`` (TraCS-D, Strawman): runs of columns per row about each report's reference."""
    sub = plan.subpoints
    return _directional.directional_blocks(pts, off, plan.perturber, eps, _axis_points(plan.xe, sub), _axis_points(plan.ye, sub), sub,
                  _subpoints(plan.xe, plan.ye, sub), workers=plan.workers, memory=plan.memory)


def region_support(plan) -> np.ndarray:
    """``"directional"``: the cells with a public point inside the region."""
    gx, gy = plan.shape
    points = _subpoints(plan.xe, plan.ye, plan.subpoints).reshape(-1, 2)
    return plan.perturber.region.contains(points).reshape(gx * gy, -1).any(axis=1).reshape(gx, gy)


def directional_stop(perturber, eps_high: float) -> str:
    """``"directional"``'s ``stop="auto"``: held-out passes for TraCS-D below :data:`AUTO_CV_EPSILON`."""
    return "cv" if isinstance(perturber, TraCSD) and eps_high < AUTO_CV_EPSILON else "rule"


def merge_binned(lists) -> list:
    """``"axes"`` blocks from every part as one list: the counts of equal matrices added, in the
    order of ε (that of the blocks of all reports at once)."""
    merged: dict = {}
    for blocks in lists:
        for block in blocks:
            key = (block.eps, block.first.tobytes(), block.second.tobytes())
            if key in merged:
                merged[key] = fitting.ProductBlock(merged[key].counts + block.counts, block.first, block.second)
            else:
                merged[key] = block
    return [merged[key] for key in sorted(merged, key=lambda k: k[0])]
