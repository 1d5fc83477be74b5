"""Utility of synthetic (or released) trajectories against the true ones.

The metrics of the trajectory-synthesis literature (AdaTrace, CCS 2018; LDPTrace,
VLDB 2023; PrivTrace, S&P 2023), each comparing two *data sets* that may differ in
size: distributions are normalised before they are compared.  Points are placed on
a ``cells × cells`` grid over public ``bounds`` (points outside are clipped into the
border cells).  ``JSD`` is the Jensen–Shannon divergence with natural logarithms,
``½ KL(p‖m) + ½ KL(q‖m)`` with ``m = (p + q)/2``: 0 for equal distributions, at
most ``ln 2`` for disjoint ones.  ``docs/synthesis.md`` has the definitions.

Trajectories are a flat ``(N, 2)`` array with ``offsets`` ``(T+1,)``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, as_points, check_offsets
from ..errors import InputError, InputTypeError
from ..query_metrics import random_range_queries, range_query_counts

__all__ = ["jensen_shannon", "density_error", "query_error", "hotspot_ndcg", "trip_error",
           "length_error", "transition_error", "coverage_kendall_tau", "METRICS", "every_metric"]


def _points(points, name: str) -> np.ndarray:
    arr = as_points(points, name)
    if len(arr) == 0:
        raise InputError(f"{name} holds no point")
    return arr


def _trajectories(points, offsets, name: str):
    pts = _points(points, name)
    return pts, np.unique(check_offsets(offsets, len(pts), empty=False))  # empty trajectories dropped


def _grid(bounds, cells):
    box = as_float_array(bounds, "bounds")
    if box.shape != (4,):
        raise InputError(f"bounds must be (xmin, ymin, xmax, ymax), got shape {box.shape}")
    xmin, ymin, xmax, ymax = (float(v) for v in box)
    if not (xmax > xmin and ymax > ymin):
        raise InputError(f"bounds must satisfy xmin < xmax and ymin < ymax, got {tuple(box)}")
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)):
        raise InputTypeError(f"cells must be an int, got {type(cells).__name__}")
    if cells < 1:
        raise InputError(f"cells must be >= 1, got {cells}")
    return (xmin, ymin, xmax, ymax), int(cells)


def _cells(pts: np.ndarray, box, cells: int) -> np.ndarray:
    """Grid cell ``iy·cells + ix`` of every point."""
    xmin, ymin, xmax, ymax = box
    ix = np.clip(np.floor((pts[:, 0] - xmin) / (xmax - xmin) * cells), 0, cells - 1).astype(np.int64)
    iy = np.clip(np.floor((pts[:, 1] - ymin) / (ymax - ymin) * cells), 0, cells - 1).astype(np.int64)
    return iy * cells + ix


def jensen_shannon(p, q) -> float:
    """Jensen–Shannon divergence of two histograms (normalised here), natural logarithm.

    ``JSD(p, q) = ½ Σ p log(p/m) + ½ Σ q log(q/m)``, ``m = (p + q)/2``, terms with a
    zero probability taken as 0; in ``[0, ln 2]``.
    """
    p, q = as_float_array(p, "p").ravel(), as_float_array(q, "q").ravel()
    if p.shape != q.shape:
        raise InputError(f"p and q must have the same size, got {p.size} and {q.size}")
    if np.any(p < 0) or np.any(q < 0):
        raise InputError("p and q must be non-negative")
    if p.sum() <= 0 or q.sum() <= 0:
        raise InputError("p and q must have a positive total")
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)

    def kl(a):
        nz = a > 0
        return float(np.sum(a[nz] * np.log(a[nz] / m[nz])))

    return max(0.5 * kl(p) + 0.5 * kl(q), 0.0)


def density_error(true, synthetic, bounds, *, cells: int = 16) -> float:
    """Density error: JSD between the shares of points per grid cell of the two data sets.

    Parameters
    ----------
    true, synthetic : array_like, shape (N, 2) and (M, 2)
    bounds : (xmin, ymin, xmax, ymax)
    cells : int
        Grid of ``cells × cells``.
    """
    box, cells = _grid(bounds, cells)
    k = cells * cells
    a = np.bincount(_cells(_points(true, "true"), box, cells), minlength=k)
    b = np.bincount(_cells(_points(synthetic, "synthetic"), box, cells), minlength=k)
    return jensen_shannon(a, b)


def query_error(true, synthetic, bounds, *, n_queries: int = 500, size=(0.05, 0.2), sanity: float = 0.001,
                rng=None) -> float:
    """Query error: average relative error of random range queries on the shares of points.

    ``mean_q |s_q − ŝ_q| / max(s_q, δ)``, where ``s_q`` and ``ŝ_q`` are the shares of
    the true and synthetic points inside rectangle ``q``
    (:func:`tracs.query_metrics.random_range_queries`: sides uniform in ``size`` of
    the region's) and ``δ = sanity`` (default 0.001: 0.1 % of the points) keeps
    nearly empty rectangles from dominating.

    Parameters
    ----------
    true, synthetic : array_like, shape (N, 2) and (M, 2)
    bounds : (xmin, ymin, xmax, ymax)
    n_queries : int
    size : (low, high)
    sanity : float
        The sanity bound ``δ`` as a share of the points, > 0.
    rng : None, int, SeedSequence or Generator
        Draws the rectangles (same seed: same queries for every data set).
    """
    true, synthetic = _points(true, "true"), _points(synthetic, "synthetic")
    if not sanity > 0:
        raise InputError(f"sanity must be > 0, got {sanity}")
    queries = random_range_queries(bounds, n_queries, size=size, rng=rng)
    s_true = range_query_counts(true, queries) / len(true)
    s_syn = range_query_counts(synthetic, queries) / len(synthetic)
    return float(np.mean(np.abs(s_true - s_syn) / np.maximum(s_true, sanity)))


def hotspot_ndcg(true, synthetic, bounds, *, cells: int = 16, k: int = 10) -> float:
    """Hotspot NDCG@k: the synthetic ranking of grid cells, graded by the true counts.

    ``DCG = Σ_{r=1..k} c[h_r] / log2(r + 1)`` over the ``k`` busiest synthetic cells
    ``h_r`` (ties by cell index), ``c`` the true counts, divided by the same sum over
    the ``k`` busiest true cells; 1 is perfect.
    """
    box, cells = _grid(bounds, cells)
    n = cells * cells
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputTypeError(f"k must be an int, got {type(k).__name__}")
    if not 1 <= k <= n:
        raise InputError(f"k must be between 1 and the number of cells ({n}), got {k}")
    c = np.bincount(_cells(_points(true, "true"), box, cells), minlength=n).astype(np.float64)
    s = np.bincount(_cells(_points(synthetic, "synthetic"), box, cells), minlength=n)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = float(np.sum(np.sort(c)[::-1][:k] * discount))
    return float(np.sum(c[np.argsort(-s, kind="stable")[:k]] * discount) / ideal)


def _trip_counts(pts, off, box, cells):
    lengths = np.diff(off)
    full = lengths > 0
    cell = _cells(pts, box, cells)
    start, end = cell[off[:-1][full]], cell[off[1:][full] - 1]
    return np.bincount(start * cells * cells + end, minlength=cells ** 4)


def trip_error(true, true_offsets, synthetic, synthetic_offsets, bounds, *, cells: int = 8) -> float:
    """Trip error: JSD between the distributions of (start cell, end cell) pairs of trajectories."""
    box, cells = _grid(bounds, cells)
    a = _trip_counts(*_trajectories(true, true_offsets, "true"), box, cells)
    b = _trip_counts(*_trajectories(synthetic, synthetic_offsets, "synthetic"), box, cells)
    return jensen_shannon(a, b)


def _travelled(pts, off) -> np.ndarray:
    """Distance travelled along every trajectory (sum of its steps)."""
    step = np.hypot(*np.diff(pts, axis=0).T)
    inside = np.ones(len(step), dtype=bool)
    inside[off[1:-1][off[1:-1] > 0] - 1] = False  # a step across a boundary is no step
    cum = np.r_[0.0, np.cumsum(np.where(inside, step, 0.0))]
    return cum[np.maximum(off[1:] - 1, off[:-1])] - cum[off[:-1]]


def length_error(true, true_offsets, synthetic, synthetic_offsets, *, bins: int = 20) -> float:
    """Length error: JSD between the distributions of the distance travelled per trajectory.

    The distances are put in ``bins`` equal bins over ``[0, max true distance]``
    (larger synthetic distances in the last bin).
    """
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InputError(f"bins must be an int >= 1, got {bins!r}")
    a = _travelled(*_trajectories(true, true_offsets, "true"))
    b = _travelled(*_trajectories(synthetic, synthetic_offsets, "synthetic"))
    top = float(a.max()) if len(a) and a.max() > 0 else 1.0

    def hist(d):
        return np.bincount(np.clip((d / top * bins).astype(np.int64), 0, bins - 1), minlength=bins)

    return jensen_shannon(hist(a), hist(b))


def _transitions(pts, off, box, cells):
    cell = _cells(pts, box, cells)
    keep = np.ones(max(len(cell) - 1, 0), dtype=bool)
    keep[off[1:-1][off[1:-1] > 0] - 1] = False
    return np.bincount(cell[:-1][keep] * cells * cells + cell[1:][keep], minlength=cells ** 4)


def transition_error(true, true_offsets, synthetic, synthetic_offsets, bounds, *, cells: int = 8) -> float:
    """Transition error: JSD between the distributions of (cell, next cell) of consecutive points."""
    box, cells = _grid(bounds, cells)
    a = _transitions(*_trajectories(true, true_offsets, "true"), box, cells)
    b = _transitions(*_trajectories(synthetic, synthetic_offsets, "synthetic"), box, cells)
    if a.sum() == 0 or b.sum() == 0:
        raise InputError("the trajectories have no consecutive points")
    return jensen_shannon(a, b)


def _coverage(pts, off, box, cells):
    cell = _cells(pts, box, cells)
    traj = np.repeat(np.arange(len(off) - 1), np.diff(off))
    visits = np.unique(traj * (cells * cells) + cell)
    return np.bincount(visits % (cells * cells), minlength=cells * cells)


def coverage_kendall_tau(true, true_offsets, synthetic, synthetic_offsets, bounds, *, cells: int = 16) -> float:
    """Kendall τ (τ-b) between the location coverage of the two data sets.

    A cell's coverage is the number of distinct trajectories with a point in it;
    τ compares the two rankings of the cells (1: same order, −1: reversed).
    """
    from scipy.stats import kendalltau

    box, cells = _grid(bounds, cells)
    a = _coverage(*_trajectories(true, true_offsets, "true"), box, cells)
    b = _coverage(*_trajectories(synthetic, synthetic_offsets, "synthetic"), box, cells)
    if np.all(a == a[0]) or np.all(b == b[0]):
        raise InputError("every cell has the same coverage: τ is undefined")
    return float(kendalltau(a, b)[0])


#: the names of :func:`every_metric`'s values, in its order
METRICS = ("density JSD", "query AvRE", "NDCG@10", "trip JSD", "length JSD", "transition JSD", "coverage τ")


def every_metric(true, true_offsets, synthetic, synthetic_offsets, bounds, *, cells: int = 16,
                 seed: int = 0) -> list[float]:
    """Every metric of this module, in the order of :data:`METRICS`.

    The density error, NDCG@10 and coverage τ on ``cells × cells``; the trip and transition
    errors on their default 8 × 8 grid; the query error's rectangles drawn with ``seed + 1000``
    (the same rectangles for every data set scored with the same ``seed``).
    """
    return [density_error(true, synthetic, bounds, cells=cells),
            query_error(true, synthetic, bounds, rng=seed + 1000),
            hotspot_ndcg(true, synthetic, bounds, cells=cells, k=10),
            trip_error(true, true_offsets, synthetic, synthetic_offsets, bounds),
            length_error(true, true_offsets, synthetic, synthetic_offsets),
            transition_error(true, true_offsets, synthetic, synthetic_offsets, bounds),
            coverage_kendall_tau(true, true_offsets, synthetic, synthetic_offsets, bounds, cells=cells)]
