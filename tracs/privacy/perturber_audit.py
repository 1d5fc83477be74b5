"""``tracs.audit_perturber``: the audit of :func:`tracs.audit` for 2-D perturbers.

A perturber releases points of the plane.  Each candidate *scenario* (earlier
points of a trajectory fixed, one point varied: :mod:`.candidates`) is released
``samples`` times as that many trajectories, and the varied point's release is
what the audit compares between inputs of the same scenario: first points
(perturbed about the public anchor, for TraCS-D), the second point after a
fixed first one, the fifth after four fixed ones.  The earlier points' inputs
are the same for both inputs of a pair, so the varied point's release obeys the
per-point claim ``privacy_spent(L).per_point`` (averaged over the earlier
releases, every conditional ratio is within ``e^ε``).  Output cells are the
recurring points (POIs, region corners, lattice points that carry mass), a grid
of per-axis quantile bins, and the released indices' low bits
(:mod:`.events`).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ._engine import check_audit_arguments, input_generator, run_audit, seed_sequence
from .audit import draw_vectorised
from .candidates import Scenario, perturber_scenarios
from .lattice_check import IndexedRelease, PointSet, declared_lattice, is_indexed

__all__ = ["audit_perturber", "perturber_inputs"]


def _call(perturber):
    """``f(coords, offsets, rng)`` releasing trajectories, and whether it takes trajectories."""
    many = getattr(perturber, "perturb_many", None)
    if callable(many):
        return (lambda pts, off, rng: many(pts, off, rng=rng)), True
    if callable(perturber):
        return (lambda pts, off, rng: perturber(pts, rng)), False
    raise TypeError(
        "perturber must have perturb_many(coords, offsets, rng=...) or be a callable "
        f"(points (n, 2), rng) -> (n, 2), got {type(perturber).__name__}"
    )


def perturber_inputs(perturber, gen=None, *, sequences=True) -> list:
    """Candidate scenarios (:mod:`.candidates`): on the region for a perturber with one
    (first, second and fifth points), else first points at five extreme POIs."""
    gen = np.random.default_rng(0) if gen is None else gen
    region = getattr(perturber, "region", None)
    if region is not None:
        return perturber_scenarios(region, gen, half_cell=_half_cell(perturber), sequences=sequences)
    space = getattr(perturber, "poi_space", None)
    if space is not None:
        pois = np.asarray(space.points, dtype=float)
        centre = pois.mean(axis=0)
        picks = [pois[:, 0].argmin(), pois[:, 0].argmax(), pois[:, 1].argmin(), pois[:, 1].argmax(),
                 np.linalg.norm(pois - centre, axis=1).argmin()]
        return [Scenario(np.empty((0, 2)), pois[i]) for i in dict.fromkeys(int(i) for i in picks)]
    raise TypeError("points= is required for a perturber without a region or a poi_space")


def _half_cell(perturber):
    lattice = getattr(perturber, "lattice", None)
    try:
        return 0.5 * float(lattice[0].spacing)
    except (TypeError, AttributeError, IndexError):
        return None


def _check_points(points):
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) < 2:
        raise ValueError(f"points must have shape (m, 2) with m >= 2, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("points must be finite")
    return [Scenario(np.empty((0, 2)), p) for p in arr]


def _describe(scenario) -> str:
    if scenario.position == 1:
        return ""
    fixed = "; ".join("(" + ", ".join(f"{v:.6g}" for v in p) + ")" for p in scenario.prefix)
    return f"point {scenario.position} after fixed points {fixed}: "


def audit_perturber(perturber, epsilon=None, *, points=None, samples: int = 100_000,
                    confidence: float = 0.99, lattice=None, bins: int = 64, rng=0):
    """Audit a perturber's per-point ε-LDP claim on 2-D outputs.

    Parameters
    ----------
    perturber : tracs perturber or baseline, or callable ``(points (n, 2), rng) -> (n, 2)``
        Each row of a callable's input is one independent release.
    epsilon : float, optional
        The claimed per-point budget; default the ledger's
        ``perturber.privacy_spent(L).per_point`` for trajectories of ``L`` points.
    points : array (m, 2), optional
        Candidate first points.  Default (a perturber with a region): the region's
        vertices and centre, a random point, its adjacent double and the point half
        a cell away (first points), then the second point after a fixed first one
        and the fifth after four fixed ones, each varied over two opposite vertices,
        a random point and its adjacent double (:mod:`.candidates`); only inputs of
        one scenario are compared.  Baselines: five extreme POIs and the one
        nearest the POIs' mean, as first points.
    samples, confidence, lattice, rng
        As for :func:`tracs.audit`; ``lattice`` may be a pair of per-axis
        ``(origin, spacing, count)`` or an object with ``contains(points)``.
        Default: ``perturber.lattice``; for a baseline without one, its public
        POI set (every release must be one of the POIs, bit for bit).  A
        ``(direction, distance)`` lattice is checked through the perturber's
        ``lattice_indices`` on the same draws: indices in range and points a
        function of the indices and the previous release (see
        :class:`~.lattice_check.IndexedRelease`); without ``lattice_indices`` the
        low bits are unverifiable.
    bins : int
        About this many histogram cells in all (``ceil(sqrt(bins))`` per axis).

    Returns
    -------
    AuditReport
        With the same meaning and guarantee as :func:`tracs.audit`; the event
        names the varied point when it is not the first.
    """
    claimed = epsilon
    if epsilon is None:
        spent = getattr(perturber, "privacy_spent", None)
        if spent is None:
            raise TypeError("epsilon is required for a perturber without privacy_spent()")
        epsilon = float(np.max(spent(1).per_point))
    epsilon, samples, confidence = check_audit_arguments(epsilon, samples, confidence)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 4:
        raise ValueError(f"bins must be an int >= 4, got {bins!r}")
    call, trajectories = _call(perturber)
    ss = seed_sequence(rng)
    candidates = (_check_points(points) if points is not None
                  else perturber_inputs(perturber, input_generator(ss), sequences=trajectories))
    lengths = sorted({c.position for c in candidates})
    groups = [lengths.index(c.position) for c in candidates]
    claims = [epsilon if claimed is not None or length == 1
              else float(np.max(perturber.privacy_spent(length).per_point)) for length in lengths]
    lattice = declared_lattice(perturber, lattice)
    if lattice is None and getattr(perturber, "poi_space", None) is not None:
        lattice = PointSet(perturber.poi_space.points)  # baselines release public POIs
    indexed = None
    if lattice is not None and is_indexed(lattice):
        indices = getattr(perturber, "lattice_indices", None)
        indexed = IndexedRelease([lattice.direction, lattice.distance]) if callable(indices) else None
        lattice = indexed

    def draw(scenario, n, gen):
        length = scenario.position
        one = np.vstack([scenario.prefix, scenario.point[None, :]])
        batch = np.tile(one, (n, 1))
        offsets = np.arange(0, n * length + 1, length)
        twin = copy.deepcopy(gen) if indexed is not None else None
        out, vec = draw_vectorised(lambda b, g: call(b, offsets, g), batch, n * length, gen, (n * length, 2),
                                   lambda g: call(one, np.array([0, length]), g))
        last = out[length - 1::length]
        if indexed is None:
            return last, vec, None
        idx = perturber.lattice_indices(batch, offsets, rng=twin)[length - 1::length]
        context = out[length - 2::length] if length > 1 else np.zeros((n, 2))
        indexed.record(idx, context)
        return last, vec, idx

    return run_audit(draw, candidates, epsilon, samples=samples, confidence=confidence,
                     lattice=lattice, rng=ss, bins=int(bins), label=lambda c: c.label(),
                     groups=groups, claims=claims, describe=_describe, index_cells=indexed is not None,
                     index_names=("direction", "distance") if indexed is not None else ("x", "y"))
