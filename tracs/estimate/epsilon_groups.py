"""The per-point ε of every report of a discrete baseline built with a budget per trajectory.

A baseline given ``epsilon_per_trajectory=E`` spends ``E / n`` on every point of a
trajectory of ``n`` points (:meth:`tracs.releaser.Releaser.epsilon_per_point`, the rule its
sampler applies), so each report's law is the baseline's law at its trajectory's per-point
ε.  The trajectory lengths are public (the release's offsets), hence so is every report's
ε.  The reports are grouped by their distinct ε, whole trajectories at a time (one ε per
trajectory length): each group is denoised or fitted under the law at its ε
(:func:`tracs.estimate.frequencies`, :func:`tracs.estimate.baseline_posterior`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["EpsilonGroup", "check_per_trajectory_offsets", "epsilon_groups"]


@dataclass(frozen=True)
class EpsilonGroup:
    """The reports released at one per-point ε.

    Attributes
    ----------
    epsilon : float
        Their per-point ε.
    rows : numpy.ndarray of intp
        Their positions among the reports, in order (whole trajectories).
    offsets : numpy.ndarray of intp
        The boundaries of their trajectories within ``rows``.
    """

    epsilon: float
    rows: np.ndarray
    offsets: np.ndarray


def check_per_trajectory_offsets(baseline, offsets) -> None:
    """A baseline built per trajectory needs the trajectories: each report's ε is the budget over its length."""
    if baseline.epsilon is None and offsets is None:
        raise InputError("a baseline built with a budget per trajectory needs offsets: each report's per-point "
                         "epsilon is the budget split over the points of its trajectory")


def epsilon_groups(baseline, off) -> list[EpsilonGroup]:
    """The reports of the trajectories ``off`` (validated offsets) grouped by their per-point ε under
    ``baseline`` (built per trajectory), by increasing ε: one group per distinct ε."""
    lengths = np.diff(off)
    per_trajectory = np.asarray(baseline.epsilon_per_point(lengths), dtype=np.float64)
    values, group = np.unique(per_trajectory, return_inverse=True)
    report_group = np.repeat(group, lengths)
    order = np.argsort(report_group, kind="stable")
    bounds = np.searchsorted(report_group[order], np.arange(values.size + 1))
    out = []
    for g, value in enumerate(values):  # one pass per distinct ε (trajectory length), not per report
        sizes = lengths[(group == g) & (lengths > 0)]
        if sizes.size:
            out.append(EpsilonGroup(float(value), order[bounds[g]:bounds[g + 1]].astype(np.intp),
                                    np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)))
    return out
