"""The exponential mechanism over a finite set of points of interest ("EXP")."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ._base import Baseline
from ._exponential_sampler import em_probabilities, sample_em

__all__ = ["ExponentialMechanism"]


class ExponentialMechanism(Baseline):
    """Exponential mechanism over POIs, each point independently.

    ``Pr[y | x] = exp(−ε·d(x, y)/(2D)) / Σ_{z∈P} exp(−ε·d(x, z)/(2D))`` with ``D`` the
    space's public diameter.  For any ``x, x'`` and ``y``,
    ``|d(x, y) − d(x', y)| ≤ D``, so numerator and normaliser each change by at most
    ``e^{ε/2}``: every released point is ε-LDP over the POIs (McSherry & Talwar,
    FOCS 2007; ``docs/mechanisms.md`` §7).  A trajectory of ``n`` points is ``nε``-LDP by
    sequential composition.

    Parameters
    ----------
    poi_space, epsilon, epsilon_per_trajectory
        As :class:`Baseline` (a budget per trajectory is split evenly over its points).

    Notes
    -----
    The input is snapped to its nearest POI first (the true location is assumed to be
    a POI).  Sampling is exact: rejection from the uniform proposal, finished by a
    blocked inverse CDF with a log-sum-exp shift (see ``tracs.baselines._exponential_sampler``).
    Supported budgets: a draw's smallest probability, at least ``e^{−ε/2}/|P|``, must
    be ``>= 2^-40`` so that the double-precision sampler realises it faithfully; so
    ``ε <= 2(40·ln 2 − ln|P|)`` per draw (about 37.5 on 7,800 POIs).  Larger budgets
    are refused with a ``ValueError`` (at construction for a per-point ``ε``, when
    perturbing for a budget per trajectory).
    """

    unit = "point"

    def probabilities(self, x_index, epsilon=None) -> np.ndarray:
        """Exact output distribution over the POIs for true POI ``x_index``.

        Parameters
        ----------
        x_index : int or array_like of int
            True POI index (or indices).
        epsilon : float, optional
            Budget of this draw; default the per-point ``epsilon``.

        Returns
        -------
        numpy.ndarray, shape (|P|,) or (k, |P|)
        """
        eps = self.epsilon if epsilon is None else epsilon
        if eps is None:
            raise InputError("give the per-draw epsilon (this mechanism was built per trajectory)")
        dist = self.poi_space.distances_from(x_index)
        return em_probabilities(dist, eps / (2.0 * self.poi_space.diameter))

    def _perturb(self, indices, offsets, draws):
        lengths = np.diff(offsets)
        eps = np.repeat(self.epsilon_per_point(lengths), lengths)
        self._check_scale(eps)
        points = self.poi_space.points
        return sample_em(points, points[indices], eps / (2.0 * self.poi_space.diameter),
                         draws.at(np.arange(indices.size), 0))
