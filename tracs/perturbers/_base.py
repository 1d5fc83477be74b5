"""Plumbing shared by every perturber: budget ledger, batch validation, keyed streams.

Randomness discipline (what independence means here): every trajectory draws from
its own stream of the counter-based generator of :mod:`tracs.random`, named by the
seed and the trajectory's key (the user id; ``keys=None`` means the position in
the call).  Point ``i`` of a trajectory draws, on demand, the words ``(stream, i,
draw)`` only (:class:`KeyedSource` hands the kernels each point's stream and index).
Hence a trajectory's release depends only on its own points,
the public parameters, the seed and its key: ``perturb(points, rng=seed, key=k)``,
``perturb_many`` of any batch holding it with ``keys`` (in any order, split in any
way, with any other trajectories) give it bit for bit the same output.  A key that
occurs several times in one call names the same user's successive trajectories:
each gets its own stream, in order.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .._validation import MAX_EPSILON, MIN_EPSILON, as_batch, as_trajectory, check_epsilon
from ..engine import perturb_many as perturb_on_threads
from ..random import KeyedStreams, point_streams, resolve_streams
from ..region import Region

__all__ = ["PrivacyLedger", "Perturber", "as_batch", "as_trajectory", "batch_streams", "KeyedSource"]  # as_batch and
# as_trajectory: the batch validators of tracs._validation, shared with the engine



@dataclass(frozen=True)
class PrivacyLedger:
    """Privacy spent on a trajectory of ``n_points`` points.

    Attributes
    ----------
    per_point : float or numpy.ndarray
        ε of every single released point (each point is ``per_point``-LDP over
        the whole region).
    per_trajectory : float or numpy.ndarray
        ``n_points · per_point``: the whole trajectory's guarantee by sequential
        composition.
    n_points : int or numpy.ndarray
    basis : str
        Which of the two numbers the perturber was given: ``"per_point"`` or
        ``"per_trajectory"`` (the other one is derived).
    """

    per_point: float
    per_trajectory: float
    n_points: int
    basis: str


def _check_lengths(n) -> np.ndarray:
    arr = np.asarray(n)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if not (arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise TypeError(f"n must be an integer number of points, got {n!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"n must be >= 1, got {n!r}")
    return arr


def batch_streams(rng, keys, n: int) -> KeyedStreams:
    """One keyed stream per trajectory of a batch of ``n``.

    ``rng`` is any ``rng`` of :func:`tracs.random.resolve_streams`, or already
    resolved :class:`tracs.random.KeyedStreams` of ``n`` streams (then ``keys`` must
    be ``None``).  ``keys``: ``None`` (positions ``0 … n − 1``) or one key per trajectory.
    """
    if isinstance(rng, KeyedStreams):
        if keys is not None:
            raise TypeError("give either keys or resolved KeyedStreams as rng, not both")
        if len(rng.streams) != n:
            raise ValueError(f"rng holds {len(rng.streams)} streams for {n} trajectories")
        return rng
    if keys is not None and (isinstance(keys, (str, bytes)) or not hasattr(keys, "__len__")):
        raise TypeError(f"keys must be a sequence of one key per trajectory, got {type(keys).__name__}")
    return resolve_streams(rng, keys, n)


def key_list(key):
    """``keys`` for a single trajectory given its ``key`` (``None``: position 0)."""
    if isinstance(key, (list, tuple, set, dict, np.ndarray)):
        raise TypeError(f"key is the key of one user (an int, str or bytes), got a {type(key).__name__}; "
                        "give several keys to perturb_many(keys=...)")
    return None if key is None else [key]


class KeyedSource:
    """The keyed streams of a batch's points, for kernels that draw on demand.

    ``kind`` and ``key`` name the generator; ``stream[i]`` and ``index[i]`` are point
    ``i``'s trajectory stream and position in it (:func:`tracs.random.point_streams`,
    computed on first use); ``streams[t]`` is trajectory ``t``'s stream.
    Its word ``d`` is ``tracs.random.kernels.draw_u64(kind, key, stream[i], index[i], d)``.
    """

    def __init__(self, streams: KeyedStreams, offsets: np.ndarray):
        self.kind, self.key = streams.kind, streams.key
        self.streams, self.offsets = streams.streams, offsets
        self._points = None

    def _point_arrays(self):
        if self._points is None:  # built on first use: kernels that walk the trajectories never need it
            self._points = point_streams(KeyedStreams(self.kind, self.key, self.streams), self.offsets)
        return self._points

    @property
    def stream(self) -> np.ndarray:
        """Stream of each point (uint64)."""
        return self._point_arrays()[0]

    @property
    def index(self) -> np.ndarray:
        """Position of each point in its trajectory (uint64)."""
        return self._point_arrays()[1]


def on_workers(model, coords, offsets, *, workers, **kwargs):
    """``model.perturb_many`` on ``workers`` threads through :func:`tracs.engine.perturb_many`.

    The batch is cut between whole trajectories, each piece drawn from its own
    users' keyed streams, so the result is bit for bit that of one worker.
    """
    return perturb_on_threads(model, coords, offsets, workers=workers, **kwargs)


def resolve_anchor(region: Region, anchor) -> np.ndarray:
    """The public reference of every trajectory's first point."""
    if isinstance(anchor, str):
        if anchor == "center":
            point = region.center
        elif anchor == "corner":
            point = region.corner
        else:
            raise ValueError(f"anchor must be 'center', 'corner' or a point (x, y), got {anchor!r}")
        return np.array(point, dtype=np.float64)
    try:
        point = np.asarray(anchor, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"anchor must be 'center', 'corner' or a point (x, y), got {anchor!r}") from exc
    if point.shape != (2,) or not np.all(np.isfinite(point)):
        raise ValueError(f"anchor must be a finite point (x, y), got {anchor!r}")
    if not region.contains(point):
        raise ValueError(f"anchor {tuple(point)} lies outside the region {region!r}")
    return point


def check_share(share, name: str):
    """A budget share in (0, 1), or the string ``"optimal"``."""
    if isinstance(share, str):
        if share != "optimal":
            raise ValueError(f"{name} must be a number in (0, 1) or 'optimal', got {share!r}")
        return share
    if isinstance(share, bool) or not isinstance(share, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1) or 'optimal', got {type(share).__name__}")
    share = float(share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {share}")
    return share


def check_parts(*parts: np.ndarray) -> None:
    """The per-point budget's parts (arrays of ε spent by each lattice mechanism of a point) lie in
    ``[MIN_EPSILON, MAX_EPSILON]``, the budgets the mechanisms sample exactly.

    The one check of the derived budgets: a per-point budget's parts are checked when the
    perturber is built, a per-trajectory budget's when its lengths are known (each call); the
    constants computed from them (:mod:`tracs.mechanisms.closed_forms`) are not checked again.
    Raises the ``ValueError`` of :func:`tracs._validation.check_epsilon` naming the limit, for
    the first value out of range (parts in the order given, each in its order).
    """
    for part in parts:
        part = np.asarray(part, dtype=np.float64)
        bad = ~((part >= MIN_EPSILON) & (part <= MAX_EPSILON))
        if bad.any():
            check_epsilon(float(part[bad].ravel()[0]), "epsilon", maximum=MAX_EPSILON)


class Perturber(ABC):
    """Base of the perturbers: budget, validation, batching, rounding.

    Subclasses implement :meth:`_run` on a validated flat batch.
    """

    def __init__(self, region, epsilon=None, *, epsilon_per_trajectory=None, round_to=None):
        if not isinstance(region, Region):
            raise TypeError(f"region must be a tracs Rectangle or ConvexRegion, got {type(region).__name__}")
        if (epsilon is None) == (epsilon_per_trajectory is None):
            raise (TypeError if epsilon is None else ValueError)(
                "give exactly one of epsilon (per point) and epsilon_per_trajectory")
        self.region = region
        self._basis = "per_point" if epsilon is not None else "per_trajectory"
        self._epsilon = None if epsilon is None else check_epsilon(epsilon, "epsilon")
        self._epsilon_traj = (None if epsilon_per_trajectory is None
                              else check_epsilon(epsilon_per_trajectory, "epsilon_per_trajectory"))
        if round_to is not None and not callable(getattr(round_to, "round", None)):
            raise TypeError("round_to must have a method round(points) -> (coords, indices)")
        self.round_to = round_to

    # -- budget ------------------------------------------------------------------
    @property
    def epsilon(self):
        """ε per point, or ``None`` when a per-trajectory budget was given."""
        return self._epsilon

    @property
    def epsilon_per_trajectory(self):
        """ε per trajectory, or ``None`` when a per-point budget was given."""
        return self._epsilon_traj

    def privacy_spent(self, n) -> PrivacyLedger:
        """Ledger for a trajectory of ``n`` points (or an array of lengths).

        With a per-point ε the trajectory spends ``n·ε``; with a per-trajectory
        budget every point spends ``epsilon_per_trajectory / n``.
        """
        arr = _check_lengths(n)
        per_point = self.epsilon_per_point(arr)
        per_traj = arr * per_point if self._basis == "per_point" else np.full(arr.shape, self._epsilon_traj)
        if arr.ndim == 0:
            return PrivacyLedger(float(per_point), float(per_traj), int(arr), self._basis)
        return PrivacyLedger(per_point, per_traj, arr, self._basis)

    def epsilon_per_point(self, lengths) -> np.ndarray:
        """ε of each point of trajectories of the given lengths (float array)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        if self._basis == "per_point":
            return np.full(lengths.shape, self._epsilon)
        return self._epsilon_traj / np.maximum(lengths, 1)

    # -- public sampling API ------------------------------------------------------
    def perturb(self, points, *, rng=None, key=None, return_indices=False, **kwargs):
        """Perturb one trajectory.

        Parameters
        ----------
        points : array_like, shape (n, 2)
            The trajectory in time order, inside the region.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure" or tracs.random.Secure
            The seed (see :mod:`tracs.random`).
        key : int, str or bytes, optional
            The user's key: the output equals that of ``perturb_many`` on any batch
            holding this trajectory under this key, with the same seed.
        return_indices : bool
            With ``round_to``, also return the indices of the chosen points.

        Returns
        -------
        numpy.ndarray, shape (n, 2)
            The released points (and their indices with ``return_indices``).
        """
        return self.perturb_many(*as_trajectory(points), rng=rng, keys=key_list(key),
                                 return_indices=return_indices, **kwargs)

    def perturb_many(self, coords, offsets=None, *, rng=None, keys=None, return_indices=False,
                     workers=1, **kwargs):
        """Perturb many trajectories held as one flat array.

        Parameters
        ----------
        coords : array_like, shape (N, 2), or a list of (n_i, 2) arrays
        offsets : array_like of int, shape (T+1,)
            Trajectory ``t`` is ``coords[offsets[t]:offsets[t+1]]`` (the shapely /
            Arrow convention).  Omit it when ``coords`` is a list.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure", tracs.random.Secure
            The seed (see :mod:`tracs.random`), or resolved ``KeyedStreams``.
        keys : sequence, optional
            One key (user id: int, str or bytes) per trajectory.  Trajectory ``t``
            draws from the stream of ``(seed, keys[t])`` (repeated keys: that user's
            successive trajectories, in order), so its output does not depend on the
            rest of the batch.  ``None``: keys are the positions ``0 … T − 1``.
        return_indices : bool
            With ``round_to``, also return the indices of the chosen points.
        workers : int or None
            Threads (``None`` or ``-1``: every core; :mod:`tracs.engine`).  The output
            is bit for bit the same for any number.

        Returns
        -------
        numpy.ndarray, shape (N, 2), or a list of arrays when ``coords`` was a list
            Outputs in the same order as the input, inside the region.
        """
        if workers != 1:
            return on_workers(self, coords, offsets, rng=rng, keys=keys, return_indices=return_indices,
                              workers=workers, **kwargs)
        flat, off, as_list = as_batch(coords, offsets)
        streams = batch_streams(rng, keys, len(off) - 1)
        if len(flat) == 0:
            raise ValueError("coords is empty")
        self.region.validate_points(flat, "coords")
        out = self._run(flat, off, KeyedSource(streams, off), **kwargs)
        indices = None
        if self.round_to is not None:
            out, indices = self.round_to.round(out)
        elif return_indices:
            raise ValueError("return_indices needs round_to")
        if as_list:
            out = np.split(out, off[1:-1])
            if indices is not None:
                indices = np.split(np.asarray(indices), off[1:-1])
        return (out, indices) if return_indices else out

    # -- helpers for subclasses --------------------------------------------------------
    def _point_params(self, offsets: np.ndarray, params_of) -> np.ndarray:
        """Mechanism constants: one row, or one row per trajectory (per-trajectory budget).

        ``params_of(eps)`` maps an array of distinct per-point ε to rows.  A per-point
        budget's row is computed (its mechanisms built and checked) once per perturber and
        reused by every call and chunk; a per-trajectory budget's rows depend on the lengths.
        """
        if self._basis == "per_point":
            rows = getattr(self, "_point_rows", None)
            if rows is None:
                rows = self._point_rows = np.ascontiguousarray(params_of(np.array([self._epsilon])))
            return rows
        eps = self.epsilon_per_point(np.diff(offsets))
        values, inverse = np.unique(eps, return_inverse=True)
        return np.ascontiguousarray(params_of(values)[inverse])

    def _keyed_source(self, rng, keys, offsets) -> KeyedSource:
        """The :class:`KeyedSource` of a validated batch (see :meth:`perturb_many`)."""
        return KeyedSource(batch_streams(rng, keys, len(offsets) - 1), offsets)

    def _run_into(self, coords: np.ndarray, offsets: np.ndarray, streams: KeyedStreams, out: np.ndarray) -> None:
        """:meth:`_run` of validated points with the trajectories' resolved ``streams``, its
        releases written into ``out`` (same shape as ``coords``): the engine's path for one chunk."""
        out[...] = self._run(coords, offsets, KeyedSource(streams, offsets))

    @abstractmethod
    def _run(self, coords: np.ndarray, offsets: np.ndarray, rng: KeyedSource,
             **kwargs) -> np.ndarray:
        """Perturb a validated batch drawing from its keyed streams; return a new ``(N, 2)`` array."""

    def __repr__(self):
        budget = (f"epsilon={self._epsilon!r}" if self._basis == "per_point"
                  else f"epsilon_per_trajectory={self._epsilon_traj!r}")
        return f"{type(self).__name__}({self.region!r}, {budget})"
