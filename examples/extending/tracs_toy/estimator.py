"""The density estimator of the toy perturber's reports (:mod:`tracs_toy.perturber`).

Every requirement tracs places on a density estimator of another package, as this one
meets it:

1. **Its likelihood from public values only**: the reports, their trajectory offsets,
   their per-report ε and the public perturber (``plan.perturber``: region, cells,
   budget), never the true points.  The estimator fits, by EM, the probability of
   each cell of the grid ``plan.xe × plan.ye`` over the region
   (:class:`tracs.estimate.grid_density.DensityPlan`).
2. **``blocks(plan, pts, off, eps, weights)``** returns EM blocks: here one
   :class:`tracs.estimate.estimators.DenseBlock`, one row per distinct (ε, released
   cell) with its count as weight, ``L[r, x] = P(report r | true point in cell x)``
   with columns in the grid's ``(i, j)`` order (``theta.ravel()``).  A grid cell is
   represented by its centre (the toy's cell holding it), as TraCS-D's estimator does
   with ``subpoints=1``.  The exact pmf of the perturber is used, as it samples.
   No loop over reports in Python.
3. **The entry** (:data:`ESTIMATOR`, a :class:`tracs.estimate.estimators.Estimator`):
   its name, which the method's registry entry gives as ``estimator="toy-cells"``,
   its target ``"density"`` and ``blocks``.  Optional fields say what else the
   estimating code must know (``support``, ``trajectories`` when a report's
   likelihood depends on earlier reports, ``counts`` / ``from_counts`` or ``merge``
   for the Dask estimate, ``held_out_smoothing``, ``auto_stop``); none applies here.
4. **An entry point** naming :data:`ESTIMATOR` in the group ``tracs.estimators``
   (``pyproject.toml``).  ``tracs estimate``, :func:`tracs.estimate.density`,
   :func:`tracs.dask.estimate` and the evaluation's estimated columns then use it.
"""

from __future__ import annotations

import numpy as np

from tracs.estimate.estimators import DENSITY, DenseBlock, Estimator

__all__ = ["ESTIMATOR", "toy_blocks"]


def toy_blocks(plan, pts, off, eps, weights=None) -> list:
    """One dense block of the reports ``pts`` (per-report budgets ``eps``) on ``plan``'s grid."""
    pert = plan.perturber
    k = pert.cells ** 2
    keep, budget = np.unique(pert.keep_probability(eps), return_inverse=True)
    distinct, counts = np.unique(budget * k + pert.cell_of(pts), return_counts=True)
    p, released = keep[distinct // k], distinct % k
    cx, cy = (plan.xe[:-1] + plan.xe[1:]) / 2, (plan.ye[:-1] + plan.ye[1:]) / 2
    own = pert.cell_of(np.column_stack([np.repeat(cx, len(cy)), np.tile(cy, len(cx))]))
    likelihood = np.where(own[None, :] == released[:, None], p[:, None], 0.0) + ((1.0 - p) / k)[:, None]
    return [DenseBlock(likelihood, counts.astype(np.float64))]


#: the registry entry, named by the entry point ``toy-cells`` of the group ``tracs.estimators``
ESTIMATOR = Estimator("toy-cells", DENSITY, "randomized response over public cells: one row per released cell",
                      blocks=toy_blocks)
