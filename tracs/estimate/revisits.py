"""The revisit prior: a trajectory's points come back to the same POIs.

People return to the same venues: in the TKY check-ins 72 % of a user's check-ins are at a
venue the same user checks in at again, in CHI 50 % (users of median length 3).  A prior of a
report's POI that knows only the population density, or only the neighbouring reports,
misses that.  The revisit prior mixes, for report ``i`` of a trajectory of ``n`` reports,
its base prior ``b_i`` (the population density at the POIs, or the predictive of its cell
given the trajectory's other reports) with the posteriors ``q_j`` of the trajectory's
*other* reports::

    π_i(p) = (α·b_i(p) + Σ_{j ≠ i} q_j(p)) / (α + n − 1),      q_j ∝ π_j · L_j,

``α`` (:data:`REVISIT`, in points) the weight of the base prior, ``L_j`` report ``j``'s law at
every POI.  The posteriors start from ``q_j ∝ b_j·L_j`` and are updated :data:`ROUNDS` times
(each round: every ``π_i`` from the previous round's ``q``, then every ``q_i``).  A report's
own posterior never enters its prior (leave-one-out), and a trajectory of one report keeps
its base prior.  This is the predictive of a Dirichlet process over a trajectory's POIs
(base measure ``b``, concentration ``α``) with the other points' POIs replaced by their
posteriors: an empirical-Bayes heuristic, not the exact posterior of that model.  ``α = 4``
is fixed in advance; it was chosen on TKY and CHI (``docs/estimation.md``, *Over the POIs*).

Like every denoiser this is post-processing of the release and its public parameters;
a report's prior depends on the other reports of its own trajectory and, through the base
prior, on the fitted model only.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, InputTypeError

__all__ = ["REVISIT", "ROUNDS", "check_revisit", "revisit_priors"]

#: the base prior's weight ``α``, in points, of ``denoise(..., pois=..., trajectory=True)``
REVISIT = 4.0
#: rounds of the posteriors' update
ROUNDS = 3


def check_revisit(revisit):
    """``revisit``: None or a finite number > 0 (the public boundary's check)."""
    if revisit is None:
        return
    if isinstance(revisit, bool) or not isinstance(revisit, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"revisit must be a number or None, got {type(revisit).__name__}")
    if not (np.isfinite(revisit) and revisit > 0):
        raise InputError(f"revisit must be a finite number > 0 or None, got {revisit!r}")


def revisit_priors(lik: np.ndarray, base: np.ndarray, offsets: np.ndarray, alpha: float,
                   rounds: int = ROUNDS) -> np.ndarray:
    """The revisit prior of every report: ``(n, P)``, every row summing to 1.

    Parameters
    ----------
    lik : numpy.ndarray, shape (n, P)
        Every report's law at every POI (positive somewhere in every row).
    base : numpy.ndarray, shape (n, P)
        Every report's base prior over the POIs (rows summing to 1).
    offsets : numpy.ndarray of int
        Boundaries of whole trajectories over the ``n`` rows (``0 … n``, non-decreasing: an
        empty trajectory holds no row).
    alpha : float
        The base prior's weight (> 0).
    rounds : int
        Updates of the other reports' posteriors (≥ 1).
    """
    lengths = np.diff(offsets).astype(np.intp)
    starts = np.asarray(offsets[:-1], dtype=np.intp)[lengths > 0]  # reduceat: no empty segment
    lengths = lengths[lengths > 0]
    others = np.repeat(lengths - 1, lengths).astype(np.float64)[:, None]
    q = _normalised(base * lik)
    prior = base
    for _ in range(rounds):
        sums = np.repeat(np.add.reduceat(q, starts, axis=0), lengths, axis=0)
        prior = (alpha * base + np.maximum(sums - q, 0.0)) / (alpha + others)
        q = _normalised(prior * lik)
    return prior


def _normalised(rows: np.ndarray) -> np.ndarray:
    total = rows.sum(axis=1, keepdims=True)
    return np.divide(rows, total, out=np.zeros_like(rows), where=total > 0)
