"""The base of the discrete-space baselines (a :class:`tracs.releaser.Releaser`), and their ledger.

Every baseline is built from a public :class:`~tracs.poi_space.POISpace` and a
privacy budget, snaps its inputs to their nearest POI (the true location is assumed
to be a POI; snapping is a public, deterministic map applied before the mechanism)
and releases POIs.  It offers the releasers' interface, as the perturbers do:
``perturb(points)``, ``perturb_many(coords, offsets)``, ``privacy_spent(n)`` and the
engine's ``release_into``.

Per-user independence: a trajectory's release depends only on its own points, the
public POI space and budget, the seed and its key.  Every random number a baseline
uses is drawn from the trajectory's own keyed stream (``tracs.baselines._draws``);
no shared generator, and no statistic of the batch, enters any user's release.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from .._validation import as_batch
from ..poi_space import POISpace
from ..errors import InputError, InputTypeError
from ..releaser import PrivacyLedger, Releaser, batch_streams, check_lengths
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


class Baseline(Releaser):
    """Base of the discrete-space baselines: a :class:`tracs.releaser.Releaser` on a public POI space.

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
            raise InputTypeError(f"poi_space must be a tracs.POISpace, got {type(poi_space).__name__}")
        super().__init__(epsilon, epsilon_per_trajectory=epsilon_per_trajectory)
        self.poi_space = poi_space
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
                raise InputError(
                    f"a budget of {value:g} on {step} is too large for a faithful "
                    f"double-precision sampler over this POI space ({len(self.poi_space)} "
                    f"POIs): its smallest output probability would fall below 2^-40; the "
                    f"largest budget accepted is {limit:.4g}"
                )

    def privacy_spent(self, n: int) -> BaselineLedger:
        """Privacy spent on one trajectory of ``n`` points (see :class:`BaselineLedger`)."""
        lengths = check_lengths(n)
        if lengths.ndim:
            raise InputTypeError(f"n must be the length of one trajectory, got an array of {lengths.size}")
        n = int(lengths)
        basis = self.basis
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

    # -- release -------------------------------------------------------------------------
    def _release_batch(self, coords, offsets, streams, *, return_indices=False):
        """Each point snapped to its nearest POI, then the mechanism: ``(POI coordinates, POI indices)``."""
        _, idx = self.poi_space.round(coords)
        indices = self._perturb(idx, offsets.astype(np.intp), PointDraws(streams, offsets))
        return self.poi_space.points[indices], indices

    def release_into(self, coords: np.ndarray, offsets: np.ndarray, streams, out: np.ndarray) -> None:
        """The releases of a validated batch (``as_batch``) with its trajectories' resolved ``streams``,
        written into ``out``: the engine's path for one chunk (what :meth:`perturb_many` computes)."""
        out[...] = self._release_batch(coords, offsets, streams)[0]

    def perturb_indices(self, indices, offsets, *, rng=None, keys=None) -> np.ndarray:
        """Perturb trajectories given as POI indices (no snapping); returns POI indices.

        This is the mechanism alone ("perturbation only" in timing tables).
        """
        indices = np.asarray(indices)
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise InputTypeError("indices must be a 1-D integer array")
        indices = indices.astype(np.intp)
        if indices.size == 0:
            raise InputError("indices is empty")
        if indices.min() < 0 or indices.max() >= len(self.poi_space):
            raise InputError(f"indices must lie in 0 … {len(self.poi_space) - 1}")
        _, off, _ = as_batch(np.zeros((len(indices), 2)), offsets)
        streams = batch_streams(rng, keys, len(off) - 1)
        return self._perturb(indices, off.astype(np.intp), PointDraws(streams, off))

    @abstractmethod
    def _perturb(self, indices: np.ndarray, offsets: np.ndarray, draws: PointDraws) -> np.ndarray:
        """Validated POI indices and offsets -> released POI indices, drawing from ``draws`` only."""
