"""TraCS-D: direction–distance perturbation of trajectories (Zheng & Hu, PETS 2026).

Guarantee: every released point is ε-LDP over the whole region, where ε is the
per-point budget; a trajectory of ``n`` points is ``nε``-LDP (sequential
composition; earlier outputs are public when later points are perturbed).  The
direction index is released by the optimal circular mechanism's lattice at
``ε_φ``, then the distance index by the optimal classical mechanism's lattice
at ``ε_r`` (``ε_φ + ε_r = ε``) on an input that may depend on the released
direction; the probability of any pair of indices is at most
``e^{ε_φ}·e^{ε_r} = e^ε`` times that under another input, and the output point
is a deterministic function of the two indices, the previous release and public
parameters (``docs/privacy.md``).
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.closed_forms import circular_bands
from ..errors import InputError
from . import _kernels
from ._sequential import DEFAULT_DIRECTION_SHARE, TWO_PI, SequentialPerturber
from ._split import optimal_direction_share

__all__ = ["TraCSD"]


class TraCSD(SequentialPerturber):
    """TraCS-D: perturb the direction and the normalised distance from the previous output.

    Parameters
    ----------
    region : Rectangle or ConvexRegion
        The public region every point lies in.
    epsilon : float, optional
        Budget per point.  Give exactly one of ``epsilon`` and
        ``epsilon_per_trajectory``.
    direction_share : float in (0, 1) or "optimal"
        ``ε_φ / ε``.  Default ``π/(π + 1)`` (the paper's).  ``"optimal"`` picks the
        share minimising the expected squared error (see
        :func:`tracs.perturbers.optimal_direction_share`).
    anchor : "center", "corner" or (x, y)
        Public reference of each trajectory's first point: the region's centre
        (default), its lower-left corner (the paper's code; from a corner most
        directions leave the region at once, so first outputs often collapse onto
        it), or any point of the region.
    epsilon_per_trajectory : float, optional
        Budget per trajectory, split evenly over its points (trajectories of
        different lengths then get different per-point budgets; each is handled
        exactly).
    round_to : object with ``round(points) -> (coords, indices)``, optional
        Round the outputs to the nearest point of interest (post-processing,
        after the whole recursion: references are the unrounded releases).
    resolution : float, optional
        Spacing of the direction lattice (a fraction of 2π) and of the distance
        lattice (a fraction of 1); default ``2^-20``.
    distance_along : "released" or "true"
        The ray whose exit distance ``R`` normalises the distance input
        ``u = |τ − o| / R``.  ``"released"`` (default): along the released
        direction ``φ'``, so ``ũ·R(o, φ')`` estimates ``|τ − o|`` itself.
        ``"true"``: along the true direction ``φ`` (the authors' code, registry
        name ``tracs-d-paper``), a reproduction variant: the release is still
        ``o + ũ·R(o, φ')·(cos φ', sin φ')``, so ``ũ·R(o, φ')`` estimates
        ``|τ − o|·R(o, φ')/R(o, φ)``, biased wherever the two rays differ in
        length.  Both are ε-LDP with the same lattices: ``u`` is an input in
        ``[0, 1]`` of the distance mechanism, whose guarantee holds for every pair
        of inputs however they are computed from the point, and the release
        depends on the point only through the two lattice indices
        (``docs/privacy.md``).

    Notes
    -----
    Edge cases, all exact:

    * ``τ == o``: direction 0 and ``u = 0``, perturbed like any other input.
    * ``o`` on an edge or corner: the directions that leave at once have
      ``R(o, φ') = 0``, so the output is ``o`` itself.  That event has
      probability ``P(φ' ∈ outward | φ)``, within ``e^{ε_φ}`` between inputs.
    * ``u = |τ − o| / R(o, φ')`` with ``φ'`` the *released* direction (``R(o, φ)``,
      the true one, with ``distance_along="true"``; direction 0 when ``τ == o``),
      clipped to ``[0, 1]``; ``u = 0`` where ``R = 0``.  Released distances are cell centres,
      never 0 or 1.
    * Outputs are clamped into the region after the release (post-processing of
      lattice values), never re-drawn.
    * Per-part budgets from ``1e-12`` to 700 are sampled exactly (every
      comparison is exact, :mod:`tracs.mechanisms.lattice`); larger ones raise
      ``ValueError`` naming the limit.
    """

    _mode = _kernels.MODE_CIRCULAR

    def __init__(self, region, epsilon=None, *, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None, resolution=None,
                 distance_along="released"):
        if not isinstance(distance_along, str) or distance_along not in ("released", "true"):
            raise InputError(f"distance_along must be 'released' or 'true', got {distance_along!r}")
        super().__init__(region, epsilon, direction_share=direction_share, anchor=anchor,
                         epsilon_per_trajectory=epsilon_per_trajectory, round_to=round_to,
                         resolution=resolution)
        self.distance_along = distance_along
        self._along_true = distance_along == "true"

    def shares(self, epsilon):
        eps = np.asarray(epsilon, dtype=np.float64)
        if self.direction_share == "optimal":
            # per-trajectory budgets: the fixed grid, so a trajectory's share depends on its length only
            return optimal_direction_share(self.region, eps, grid=self._basis == "per_trajectory")
        return np.full(eps.shape, self.direction_share)

    def _direction_params(self, eps_dir):
        # the optimal circular mechanism's rows (m, c) on the angle lattice
        return circular_bands(eps_dir, TWO_PI, self._angle_cells())
