"""``tracs.audit_perturber``: the audit of :func:`tracs.audit` for 2-D perturbers.

A perturber releases points of the plane.  Each candidate *scenario* (earlier
points of a trajectory fixed, the last point varied: :mod:`.candidates`) is
released ``samples`` times as that many trajectories, and the varied point's
release is what the audit compares between inputs of the same scenario: first
points (perturbed about the public anchor, for TraCS-D), the last point of
trajectories of every length up to eight and of 16 and 32 points.  A perturber
whose ``perturb_many`` takes per-user ``keys`` is released with one distinct key
per trajectory through :func:`tracs.engine.perturb_many`, as ``tracs perturb``
releases (and at a few lengths also by ``perturb_many`` without keys).  The earlier points' inputs are the same for both inputs of a pair, so
the varied point's release obeys the per-point claim of a trajectory of that
length, ``privacy_spent(L).per_point`` (averaged over the earlier releases, every
conditional ratio is within ``e^ε``).  Output cells are the recurring points
(POIs, region corners, lattice points that carry mass), a grid of per-axis
quantile bins, and the released indices' low bits (:mod:`.events`).

Only positions are audited: a release's times (its ``datetime`` column) are the
input's times, not perturbed, so they are neither protected nor audited.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from .._validation import as_points
from ..errors import InputError, InputTypeError
from ._engine import check_audit_arguments, input_generator, run_audit, seed_sequence
from .audit import draw_vectorised
from .candidates import Scenario, perturber_scenarios
from .lattice_check import IndexedRelease, PointSet, declared_lattice, is_indexed
from ..methods import keyed as takes_keys  # the registry's word: an entry's ``keyed``
from ..engine import perturb_many

__all__ = ["audit_perturber", "perturber_inputs", "takes_keys"]


def _call(perturber):
    """``f(coords, offsets, rng, keys)`` releasing trajectories, and whether it takes trajectories.

    With ``keys`` the release goes through :func:`tracs.engine.perturb_many`, the path of
    ``tracs perturb`` (keyed streams resolved once, the perturber's chunk kernel)."""
    many = getattr(perturber, "perturb_many", None)
    if callable(many):
        return (lambda pts, off, rng, keys: many(pts, off, rng=rng) if keys is None
                else perturb_many(perturber, pts, off, rng=rng, keys=keys)), True
    if callable(perturber):
        return (lambda pts, off, rng, keys: perturber(pts, rng)), False
    raise InputTypeError(
        "perturber must have perturb_many(coords, offsets, rng=...) or be a callable "
        f"(points (n, 2), rng) -> (n, 2), got {type(perturber).__name__}"
    )


def perturber_inputs(perturber, gen=None, *, sequences=True, extra=None) -> list:
    """Candidate scenarios (:mod:`.candidates`), with the ``extra`` first points: on the region
    for a perturber with one, else first points at five extreme POIs (with and without keys
    for a perturber that takes them), else the ``extra`` points alone."""
    gen = np.random.default_rng(0) if gen is None else gen
    keyed = takes_keys(perturber)
    region = getattr(perturber, "region", None)
    if region is not None:
        return perturber_scenarios(region, gen, half_cell=_half_cell(perturber), sequences=sequences,
                                   keyed=keyed, extra=extra)
    empty = np.empty((0, 2))
    extra = [] if extra is None else list(extra)
    space = getattr(perturber, "poi_space", None)
    if space is not None:
        pois = np.asarray(space.points, dtype=float)
        centre = pois.mean(axis=0)
        picks = [pois[:, 0].argmin(), pois[:, 0].argmax(), pois[:, 1].argmin(), pois[:, 1].argmax(),
                 np.linalg.norm(pois - centre, axis=1).argmin()]
        firsts = [pois[i] for i in dict.fromkeys(int(i) for i in picks)] + extra
        return [Scenario(empty, p, flag) for flag in ((True, False) if keyed else (False,)) for p in firsts]
    if not extra:
        raise InputTypeError("points= is required for a perturber without a region or a poi_space")
    return [Scenario(empty, p, keyed) for p in extra]


def _half_cell(perturber):
    lattice = getattr(perturber, "lattice", None)
    try:
        return 0.5 * float(lattice[0].spacing)
    except (TypeError, AttributeError, IndexError):
        return None


def _check_points(points):
    arr = as_points(points)
    if len(arr) < 2:
        raise InputError(f"points must have shape (m, 2) with m >= 2, got {arr.shape}")
    return list(arr)


def _describe(keyed):
    """The scenario's words before the event (``keyed``: the perturber takes keys)."""
    def describe(scenario) -> str:
        how = "" if not keyed else "with keys=" if scenario.keyed else "without keys="
        if scenario.position == 1:
            return f"first point, {how}: " if how else ""
        fixed = "; ".join("(" + ", ".join(f"{v:.6g}" for v in p) + ")" for p in scenario.prefix[:5])
        more = f" … ({len(scenario.prefix)} in all)" if len(scenario.prefix) > 5 else ""
        return f"point {scenario.position} after fixed points {fixed}{more}" + (f", {how}: " if how else ": ")
    return describe


def audit_perturber(perturber, epsilon=None, *, points=None, samples: int = 20_000,
                    confidence: float = 0.99, lattice=None, bins: int = 64, rng=0):
    """Audit a perturber's per-point ε-LDP claim on 2-D outputs.

    Parameters
    ----------
    perturber : tracs perturber or baseline, or callable ``(points (n, 2), rng) -> (n, 2)``
        Each row of a callable's input is one independent release.  A perturber
        whose ``perturb_many`` takes ``keys`` is released with one distinct
        integer key per trajectory through :func:`tracs.engine.perturb_many` (the
        path of ``tracs perturb``), and at the lengths ``candidates.UNKEYED`` also
        by its ``perturb_many`` without keys.
    epsilon : float, optional
        The claimed per-point budget; default the ledger's
        ``perturber.privacy_spent(L).per_point`` for trajectories of ``L`` points.
    points : array (m, 2), optional
        More candidate first points, added to the default scenarios.  Default (a
        perturber with a region): first points at the region's vertices (up to six),
        near them, its centre, 64 stratified random points (a Latin hypercube of
        the bounding box), a random point, its adjacent double and the point half a
        cell away; then the last point of trajectories of every length ``2 … 8``
        and of 16 and 32 points after a fixed tour (:mod:`.candidates`); only
        inputs of one scenario are compared.  Baselines: five extreme POIs and
        the one nearest the POIs' mean, as first points.  A callable without a
        region or POIs is audited on ``points`` alone (at least two).
    samples : int
        Draws per candidate in the search, and fresh draws per input of each
        confirmed hypothesis (:mod:`tracs.privacy._engine`).
    confidence, lattice, rng
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
        names the varied point when it is not the first, and whether it was
        released with keys.

    Notes
    -----
    Only the released positions are audited.  ``tracs perturb`` writes each row's
    time as it was read (the ``datetime`` column is the true time): times are not
    perturbed, so they are not protected, and the audit does not audit them.
    """
    claimed = epsilon
    if epsilon is None:
        spent = getattr(perturber, "privacy_spent", None)
        if spent is None:
            raise InputTypeError("epsilon is required for a perturber without privacy_spent()")
        epsilon = float(np.max(spent(1).per_point))
    epsilon, samples, confidence = check_audit_arguments(epsilon, samples, confidence)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 4:
        raise InputError(f"bins must be an int >= 4, got {bins!r}")
    call, trajectories = _call(perturber)
    ss = seed_sequence(rng)
    extra = None if points is None else _check_points(points)
    candidates = perturber_inputs(perturber, input_generator(ss), sequences=trajectories, extra=extra)
    kinds = sorted({(c.position, c.keyed) for c in candidates})
    groups = [kinds.index((c.position, c.keyed)) for c in candidates]
    claims = [epsilon if claimed is not None or length == 1
              else float(np.max(perturber.privacy_spent(length).per_point)) for length, _ in kinds]
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
        # distinct user keys, as the command line passes its users' ids
        keys = gen.integers(0, 2 ** 62) + np.arange(n, dtype=np.int64) if scenario.keyed else None
        twin = copy.deepcopy(gen) if indexed is not None else None
        out, vec = draw_vectorised(lambda b, g: call(b, offsets, g, keys), batch, n * length, gen,
                                   (n * length, 2), lambda g: call(one, np.array([0, length]), g, None))
        last = out[length - 1::length]
        if indexed is None:
            return last, vec, None
        extra_keys = {} if keys is None else {"keys": keys}
        idx = perturber.lattice_indices(batch, offsets, rng=twin, **extra_keys)[length - 1::length]
        context = out[length - 2::length] if length > 1 else np.zeros((n, 2))
        indexed.record(idx, context)
        return last, vec, idx

    return run_audit(draw, candidates, epsilon, samples=samples, confidence=confidence,
                     lattice=lattice, rng=ss, bins=int(bins), label=lambda c: c.label(),
                     groups=groups, claims=claims, describe=_describe(takes_keys(perturber)),
                     index_cells=indexed is not None,
                     index_names=("direction", "distance") if indexed is not None else ("x", "y"))
