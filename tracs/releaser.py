"""The base of everything that releases trajectories: :class:`Releaser`.

A releaser holds a privacy budget (ε per point, or per trajectory split evenly over
its points), says what it spends (:meth:`Releaser.privacy_spent`), releases
trajectories (:meth:`Releaser.perturb`, :meth:`Releaser.perturb_many`) and offers
the engine its public chunk path (:meth:`Releaser.release_into`).  The perturbers
(:class:`tracs.perturbers.Perturber`) and the POI baselines
(:class:`tracs.baselines.Baseline`) derive from it; the budget, its messages and
the batch plumbing are written here once.

Randomness discipline: every trajectory draws from its own stream of the
counter-based generator of :mod:`tracs.random`, named by the seed and the
trajectory's key (the user id; ``keys=None`` means the position in the call), so a
trajectory's release depends only on its own points, the public parameters, the
seed and its key, in any batch.  :attr:`Releaser.keyed` says so; an object of
another class is asked once, by :func:`takes_keys`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .errors import InputError, InputTypeError
from ._validation import as_batch, as_trajectory, check_epsilon
from .engine.batch import perturb_many as perturb_on_threads
from .engine.batch import takes_keys
from .random import KeyedStreams, resolve_streams
from .trajectory_batch import Batch

__all__ = ["Releaser", "PrivacyLedger", "takes_keys", "batch_streams", "key_list"]


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
        Which of the two numbers the releaser was given: ``"per_point"`` or
        ``"per_trajectory"`` (the other one is derived).
    """

    per_point: float
    per_trajectory: float
    n_points: int
    basis: str


def check_lengths(n) -> np.ndarray:
    """Trajectory lengths (an integer or an array of them, each ≥ 1) as int64."""
    arr = np.asarray(n)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if not (arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise InputTypeError(f"n must be an integer number of points, got {n!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise InputError(f"n must be >= 1, got {n!r}")
    return arr


def batch_streams(rng, keys, n: int) -> KeyedStreams:
    """One keyed stream per trajectory of a batch of ``n``.

    ``rng`` is any ``rng`` of :func:`tracs.random.resolve_streams`, or already
    resolved :class:`tracs.random.KeyedStreams` of ``n`` streams (then ``keys`` must
    be ``None``).  ``keys``: ``None`` (positions ``0 … n − 1``) or one key per trajectory.
    """
    if isinstance(rng, KeyedStreams):
        if keys is not None:
            raise InputTypeError("give either keys or resolved KeyedStreams as rng, not both")
        if len(rng.streams) != n:
            raise InputError(f"rng holds {len(rng.streams)} streams for {n} trajectories")
        return rng
    if keys is not None and (isinstance(keys, (str, bytes)) or not hasattr(keys, "__len__")):
        raise InputTypeError(f"keys must be a sequence of one key per trajectory, got {type(keys).__name__}")
    return resolve_streams(rng, keys, n)


def key_list(key):
    """``keys`` for a single trajectory given its ``key`` (``None``: position 0)."""
    if isinstance(key, (list, tuple, set, dict, np.ndarray)):
        raise InputTypeError(f"key is the key of one user (an int, str or bytes), got a {type(key).__name__}; "
                             "give several keys to perturb_many(keys=...)")
    return None if key is None else [key]


class Releaser(ABC):
    """Base of the perturbers and baselines: budget, ledger, release of one or many trajectories.

    Parameters
    ----------
    epsilon : float, optional
        Budget per point.
    epsilon_per_trajectory : float, optional
        Budget per trajectory, split evenly over its points (``ε/n`` each for a
        trajectory of ``n`` points).  Give exactly one of the two.

    Subclasses implement :meth:`_release_batch` (the releases of a validated batch)
    and :meth:`release_into` (the engine's path for one chunk), and may refine
    :meth:`_check_points` (the check of the batch's values).
    """

    #: every trajectory draws from its own keyed stream (``keys=`` of :meth:`perturb_many`)
    keyed: ClassVar[bool] = True

    def __init__(self, epsilon=None, *, epsilon_per_trajectory=None):
        if (epsilon is None) == (epsilon_per_trajectory is None):
            raise (InputTypeError if epsilon is None else InputError)(
                "give exactly one of epsilon (per point) and epsilon_per_trajectory")
        self._basis = "per_point" if epsilon is not None else "per_trajectory"
        self._eps_point = None if epsilon is None else check_epsilon(epsilon, "epsilon")
        self._eps_trajectory = (None if epsilon_per_trajectory is None
                                else check_epsilon(epsilon_per_trajectory, "epsilon_per_trajectory"))

    # -- budget ------------------------------------------------------------------
    @property
    def epsilon(self):
        """ε per point, or ``None`` when a per-trajectory budget was given."""
        return self._eps_point

    @property
    def epsilon_per_trajectory(self):
        """ε per trajectory, or ``None`` when a per-point budget was given."""
        return self._eps_trajectory

    @property
    def basis(self) -> str:
        """Which budget was given: ``"per_point"`` or ``"per_trajectory"``."""
        return self._basis

    def epsilon_per_point(self, lengths) -> np.ndarray:
        """ε of each point of trajectories of the given lengths (float array): the per-point
        budget, or the per-trajectory budget split evenly over the points."""
        lengths = np.asarray(lengths, dtype=np.int64)
        if self._basis == "per_point":
            return np.full(lengths.shape, self._eps_point)
        return self._eps_trajectory / np.maximum(lengths, 1)

    def privacy_spent(self, n) -> PrivacyLedger:
        """Ledger for a trajectory of ``n`` points (or an array of lengths).

        With a per-point ε the trajectory spends ``n·ε``; with a per-trajectory
        budget every point spends ``epsilon_per_trajectory / n``.
        """
        arr = check_lengths(n)
        per_point = self.epsilon_per_point(arr)
        per_traj = arr * per_point if self._basis == "per_point" else np.full(arr.shape, self._eps_trajectory)
        if arr.ndim == 0:
            return PrivacyLedger(float(per_point), float(per_traj), int(arr), self._basis)
        return PrivacyLedger(per_point, per_traj, arr, self._basis)

    @property
    def lattice(self):
        """The public lattice of the releases, recorded in a release's sidecar, or ``None`` (the
        default: a baseline releases the points of its public POI space, recorded as POIs)."""
        return None

    # -- release -------------------------------------------------------------------
    def perturb(self, points, *, rng=None, key=None, return_indices=False, **kwargs):
        """Release one trajectory.

        Parameters
        ----------
        points : array_like, shape (n, 2)
            The trajectory in time order, in metres.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure" or tracs.random.Secure
            The seed (see :mod:`tracs.random`).
        key : int, str or bytes, optional
            The user's key: the output equals that of ``perturb_many`` on any batch
            holding this trajectory under this key, with the same seed.
        return_indices : bool
            Also return the indices of the released points (of the POIs a baseline
            or a perturber's ``round_to`` releases).

        Returns
        -------
        numpy.ndarray, shape (n, 2)
            The released points (and their indices with ``return_indices``).
        """
        return self.perturb_many(*as_trajectory(points), rng=rng, keys=key_list(key),
                                 return_indices=return_indices, **kwargs)

    def perturb_many(self, coords, offsets=None, *, rng=None, keys=None, return_indices=False,
                     workers=1, **kwargs):
        """Release many trajectories held as one flat array.

        Parameters
        ----------
        coords : array_like, shape (N, 2), a list of (n_i, 2) arrays, or a tracs.Batch
            All points, trajectory after trajectory, in metres.  A :class:`tracs.Batch`
            goes through :func:`tracs.engine.perturb_many`: its offsets, and its users' ids
            as ``keys`` (:meth:`tracs.Batch.stream_keys`).
        offsets : array_like of int, shape (T+1,)
            Trajectory ``t`` is ``coords[offsets[t]:offsets[t+1]]`` (the shapely /
            Arrow convention).  Omit it when ``coords`` is a list or a Batch.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure", tracs.random.Secure
            The seed (see :mod:`tracs.random`), or resolved ``KeyedStreams``.
        keys : sequence, optional
            One key (user id: int, str or bytes) per trajectory.  Trajectory ``t``
            draws from the stream of ``(seed, keys[t])`` (repeated keys: that user's
            successive trajectories, in order), so its output does not depend on the
            rest of the batch.  ``None``: keys are the positions ``0 … T − 1``.
        return_indices : bool
            Also return the indices of the released points (see :meth:`perturb`).
        workers : int or None
            Threads (``None`` or ``-1``: every core; :mod:`tracs.engine`).  The output
            is bit for bit the same for any number.

        Returns
        -------
        numpy.ndarray, shape (N, 2), a list of arrays when ``coords`` was a list, or a Batch
            Outputs in the same order as the input; for a Batch, the batch at the released
            coordinates (same offsets, keys, columns, CRS and ``attrs``).
        """
        if workers != 1 or isinstance(coords, Batch):
            return perturb_on_threads(self, coords, offsets, rng=rng, keys=keys, return_indices=return_indices,
                                      workers=workers, **kwargs)
        flat, off, as_list = as_batch(coords, offsets)
        streams = batch_streams(rng, keys, len(off) - 1)
        if len(flat) == 0:
            raise InputError("coords is empty")
        self._check_points(flat)
        out, indices = self._release_batch(flat, off, streams, return_indices=return_indices, **kwargs)
        if as_list:
            out = np.split(out, off[1:-1])
            if indices is not None:
                indices = np.split(np.asarray(indices), off[1:-1])
        return (out, indices) if return_indices else out

    def _check_points(self, coords: np.ndarray) -> None:
        """Refuse a batch's values the releaser cannot take (default: any finite point, as
        :func:`tracs._validation.as_batch` checked)."""

    @abstractmethod
    def _release_batch(self, coords: np.ndarray, offsets: np.ndarray, streams: KeyedStreams, *,
                       return_indices: bool = False, **kwargs):
        """``(released (N, 2) array, indices or None)`` of a validated batch and its resolved streams."""

    @abstractmethod
    def release_into(self, coords: np.ndarray, offsets: np.ndarray, streams: KeyedStreams,
                     out: np.ndarray) -> None:
        """The releases of validated points (``as_batch``) with their trajectories' resolved
        ``streams``, written into ``out`` (same shape as ``coords``): the engine's path for one
        chunk, what :meth:`perturb_many` returns for it."""
