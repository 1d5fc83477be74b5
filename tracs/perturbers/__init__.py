"""Trajectory perturbers on a continuous public region.

* :class:`TraCSD` — direction and normalised distance from the previous release
  (sequential along a trajectory; compiled kernel).
* :class:`TraCSC` — each coordinate of a rectangle separately (independent points).
* :class:`Strawman` — k-RR over direction sectors, distance as TraCS-D.
* :class:`PlanarLaplace` — discrete planar Laplace on a public grid, clamped.

Every release is made of lattice indices (``lattice``, ``lattice_indices``); the
released point is a function of the indices, the previous release and public
parameters only (``docs/privacy.md``).

Common interface, that of every releaser (:class:`tracs.releaser.Releaser`, shared with
the baselines): ``perturb(points, *, rng=None)``,
``perturb_many(coords, offsets, *, rng=None)`` and ``privacy_spent(n)`` returning a
:class:`PrivacyLedger` (per point and per trajectory).  ``epsilon`` is per point;
give ``epsilon_per_trajectory=`` instead for a per-trajectory budget.

Reproducibility: trajectory ``t`` of a call reads keyed stream ``t`` of the seed's
key (:mod:`tracs.random`), each point the words of its position in the trajectory.
For deployment pass ``rng=None`` or ``rng="secure"``.
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
