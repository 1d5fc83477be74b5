"""Trajectory perturbers on a continuous public region.

* :class:`TraCSD` — direction and normalised distance from the previous output
  (sequential along a trajectory; compiled kernel).
* :class:`TraCSC` — each coordinate of a rectangle separately (independent points).
* :class:`Strawman` — k-RR over direction sectors, distance as TraCS-D.
* :class:`PlanarLaplace` — planar Laplace calibrated to the region's diameter, clipped.

Common interface: ``perturb(points, *, rng=None)``,
``perturb_many(coords, offsets, *, rng=None)`` and ``privacy_spent(n)`` returning a
:class:`PrivacyLedger` (per point and per trajectory).  ``epsilon`` is per point;
give ``epsilon_per_trajectory=`` instead for a per-trajectory budget.

Reproducibility: every perturber draws a fixed number of uniforms per point from
the numpy ``Generator``, in point order.  With the same generator state,
``perturb_many`` on a batch returns bit for bit what ``perturb`` returns on each
trajectory in turn (or ``perturb_many`` on consecutive parts of the batch): the
result does not depend on batching or chunking, only on the order of the
trajectories.  For deployment pass ``rng=None`` (fresh OS entropy).
"""

from ._base import Perturber, PrivacyLedger
from ._split import optimal_direction_share, optimal_x_share
from .planar_laplace import PlanarLaplace
from .strawman import Strawman
from .tracsc import TraCSC
from .tracsd import TraCSD

__all__ = [
    "Perturber",
    "PrivacyLedger",
    "TraCSD",
    "TraCSC",
    "Strawman",
    "PlanarLaplace",
    "optimal_direction_share",
    "optimal_x_share",
]
