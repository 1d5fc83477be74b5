"""The ``Trajectories`` container: many trajectories as one flat array plus offsets.

``T`` trajectories with ``N`` points in total are held as

* ``frame``: a GeoDataFrame of the ``N`` rows in trajectory order (within a
  trajectory, in time order), with a ``trajectory`` id column and point geometry;
* ``offsets``: ``int64`` of length ``T + 1``, ``offsets[0] = 0``,
  ``offsets[-1] = N``, strictly increasing: trajectory ``i`` is rows
  ``offsets[i]:offsets[i+1]`` (the Arrow / shapely convention);
* ``coords``: the ``(N, 2)`` float64 x/y of the geometry, read-only.

The container never reorders rows.  Perturbers work on ``coords``/``offsets``;
``with_coords`` puts their output back next to the original ids and times.  The
arrays are those of a :class:`tracs.Batch` (:meth:`Trajectories.to_batch`), of
which the container is the GeoDataFrame view.
"""

from __future__ import annotations

from typing import NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from . import geo
from .region import ConvexRegion, Rectangle
from ._validation import as_float_array, check_finite, check_offsets
from .trajectory_batch import Batch, point_coords
from .errors import InputError, InputTypeError

__all__ = ["Trajectories", "POIs"]


class POIs(NamedTuple):
    """The points of interest of a data set: ``coords`` ``(m, 2)`` and their ``ids`` ``(m,)``.

    ``ids`` is ``None`` when the data has no ``poi_id`` column.
    """

    coords: np.ndarray
    ids: np.ndarray | None


class Trajectories:
    """Trajectories as rows in trajectory order plus offsets; see the module docstring.

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        Rows in trajectory order, point geometry (any CRS, or none for plain
        Cartesian coordinates).  Usually with ``uid``, ``datetime`` and ``poi_id``.
        If it has a ``trajectory`` column, that column must be constant within each
        trajectory and different between trajectories; otherwise one numbered
        ``0 .. T-1`` is added (to a copy).
    offsets : array-like of int, optional
        ``T + 1`` row offsets; default: derived from the ``trajectory`` column,
        whose equal values must then be contiguous.
    report : object, optional
        How the trajectories were formed (e.g. a
        :class:`data_loaders.GroupingReport`), kept as ``report``.

    Notes
    -----
    Treat ``frame`` as immutable: ``coords`` is computed once at construction.
    """

    def __init__(self, frame, offsets=None, *, report=None):
        if not isinstance(frame, gpd.GeoDataFrame):
            raise InputTypeError(f"frame must be a GeoDataFrame, got {type(frame).__name__}")
        n = len(frame)
        if n == 0:
            raise InputError("no trajectories: the frame is empty")
        if offsets is None:
            if "trajectory" not in frame.columns:
                raise InputError("give offsets or a 'trajectory' column")
            ids = frame["trajectory"].to_numpy()
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            offsets = np.r_[starts, n]
        offsets = check_offsets(offsets, n, empty=False)
        offsets.setflags(write=False)
        lengths = np.diff(offsets)
        if "trajectory" in frame.columns:
            ids = frame["trajectory"].to_numpy()
            first = ids[offsets[:-1]]
            if not np.array_equal(np.repeat(first, lengths), ids):
                raise InputError("the 'trajectory' column is not constant within each trajectory")
            if pd.unique(first).size != first.size:
                raise InputError("the 'trajectory' column repeats an id in two trajectories")
        else:
            frame = frame.copy()
            frame["trajectory"] = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        self._batch = Batch(point_coords(frame), offsets, crs=frame.crs)
        self._frame = frame
        self.report = report

    # construction ---------------------------------------------------------------
    @classmethod
    def from_arrays(cls, coords, offsets=None, *, crs=None, **columns) -> "Trajectories":
        """Build from an ``(N, 2)`` array and offsets (default: one trajectory).

        ``crs`` may be ``None`` for plain Cartesian coordinates (e.g. the unit
        square); extra keyword arguments become columns of length ``N``.
        """
        xy = as_float_array(coords, "coords")
        if xy.ndim != 2 or xy.shape[1] != 2 or xy.shape[0] == 0:
            raise InputError(f"coords must have shape (N, 2) with N >= 1, got {xy.shape}")
        offsets = np.array([0, len(xy)]) if offsets is None else offsets
        frame = gpd.GeoDataFrame(columns, index=pd.RangeIndex(len(xy)),
                                 geometry=gpd.points_from_xy(xy[:, 0], xy[:, 1]), crs=crs)
        return cls(frame, offsets)

    # data -----------------------------------------------------------------------
    @property
    def frame(self) -> gpd.GeoDataFrame:
        """The rows, in trajectory order (with the ``trajectory`` id column)."""
        return self._frame

    @property
    def offsets(self) -> np.ndarray:
        """``int64`` ``(T + 1,)`` row offsets (read-only)."""
        return self._batch.offsets

    @property
    def coords(self) -> np.ndarray:
        """``(N, 2)`` float64 x/y of every row, in the frame's CRS (read-only)."""
        return self._batch.coords

    @property
    def crs(self) -> pyproj.CRS | None:
        """The coordinate reference system (``None``: plain Cartesian)."""
        return self._frame.crs

    @property
    def lengths(self) -> np.ndarray:
        """Number of points of each trajectory, ``(T,)``."""
        return self._batch.lengths

    @property
    def n_points(self) -> int:
        """Total number of points ``N``."""
        return self._batch.n_points

    def __len__(self) -> int:
        return len(self._batch)

    def to_batch(self, *, key: str = "uid") -> Batch:
        """The rows as a :class:`tracs.Batch`: the same coordinates and offsets, the column ``key``
        (when the frame has it) as keys, every other column kept, the frame's CRS and report
        (``attrs["report"]``)."""
        batch = Batch.from_geodataframe(self._frame, key=key, offsets=self.offsets)
        batch.attrs["report"] = self.report
        return batch

    def __iter__(self):
        """Yield each trajectory's ``(n_i, 2)`` coordinates (read-only views)."""
        for start, stop in zip(self.offsets[:-1], self.offsets[1:]):
            yield self.coords[start:stop]

    def __getitem__(self, i) -> np.ndarray:
        """Coordinates ``(n_i, 2)`` of trajectory ``i`` (an int; negative counts from the end)."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise InputTypeError("index with an int; use select() for several trajectories")
        t = len(self)
        if not -t <= i < t:
            raise IndexError(f"trajectory {i} out of range for {t} trajectories")
        i = int(i) % t
        return self.coords[self.offsets[i]:self.offsets[i + 1]]

    def select(self, indices) -> "Trajectories":
        """A new container with trajectories ``indices`` (ints, a slice or a boolean mask), in that order."""
        picked = np.arange(len(self))[indices]
        picked = np.atleast_1d(picked)
        if picked.size == 0:
            raise InputError("no trajectory selected")
        lengths = self.lengths[picked]
        starts = self.offsets[:-1][picked]
        rows = np.repeat(starts - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(lengths.sum())
        frame = self._frame.iloc[rows].reset_index(drop=True)
        return Trajectories(frame, np.r_[0, np.cumsum(lengths)], report=self.report)

    def __repr__(self) -> str:
        crs = self.crs.to_string() if self.crs is not None else "None"
        return f"Trajectories({len(self):,} trajectories, {self.n_points:,} points, crs={crs})"

    # coordinate systems -----------------------------------------------------------
    def _with_frame(self, frame) -> "Trajectories":
        return Trajectories(frame, self.offsets, report=self.report)

    def to_crs(self, crs) -> "Trajectories":
        """The same trajectories in another CRS (rows unchanged)."""
        if self.crs is None:
            raise InputError("these trajectories have no CRS to convert from")
        return self._with_frame(self._frame.to_crs(crs))

    def to_metric(self, crs=None) -> "Trajectories":
        """In metres: ``crs`` if given, else the local UTM zone (:func:`tracs.geo.local_metric_crs`).

        Already-projected trajectories are returned unchanged when ``crs`` is None.
        """
        if self.crs is None:
            raise InputError("these trajectories have no CRS to convert from")
        if crs is None and self.crs.is_projected:
            return self
        return self._with_frame(geo.to_metric(self._frame, crs))

    def to_wgs84(self) -> "Trajectories":
        """In WGS84 longitude/latitude (EPSG:4326), e.g. for maps and files."""
        if self.crs is None:
            raise InputError("these trajectories have no CRS to convert from")
        return self._with_frame(geo.to_wgs84(self._frame))

    # public space ------------------------------------------------------------------
    def pois(self, by: str = "coords") -> POIs:
        """The points of interest (the discrete location space) of these trajectories.

        Parameters
        ----------
        by : {"coords", "poi_id"}
            ``"coords"``: one point per distinct coordinate pair (the "unique
            locations" of a data set); ``ids`` is the ``poi_id`` of its first row.
            ``"poi_id"``: one point per distinct ``poi_id``, at its first row's
            coordinates (a venue's coordinates can vary between check-ins).

        Returns
        -------
        POIs
            ``coords`` ``(m, 2)`` in the frame's CRS and ``ids``, in order of first
            appearance.  Only the rows of this container count: build the POI
            space before dropping trajectories if it must include theirs.
        """
        has_ids = "poi_id" in self._frame.columns
        if by == "coords":
            keys = np.ascontiguousarray(self.coords + 0.0).view(np.complex128).ravel()
            _, first = np.unique(pd.factorize(keys)[0], return_index=True)
        elif by == "poi_id":
            if not has_ids:
                raise InputError("by='poi_id' needs a 'poi_id' column")
            ids = self._frame["poi_id"]
            if ids.isna().any():
                raise InputError("some rows have no poi_id: use by='coords'")
            _, first = np.unique(pd.factorize(ids)[0], return_index=True)
        else:
            raise InputError(f"by must be 'coords' or 'poi_id', got {by!r}")
        first = np.sort(first)
        coords = self.coords[first].copy()
        ids = self._frame["poi_id"].to_numpy()[first] if has_ids else None
        return POIs(coords, ids)

    def region(self, pad: float = 0.0, hull: bool = False):
        """The public region: the POI space's bounding rectangle (or convex hull).

        Parameters
        ----------
        pad : float, default 0
            Margin added on every side, in the CRS's units (metres).
        hull : bool, default False
            ``True``: the convex hull of the POIs (grown by ``pad`` with mitred
            corners) as a :class:`tracs.region.ConvexRegion`.

        Returns
        -------
        tracs.region.Rectangle or tracs.region.ConvexRegion
            In the frame's CRS.  Treating it as public knowledge assumes the POI
            space itself is public (as for a city's venues).

        Raises
        ------
        ValueError
            The CRS is geographic (project first: ``to_metric()``), ``pad < 0``, or
            the region would have no area.
        """
        pad = check_finite(pad, "pad")
        if pad < 0:
            raise InputError(f"pad must be >= 0, got {pad}")
        if self.crs is not None and not self.crs.is_projected:
            raise InputError(f"the CRS {self.crs.to_string()} is in degrees: call to_metric() "
                             "first so that the region and all distances are in metres")
        points = self.pois().coords
        if not hull:
            lo, hi = points.min(axis=0) - pad, points.max(axis=0) + pad
            if np.any(hi <= lo):
                raise InputError("the points of interest lie on a line: the bounding rectangle "
                                 "has no area (pass pad > 0)")
            return Rectangle(float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))
        shape = shapely.MultiPoint(points).convex_hull
        if pad > 0:
            shape = shape.buffer(pad, join_style="mitre")
        if not isinstance(shape, shapely.Polygon) or shape.area <= 0:
            raise InputError("the points of interest lie on a line: their convex hull has no "
                             "area (pass pad > 0)")
        shape = shapely.geometry.polygon.orient(shape, sign=1.0)
        return ConvexRegion(np.asarray(shape.exterior.coords)[:-1])

    # outputs -----------------------------------------------------------------------
    def with_coords(self, coords, *, crs=None) -> "Trajectories":
        """The same rows (ids, times, offsets) with new coordinates, e.g. perturbed ones.

        Parameters
        ----------
        coords : array-like, shape (N, 2)
            Finite x/y, one per row, in the same order.
        crs : pyproj.CRS-like, optional
            Their CRS; default the current one.
        """
        xy = as_float_array(coords, "coords")
        if xy.shape != self.coords.shape:
            raise InputError(f"coords must have shape {self.coords.shape}, got {xy.shape}")
        frame = self._frame.copy()
        frame = frame.set_geometry(gpd.points_from_xy(xy[:, 0], xy[:, 1]),
                                   crs=self.crs if crs is None else crs)
        return self._with_frame(frame)
