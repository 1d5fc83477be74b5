"""TraCS-D: direction–distance perturbation of trajectories (Zheng & Hu, PETS 2026).

Guarantee: every released point is ε-LDP over the whole region, where ε is the
per-point budget; a trajectory of ``n`` points is ``nε``-LDP (sequential
composition; earlier outputs are public when later points are perturbed).  The
pair ``(φ', u')`` has density ``f(φ'|φ)·g(u'|u)`` (optimal circular mechanism at
``ε_φ`` times optimal classical mechanism at ``ε_r``, ``ε_φ + ε_r = ε``), so any
two inputs give a density ratio of at most ``e^{ε_φ}·e^{ε_r} = e^ε``; the output
point is a deterministic function of ``(φ', u')`` and the public reference.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import OptimalCircular
from . import _kernels
from ._sequential import DEFAULT_DIRECTION_SHARE, SequentialPerturber, side_masses, wrap_step

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
        after the whole recursion: references are the continuous outputs).

    Notes
    -----
    Edge cases, all exact:

    * ``τ == o``: direction 0 and ``u = 0``, perturbed like any other input.
    * ``o`` on an edge or corner: the directions that leave at once have
      ``R(o, φ') = 0``, so the output is ``o`` itself.  That event has
      probability ``P(φ' ∈ outward | φ)``, within ``e^{ε_φ}`` between inputs.
    * ``u = |τ − o| / R(o, φ)`` is computed without trigonometry
      (:meth:`tracs.Rectangle.direction_distance`), clipped to ``[0, 1]``; by
      convention ``u = 0`` where ``R = 0``.
    * Outputs are clamped into the region after sampling (floating-point error
      only), never re-drawn.
    * Trajectories of length 1 use the anchor only; any ε > 0 works (checked
      from 1e-6 to 50).  Every yes/no choice compares its uniform against the
      rare branch's probability, so the low-density parts stay reachable at
      every ε (an input is never certain to come back almost unchanged); the
      realised law matches the formulas to a relative ``2^-13`` for per-part
      budgets up to about 55, beyond which it stays ε-LDP but loses accuracy.
    """

    _mode = _kernels.MODE_CIRCULAR
    uniforms_per_point = 4

    def __init__(self, region, epsilon=None, *, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None):
        super().__init__(region, epsilon, direction_share=direction_share, anchor=anchor,
                         epsilon_per_trajectory=epsilon_per_trajectory, round_to=round_to)

    def shares(self, epsilon):
        eps = np.asarray(epsilon, dtype=np.float64)
        if self.direction_share == "optimal":
            from ._split import optimal_direction_share

            # per-trajectory budgets: the fixed grid, so a trajectory's share depends on its length only
            return optimal_direction_share(self.region, eps, grid=self._basis == "per_trajectory")
        return np.full(eps.shape, self.direction_share)

    def _direction_params(self, eps_dir):
        half = np.array([OptimalCircular(epsilon=float(e)).half_width for e in eps_dir])
        return side_masses(eps_dir), half

    def _direction_step(self, phi, uni, rows):
        half = rows[:, 1]
        # the rare branch (the low-density arc) is compared against its own mass
        y = np.where(uni[:, 0] < rows[:, 0], phi + half + uni[:, 1] * (2 * np.pi - 2.0 * half),
                     phi - half + uni[:, 1] * (2.0 * half))
        return wrap_step(y)
