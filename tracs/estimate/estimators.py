"""The registry of collector-side estimators: each likelihood of reports, described once.

A method's registry entry (:class:`tracs.methods.Method`) names its estimator;
:func:`estimator_of` finds the :class:`Estimator` of a built perturber, mechanism or
baseline, and every estimating path asks the entry instead of naming estimators:
the density fit (:mod:`tracs.estimate.grid_density`: the likelihood blocks, the
support, the held-out choices), its Dask form (:func:`tracs.dask.estimate`: what
travels between partitions), the POI frequencies, the evaluation's estimated
columns and the release sidecar's hints.

Adding an estimator is a module of functions plus one entry::

    register_estimator(Estimator(
        "ring", DENSITY, "reports on rings about the reference",
        blocks="my_package.ring:ring_blocks"))

and ``estimator="ring"`` on the registry entry of the methods whose reports have
that likelihood.  Callables may be given as ``"module:function"`` names, imported
on first use (the table costs nothing to import).  Estimators installed as another
package are found through the entry-point group ``tracs.estimators``
(:mod:`tracs._plugins`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .._plugins import add, load_group, resolve
from ..errors import InputError
from .expectation_maximisation import DenseBlock, ProductBlock  # the blocks ``blocks`` returns
from ..methods import method_of

__all__ = ["DENSITY", "DISTRIBUTION", "FREQUENCIES", "TARGETS", "DenseBlock", "Estimator", "ProductBlock",
           "register_estimator", "unregister_estimator", "get_estimator", "estimators", "estimator_of",
           "density_estimator"]

#: what an estimator estimates: the 2-D density of a perturber's true points on a grid
#: (:func:`tracs.estimate.density`), a 1-D mechanism's input distribution
#: (:func:`tracs.estimate.distribution`), POI frequencies (:func:`tracs.estimate.frequencies`)
DENSITY, DISTRIBUTION, FREQUENCIES = "density", "distribution", "frequencies"
TARGETS = (DENSITY, DISTRIBUTION, FREQUENCIES)


@dataclass(frozen=True)
class Estimator:
    """One likelihood of reports: what the estimating code needs to know of it.

    Parameters
    ----------
    name : str
        The name a method's registry entry gives as its ``estimator``.
    target : {"density", "distribution", "frequencies"}
        What it estimates (:data:`TARGETS`).
    help : str
        One line: whose reports, which likelihood.
    blocks : callable or str, optional
        Density estimators: ``blocks(plan, pts, off, eps, weights) -> list`` of EM
        blocks (``ProductBlock`` / ``DenseBlock`` of
        :mod:`tracs.estimate.expectation_maximisation`) of reports ``pts`` with
        trajectory offsets ``off`` and per-report ``eps``, from the public
        perturber ``plan.perturber`` on the grid ``plan.xe``, ``plan.ye``
        (a :class:`tracs.estimate.grid_density.DensityPlan`).  ``weights`` is None
        unless ``weighted``.
    support : callable or str, optional
        ``support(plan) -> bool array (gx, gy)``: the cells that may hold mass
        (default: every cell).
    counts, from_counts : callable or str, optional
        Reports summarised by counts that add up across parts (planar Laplace):
        ``counts(plan, pts, eps)`` of one part, ``from_counts(plan, parts) -> blocks``
        of all; the Dask estimate then sends counts, not blocks.
    merge : callable or str, optional
        ``merge(lists) -> blocks``: one list of blocks from the blocks of every
        partition, when they must be combined rather than kept where they are
        (binned reports whose equal matrices add up).
    trajectories : bool
        Each report's likelihood depends on earlier reports of its trajectory
        (offsets are required; held-out trajectories, ``stop="cv"``, are offered;
        cells are represented by ``subpoints``).
    weighted : bool
        ``blocks`` accepts ``weights`` (counts of reports per lattice value).
    held_out_smoothing : bool
        ``smoothing="auto"`` chooses the EMS weight on held-out reports when every
        report's ε is at least ``AUTO_SMOOTHING_EPSILON``.
    auto_stop : callable or str, optional
        ``auto_stop(perturber, eps_high) -> "cv" | "rule"``: what ``stop="auto"``
        means for these reports (default ``"rule"``).
    """

    name: str
    target: str
    help: str = ""
    blocks: Callable | str | None = None
    support: Callable | str | None = None
    counts: Callable | str | None = None
    from_counts: Callable | str | None = None
    merge: Callable | str | None = None
    trajectories: bool = False
    weighted: bool = False
    held_out_smoothing: bool = False
    auto_stop: Callable | str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip().lower():
            raise InputError(f"an estimator name is a non-empty lower-case word, got {self.name!r}")
        if self.target not in TARGETS:
            raise InputError(f"target must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if self.target == DENSITY and self.blocks is None:
            raise InputError(f"the density estimator {self.name!r} needs blocks")
        if (self.counts is None) != (self.from_counts is None):
            raise InputError(f"estimator {self.name!r}: counts and from_counts go together")

    def call(self, field: str, *args):
        """Call the callable of ``field`` (imported on first use) with ``args``."""
        return resolve(getattr(self, field))(*args)


_REGISTRY: dict[str, Estimator] = {}


def register_estimator(estimator: Estimator) -> Estimator:
    """Add ``estimator`` to the registry (its name must be new); return it."""
    return add(_REGISTRY, estimator, Estimator, takes="register_estimator takes an Estimator",
               named="an estimator named")


def unregister_estimator(name: str) -> None:
    """Remove the estimator called ``name`` (tests, experiments)."""
    _REGISTRY.pop(name, None)


def estimators() -> dict:
    """Every registered estimator, name -> :class:`Estimator` (installed plugins included)."""
    load_group("tracs.estimators", register_estimator, Estimator)
    return dict(_REGISTRY)


def get_estimator(name: str) -> Estimator:
    """The registered estimator called ``name`` (``ValueError`` naming the choices otherwise)."""
    table = estimators()
    if name not in table:
        raise InputError(f"unknown estimator {name!r}; choose from {', '.join(table)}")
    return table[name]


def estimator_of(obj) -> Estimator | None:
    """The estimator named by the registry entry that builds objects like ``obj``, or None."""
    method = method_of(obj)
    if method is None or method.estimator is None:
        return None
    return get_estimator(method.estimator)


def density_estimator(perturber) -> Estimator | None:
    """The density estimator of ``perturber``'s reports, or None (none registered, or its
    reports are rounded to points of interest, whose references are not public)."""
    est = estimator_of(perturber)
    if est is None or est.target != DENSITY or getattr(perturber, "round_to", None) is not None:
        return None
    return est


_DENSITY = "tracs.estimate.density_likelihoods:"
for _entry in (
    Estimator("distribution", DISTRIBUTION, "a 1-D mechanism's reports: EM with its exact transition matrix"),
    Estimator("axes", DENSITY, "per-axis reports (TraCS-C): product blocks of exact per-axis lattice matrices",
              blocks=_DENSITY + "axes_blocks", merge=_DENSITY + "merge_binned",
              weighted=True, held_out_smoothing=True),
    Estimator("directional", DENSITY, "direction-distance reports about the previous report (TraCS-D, "
              "its paper variant, Strawman): runs of columns per row", blocks=_DENSITY + "directional_blocks",
              support=_DENSITY + "region_support", trajectories=True, auto_stop=_DENSITY + "directional_stop"),
    Estimator("grid", DENSITY, "planar reports on a grid (planar Laplace): counts of distinct keys",
              blocks=_DENSITY + "grid_blocks", counts=_DENSITY + "grid_counts",
              from_counts=_DENSITY + "grid_blocks_from_counts"),
    Estimator("frequencies", FREQUENCIES, "POI reports of a fixed or previous-report channel (EM, N-gram, "
              "L-SRR)"),
):
    register_estimator(_entry)
