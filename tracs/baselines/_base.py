"""The perturber interface shared by the discrete-space baselines, and their ledger.

Every baseline is built from a public :class:`~tracs.poi_space.POISpace` and a
privacy budget, snaps its inputs to their nearest POI (the true location is assumed
to be a POI; snapping is a public, deterministic map applied before the mechanism)
and releases POIs.  It offers the TraCS perturbers' interface:
``perturb(points)``, ``perturb_many(coords, offsets)`` and ``privacy_spent(n)``.

Per-user independence: a trajectory's release depends only on its own points, the
public POI space and budget, the seed and its key.  Every random number a baseline
uses is drawn from the trajectory's own keyed stream (``tracs.baselines._draws``);
no shared generator, and no statistic of the batch, enters any user's release.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .._validation import as_batch, as_trajectory, check_epsilon
from ..poi_space import POISpace
from ..perturbers import PrivacyLedger
from ..perturbers._base import batch_streams, key_list, on_workers
from ._draws import PointDraws
from ._exponential_sampler import em_max_epsilon

__all__ = ["Baseline", "BaselineLedger"]


@dataclass(frozen=True)
class BaselineLedger(PrivacyLedger):
    """What a baseline spends on a trajectory of ``n_points`` points.

    The fields of :class:`tracs.perturbers.PrivacyLedger` (``per_point``: bound on
    the loss about any single point, all else fixed; ``per_trajectory``: bound on the
    loss about the whole trajectory, any two trajectories of the same length;
    ``n_points``; ``basis``: which budget the baseline was given), plus:

    Attributes
    ----------
    unit : str
        The unit the mechanism protects at its native budget: ``"point"`` (each
        location is ε-LDP; the trajectory by sequential composition) or
        ``"trajectory"`` (the whole trajectory at once).
    note : str
        How the budget is spent, in words.
    """

    unit: str = "point"
    note: str = ""


class Baseline(ABC):
    """Base of the discrete-space baselines.

    Parameters
    ----------
    poi_space : POISpace
        The public location space.
    epsilon : float, optional
        Budget per point.
    epsilon_per_trajectory : float, optional
        Budget per trajectory.  Give exactly one of the two.  Per-point methods split a
        trajectory budget evenly over its points (``ε/n`` each for a trajectory of
        ``n`` points); trajectory-level methods given a per-point ``ε`` spend ``n·ε``
        on a trajectory of ``n`` points.  The trajectory length is treated as public.
    """

    #: the unit protected at the method's native budget: "point" or "trajectory"
    unit = "point"

    def __init__(self, poi_space, epsilon=None, *, epsilon_per_trajectory=None):
        if not isinstance(poi_space, POISpace):
            raise TypeError(f"poi_space must be a tracs.POISpace, got {type(poi_space).__name__}")
        if (epsilon is None) == (epsilon_per_trajectory is None):
            raise ValueError("give exactly one of epsilon (per point) and epsilon_per_trajectory")
        self.poi_space = poi_space
        self.epsilon = None if epsilon is None else check_epsilon(epsilon)
        self.epsilon_per_trajectory = (None if epsilon_per_trajectory is None
                                       else check_epsilon(epsilon_per_trajectory,
                                                          "epsilon_per_trajectory"))
        if not self._deferred_check:
            self._check_construction()

    #: subclasses whose checks need attributes set after ``Baseline.__init__`` set this
    #: and call :meth:`_check_construction` at the end of their own ``__init__``
    _deferred_check = False

    def _check_construction(self) -> None:
        """Refuse, at construction, a per-point budget no draw could realise faithfully."""
        if self.unit == "point" and self.epsilon is not None:
            self._check_scale(self.epsilon)  # a per-point budget is the budget of each draw

    # -- budgets -----------------------------------------------------------------------
    def _trajectory_budget(self, lengths: np.ndarray) -> np.ndarray:
        """Budget of each trajectory, given their lengths."""
        lengths = np.asarray(lengths, dtype=np.float64)
        if self.epsilon_per_trajectory is not None:
            return np.full(lengths.shape, self.epsilon_per_trajectory)
        return self.epsilon * lengths

    def epsilon_per_point(self, lengths) -> np.ndarray:
        """ε of each point of trajectories of the given lengths (float array): the per-point
        budget, or the per-trajectory budget split evenly over the points."""
        lengths = np.asarray(lengths, dtype=np.float64)
        if self.epsilon is not None:
            return np.full(lengths.shape, self.epsilon)
        return self.epsilon_per_trajectory / np.maximum(lengths, 1.0)

    def _max_draw_epsilon(self, epsilon: float) -> float:
        """Largest budget of one draw that the sampler realises faithfully.

        Default: the exponential mechanism over all POIs (:func:`em_max_epsilon`,
        ``ε/2 + ln|P| <= 40·ln 2``, about 37.5 on 7,800 POIs).  ``epsilon`` is the
        budget being checked (for methods whose parameters depend on it).
        """
        return em_max_epsilon(len(self.poi_space))

    def _check_scale(self, epsilons, step: str = "one draw") -> None:
        """Refuse budgets too large for a faithful double-precision sampler.

        Uniforms are multiples of ``2^-53``; a draw whose smallest output probability
        falls below ``2^-40`` would be realised with a large relative error (down to
        probability 0, an unbounded privacy loss).  Such budgets are refused rather
        than silently treated as smaller ones.
        """
        for value in np.unique(np.asarray(epsilons, dtype=np.float64)):
            limit = self._max_draw_epsilon(float(value))
            if value > limit:
                raise ValueError(
                    f"a budget of {value:g} on {step} is too large for a faithful "
                    f"double-precision sampler over this POI space ({len(self.poi_space)} "
                    f"POIs): its smallest output probability would fall below 2^-40; the "
                    f"largest budget accepted is {limit:.4g}"
                )

    def privacy_spent(self, n: int) -> BaselineLedger:
        """Privacy spent on one trajectory of ``n`` points (see :class:`BaselineLedger`)."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        n = int(n)
        basis = "per_point" if self.epsilon is not None else "per_trajectory"
        if self.unit == "point":
            eps = float(self.epsilon_per_point(np.array([n]))[0])
            return BaselineLedger(eps, eps * n, n, basis, "point",
                                  f"each point is {eps:g}-LDP; the trajectory is "
                                  f"{eps * n:g}-LDP by sequential composition")
        total = float(self._trajectory_budget(np.array([n]))[0])
        return BaselineLedger(total, total, n, basis, "trajectory",
                              f"the whole trajectory is {total:g}-LDP (no tighter per-point "
                              "bound is claimed)" + self._split_note(n, total))

    def _split_note(self, n: int, total: float) -> str:
        return ""

    # -- perturbation ------------------------------------------------------------------
    def perturb(self, points, *, rng=None, key=None, return_indices=False):
        """Perturb one trajectory.

        Parameters
        ----------
        points : array_like, shape (n, 2)
            The trajectory in time order, in metres; each point is first snapped to
            its nearest POI.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure" or tracs.random.Secure
            The seed (see :mod:`tracs.random`).
        key : int, str or bytes, optional
            The user's key (see :meth:`perturb_many`).
        return_indices : bool
            Also return the indices of the released POIs.

        Returns
        -------
        numpy.ndarray, shape (n, 2)
            Released POI coordinates (and their indices with ``return_indices``).
        """
        return self.perturb_many(*as_trajectory(points), rng=rng, keys=key_list(key),
                                 return_indices=return_indices)

    def perturb_many(self, coords, offsets=None, *, rng=None, keys=None, return_indices=False, workers=1):
        """Perturb many trajectories held as one flat array.

        Parameters
        ----------
        coords : array_like, shape (N, 2), or a list of (n_i, 2) arrays
            All points, trajectory after trajectory, in metres.
        offsets : array_like of int, shape (T + 1,)
            Trajectory ``t`` is ``coords[offsets[t]:offsets[t + 1]]``.  Omit it when
            ``coords`` is a list.
        rng : None, int, SeedSequence, numpy.random.Generator, "secure", tracs.random.Secure
            The seed (see :mod:`tracs.random`), or resolved ``KeyedStreams``.
        keys : sequence, optional
            One key (user id) per trajectory: trajectory ``t`` draws only from the
            stream of ``(seed, keys[t])``, so its release is bit for bit the same in
            any batch.  ``None``: the positions ``0 … T − 1``.
        return_indices : bool
            Also return the indices of the released POIs.
        workers : int or None
            Threads (``None`` or ``-1``: every core); the output is the same for any number.

        Returns
        -------
        numpy.ndarray, shape (N, 2), or a list of arrays when ``coords`` was a list
            Released POI coordinates, in the input's order.
        """
        if workers != 1:
            return on_workers(self, coords, offsets, rng=rng, keys=keys, return_indices=return_indices,
                              workers=workers)
        flat, off, as_list = as_batch(coords, offsets)
        streams = batch_streams(rng, keys, len(off) - 1)
        if len(flat) == 0:
            raise ValueError("coords is empty")
        _, idx = self.poi_space.round(flat)
        indices = self._perturb(idx, off.astype(np.intp), PointDraws(streams, off))
        out = self.poi_space.points[indices]
        if as_list:
            out = np.split(out, off[1:-1])
            indices = np.split(indices, off[1:-1])
        return (out, indices) if return_indices else out

    def _run_into(self, coords: np.ndarray, offsets: np.ndarray, streams, out: np.ndarray) -> None:
        """The releases of a validated batch (``as_batch``) with its trajectories' resolved ``streams``,
        written into ``out``: the engine's path for one chunk (what :meth:`perturb_many` computes)."""
        _, idx = self.poi_space.round(coords)
        out[...] = self.poi_space.points[self._perturb(idx, offsets.astype(np.intp), PointDraws(streams, offsets))]

    def perturb_indices(self, indices, offsets, *, rng=None, keys=None) -> np.ndarray:
        """Perturb trajectories given as POI indices (no snapping); returns POI indices.

        This is the mechanism alone ("perturbation only" in timing tables).
        """
        indices = np.asarray(indices)
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise TypeError("indices must be a 1-D integer array")
        indices = indices.astype(np.intp)
        if indices.size == 0:
            raise ValueError("indices is empty")
        if indices.min() < 0 or indices.max() >= len(self.poi_space):
            raise ValueError(f"indices must lie in 0 … {len(self.poi_space) - 1}")
        _, off, _ = as_batch(np.zeros((len(indices), 2)), offsets)
        streams = batch_streams(rng, keys, len(off) - 1)
        return self._perturb(indices, off.astype(np.intp), PointDraws(streams, off))

    @abstractmethod
    def _perturb(self, indices: np.ndarray, offsets: np.ndarray, draws: PointDraws) -> np.ndarray:
        """Validated POI indices and offsets -> released POI indices, drawing from ``draws`` only."""
