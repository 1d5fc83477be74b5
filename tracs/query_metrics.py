"""Aggregate utility metrics: range queries and hotspot preservation.

Two families live here.

**The paper's appendix metrics** (Zheng & Hu, TraCS, the appendix on range
queries and hotspots; the definitions follow the authors' published experiment code), both scored
per trajectory and averaged over trajectories:

* :func:`range_preservation` — the paper's *range query*: for each trajectory, the
  share of its points whose released point lies within ``radius`` of the true one
  (the paper uses ``radius = 0.1`` in latitude/longitude degrees); the mean over
  trajectories, as a fraction (the paper plots it in percent).  Higher is better.
* :func:`hotspot_count_error` — the paper's *hotspot preservation*: the hotspots
  are the most visited distinct locations of the true data set (the top 20 % of
  them, :func:`hotspot_locations`); for each trajectory, the absolute difference
  between the number of its released points and of its true points that sit on a
  hotspot; the mean over trajectories.  Lower is better.  Locations are matched
  exactly, so it is meant for outputs that are locations of the discrete space
  (discrete mechanisms, or TraCS rounded to the nearest location).

**Grid and rectangle forms** (this project's earlier, literature-style choices,
kept as complementary views; the paper does not use them):

Average error (``tracs.metrics``) scores every released point against its true
point.  A collector usually asks aggregate questions instead: *how many visits fall
in this rectangle?* and *which cells are the busiest?*  This module scores the
perturbed data set on those two tasks, following the conventions of the
trajectory-LDP literature:

* **Range-query error** — random axis-aligned rectangles inside the public region;
  for each, the count of true points ``c`` and of released points ``ĉ`` inside it;
  the error is ``|c − ĉ| / max(c, b)`` averaged over the queries, with a sanity
  bound ``b`` (by default 0.1 % of the points) so that nearly empty rectangles do
  not dominate.
* **Hotspot preservation** — split the region into a ``g × g`` grid, rank cells by
  their number of points, and compare the ``k`` busiest true cells with the ``k``
  busiest released cells: ``precision@k`` (share of true hotspots recovered) and
  ``NDCG@k`` (the same with the true ranking's order weighted, graded by the true
  counts).
* **Preservation within a radius** — share of all released points that lie within
  ``radius`` of their true point (pooled over points; :func:`range_preservation`
  is the paper's per-trajectory form).

All functions are pure functions of the two coordinate arrays and public
parameters; the only randomness (the query rectangles) comes from the ``rng``
argument, so two methods scored with the same seed answer the same queries.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, as_generator, check_offsets
from .errors import InputError
from .metrics import point_pairs

__all__ = [
    "range_preservation",
    "metres_per_degree",
    "hotspot_locations",
    "hotspot_count_error",
    "random_range_queries",
    "range_query_counts",
    "range_query_error",
    "grid_counts",
    "hotspot_precision",
    "hotspot_ndcg",
    "preservation_ratio",
]


def _pair(true, perturbed) -> tuple[np.ndarray, np.ndarray]:
    true, perturbed = point_pairs(true, perturbed)
    if len(true) == 0:
        raise InputError("no points to score")
    return true, perturbed


def _bounds(bounds) -> tuple[float, float, float, float]:
    xmin, ymin, xmax, ymax = (float(v) for v in as_float_array(bounds, "bounds").reshape(4))
    if not (xmax > xmin and ymax > ymin):
        raise InputError(f"bounds must be (xmin, ymin, xmax, ymax) with xmax > xmin, ymax > ymin, got {bounds}")
    return xmin, ymin, xmax, ymax


def random_range_queries(bounds, n_queries: int = 200, *, size=(0.05, 0.2), rng=None) -> np.ndarray:
    """Draw axis-aligned query rectangles inside ``bounds``.

    Parameters
    ----------
    bounds : (xmin, ymin, xmax, ymax)
        The public region.
    n_queries : int
        Number of rectangles.
    size : (low, high)
        Each side is a uniform fraction in ``[low, high]`` of the region's side.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray, shape (n_queries, 4)
        Rows ``(x0, y0, x1, y1)``, each rectangle entirely inside ``bounds``.
    """
    xmin, ymin, xmax, ymax = _bounds(bounds)
    n_queries = int(n_queries)
    if n_queries < 1:
        raise InputError(f"n_queries must be >= 1, got {n_queries}")
    low, high = (float(v) for v in size)
    if not 0.0 < low <= high <= 1.0:
        raise InputError(f"size must satisfy 0 < low <= high <= 1, got {size}")
    gen = as_generator(rng)
    span = np.array([xmax - xmin, ymax - ymin])
    sides = gen.uniform(low, high, size=(n_queries, 2)) * span
    corner = np.array([xmin, ymin]) + gen.uniform(size=(n_queries, 2)) * (span - sides)
    return np.hstack([corner, corner + sides])


def range_query_counts(points, queries) -> np.ndarray:
    """Number of ``points`` inside each query rectangle (closed on all sides).

    Exact: the points are sorted by x once, each query takes its x-slice with
    ``searchsorted`` and counts the y-hits in that slice (vectorised).
    """
    points = as_float_array(points, "points")
    queries = as_float_array(queries, "queries").reshape(-1, 4)
    order = np.argsort(points[:, 0], kind="stable")
    xs = points[order, 0]
    ys = points[order, 1]
    lo = np.searchsorted(xs, queries[:, 0], side="left")
    hi = np.searchsorted(xs, queries[:, 2], side="right")
    counts = np.empty(len(queries), dtype=np.int64)
    for i, (a, b) in enumerate(zip(lo, hi)):  # q is small (hundreds); each step is vectorised
        y = ys[a:b]
        counts[i] = np.count_nonzero((y >= queries[i, 1]) & (y <= queries[i, 3]))
    return counts


def range_query_error(true, perturbed, bounds, *, n_queries: int = 200, size=(0.05, 0.2),
                      sanity: float = 0.001, rng=None) -> float:
    """Mean relative error of range-count queries answered on the released points.

    ``mean_q |c_q − ĉ_q| / max(c_q, sanity·n)`` over ``n_queries`` random rectangles
    (see :func:`random_range_queries`); ``0`` is perfect.
    """
    true, perturbed = _pair(true, perturbed)
    if not sanity > 0:
        raise InputError(f"sanity must be > 0, got {sanity}")
    queries = random_range_queries(bounds, n_queries, size=size, rng=rng)
    c_true = range_query_counts(true, queries)
    c_pert = range_query_counts(perturbed, queries)
    floor = max(sanity * len(true), 1.0)
    return float(np.mean(np.abs(c_true - c_pert) / np.maximum(c_true, floor)))


def grid_counts(points, bounds, cells: int = 20) -> np.ndarray:
    """Counts of points per cell of a ``cells × cells`` grid over ``bounds`` (flattened).

    Points on the upper or right edge fall into the last cell; points outside the
    bounds are clipped into the border cells (released points may sit on the boundary).
    """
    points = as_float_array(points, "points")
    xmin, ymin, xmax, ymax = _bounds(bounds)
    cells = int(cells)
    if cells < 1:
        raise InputError(f"cells must be >= 1, got {cells}")
    ix = np.clip(((points[:, 0] - xmin) / (xmax - xmin) * cells).astype(np.int64), 0, cells - 1)
    iy = np.clip(((points[:, 1] - ymin) / (ymax - ymin) * cells).astype(np.int64), 0, cells - 1)
    return np.bincount(iy * cells + ix, minlength=cells * cells)


def _top_k(counts: np.ndarray, k: int) -> np.ndarray:
    # ties broken by cell index (stable), so the ranking is deterministic
    return np.argsort(-counts, kind="stable")[:k]


def _check_k(k, n_cells: int) -> int:
    k = int(k)
    if not 1 <= k <= n_cells:
        raise InputError(f"k must be between 1 and the number of cells ({n_cells}), got {k}")
    return k


def hotspot_precision(true, perturbed, bounds, *, cells: int = 20, k: int = 10) -> float:
    """Share of the ``k`` busiest true grid cells that are among the ``k`` busiest released ones."""
    true, perturbed = _pair(true, perturbed)
    c_true = grid_counts(true, bounds, cells)
    c_pert = grid_counts(perturbed, bounds, cells)
    k = _check_k(k, len(c_true))
    hits = np.intersect1d(_top_k(c_true, k), _top_k(c_pert, k))
    return float(len(hits) / k)


def hotspot_ndcg(true, perturbed, bounds, *, cells: int = 20, k: int = 10) -> float:
    """NDCG@k of the released ranking of grid cells, graded by the true counts.

    ``DCG = Σ_{r=1..k} c_true[cell_r] / log2(r + 1)`` over the released top-k cells,
    divided by the same sum over the true top-k (the ideal ranking); 1 is perfect.
    """
    true, perturbed = _pair(true, perturbed)
    c_true = grid_counts(true, bounds, cells).astype(np.float64)
    c_pert = grid_counts(perturbed, bounds, cells)
    k = _check_k(k, len(c_true))
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = float(np.sum(np.sort(c_true)[::-1][:k] * discount))
    return float(np.sum(c_true[_top_k(c_pert, k)] * discount) / ideal)


def preservation_ratio(true, perturbed, radius: float) -> float:
    """Share of released points within ``radius`` (data units) of their true point."""
    true, perturbed = _pair(true, perturbed)
    radius = float(radius)
    if not radius > 0:
        raise InputError(f"radius must be > 0, got {radius}")
    return float(np.mean(np.hypot(*(true - perturbed).T) <= radius))


# ----------------------------------------------------------------------------- the paper's forms


def _pair_offsets(true, perturbed, offsets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    true, perturbed = _pair(true, perturbed)
    off = np.array([0, len(true)], dtype=np.int64) if offsets is None else check_offsets(offsets, len(true), empty=False)
    return true, perturbed, off


def range_preservation(true, perturbed, offsets=None, *, radius: float, scale=None) -> float:
    """The paper's range-query metric: mean over trajectories of the share of points kept within ``radius``.

    For trajectory ``i`` with points ``p_1 … p_n`` released as ``q_1 … q_n`` the
    score is ``#{j : d(p_j, q_j) <= radius} / n``; the result is the mean of these
    scores over the trajectories (each trajectory counts once, whatever its length),
    a fraction in ``[0, 1]``; higher is better.

    Parameters
    ----------
    true, perturbed : array_like, shape (N, 2)
        True and released points, in the same order.
    offsets : array_like of int, shape (T+1,), optional
        Trajectory boundaries; omitted means one trajectory.
    radius : float
        The range ``δ`` (> 0), in the units of the distance below.  The paper uses
        ``δ = 0.1`` degrees of latitude/longitude.
    scale : (sx, sy), optional
        Data units per distance unit along each axis: the distance is
        ``hypot(Δx / sx, Δy / sy)``.  With projected metres and the paper's degrees,
        ``sx`` is the metres per degree of longitude and ``sy`` per degree of latitude.
        Default: plain Euclidean distance in data units.
    """
    true, perturbed, off = _pair_offsets(true, perturbed, offsets)
    radius = float(radius)
    if not radius > 0:
        raise InputError(f"radius must be > 0, got {radius}")
    diff = true - perturbed
    if scale is not None:
        sx, sy = (float(v) for v in as_float_array(scale, "scale").reshape(2))
        if not (sx > 0 and sy > 0):
            raise InputError(f"scale must be two positive numbers, got {scale}")
        diff = diff / (sx, sy)
    kept = (np.hypot(diff[:, 0], diff[:, 1]) <= radius).astype(np.float64)
    return float(np.mean(np.add.reduceat(kept, off[:-1]) / np.diff(off)))


def metres_per_degree(latitude: float) -> tuple[float, float]:
    """Metres per degree of longitude (east) and of latitude (north) at ``latitude`` on WGS84.

    The standard series of the ellipsoid's meridian and parallel arc lengths
    (accurate to centimetres per degree).  Used as ``scale`` of
    :func:`range_preservation` to measure, on projected data in metres, a range given
    in degrees as the paper does: a shift of ``(Δx, Δy)`` metres is
    ``hypot(Δx / east, Δy / north)`` degrees.

    Parameters
    ----------
    latitude : float
        Degrees, in ``[-90, 90]``.
    """
    latitude = float(latitude)
    if not -90.0 <= latitude <= 90.0:
        raise InputError(f"latitude must be in [-90, 90] degrees, got {latitude}")
    phi = np.radians(latitude)
    north = 111132.92 - 559.82 * np.cos(2 * phi) + 1.175 * np.cos(4 * phi) - 0.0023 * np.cos(6 * phi)
    east = 111412.84 * np.cos(phi) - 93.5 * np.cos(3 * phi) + 0.118 * np.cos(5 * phi)
    return float(max(east, 0.0)), float(north)


def _location_keys(points: np.ndarray) -> np.ndarray:
    # one complex key per point: exact (bitwise-equal up to ±0) location identity, sortable
    return points[:, 0] + 1j * points[:, 1]


def hotspot_locations(points, share: float = 0.2) -> np.ndarray:
    """The most visited distinct locations: the top ``floor(share · #distinct)`` by visit count.

    Ties are broken by first appearance in ``points`` (so the result is
    deterministic).  The paper takes ``share = 0.2`` of the distinct locations of
    the true trajectories.

    Returns
    -------
    ndarray, shape (k, 2)
        The hotspot locations, busiest first.
    """
    points = as_float_array(points, "points")
    if points.ndim != 2 or points.shape[1] != 2 or len(points) == 0:
        raise InputError(f"points must have shape (N, 2) with N >= 1, got {points.shape}")
    share = float(share)
    if not 0.0 < share <= 1.0:
        raise InputError(f"share must be in (0, 1], got {share}")
    keys, first, counts = np.unique(_location_keys(points), return_index=True, return_counts=True)
    k = int(len(keys) * share)
    if k < 1:
        raise InputError(f"share {share} of {len(keys)} distinct locations selects no hotspot")
    order = np.lexsort((first, -counts))[:k]
    return points[first[order]]


def hotspot_count_error(true, perturbed, offsets=None, *, hotspots=None, share: float = 0.2) -> float:
    """The paper's hotspot-preservation error: mean over trajectories of ``|h(released) − h(true)|``.

    ``h(·)`` counts the points of one trajectory that lie exactly on a hotspot
    location.  The hotspots default to :func:`hotspot_locations` of all true points
    with the given ``share`` (the paper: 20 %).  ``0`` is perfect; lower is better.
    Exact matching means released points off the location set never count as hits,
    so score rounded (or discrete) outputs.
    """
    true, perturbed, off = _pair_offsets(true, perturbed, offsets)
    hot = hotspot_locations(true, share) if hotspots is None else as_float_array(hotspots, "hotspots")
    hot = hot.reshape(-1, 2)
    if len(hot) == 0:
        raise InputError("no hotspots given")
    hot_keys = _location_keys(hot)
    hits_true = np.isin(_location_keys(true), hot_keys).astype(np.int64)
    hits_pert = np.isin(_location_keys(perturbed), hot_keys).astype(np.int64)
    per_traj = np.add.reduceat(hits_pert, off[:-1]) - np.add.reduceat(hits_true, off[:-1])
    return float(np.mean(np.abs(per_traj)))
