"""The direction–distance recursion shared by TraCS-D and the Strawman, on lattices.

Point ``i`` of a trajectory is released around the reference ``o`` (the
previous *release*; the public anchor for the first point):

1. the direction ``φ`` of ``τ_i − o`` goes through the direction mechanism, which
   releases an index ``a`` of the public angle lattice, ``φ' = a·h_φ``;
2. the distance input is ``u = |τ_i − o| / R(o, φ')`` (clipped to 1; 0 when
   ``R = 0``), with ``R`` the exit distance along the *released* direction; the
   optimal classical mechanism on ``[0, 1]`` releases an index ``r`` of the
   distance lattice, ``ũ = r·h_r`` (``h_r ≈ 1/n_r``);
3. the released point is ``o + ũ·R(o, φ')·(cos φ', sin φ')``, clamped into the
   region: a deterministic function of ``(a, r)``, the previous release and
   public parameters (post-processing).

Both indices are exact lattice releases (:mod:`tracs.mechanisms.lattice`): the
direction is ``ε_φ``-LDP, the distance ``ε_r``-LDP for every value of its input
(which may depend on the released direction: adaptive composition), so each
point is ``(ε_φ + ε_r)``-LDP.  The compiled kernel walks the flat array once
(any mix of trajectory lengths, one very long trajectory included).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import read_only
from ..mechanisms.closed_forms import classical_bands
from ..errors import InputError
from ..mechanisms.lattice import Lattice, check_resolution, check_table_bytes, fit_spacing
from ..random import KeyedStreams, point_streams, resolve_streams
from ..region import Rectangle
from . import _kernels
from ._angles import angle_tables, table_bytes, unit_vectors
from ._base import KeyedSource, Perturber, as_batch, check_parts, check_share, resolve_anchor

TWO_PI = 2.0 * math.pi
DEFAULT_DIRECTION_SHARE = math.pi / (math.pi + 1.0)


def keyed_trajectories(rng, offsets: np.ndarray):
    """``(kind, key, streams)``: one keyed stream per trajectory.

    A ``numpy.random.Generator`` supplies one 64-bit stream per trajectory, in
    order (under a fixed Philox key): consecutive calls with the same generator
    continue its sequence, so cutting a batch into chunks does not change any
    release.  Any other ``rng`` resolves through :func:`tracs.random.resolve_streams`
    (trajectory ``t`` of the call is stream ``t`` of the seed's key).
    """
    if isinstance(rng, KeyedSource):  # perturb_many's streams, keyed by the trajectories' keys
        return rng.kind, rng.key, rng.streams
    count = len(offsets) - 1
    if isinstance(rng, np.random.Generator):
        ks = resolve_streams(0, None, count)
        return ks.kind, ks.key, rng.integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64)
    ks = resolve_streams(rng, None, count)
    return ks.kind, ks.key, ks.streams


def keyed_points(rng, offsets: np.ndarray):
    """``(kind, key, stream_of_point, index_of_point)``: :func:`keyed_trajectories` per point."""
    if isinstance(rng, KeyedSource):
        return rng.kind, rng.key, rng.stream, rng.index
    kind, key, streams = keyed_trajectories(rng, offsets)
    stream_of, index_of = point_streams(KeyedStreams(kind, key, streams), offsets)
    return kind, key, stream_of, index_of


class DirectionDistanceLattice:
    """``(direction, distance)`` lattices of a direction–distance perturber.

    Released indices index :attr:`direction` (angles ``a·h_φ``) and :attr:`distance`
    (normalised distances ``r·h_r``).  The plane points are not on a grid: about a
    public reference ``o`` they are ``o + ũ·R(o, φ')·e(φ')`` clamped into the region;
    :meth:`contains` tests that shape about the anchor (first points of trajectories).
    """

    def __init__(self, direction: Lattice, distance: Lattice, perturber=None):
        self.direction, self.distance = direction, distance
        self._perturber = perturber

    def __iter__(self):
        return iter((self.direction, self.distance))

    def __array__(self, dtype=None, copy=None):
        """``[[origin, spacing, count] of the directions, [...] of the distances]`` (JSON, sidecars)."""
        return np.array([list(self.direction), list(self.distance)], dtype=dtype or np.float64)

    def __getitem__(self, i):
        return (self.direction, self.distance)[i]

    def __eq__(self, other):
        return tuple(self) == tuple(other)

    def __repr__(self):
        return f"DirectionDistanceLattice(direction={self.direction!r}, distance={self.distance!r})"

    def unit_vectors(self, a) -> np.ndarray:
        """``(cos, sin)`` of direction indices ``a``, ``(N, 2)``: the doubles the kernels use
        (:mod:`tracs.perturbers._angles`, within a few ulp of ``cos``/``sin`` of the angle)."""
        return unit_vectors(a, self._perturber._angle_tables())

    def points_about(self, reference, a, r) -> np.ndarray:
        """Plane points of direction indices ``a`` and distance indices ``r`` about ``reference``."""
        p = self._perturber
        ref = np.broadcast_to(np.asarray(reference, dtype=np.float64), (np.size(a), 2))
        unit = self.unit_vectors(a)
        reach = p.region._exit_distance(p.region.validate_points(ref, "reference"), unit[:, 0], unit[:, 1])
        step = self.distance.points(np.ravel(r)) * reach
        out = ref + step[:, None] * unit
        return p.region._clamp_from(ref, out)

    def contains(self, values) -> np.ndarray:
        """Whether each point is a release about the anchor (to ``1e-12`` of the diameter:
        sines and cosines may differ in the last bit between libraries)."""
        p = self._perturber
        values = np.asarray(values, dtype=np.float64).reshape(-1, 2)
        o = np.asarray(p.anchor_point)
        d = values - o
        a = np.mod(np.rint(np.arctan2(d[:, 1], d[:, 0]) / self.direction.spacing),
                   self.direction.count).astype(np.int64)
        reach = p.region.exit_distance(np.broadcast_to(o, d.shape), self.direction.points(a))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.rint(np.hypot(d[:, 0], d[:, 1]) / reach / self.distance.spacing)
        r = np.clip(np.nan_to_num(r, nan=0.0, posinf=0.0), 0, self.distance.count - 1).astype(np.int64)
        near = np.hypot(*(self.points_about(o, a, r) - values).T) <= 1e-12 * p.region.diameter
        return near | np.all(values == o, axis=1)


class LatticeReleases:
    """Mixin: ``perturb_many`` and ``lattice_indices`` from one ``_release`` (points, indices)."""

    def lattice_indices(self, coords, offsets=None, *, rng=None, keys=None) -> np.ndarray:
        """The released lattice indices, ``(N, 2)`` int64.

        The same draws as :meth:`perturb_many` with the same ``rng`` and ``keys``: the
        released points are a function of these indices and public parameters only.
        """
        flat, off, _ = as_batch(coords, offsets)
        self.region.validate_points(flat, "coords")
        return self._release(flat, off, self._keyed_source(rng, keys, off), indices=True)[1]

    def release_at(self, point, random_key, stream, index: int, previous=None):
        """Release one point at position ``index`` of the keyed stream ``stream``.

        Bit for bit the release :meth:`perturb_many` makes of point ``index`` of a
        trajectory drawn from ``stream`` under ``random_key``
        (:func:`tracs.random.resolve_key`) whose point ``index − 1`` was released as
        ``previous`` — the point's reference for TraCS-D and the Strawman (``None`` for
        the first point, whose reference is the public anchor; TraCS-C has none).
        This lets a device release each fix as it happens (:class:`tracs.collect.Device`).

        Returns
        -------
        (released (2,), indices (2,))
            The released point and its lattice indices.
        """
        coords = self.region.validate_points(np.asarray(point, dtype=np.float64).reshape(1, 2), "point")
        index = int(index)
        if index < 0 or (index > 0 and previous is None and getattr(self, "_anchor", None) is not None):
            raise InputError(f"index must be >= 0, with the previous release when it is not 0; got {index}")
        # the kernels draw point i of trajectory t at index i − (offsets[t] − offsets[0]): offsets
        # [0, −index, 1] put the one point at ``index`` of the second stream (the first trajectory is empty)
        offsets = np.array([0, -index, 1], dtype=np.int64)
        streams = np.repeat(np.asarray(stream, dtype=np.uint64).reshape(-1)[:1], 2)
        source = KeyedSource(KeyedStreams(random_key.kind, random_key.key, streams), offsets)
        extra = {} if previous is None else {"previous": np.asarray(previous, dtype=np.float64).reshape(2)}
        released, indices = self._release(coords, offsets, source, indices=True, **extra)
        return released[0].copy(), indices[0].copy()

    def _run(self, coords, offsets, rng, *, engine="compiled"):
        if engine != "compiled":
            raise InputError(f"engine must be 'compiled' (the lattice kernel), got {engine!r}")
        return self._release(coords, offsets, rng, indices=False)[0]


class SequentialPerturber(LatticeReleases, Perturber):
    """Base of TraCS-D and the Strawman (see the module docstring)."""

    _mode: int = _kernels.MODE_CIRCULAR
    _sectors: int = 0
    _along_true: bool = False

    def __init__(self, region, epsilon=None, *, direction_share=DEFAULT_DIRECTION_SHARE,
                 anchor="center", epsilon_per_trajectory=None, round_to=None, resolution=None):
        super().__init__(region, epsilon, epsilon_per_trajectory=epsilon_per_trajectory,
                         round_to=round_to)
        self.direction_share = check_share(direction_share, "direction_share")
        self._cells = check_resolution(resolution)
        self.resolution = resolution
        self._anchor = resolve_anchor(region, anchor)
        self._tables = None  # the angle lattice's unit-vector tables, built on first use
        check_table_bytes(table_bytes(self._angle_cells()),
                          f"the angle lattice of {self._angle_cells()} directions (resolution={resolution!r})")
        self.anchor = anchor if isinstance(anchor, str) else tuple(self._anchor)
        normals, offsets = region.halfplanes
        self._nx = np.ascontiguousarray(normals[:, 0])
        self._ny = np.ascontiguousarray(normals[:, 1])
        self._hb = np.ascontiguousarray(offsets)
        self._rect = isinstance(region, Rectangle)
        self._bbox = np.array(region.bounds, dtype=np.float64)
        if self.epsilon is not None:
            self._point_params(None, self._params)  # a budget beyond the limits fails here, once

    @property
    def anchor_point(self) -> tuple[float, float]:
        """The reference of every trajectory's first point."""
        return (float(self._anchor[0]), float(self._anchor[1]))

    # -- lattices --------------------------------------------------------------------
    def _angle_cells(self) -> int:
        return self._cells

    @property
    def lattice(self) -> DirectionDistanceLattice:
        """The public direction and distance lattices (released indices index them)."""
        n_a, n_r = self._angle_cells(), self._cells
        return DirectionDistanceLattice(Lattice(0.0, TWO_PI / n_a, n_a),
                                        Lattice(0.0, fit_spacing(0.0, 1.0, n_r), n_r + 1), self)

    def _angle_tables(self) -> np.ndarray:
        """Tables of the angle lattice's unit vectors (:mod:`tracs.perturbers._angles`), built once."""
        if self._tables is None:
            n, h = self._angle_constants()
            self._tables = angle_tables(int(n), float(h))
        return self._tables

    def _angle_constants(self) -> np.ndarray:
        """``(n, h)`` of the angle lattice: ``n`` angles ``a·h``."""
        lat = self.lattice.direction
        return np.array([lat.count, lat.spacing], dtype=np.float64)

    # -- budget split --------------------------------------------------------------
    def shares(self, epsilon) -> np.ndarray:
        """Direction share of the per-point budget for each per-point ε."""
        eps = np.asarray(epsilon, dtype=np.float64)
        return np.full(eps.shape, self.direction_share)

    def split(self, n: int | None = None) -> tuple[float, float]:
        """``(ε_direction, ε_distance)`` spent on every point (of a trajectory of ``n``
        points, needed only with a per-trajectory budget)."""
        if n is None and self.epsilon is None:
            raise InputError("with epsilon_per_trajectory, give the trajectory length n")
        eps = self.epsilon if self.epsilon is not None else float(self.privacy_spent(n).per_point)
        share = float(self.shares(np.array([eps]))[0])
        eps_dir = share * eps
        return eps_dir, eps - eps_dir

    def _direction_params(self, eps_dir: np.ndarray) -> np.ndarray:
        """Per-ε constants of the direction mechanism (kernel columns 0–1), for checked ``eps_dir``."""
        raise NotImplementedError

    def _params(self, eps: np.ndarray) -> np.ndarray:
        """Kernel rows of the distinct per-point budgets ``eps``: the direction mechanism's
        constants, then the rows ``(m, c)`` of the optimal classical mechanism on the distance
        lattice (:mod:`tracs.mechanisms.closed_forms`), after :func:`check_parts` of the split."""
        eps_dir = self.shares(eps) * eps
        eps_dist = eps - eps_dir
        check_parts(eps_dir, eps_dist)
        distance = self.lattice.distance
        return np.column_stack([self._direction_params(eps_dir),
                                classical_bands(eps_dist, 1.0, distance.spacing, distance.count)])

    # -- engine ----------------------------------------------------------------------
    def _release(self, coords, offsets, rng, indices=True, out=None, previous=None):
        """The releases of validated ``coords`` (and their lattice indices when ``indices``);
        ``previous``: the reference of row 0 when it continues a trajectory (:meth:`release_at`)."""
        params = self._point_params(offsets, self._params)
        previous = self._anchor if previous is None else np.ascontiguousarray(previous, dtype=np.float64)
        kind, key, streams = keyed_trajectories(rng, offsets)
        out = np.empty_like(coords) if out is None else out
        idx = np.empty(coords.shape if indices else (0, 2), dtype=np.int64)
        _kernels.sequential_kernel(read_only(coords), read_only(np.asarray(offsets, dtype=np.int64)), kind, key,
                                   np.ascontiguousarray(streams, dtype=np.uint64), params,
                                   self._angle_constants(), self._angle_tables(), self._cells, self.lattice.distance.spacing,
                                   self._anchor, previous,
                                   self._nx, self._ny, self._hb, self._rect, self._bbox,
                                   self.region.tolerance, self._mode, self._sectors, self._along_true, out, idx)
        return out, (idx if indices else None)

    def release_into(self, coords, offsets, streams, out) -> None:
        """The releases of validated points written into ``out`` (the engine's rows of a chunk)."""
        self._release(coords, offsets, KeyedSource(streams, offsets), indices=False, out=out)
