"""``Batch``: a batch of trajectories as flat arrays, the one shape every path passes on.

``T`` trajectories of ``N`` points in total are

* ``coords``: ``(N, 2)`` float64 x/y (longitude/latitude in WGS84, or metres in a
  projected CRS), trajectory after trajectory;
* ``offsets``: ``int64`` ``(T + 1,)`` from 0 to ``N``, no empty trajectory:
  trajectory ``t`` is rows ``offsets[t]:offsets[t + 1]`` (the Arrow / shapely
  convention, checked by :func:`tracs._validation.check_offsets`);
* ``keys``: the id of each row's user (or ``None``), exactly as given: a NumPy
  array, a pandas Series or an Arrow array, never converted (``"007"`` stays
  text and differs from ``7``);
* ``columns``: the other columns, one value per row (NumPy, pandas or Arrow),
  kept in their order and never dropped;
* ``crs``: their coordinate reference system, as given (``None``: plain
  Cartesian coordinates);
* ``attrs``: what is known of the batch as a whole (e.g. a reader's report of
  the rows it dropped, under ``"report"``), carried along by every new batch.

The batch holds no Python object per row and no GeoDataFrame:
:meth:`Batch.to_geodataframe` builds one when asked, and
:meth:`Batch.from_geodataframe` reads one.  Treat the arrays as immutable.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_points, check_offsets
from .errors import InputError, InputTypeError

__all__ = ["Batch", "point_coords", "batch_arrays", "stream_keys"]


def _per_row(values, n: int, name: str):
    """``values`` as one value per row: lists become object arrays (no value converted), NumPy,
    pandas and Arrow arrays are kept as they are; the length must be ``n``."""
    if isinstance(values, (list, tuple)):
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        values = arr
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InputTypeError(f"{name} must hold one value per row, got {type(values).__name__}")
    if getattr(values, "ndim", 1) != 1:
        raise InputError(f"{name} must be one-dimensional, got shape {values.shape}")
    if len(values) != n:
        raise InputError(f"{name} holds {len(values):,} values for {n:,} rows")
    return values


def _subset(values, rows: np.ndarray):
    """The values of ``rows``, of the kind given (NumPy, pandas with a new index, Arrow)."""
    if isinstance(values, np.ndarray):
        return values[rows]
    if hasattr(values, "iloc"):
        return values.take(rows).reset_index(drop=True)
    return values.take(rows)


def _take(values, rows: np.ndarray) -> np.ndarray:
    """The values of ``rows`` as a NumPy array, from a NumPy, pandas or Arrow array."""
    if isinstance(values, np.ndarray):
        return values[rows]
    if hasattr(values, "iloc"):  # pandas
        return values.iloc[rows].to_numpy()
    if hasattr(values, "to_pylist"):  # Arrow: text stays text
        return values.take(rows).to_numpy(zero_copy_only=False)
    return np.asarray(values)[rows]


class Batch:
    """Trajectories as flat coordinates, offsets, per-row keys and extra columns (module docstring).

    Parameters
    ----------
    coords : array-like, shape (N, 2)
        Finite x/y of every row, trajectory after trajectory.
    offsets : array-like of int, shape (T + 1,), optional
        Row offsets of the trajectories (no empty one); default one trajectory (none when
        ``N = 0``: an empty batch has the offsets ``[0]``).
    keys : array-like, optional
        The user id of each row, kept exactly as given (a list becomes an object array).
    columns : mapping of str to array-like, optional
        Other columns, one value per row, kept in their order.
    crs : object, optional
        The CRS of ``coords`` (anything :class:`pyproj.CRS` accepts); ``None`` for plain
        Cartesian coordinates.
    attrs : mapping, optional
        Facts of the whole batch (not of a row), kept by :meth:`with_coords` and
        :meth:`take_rows`.

    Raises
    ------
    tracs.errors.InputError
        A wrong shape, a value that is not finite, bad offsets or a column of another length.
    tracs.errors.InputTypeError
        Coordinates that are not numbers, offsets that are not integers, a column that is
        not an array.
    """

    __slots__ = ("_coords", "_offsets", "_keys", "_columns", "_crs", "attrs")

    #: the mark :func:`tracs._validation.as_batch` knows a batch by (it cannot import this class)
    is_trajectory_batch = True

    def __init__(self, coords, offsets=None, *, keys=None, columns=None, crs=None, attrs=None):
        xy = as_points(coords, "coords")
        n = len(xy)
        self._coords = xy
        if n == 0 and (offsets is None or np.asarray(offsets).tolist() == [0]):
            self._offsets = np.zeros(1, dtype=np.int64)
        else:
            self._offsets = check_offsets(np.array([0, n]) if offsets is None else offsets, n, empty=False)
        self._offsets.setflags(write=False)
        self._keys = None if keys is None else _per_row(keys, n, "keys")
        columns = {} if columns is None else dict(columns)
        for name, values in columns.items():
            if not isinstance(name, str):
                raise InputTypeError(f"column names must be text, got {name!r}")
            columns[name] = _per_row(values, n, f"column {name!r}")
        self._columns = columns
        self._crs = crs
        self.attrs = {} if attrs is None else dict(attrs)

    # data -------------------------------------------------------------------------
    @property
    def coords(self) -> np.ndarray:
        """``(N, 2)`` float64 x/y of every row."""
        return self._coords

    @property
    def offsets(self) -> np.ndarray:
        """``int64`` ``(T + 1,)`` row offsets (read-only)."""
        return self._offsets

    @property
    def keys(self):
        """The user id of each row, exactly as given (``None``: no ids)."""
        return self._keys

    @property
    def columns(self) -> dict:
        """The other columns, name -> one value per row (a new dict; the arrays are shared)."""
        return dict(self._columns)

    def column(self, name: str):
        """The column ``name`` (``None`` when the batch has none of that name)."""
        return self._columns.get(name)

    @property
    def crs(self):
        """The coordinate reference system of :attr:`coords`, as given (``None``: Cartesian)."""
        return self._crs

    @property
    def lengths(self) -> np.ndarray:
        """The number of points of each trajectory, ``(T,)``."""
        return np.diff(self._offsets)

    @property
    def n_points(self) -> int:
        """The number of rows ``N``."""
        return len(self._coords)

    def __len__(self) -> int:
        """The number of trajectories ``T``."""
        return self._offsets.size - 1

    def __repr__(self) -> str:
        names = ", ".join(self._columns) or "none"
        crs = self._crs.to_string() if hasattr(self._crs, "to_string") else repr(self._crs)
        return (f"Batch({len(self):,} trajectories, {self.n_points:,} points, keys="
                f"{'yes' if self._keys is not None else 'none'}, columns: {names}, crs={crs})")

    # per trajectory ------------------------------------------------------------------
    def trajectory_keys(self) -> np.ndarray:
        """The key of each trajectory (that of its first row), ``(T,)``; keys are required."""
        if self._keys is None:
            raise InputError("this batch has no keys")
        return _take(self._keys, self._offsets[:-1])

    def first_of_key(self) -> np.ndarray:
        """``(T,)`` bool: trajectory ``t`` has another key than trajectory ``t - 1`` (a new user's
        first trajectory when the rows are grouped by key); all true without keys."""
        if self._keys is None:
            return np.ones(len(self), dtype=bool)
        first = self.trajectory_keys()
        return np.r_[True, first[1:] != first[:-1]][:len(first)]

    def stream_keys(self):
        """The stream key of each trajectory, ``(T,)``: its user's id by :func:`stream_keys` (keys are
        required); a keyed release of the batch draws trajectory ``t`` from ``(seed, key t)``."""
        return stream_keys(self.trajectory_keys())

    def point_index(self) -> np.ndarray:
        """The 0-based position of each row in its trajectory, ``(N,)`` int64."""
        return np.arange(self.n_points, dtype=np.int64) - np.repeat(self._offsets[:-1], self.lengths)

    # new batches ------------------------------------------------------------------
    def with_coords(self, coords, *, crs=None) -> "Batch":
        """The same rows (offsets, keys, columns) at new coordinates, e.g. projected or released.

        ``crs`` is theirs (default: the current one); ``coords`` must have the shape of
        :attr:`coords`.
        """
        xy = as_points(coords, "coords")
        if xy.shape != self._coords.shape:
            raise InputError(f"coords must have shape {self._coords.shape}, got {xy.shape}")
        out = Batch.__new__(Batch)
        out._coords, out._offsets, out._keys, out._columns = xy, self._offsets, self._keys, self._columns
        out._crs, out.attrs = self._crs if crs is None else crs, dict(self.attrs)
        return out

    def take_rows(self, rows) -> "Batch":
        """The batch of ``rows`` only (increasing row positions, or a boolean mask of ``N``): every
        column kept, a trajectory left without a row gone (``len`` tells how many)."""
        rows = np.asarray(rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        if len(rows) > 1 and np.any(np.diff(rows) <= 0):
            raise InputError("rows must be increasing positions")
        kept_before = np.searchsorted(rows, self._offsets)  # rows kept before each trajectory's start
        offsets = np.unique(kept_before)  # an emptied trajectory merges into its neighbours' bounds
        keys = None if self._keys is None else _subset(self._keys, rows)
        columns = {name: _subset(values, rows) for name, values in self._columns.items()}
        return Batch(self._coords[rows], offsets, keys=keys, columns=columns, crs=self._crs, attrs=self.attrs)

    # GeoDataFrame view ----------------------------------------------------------------
    def to_geodataframe(self, *, key: str = "uid", trajectory: str = "trajectory"):
        """The rows as a GeoDataFrame of points in :attr:`crs`.

        Columns: ``key`` (the keys, when there are any), ``trajectory`` (the number
        ``0 .. T-1`` of each row's trajectory, unless a column of that name is in
        :attr:`columns`), then every column of :attr:`columns`, in order; the index is
        ``0 .. N-1``.  Arrow columns become pandas columns of the same values (text stays
        text).
        """
        import geopandas as gpd
        import pandas as pd

        data = {}
        if self._keys is not None:
            data[key] = _as_pandas(self._keys)
        if trajectory not in self._columns:
            data[trajectory] = np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)
        for name, values in self._columns.items():
            if name in data:
                raise InputError(f"column {name!r} is also the name of the keys: pass another key=")
            data[name] = _as_pandas(values)
        frame = pd.DataFrame(data, index=pd.RangeIndex(self.n_points))
        points = gpd.points_from_xy(self._coords[:, 0], self._coords[:, 1])
        return gpd.GeoDataFrame(frame, geometry=points, crs=self._crs)

    @classmethod
    def from_geodataframe(cls, frame, *, key: str | None = "uid", offsets=None,
                          trajectory: str | None = "trajectory") -> "Batch":
        """A batch of the rows of a GeoDataFrame of points, in its order.

        Parameters
        ----------
        frame : geopandas.GeoDataFrame
            Point geometry; rows trajectory after trajectory.
        key : str or None, default "uid"
            The column of user ids, taken as :attr:`keys` when the frame has it.
        offsets : array-like of int, optional
            The trajectories' row offsets; default: where ``trajectory`` (if the frame
            has that column) or else the key changes, or one trajectory.
        trajectory : str or None, default "trajectory"
            The column of trajectory ids the default offsets follow (kept as a column).

        Every other column but the geometry is kept in :attr:`columns`; the CRS is the
        frame's.
        """
        import geopandas as gpd

        if not isinstance(frame, gpd.GeoDataFrame):
            raise InputTypeError(f"frame must be a GeoDataFrame, got {type(frame).__name__}")
        coords = point_coords(frame)
        keys = frame[key].reset_index(drop=True) if key is not None and key in frame.columns else None
        if offsets is None:
            runs = frame[trajectory] if trajectory is not None and trajectory in frame.columns else keys
            offsets = None if runs is None else _run_offsets(runs.to_numpy())
        geometry = frame.geometry.name
        columns = {c: frame[c].reset_index(drop=True) for c in frame.columns if c not in (geometry, key)}
        return cls(coords, offsets, keys=keys, columns=columns, crs=frame.crs)


def batch_arrays(points, offsets):
    """``(coords, offsets)`` of ``points`` given as a :class:`Batch` (``offsets`` must then be
    ``None``), or the two arguments as they are: how a function taking arrays takes a batch too."""
    if not isinstance(points, Batch):
        return points, offsets
    if offsets is not None:
        raise InputTypeError("give offsets or a tracs.Batch (which has its own), not both")
    return points.coords, points.offsets


def stream_keys(users):
    """The stream keys of user ids, from their exact value: numbers as they are (an integer, an
    integral float and its decimal text name one stream in :func:`tracs.random.stream_ids`, so
    no string is built per trajectory), text and bytes as they are (``"007"`` and ``"7"`` are
    two streams), any other id by its text."""
    users = np.asarray(users)
    if users.dtype.kind in "iuf":
        return users
    return [k if isinstance(k, (str, bytes)) else str(k) for k in users]


def _run_offsets(values: np.ndarray) -> np.ndarray:
    """The offsets of the runs of equal consecutive values."""
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]][:len(values)])
    return np.r_[starts, len(values)].astype(np.int64)


def _as_pandas(values):
    """A column for a pandas frame: Arrow arrays by their values (text stays text), others as they are."""
    if hasattr(values, "to_pylist") and not hasattr(values, "iloc"):
        return values.to_pandas()
    return values.reset_index(drop=True) if hasattr(values, "iloc") else values


def point_coords(frame) -> np.ndarray:
    """The ``(N, 2)`` x/y of a GeoDataFrame whose every row is a finite, non-empty point (read-only)."""
    import shapely

    geoms = np.asarray(frame.geometry.array)
    kinds = shapely.get_type_id(geoms)
    if np.any(kinds != 0):
        raise InputError("every row's geometry must be a point")
    if np.any(shapely.is_empty(geoms)):
        raise InputError("the geometry holds empty points")
    coords = shapely.get_coordinates(geoms)
    if not np.all(np.isfinite(coords)):
        raise InputError("the geometry holds NaN or infinite coordinates")
    coords.setflags(write=False)
    return coords
