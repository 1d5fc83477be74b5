"""Aggregate utility metrics: range queries and hotspot preservation.

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
* **Preservation within a radius** — share of released points that lie within
  ``radius`` of their true point.

All functions are pure functions of the two coordinate arrays and public
parameters; the only randomness (the query rectangles) comes from the ``rng``
argument, so two methods scored with the same seed answer the same queries.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, as_generator
from .metrics import point_pairs

__all__ = [
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
        raise ValueError("no points to score")
    return true, perturbed


def _bounds(bounds) -> tuple[float, float, float, float]:
    xmin, ymin, xmax, ymax = (float(v) for v in as_float_array(bounds, "bounds").reshape(4))
    if not (xmax > xmin and ymax > ymin):
        raise ValueError(f"bounds must be (xmin, ymin, xmax, ymax) with xmax > xmin, ymax > ymin, got {bounds}")
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
        raise ValueError(f"n_queries must be >= 1, got {n_queries}")
    low, high = (float(v) for v in size)
    if not 0.0 < low <= high <= 1.0:
        raise ValueError(f"size must satisfy 0 < low <= high <= 1, got {size}")
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
        raise ValueError(f"sanity must be > 0, got {sanity}")
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
        raise ValueError(f"cells must be >= 1, got {cells}")
    ix = np.clip(((points[:, 0] - xmin) / (xmax - xmin) * cells).astype(np.int64), 0, cells - 1)
    iy = np.clip(((points[:, 1] - ymin) / (ymax - ymin) * cells).astype(np.int64), 0, cells - 1)
    return np.bincount(iy * cells + ix, minlength=cells * cells)


def _top_k(counts: np.ndarray, k: int) -> np.ndarray:
    # ties broken by cell index (stable), so the ranking is deterministic
    return np.argsort(-counts, kind="stable")[:k]


def _check_k(k, n_cells: int) -> int:
    k = int(k)
    if not 1 <= k <= n_cells:
        raise ValueError(f"k must be between 1 and the number of cells ({n_cells}), got {k}")
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
        raise ValueError(f"radius must be > 0, got {radius}")
    return float(np.mean(np.hypot(*(true - perturbed).T) <= radius))
