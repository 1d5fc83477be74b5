"""``tracs.audit_perturber``: the audit of :func:`tracs.audit` for 2-D perturbers.

A perturber releases points of the plane.  Each candidate input point is
released ``samples`` times as that many one-point trajectories
(``perturb_many(np.tile(p, (n, 1)), np.arange(n + 1))``), so every release is
a *first* point: for TraCS-D it is perturbed about the public anchor.  The
per-point claim ``privacy_spent(1).per_point`` is what is audited.  Output
cells are the recurring points (POIs, region corners, lattice points that
carry mass) plus a grid of per-axis quantile bins.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ._engine import check_audit_arguments, run_audit
from .audit import draw_vectorised
from .lattice_check import IndexedRelease, PointSet, declared_lattice, is_indexed

__all__ = ["audit_perturber", "perturber_inputs"]


def _call(perturber):
    many = getattr(perturber, "perturb_many", None)
    if callable(many):
        return lambda pts, rng: many(pts, np.arange(len(pts) + 1), rng=rng)
    if callable(perturber):
        return perturber
    raise TypeError(
        "perturber must have perturb_many(coords, offsets, rng=...) or be a callable "
        f"(points (n, 2), rng) -> (n, 2), got {type(perturber).__name__}"
    )


def perturber_inputs(perturber) -> list:
    """Candidate inputs: the region's corners (or vertices) and centre, or five extreme POIs."""
    region = getattr(perturber, "region", None)
    if region is not None:
        vertices = getattr(region, "vertices", None)
        pts = np.asarray(vertices if vertices is not None else _corners(region.bounds), dtype=float)
        return [*pts[:6], np.asarray(region.center, dtype=float)]
    space = getattr(perturber, "poi_space", None)
    if space is not None:
        pois = np.asarray(space.points, dtype=float)
        centre = pois.mean(axis=0)
        picks = [pois[:, 0].argmin(), pois[:, 0].argmax(), pois[:, 1].argmin(), pois[:, 1].argmax(),
                 np.linalg.norm(pois - centre, axis=1).argmin()]
        return [pois[i] for i in dict.fromkeys(int(i) for i in picks)]
    raise TypeError("points= is required for a perturber without a region or a poi_space")


def _corners(bounds):
    xmin, ymin, xmax, ymax = (float(v) for v in bounds)
    return [(xmin, ymin), (xmax, ymin), (xmax, ymax), (xmin, ymax)]


def _check_points(points):
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) < 2:
        raise ValueError(f"points must have shape (m, 2) with m >= 2, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("points must be finite")
    return list(arr)


def audit_perturber(perturber, epsilon=None, *, points=None, samples: int = 100_000,
                    confidence: float = 0.99, lattice=None, bins: int = 64, rng=0):
    """Audit a perturber's per-point ε-LDP claim on 2-D outputs.

    Parameters
    ----------
    perturber : tracs perturber or baseline, or callable ``(points (n, 2), rng) -> (n, 2)``
        Each row of a callable's input is one independent release.
    epsilon : float, optional
        The claimed per-point budget; default ``perturber.privacy_spent(1).per_point``.
    points : array (m, 2), optional
        Candidate inputs; default the region's corners and centre (baselines:
        five extreme POIs and the one nearest the POIs' mean).
    samples, confidence, lattice, rng
        As for :func:`tracs.audit`; ``lattice`` may be a pair of per-axis
        ``(origin, spacing, count)`` or an object with ``contains(points)``.
        Default: ``perturber.lattice``; for a baseline without one, its public
        POI set (every release must be one of the POIs, bit for bit).  A
        ``(direction, distance)`` lattice is checked through the perturber's
        ``lattice_indices`` on the same draws: indices in range and points a
        function of the indices (see :class:`~.lattice_check.IndexedRelease`);
        without ``lattice_indices`` the low bits are unverifiable.
    bins : int
        About this many histogram cells in all (``ceil(sqrt(bins))`` per axis).

    Returns
    -------
    AuditReport
        With the same meaning and guarantee as :func:`tracs.audit`.
    """
    if epsilon is None:
        spent = getattr(perturber, "privacy_spent", None)
        if spent is None:
            raise TypeError("epsilon is required for a perturber without privacy_spent()")
        epsilon = float(np.max(spent(1).per_point))
    epsilon, samples, confidence = check_audit_arguments(epsilon, samples, confidence)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 4:
        raise ValueError(f"bins must be an int >= 4, got {bins!r}")
    call = _call(perturber)
    candidates = _check_points(points) if points is not None else perturber_inputs(perturber)
    lattice = declared_lattice(perturber, lattice)
    if lattice is None and getattr(perturber, "poi_space", None) is not None:
        lattice = PointSet(perturber.poi_space.points)  # baselines release public POIs
    indexed = None
    if lattice is not None and is_indexed(lattice):
        indices = getattr(perturber, "lattice_indices", None)
        indexed = IndexedRelease([lattice.direction, lattice.distance]) if callable(indices) else None
        lattice = indexed

    def draw(p, n, gen):
        batch = np.tile(p, (n, 1))
        twin = copy.deepcopy(gen) if indexed is not None else None
        out = draw_vectorised(call, batch, n, gen, (n, 2), lambda g: call(p[None, :], g))
        if indexed is not None:  # the same draws again, as lattice indices
            indexed.record(perturber.lattice_indices(batch, np.arange(n + 1), rng=twin))
        return out

    return run_audit(draw, candidates, epsilon, samples=samples, confidence=confidence,
                     lattice=lattice, rng=rng, bins=int(bins),
                     label=lambda p: tuple(float(v) for v in p))
