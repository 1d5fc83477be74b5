"""Whether reports read from a file are releases of a perturber: on its public lattice, in its region.

A perturber releases points of a public lattice (:attr:`lattice`) inside its public
region.  Reports read back from a file went through WGS84 text or binary64 and a
projection, so they are compared with the lattice within :func:`tolerance` (far below
any lattice spacing); a report farther than that from every lattice point, or outside
the region by more, is not a release of this perturber (a different method, ε or region,
or a changed file).  Vectorised: one pass of NumPy per check.
"""

from __future__ import annotations

import numpy as np

__all__ = ["tolerance", "off_lattice", "outside_region"]

#: relative tolerance of a read-back report: this fraction of the region's diameter
RELATIVE = 1e-9
#: absolute floor of the tolerance, metres (the projection's round trip)
ABSOLUTE = 1e-6


def tolerance(perturber) -> float:
    """How far (metres of the region's CRS) a read-back report may lie from its lattice point."""
    return max(ABSOLUTE, RELATIVE * float(perturber.region.diameter))


def outside_region(perturber, reports) -> np.ndarray:
    """``True`` for each report farther than :func:`tolerance` outside the perturber's region."""
    reports = np.asarray(reports, dtype=np.float64)
    clipped = perturber.region.clip(reports)
    return np.hypot(*(clipped - reports).T) > tolerance(perturber)


def off_lattice(perturber, reports, offsets) -> np.ndarray | None:
    """``True`` for each report that is not a point of the perturber's public lattice.

    Per-axis lattices (TraCS-C, planar Laplace): each coordinate is on its axis lattice.
    Direction–distance lattices (TraCS-D, the Strawman): each report is a lattice point
    about its public reference (the previous report of its trajectory, or the anchor).
    None when the perturber has no lattice to check against.

    Parameters
    ----------
    perturber : a perturber with a ``lattice`` property
    reports : numpy.ndarray, shape (N, 2)
        In trajectory order, in the region's CRS.
    offsets : numpy.ndarray, shape (T + 1,)
    """
    lattice = getattr(perturber, "lattice", None)
    reports = np.asarray(reports, dtype=np.float64)
    tol = tolerance(perturber)
    if lattice is None:
        return None
    if hasattr(lattice, "points_about"):
        return _off_directional(perturber, lattice, reports, np.asarray(offsets, dtype=np.int64), tol)
    if len(lattice) != 2:
        return None
    bad = np.zeros(len(reports), dtype=bool)
    for axis, lat in enumerate(lattice):
        k = np.clip(lat.index(reports[:, axis]), 0, lat.count - 1)
        bad |= np.abs(lat.points(k) - reports[:, axis]) > tol
    return bad


def _off_directional(perturber, lattice, reports, offsets, tol) -> np.ndarray:
    from ._directional import references

    region = perturber.region
    refs = region.clip(references(reports, offsets, perturber.anchor_point))
    d = reports - refs
    direction, distance = lattice.direction, lattice.distance
    a = np.mod(np.rint(np.arctan2(d[:, 1], d[:, 0]) / direction.spacing), direction.count).astype(np.int64)
    unit = lattice.unit_vectors(a)
    reach = region._exit_distance(refs, unit[:, 0], unit[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.rint(np.hypot(d[:, 0], d[:, 1]) / reach / distance.spacing)
    r = np.clip(np.nan_to_num(r, nan=0.0, posinf=0.0), 0, distance.count - 1).astype(np.int64)
    near = np.hypot(*(lattice.points_about(refs, a, r) - reports).T) <= tol
    return ~(near | (np.hypot(d[:, 0], d[:, 1]) <= tol))
