"""Plumbing shared by every perturber: the region, keyed sources, budget parts (the budget itself:
:class:`tracs.releaser.Releaser`).

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
from abc import abstractmethod

import numpy as np

from ..errors import InputError, InputTypeError
from .._validation import MAX_EPSILON, MIN_EPSILON, as_batch, as_trajectory, check_epsilon
from ..random import KeyedStreams, point_streams
from ..region import Region
from ..releaser import PrivacyLedger, Releaser, batch_streams

__all__ = ["PrivacyLedger", "Perturber", "as_batch", "as_trajectory", "batch_streams", "KeyedSource"]  # as_batch and
# as_trajectory: the batch validators of tracs._validation, shared with the engine; PrivacyLedger,
# batch_streams: of tracs.releaser, the base of every perturber and baseline


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


def resolve_anchor(region: Region, anchor) -> np.ndarray:
    """The public reference of every trajectory's first point."""
    if isinstance(anchor, str):
        if anchor == "center":
            point = region.center
        elif anchor == "corner":
            point = region.corner
        else:
            raise InputError(f"anchor must be 'center', 'corner' or a point (x, y), got {anchor!r}")
        return np.array(point, dtype=np.float64)
    try:
        point = np.asarray(anchor, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"anchor must be 'center', 'corner' or a point (x, y), got {anchor!r}") from exc
    if point.shape != (2,) or not np.all(np.isfinite(point)):
        raise InputError(f"anchor must be a finite point (x, y), got {anchor!r}")
    if not region.contains(point):
        raise InputError(f"anchor {tuple(point)} lies outside the region {region!r}")
    return point


def check_share(share, name: str):
    """A budget share in (0, 1), or the string ``"optimal"``."""
    if isinstance(share, str):
        if share != "optimal":
            raise InputError(f"{name} must be a number in (0, 1) or 'optimal', got {share!r}")
        return share
    if isinstance(share, bool) or not isinstance(share, numbers.Real):
        raise InputTypeError(f"{name} must be a number in (0, 1) or 'optimal', got {type(share).__name__}")
    share = float(share)
    if not 0.0 < share < 1.0:
        raise InputError(f"{name} must lie strictly between 0 and 1, got {share}")
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


class Perturber(Releaser):
    """Base of the perturbers: a :class:`tracs.releaser.Releaser` on a public region.

    Subclasses implement :meth:`_run` on a validated flat batch and declare the public
    lattice of their releases as a ``lattice`` property: ``tracs audit`` checks the
    released values against it (without one a method is unverifiable, never passing),
    :mod:`tracs.estimate.reports` refuses reports off it and the release sidecar records
    it (``docs/extending.md``).
    """

    def __init__(self, region, epsilon=None, *, epsilon_per_trajectory=None, round_to=None):
        if not isinstance(region, Region):
            raise InputTypeError(f"region must be a tracs Rectangle or ConvexRegion, got {type(region).__name__}")
        super().__init__(epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        self.region = region
        if round_to is not None and not callable(getattr(round_to, "round", None)):
            raise InputTypeError("round_to must have a method round(points) -> (coords, indices)")
        self.round_to = round_to

    def _check_points(self, coords: np.ndarray) -> None:
        """Every point inside the region."""
        self.region.validate_points(coords, "coords")

    def _release_batch(self, coords, offsets, streams, *, return_indices=False, **kwargs):
        """The releases of a validated batch, rounded by ``round_to`` when given."""
        out = self._run(coords, offsets, KeyedSource(streams, offsets), **kwargs)
        indices = None
        if self.round_to is not None:
            out, indices = self.round_to.round(out)
        elif return_indices:
            raise InputError("return_indices needs round_to")
        return out, indices

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
                rows = self._point_rows = np.ascontiguousarray(params_of(np.array([self._eps_point])))
            return rows
        eps = self.epsilon_per_point(np.diff(offsets))
        values, inverse = np.unique(eps, return_inverse=True)
        return np.ascontiguousarray(params_of(values)[inverse])

    def _keyed_source(self, rng, keys, offsets) -> KeyedSource:
        """The :class:`KeyedSource` of a validated batch (see :meth:`perturb_many`)."""
        return KeyedSource(batch_streams(rng, keys, len(offsets) - 1), offsets)

    def release_into(self, coords: np.ndarray, offsets: np.ndarray, streams: KeyedStreams, out: np.ndarray) -> None:
        """:meth:`_run` of validated points with the trajectories' resolved ``streams``, its
        releases written into ``out`` (same shape as ``coords``): the engine's path for one chunk."""
        out[...] = self._run(coords, offsets, KeyedSource(streams, offsets))

    @abstractmethod
    def _run(self, coords: np.ndarray, offsets: np.ndarray, rng: KeyedSource,
             **kwargs) -> np.ndarray:
        """Perturb a validated batch drawing from its keyed streams; return a new ``(N, 2)`` array."""

    def __repr__(self):
        budget = (f"epsilon={self._eps_point!r}" if self._basis == "per_point"
                  else f"epsilon_per_trajectory={self._eps_trajectory!r}")
        return f"{type(self).__name__}({self.region!r}, {budget})"
