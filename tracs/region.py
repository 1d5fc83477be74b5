"""Public regions of the plane: an axis-aligned rectangle and a convex polygon.

A region is public knowledge, fixed before any data is seen.  Every region is a
closed convex set stored as half-planes ``n_k · p <= b_k`` (``n_k`` the outward
unit normal of edge ``k``), which gives containment, clamping and the vectorised
**ray exit distance** ``R(o, φ)``: the distance from ``o`` along direction ``φ``
to the boundary,

    R(o, φ) = min over edges with n_k·e(φ) > 0 of (b_k − n_k·o) / (n_k·e(φ)),

with ``e(φ) = (cos φ, sin φ)``.  It is exactly 0 when ``o`` lies on an edge and
``φ`` points out of the region (corners included).  For :class:`Rectangle` the
normals are the exact axis vectors, so every step above is exact in floating
point apart from the one division.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_float_array, as_points, check_finite
from .errors import InputError, InputTypeError

__all__ = ["Region", "Rectangle", "ConvexRegion"]


class Region:
    """Base of the public convex regions (closed sets).

    Subclasses set ``_normals`` (m, 2), ``_offsets`` (m,), ``_vertices`` (m, 2,
    counter-clockwise, edge ``k`` from vertex ``k`` to ``k+1``) and ``_tol``
    (containment tolerance: 0 for rectangles).
    """

    _normals: np.ndarray
    _offsets: np.ndarray
    _vertices: np.ndarray
    _tol: float

    # -- geometry ----------------------------------------------------------------
    @property
    def halfplanes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(normals (m, 2), offsets (m,))``: the region is ``{p : normals @ p <= offsets}``."""
        return self._normals.copy(), self._offsets.copy()

    @property
    def vertices(self) -> np.ndarray:
        """Vertices ``(m, 2)`` in counter-clockwise order (first vertex not repeated)."""
        return self._vertices.copy()

    @property
    def tolerance(self) -> float:
        """Slack allowed by :meth:`contains` (0 for rectangles; ~1e-14·scale for polygons)."""
        return self._tol

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(xmin, ymin, xmax, ymax)`` of the region."""
        v = self._vertices
        return (float(v[:, 0].min()), float(v[:, 1].min()),
                float(v[:, 0].max()), float(v[:, 1].max()))

    @property
    def width(self) -> float:
        """Width of the bounding box."""
        xmin, _, xmax, _ = self.bounds
        return xmax - xmin

    @property
    def height(self) -> float:
        """Height of the bounding box."""
        _, ymin, _, ymax = self.bounds
        return ymax - ymin

    @property
    def diameter(self) -> float:
        """Largest distance between two points of the region (attained at two vertices)."""
        v = self._vertices
        best = 0.0
        for start in range(0, len(v), 512):  # bounded memory for hulls with many vertices
            diff = v[start:start + 512, None, :] - v[None, :, :]
            best = max(best, float(np.max(np.einsum("ijk,ijk->ij", diff, diff))))
        return math.sqrt(best)

    @property
    def area(self) -> float:
        """Area (shoelace formula)."""
        x, y = self._vertices[:, 0], self._vertices[:, 1]
        return float(0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))

    @property
    def center(self) -> tuple[float, float]:
        """The area centroid (inside the region, since it is convex)."""
        x, y = self._vertices[:, 0], self._vertices[:, 1]
        xn, yn = np.roll(x, -1), np.roll(y, -1)
        cross = x * yn - xn * y
        a6 = 3.0 * np.sum(cross)
        return (float(np.sum((x + xn) * cross) / a6), float(np.sum((y + yn) * cross) / a6))

    @property
    def corner(self) -> tuple[float, float]:
        """The lower-left corner: the vertex with the smallest ``x + y`` (then smallest ``y``)."""
        v = self._vertices
        order = np.lexsort((v[:, 1], v[:, 0] + v[:, 1]))
        return (float(v[order[0], 0]), float(v[order[0], 1]))

    @property
    def polygon(self):
        """The region as a :class:`shapely.Polygon` (for maps and spatial joins)."""
        import shapely

        return shapely.Polygon(self._vertices)

    # -- vectorised queries --------------------------------------------------------
    def contains(self, points) -> np.ndarray:
        """``True`` for each point in the closed region (within :attr:`tolerance`).

        Parameters
        ----------
        points : array_like, shape (..., 2)

        Returns
        -------
        numpy.ndarray of bool, shape (...)
        """
        pts = as_points(points, leading=True)
        return self._contains(pts)

    def _contains(self, pts: np.ndarray) -> np.ndarray:
        x, y = pts[..., 0], pts[..., 1]
        inside = np.ones(x.shape, dtype=bool)
        for (nx, ny), b in zip(self._normals, self._offsets):  # a few edges: O(N) memory
            inside &= x * nx + y * ny - b <= self._tol
        return inside

    def validate_points(self, points, name: str = "points") -> np.ndarray:
        """Return ``points`` as a float ``(..., 2)`` array; ``ValueError`` if any lies outside."""
        pts = as_points(points, name, leading=True)
        inside = self._contains(pts)
        if not np.all(inside):
            bad = int(np.count_nonzero(~inside))
            raise InputError(f"{bad} point(s) of {name} lie outside the region {self!r}")
        return pts

    def exit_distance(self, origins, angles) -> np.ndarray:
        """Ray exit distance ``R(o, φ)`` from each origin along each angle (broadcast).

        Parameters
        ----------
        origins : array_like, shape (..., 2)
            Points of the region (``ValueError`` otherwise).
        angles : array_like, shape (...)
            Directions in radians (any real value; only ``cos`` and ``sin`` are used).

        Returns
        -------
        numpy.ndarray
            Non-negative distances; exactly 0 when the origin lies on the boundary
            and the direction points out of the region.
        """
        o = self.validate_points(origins, "origins")
        phi = as_float_array(angles, "angles")
        return self._exit_distance(o, np.cos(phi), np.sin(phi))

    def _exit_distance(self, o: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Exit distance along the unit direction ``(c, s)`` (no validation; broadcast)."""
        ox, oy = o[..., 0], o[..., 1]
        out = np.full(np.broadcast_shapes(ox.shape, np.shape(c)), np.inf)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for (nx, ny), b in zip(self._normals, self._offsets):  # O(n) memory per edge
                nd = c * nx + s * ny
                slack = np.maximum(b - (ox * nx + oy * ny), 0.0)
                np.minimum(out, np.where(nd > 0.0, slack / nd, np.inf), out=out)
        return np.where(np.isfinite(out), out, 0.0) + 0.0  # "+ 0.0" turns -0.0 into 0.0

    def direction_distance(self, origins, points) -> tuple[np.ndarray, np.ndarray]:
        """Polar coordinates of ``points`` seen from ``origins``, distance normalised by ``R``.

        Returns ``(φ, u)`` with ``φ = atan2(p − o) mod 2π`` in ``[0, 2π)`` and
        ``u = |p − o| / R(o, φ)`` in ``[0, 1]``, the input of TraCS-D.  ``u`` is
        computed edge by edge without trigonometry,
        ``u = max over edges with n·d > 0 of (n·d)/(b − n·o)`` for ``d = p − o``
        (exact for rectangles: ``u = 1`` for every boundary point).  Conventions:
        ``p == o`` gives ``φ = 0, u = 0``; a direction in which the ray leaves at
        once (``R = 0``, possible for a polygon only through rounding) gives ``u = 0``.
        """
        o = self.validate_points(origins, "origins")
        p = self.validate_points(points, "points")
        o, p = np.broadcast_arrays(o, p)
        return self._direction_distance(o, p)

    def _direction_distance(self, o, p):
        dx, dy = p[..., 0] - o[..., 0], p[..., 1] - o[..., 1]
        phi = np.arctan2(dy, dx)
        phi = np.where(phi < 0.0, phi + 2 * np.pi, phi)
        phi = np.where(phi >= 2 * np.pi, 0.0, phi) + 0.0  # as Circle.wrap: -0.0 becomes 0.0
        u = np.zeros(phi.shape)
        at_once = np.zeros(phi.shape, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for (nx, ny), b in zip(self._normals, self._offsets):
                nd = dx * nx + dy * ny
                slack = b - (o[..., 0] * nx + o[..., 1] * ny)
                leaving = nd > 0.0
                np.maximum(u, np.where(leaving & (slack > 0.0), nd / slack, 0.0), out=u)
                at_once |= leaving & (slack <= 0.0)
        return phi, np.where(at_once, 0.0, np.minimum(u, 1.0))

    def _clamp_from(self, o: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Undo rounding of sampled points ``p`` (in place) drawn along rays from ``o``.

        Rectangles clamp coordinate-wise; a polygon pulls a point found beyond
        :attr:`tolerance` back along the segment ``[o, p]`` onto the boundary.
        """
        nx, ny, b = self._normals[:, 0], self._normals[:, 1], self._offsets
        outside = np.any(p[:, 0, None] * nx + p[:, 1, None] * ny - b > self._tol, axis=1)
        if np.any(outside):
            oo, d = o[outside], p[outside] - o[outside]
            nd = d[:, 0, None] * nx + d[:, 1, None] * ny
            slack = np.maximum(b - (oo[:, 0, None] * nx + oo[:, 1, None] * ny), 0.0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                t = np.min(np.where(nd > 0.0, slack / nd, 1.0), axis=1)
            p[outside] = oo + np.minimum(t, 1.0)[:, None] * d
        return p

    def clip(self, points) -> np.ndarray:
        """Nearest point of the region for each point (points inside are returned unchanged).

        Used after sampling, to undo floating-point error and to truncate
        unbounded mechanisms (post-processing: no privacy cost).
        """
        pts = np.array(as_points(points, leading=True), dtype=np.float64, copy=True)
        return self._clip(pts)

    def _clip(self, pts: np.ndarray) -> np.ndarray:
        """Project the points outside onto the boundary, in place."""
        flat = pts.reshape(-1, 2)
        outside = ~self._contains(flat)
        if not np.any(outside):
            return pts
        where = np.flatnonzero(outside)
        a = self._vertices
        d = np.roll(a, -1, axis=0) - a
        step = max(1, (1 << 18) // len(a))  # bounded (block, edges) temporaries
        for start in range(0, len(where), step):
            rows = where[start:start + step]
            q = flat[rows]
            # nearest point of every edge segment, then the closest of them
            t = np.einsum("nmk,mk->nm", q[:, None, :] - a[None], d) / np.einsum("mk,mk->m", d, d)
            near = a[None] + np.clip(t, 0.0, 1.0)[..., None] * d[None]
            dist = np.einsum("nmk,nmk->nm", q[:, None, :] - near, q[:, None, :] - near)
            flat[rows] = near[np.arange(len(q)), np.argmin(dist, axis=1)]
        return pts


#: the largest coordinate magnitude a region accepts: squared distances stay finite
MAX_COORDINATE = 1e150


def _check_extent(coords: np.ndarray) -> None:
    """Reject regions whose coordinates or extent leave the range where the geometry is finite."""
    big = float(np.max(np.abs(coords)))
    if not big <= MAX_COORDINATE:
        raise InputError(f"region coordinates must lie within ±{MAX_COORDINATE:g} (distances and "
                         f"their squares must stay finite), got a coordinate of magnitude {big:g}")
    extent = np.ptp(coords.reshape(-1, 2), axis=0)
    if not np.all(extent >= 1.0 / MAX_COORDINATE):
        raise InputError(f"the region's width and height must be at least {1.0 / MAX_COORDINATE:g} "
                         f"(its lattice spacings must stay normal numbers), got {extent.tolist()}")


def _real(value, name: str) -> float:
    return check_finite(value, name)  # complex: NotRealError; NaN, inf: ValueError


class Rectangle(Region):
    """The closed axis-aligned rectangle ``[xmin, xmax] × [ymin, ymax]``.

    Containment, clamping and exit distances are exact in floating point (no
    tolerance).  The paper's half-open ``[0, W) × [0, H)`` differs only on a
    null set.

    Parameters
    ----------
    xmin, ymin, xmax, ymax : float
        Real bounds with ``xmin < xmax`` and ``ymin < ymax``, within ``±1e150``
        (NaN, infinities, complex numbers and larger magnitudes raise).
    """

    __slots__ = ("xmin", "ymin", "xmax", "ymax", "_normals", "_offsets", "_vertices", "_tol")

    def __init__(self, xmin, ymin, xmax, ymax):
        xmin, ymin = _real(xmin, "xmin"), _real(ymin, "ymin")
        xmax, ymax = _real(xmax, "xmax"), _real(ymax, "ymax")
        if not (xmin < xmax and ymin < ymax):
            raise InputError(
                f"need xmin < xmax and ymin < ymax, got ({xmin}, {ymin}, {xmax}, {ymax})")
        _check_extent(np.array([xmin, ymin, xmax, ymax]))
        self.xmin, self.ymin, self.xmax, self.ymax = xmin, ymin, xmax, ymax
        # edges: bottom, right, top, left (counter-clockwise from the lower-left corner)
        self._vertices = np.array([[xmin, ymin], [xmax, ymin], [xmax, ymax], [xmin, ymax]])
        self._normals = np.array([[0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
        self._offsets = np.array([-ymin, xmax, ymax, -xmin])
        self._tol = 0.0

    @classmethod
    def bounding(cls, points, pad: float = 0.0) -> "Rectangle":
        """The bounding box of ``points`` enlarged by ``pad`` on every side.

        Only for data that is itself public: a region derived from private points
        leaks their extent.
        """
        pts = as_points(points, leading=True).reshape(-1, 2)
        if len(pts) == 0:
            raise InputError("points is empty")
        pad = _real(pad, "pad")
        if pad < 0:
            raise InputError(f"pad must be >= 0, got {pad}")
        (xmin, ymin), (xmax, ymax) = pts.min(axis=0), pts.max(axis=0)
        return cls(xmin - pad, ymin - pad, xmax + pad, ymax + pad)

    @property
    def bounds(self):
        return (self.xmin, self.ymin, self.xmax, self.ymax)

    @property
    def width(self) -> float:
        return self.xmax - self.xmin

    @property
    def height(self) -> float:
        return self.ymax - self.ymin

    @property
    def diameter(self) -> float:
        return math.hypot(self.width, self.height)

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self):
        return (0.5 * (self.xmin + self.xmax), 0.5 * (self.ymin + self.ymax))

    @property
    def corner(self):
        return (self.xmin, self.ymin)

    def _contains(self, pts):
        x, y = pts[..., 0], pts[..., 1]
        return (x >= self.xmin) & (x <= self.xmax) & (y >= self.ymin) & (y <= self.ymax)

    def _exit_distance(self, o, c, s):
        ox, oy = o[..., 0], o[..., 1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tx = np.where(c > 0.0, (self.xmax - ox) / c,
                          np.where(c < 0.0, (self.xmin - ox) / c, np.inf))
            ty = np.where(s > 0.0, (self.ymax - oy) / s,
                          np.where(s < 0.0, (self.ymin - oy) / s, np.inf))
        out = np.minimum(tx, ty)
        return np.where(np.isfinite(out), out, 0.0) + 0.0

    def _clamp_from(self, o, p):
        return self._clip(p)

    def _clip(self, pts):
        np.clip(pts[..., 0], self.xmin, self.xmax, out=pts[..., 0])
        np.clip(pts[..., 1], self.ymin, self.ymax, out=pts[..., 1])
        return pts

    def __eq__(self, other):
        return type(other) is Rectangle and self.bounds == other.bounds

    def __hash__(self):
        return hash(("Rectangle", self.bounds))

    def __repr__(self):
        return f"Rectangle({self.xmin!r}, {self.ymin!r}, {self.xmax!r}, {self.ymax!r})"

    def __reduce__(self):
        return (Rectangle, self.bounds)


class ConvexRegion(Region):
    """A closed convex polygon.

    Parameters
    ----------
    polygon_or_vertices : shapely.Polygon or array_like of shape (m, 2)
        A polygon without holes, or its vertices in either orientation (a
        repeated closing vertex, duplicate vertices and collinear vertices are
        removed).  Non-convex or degenerate (zero-area) input raises ``ValueError``.

    Notes
    -----
    Edge normals of a slanted edge are not exact in floating point, so
    :meth:`contains` accepts points up to :attr:`tolerance` (``1e-14`` times the
    largest coordinate magnitude or the diameter, whichever is larger) outside
    an edge, and perturbers clamp outputs to that tolerance.
    """

    __slots__ = ("_normals", "_offsets", "_vertices", "_tol")

    def __init__(self, polygon_or_vertices):
        vertices = _vertices_of(polygon_or_vertices)
        _check_extent(vertices)
        self._vertices = _convex_ccw(vertices)
        a = self._vertices
        d = np.roll(a, -1, axis=0) - a
        length = np.hypot(d[:, 0], d[:, 1])
        self._normals = np.column_stack([d[:, 1] / length, -d[:, 0] / length])
        self._offsets = np.einsum("mk,mk->m", self._normals, a)
        scale = max(float(np.max(np.abs(a))), float(np.max(length)))
        self._tol = 1e-14 * scale

    def __eq__(self, other):
        return type(other) is ConvexRegion and np.array_equal(self._vertices, other._vertices)

    def __hash__(self):
        return hash(("ConvexRegion", self._vertices.tobytes()))

    def __repr__(self):
        return f"ConvexRegion({self._vertices.tolist()!r})"

    def __reduce__(self):
        return (ConvexRegion, (self._vertices.tolist(),))


def _vertices_of(obj) -> np.ndarray:
    """Vertex array of a shapely polygon or a vertex list."""
    geom_type = getattr(obj, "geom_type", None)
    if geom_type is not None:
        if geom_type != "Polygon":
            raise InputTypeError(f"expected a shapely Polygon or a vertex list, got a {geom_type}")
        if obj.is_empty:
            raise InputError("the polygon is empty")
        if len(obj.interiors):
            raise InputError("the polygon has holes: a convex region cannot")
        return np.asarray(obj.exterior.coords, dtype=np.float64)
    if isinstance(obj, (str, bytes)) or not hasattr(obj, "__len__") and not hasattr(obj, "__array__"):
        raise InputTypeError(f"expected a shapely Polygon or a vertex list, got {type(obj).__name__}")
    arr = as_float_array(obj, "vertices")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InputError(f"vertices must have shape (m, 2), got {arr.shape}")
    return arr


def _convex_ccw(v: np.ndarray) -> np.ndarray:
    """Counter-clockwise vertices without repeats or collinear points; reject non-convex."""
    keep = np.ones(len(v), dtype=bool)
    keep[1:] = np.any(v[1:] != v[:-1], axis=1)
    v = v[keep]
    if len(v) > 1 and np.array_equal(v[0], v[-1]):
        v = v[:-1]
    scale = float(np.max(np.abs(v))) if len(v) else 0.0
    changed = True
    while changed and len(v) >= 3:  # drop collinear vertices (one pass each round)
        prev, nxt = np.roll(v, 1, axis=0), np.roll(v, -1, axis=0)
        cross = _cross(v - prev, nxt - v)
        span = np.hypot(*(v - prev).T) * np.hypot(*(nxt - v).T)
        flat = np.abs(cross) <= 1e-12 * np.maximum(span, 1e-300)
        changed = bool(np.any(flat))
        if changed:
            drop = int(np.flatnonzero(flat)[0])
            v = np.delete(v, drop, axis=0)
    if len(v) < 3:
        raise InputError("a convex region needs at least 3 non-collinear vertices")
    prev, nxt = np.roll(v, 1, axis=0), np.roll(v, -1, axis=0)
    cross = _cross(v - prev, nxt - v)
    if np.all(cross < 0):
        v = v[::-1].copy()
    elif not np.all(cross > 0):
        raise InputError("the polygon is not convex (or its vertices are not in boundary order)")
    # the turns all agree; a star-shaped self-intersecting loop would wind more than once
    angles = np.arctan2(*(np.roll(v, -1, axis=0) - v)[:, ::-1].T)
    turn = np.mod(np.diff(np.append(angles, angles[0])), 2 * np.pi)
    if not math.isclose(float(np.sum(turn)), 2 * np.pi, rel_tol=1e-9):
        raise InputError("the polygon is not convex (its boundary winds more than once)")
    if 0.5 * np.sum(_cross(v, np.roll(v, -1, axis=0))) <= 1e-300 * max(scale, 1.0) ** 2:
        raise InputError("the polygon has zero area")
    return np.ascontiguousarray(v, dtype=np.float64)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
