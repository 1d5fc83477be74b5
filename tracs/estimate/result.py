"""The estimated density on a grid, and the queries a collector asks of it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError, InputTypeError

__all__ = ["Density", "Hotspots", "check_boxes"]


@dataclass(frozen=True)
class Hotspots:
    """The ``k`` most probable cells, most probable first."""

    cells: np.ndarray  # (k, 2) int: (i, j) = (x index, y index)
    centers: np.ndarray  # (k, 2) float, region coordinates
    probabilities: np.ndarray  # (k,)


def check_boxes(boxes) -> np.ndarray:
    """Boxes as a float ``(m, 4)`` array of ``(xmin, ymin, xmax, ymax)`` with min ≤ max."""
    try:
        arr = np.asarray(boxes, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"boxes must be numeric, got {type(boxes).__name__}") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise InputError(f"boxes must have shape (m, 4) (xmin, ymin, xmax, ymax), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError("boxes contain NaN or infinite values")
    if np.any(arr[:, 2] < arr[:, 0]) or np.any(arr[:, 3] < arr[:, 1]):
        raise InputError("every box needs xmin <= xmax and ymin <= ymax")
    return arr


def _overlap(edges: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Share of every cell ``[e_i, e_{i+1}]`` inside ``[lo, hi]``: (m, cells)."""
    left = np.maximum(edges[None, :-1], lo[:, None])
    right = np.minimum(edges[None, 1:], hi[:, None])
    return np.clip(right - left, 0.0, None) / np.diff(edges)[None, :]


@dataclass(frozen=True)
class Density:
    """Cell probabilities of the true points on a ``Gx × Gy`` grid over the region.

    Attributes
    ----------
    probabilities : numpy.ndarray, shape (Gx, Gy)
        ``probabilities[i, j]`` is the estimated share of true points in the cell
        ``[x_i, x_{i+1}) × [y_j, y_{j+1})``; the array sums to 1.
    grid : tuple of two numpy.ndarray
        ``(x_edges, y_edges)``, in the region's coordinates.
    iterations : int
        EM iterations run.
    converged : bool
        Whether the stopping rule fired.
    method : str
        What produced it (``"em"``, ``"ems"`` or ``"raw"``).
    detail : Density, optional
        The same estimate on a finer grid that refines ``grid`` (the grid EM ran on,
        ``density(refine=r)``); :meth:`range_queries` reads it, so box edges inside
        a cell are placed at the finer resolution.  ``probabilities`` are its sums
        over the cells of ``grid``.
    """

    probabilities: np.ndarray
    grid: tuple
    iterations: int = 0
    converged: bool = True
    method: str = "em"
    detail: "Density | None" = None

    @classmethod
    def from_points(cls, points, grid) -> "Density":
        """The histogram of points on ``grid`` (e.g. raw reports, for comparison)."""
        pts = np.asarray(points, dtype=np.float64)
        xe, ye = grid
        h, _, _ = np.histogram2d(np.clip(pts[:, 0], xe[0], xe[-1]), np.clip(pts[:, 1], ye[0], ye[-1]),
                                 bins=(xe, ye))
        return cls(h / max(h.sum(), 1.0), (np.asarray(xe), np.asarray(ye)), 0, True, "raw")

    @property
    def shape(self) -> tuple[int, int]:
        return self.probabilities.shape

    @property
    def centers(self) -> np.ndarray:
        """Cell centres, shape (Gx, Gy, 2)."""
        xe, ye = self.grid
        cx, cy = 0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:])
        return np.stack(np.meshgrid(cx, cy, indexing="ij"), axis=-1)

    def range_queries(self, boxes) -> np.ndarray:
        """Estimated share of true points in every box (mass spread uniformly inside cells,
        the cells of :attr:`detail` when there is one).

        Parameters
        ----------
        boxes : array_like, shape (m, 4)
            ``(xmin, ymin, xmax, ymax)`` in the region's coordinates.

        Returns
        -------
        numpy.ndarray, shape (m,)
        """
        if self.detail is not None:
            return self.detail.range_queries(boxes)
        b = check_boxes(boxes)
        xe, ye = self.grid
        wx = _overlap(xe, b[:, 0], b[:, 2])
        wy = _overlap(ye, b[:, 1], b[:, 3])
        return np.einsum("mi,ij,mj->m", wx, self.probabilities, wy)

    def range_query(self, box) -> float:
        """Estimated share of true points in one box ``(xmin, ymin, xmax, ymax)``."""
        return float(self.range_queries(box)[0])

    def hotspots(self, k: int = 10) -> Hotspots:
        """The ``k`` cells of highest estimated probability (ties: lower index first)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InputTypeError(f"k must be an int, got {type(k).__name__}")
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        flat = self.probabilities.ravel()
        order = np.argsort(-flat, kind="stable")[: min(int(k), flat.size)]
        cells = np.column_stack(np.unravel_index(order, self.shape))
        return Hotspots(cells, self.centers[cells[:, 0], cells[:, 1]], flat[order])

    def total_variation(self, other) -> float:
        """Total-variation distance to another density on the same grid."""
        return 0.5 * float(np.abs(self.probabilities - other.probabilities).sum())

    def to_geodataframe(self, crs=None):
        """One polygon per cell with its ``probability`` (and ``i``, ``j``), in ``crs``.

        ``crs`` is the CRS of the region's coordinates (e.g. the local metric CRS the
        reports were perturbed in); convert with ``.to_crs(4326)`` for a web map.
        """
        import geopandas as gpd
        from shapely import box

        xe, ye = self.grid
        i, j = np.meshgrid(np.arange(len(xe) - 1), np.arange(len(ye) - 1), indexing="ij")
        i, j = i.ravel(), j.ravel()
        cells = box(xe[i], ye[j], xe[i + 1], ye[j + 1])
        return gpd.GeoDataFrame({"i": i, "j": j, "probability": self.probabilities[i, j]},
                                geometry=cells, crs=crs)

    def to_table(self, crs):
        """The cells as ``tracs estimate -o est.csv`` writes them: ``i``, ``j``, ``probability`` and
        each cell's WGS84 box (``min_lng``, ``min_lat``, ``max_lng``, ``max_lat``); ``crs`` as in
        :meth:`to_geodataframe`."""
        cells = self.to_geodataframe(crs=crs).to_crs(4326)
        b = cells.geometry.bounds
        return cells.drop(columns="geometry").assign(min_lng=b.minx, min_lat=b.miny, max_lng=b.maxx, max_lat=b.maxy)
