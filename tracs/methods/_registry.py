"""The registry itself: :class:`Method`, the public parameters a factory sees, lookups.

Every command, the evaluation grids, the audit, the release sidecar, the
estimators and the warm-up read the same entries, so a method is described once.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._plugins import add, load_group
from ..errors import InputError, InputTypeError
from .._numba_cache import KERNEL_FAMILIES

__all__ = ["MECHANISM", "PERTURBER", "BASELINE", "KINDS", "LINE", "GRID", "POLAR", "POIS", "LATTICES", "Method",
           "MethodContext", "register", "registered", "get", "view", "method_of", "keyed", "lattice_kind"]

#: kinds of method: a 1-D mechanism on an interval or a circle, a trajectory perturber on a
#: continuous region, a baseline choosing among points of interest
MECHANISM, PERTURBER, BASELINE = "mechanism", "perturber", "baseline"
KINDS = (MECHANISM, PERTURBER, BASELINE)
#: shapes of a method's public lattice: one lattice of values (a 1-D mechanism), a pair of per-axis
#: lattices (``(x, y)``: TraCS-C, planar Laplace), a ``(direction, distance)`` pair of lattices about a
#: public reference (TraCS-D, the Strawman: ``lattice.direction``, ``lattice.distance``), or the
#: points of the public POI space (a baseline, whose ``lattice`` is None)
LINE, GRID, POLAR, POIS = "line", "grid", "direction-distance", "pois"
LATTICES = (LINE, GRID, POLAR, POIS)
#: the lattice and the keyed streams of an entry that does not name them, by kind (a perturber
#: that names no lattice declares none: its low bits are unverifiable by the audit)
_DEFAULT_LATTICE = {MECHANISM: LINE, BASELINE: POIS}


@dataclass
class MethodContext:
    """The public parameters a factory may use: the region, the POIs, TraCS-D's anchor.

    Every value is user-given or fixed in advance, never computed from the data
    being released.  ``poi_space`` (a KD-tree) is built once, on first use.
    """

    region: object = None
    pois: np.ndarray | None = None
    anchor: object = "center"
    _poi_space: object = field(default=None, repr=False)

    @property
    def poi_space(self):
        if self._poi_space is None:
            if self.pois is None:
                raise InputError("this data set has no points of interest (a continuous region); "
                                 "discrete methods and --round-to-pois need check-in data")
            from ..poi_space import POISpace

            self._poi_space = POISpace(self.pois, region=self.region)
        return self._poi_space


@dataclass(frozen=True)
class Method:
    """One shipped (or registered) method, described once.

    Parameters
    ----------
    name : str
        Command-line name (``tracs perturb --method``, ``tracs evaluate --methods``,
        ``tracs audit --method``), also written in release sidecars.
    label : str
        Its label in tables and summaries.
    kind : {"mechanism", "perturber", "baseline"}
        A 1-D mechanism, a trajectory perturber on a continuous region, or a
        baseline over points of interest.
    factory : callable
        Mechanisms: ``factory(epsilon, **options)``.  Perturbers and baselines:
        ``factory(context, budget, **options)`` with ``context`` a
        :class:`MethodContext` and ``budget`` either ``{"epsilon": e}`` (per point)
        or ``{"epsilon_per_trajectory": e}``.
    help : str
        One line for the command-line help.
    ldp : bool
        False for a method kept only to reproduce a published experiment that is
        not ε-LDP as run there: it may be evaluated and audited by name, never used
        to release data.
    model : str or type, optional
        The class the factory builds (``"module.Class"`` or the class), for
        :func:`method_of`.
    options : dict
        Fixed keyword options of the factory that tell this entry apart from
        another one building the same class (e.g. ``distance_along="true"``); an
        object matches the entry when its attributes of these names equal them.
    sidecar : tuple of str
        Public options recorded in a release sidecar (``tracs.estimate.sidecar``)
        and given back to the factory, as keyword options, to rebuild the method
        (``"anchor"``: the reference point ``(x, y)`` actually used).
    estimator : str, optional
        The collector-side estimator of its reports: the name of an entry of
        :mod:`tracs.estimate.estimators` (``get_estimator`` refuses an unknown
        name, listing the choices).
    warm : callable, optional
        ``warm(rng)`` makes the first calls of its compiled kernels on tiny inputs
        (``tracs warmup``).
    family : str, optional
        The family of compiled kernels its ``warm`` hook belongs to (a key of
        :data:`tracs._numba_cache.KERNEL_FAMILIES`); None: ``"other"``.
    keyed : bool, optional
        Whether what it builds draws each trajectory from its own keyed stream
        (``perturb_many(..., keys=)``: a user's releases do not depend on the batch, so
        a batch may be cut into chunks of whole users).  Default: true for perturbers
        and baselines, false for 1-D mechanisms.  Every reader asks this field
        (:func:`keyed`), never the built object.
    lattice : str, optional
        The shape of the public lattice of its releases, one of :data:`LATTICES`
        (default: ``"line"`` for mechanisms, ``"pois"`` for baselines, none declared for
        a perturber that names none).  Its values, fixed by public parameters only:
        :meth:`public_lattice`.
    pointwise : bool, default False
        Whether what it builds releases one point at a time at its stream position, bit for
        bit its batch release (its ``release_at(point, random_key, stream, index, previous)``):
        with a lattice the collector checks, a device can collect it
        (:func:`tracs.collect.published.supported_methods`).
    """

    name: str
    label: str
    kind: str
    factory: Callable
    help: str = ""
    ldp: bool = True
    model: object = None
    options: dict = field(default_factory=dict)
    sidecar: tuple = ()
    estimator: str | None = None
    warm: Callable | None = None
    family: str | None = None
    keyed: bool | None = None
    lattice: str | None = None
    pointwise: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip().lower():
            raise InputError(f"a method name is a non-empty lower-case word, got {self.name!r}")
        if self.kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.estimator is not None and (not isinstance(self.estimator, str) or not self.estimator):
            raise InputError(f"estimator must be an estimator's name or None, got {self.estimator!r}")
        if self.family is not None:
            if self.family not in KERNEL_FAMILIES:
                raise InputError(f"family must be one of {', '.join(KERNEL_FAMILIES)}, got {self.family!r}")
        if not callable(self.factory):
            raise InputTypeError(f"factory of {self.name!r} must be callable")
        if self.keyed is None:
            object.__setattr__(self, "keyed", self.kind != MECHANISM)
        elif not isinstance(self.keyed, bool):
            raise InputTypeError(f"keyed of {self.name!r} must be True or False, got {self.keyed!r}")
        if not isinstance(self.pointwise, bool):
            raise InputTypeError(f"pointwise of {self.name!r} must be True or False, got {self.pointwise!r}")
        if self.lattice is None:
            object.__setattr__(self, "lattice", _DEFAULT_LATTICE.get(self.kind))
        elif self.lattice not in LATTICES:
            raise InputError(f"lattice must be one of {', '.join(LATTICES)} or None, got {self.lattice!r}")

    @property
    def discrete(self) -> bool:
        """Whether it releases points of interest (a baseline)."""
        return self.kind == BASELINE

    def build(self, context=None, epsilon=None, *, per_trajectory: bool = False, **options):
        """The method at budget ``epsilon`` (per point, or per trajectory with ``per_trajectory``).

        ``context`` holds the public region, POIs and anchor (unused by a 1-D
        mechanism); ``options`` override the factory's keyword options.
        """
        options = {**self.options, **options}
        if self.kind == MECHANISM:
            if per_trajectory:
                raise InputError(f"{self.name} is a 1-D mechanism: its budget is per value")
            return self.factory(epsilon, **options)
        budget = {"epsilon_per_trajectory": epsilon} if per_trajectory else {"epsilon": epsilon}
        return self.factory(context, budget, **options)

    def lattice_of(self, built):
        """The public lattice of ``built`` (an object this entry built) as the entry declares it:
        its ``lattice`` when the entry names a lattice of values, None for POIs or none declared."""
        return None if self.lattice in (None, POIS) else built.lattice

    def public_lattice(self, context=None, epsilon=None, *, per_trajectory: bool = False, **options):
        """The public lattice of the releases at budget ``epsilon``, from the public parameters of
        ``context`` only (no data: the method is built as :meth:`build` builds it); None for a
        method releasing POIs or declaring no lattice."""
        if self.lattice in (None, POIS):
            return None
        return self.lattice_of(self.build(context, epsilon, per_trajectory=per_trajectory, **options))


_REGISTRY: dict[str, Method] = {}


def _installed() -> dict:
    """The registry, with the methods of installed extensions (entry-point group ``tracs.methods``,
    :mod:`tracs._plugins`) registered on the first call."""
    load_group("tracs.methods", register, Method)
    return _REGISTRY


def register(method: Method) -> Method:
    """Add ``method`` to the registry (its name must be new); returns it."""
    return add(_REGISTRY, method, Method, takes="register takes a tracs.methods.Method", named="a method named")


@contextmanager
def registered(method: Method):
    """Register ``method`` for the duration of a ``with`` block (tests, experiments)."""
    register(method)
    try:
        yield method
    finally:
        _REGISTRY.pop(method.name, None)


def get(name: str) -> Method:
    """The registered method called ``name`` (``ValueError`` naming the choices otherwise)."""
    method = _installed().get(name) if isinstance(name, str) else None
    if method is None:
        raise InputError(f"unknown method {name!r}; choose from {', '.join(_REGISTRY)}")
    return method


class _View(Mapping):
    """A live, read-only name -> :class:`Method` mapping of the registered methods of some kinds."""

    def __init__(self, kinds):
        self._kinds = tuple(kinds)

    def __getitem__(self, name):
        method = _installed()[name]
        if method.kind not in self._kinds:
            raise KeyError(name)
        return method

    def __iter__(self):
        return (name for name, method in list(_installed().items()) if method.kind in self._kinds)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"<registered {'/'.join(self._kinds)} methods: {', '.join(self)}>"


def view(*kinds: str) -> Mapping:
    """A live mapping of the registered methods of ``kinds`` (all kinds when none is given)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise InputError(f"kind must be one of {', '.join(KINDS)}, got {unknown[0]!r}")
    return _View(kinds or KINDS)


def _path(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def method_of(obj) -> Method | None:
    """The registered entry that builds objects like ``obj`` (``None`` when none does).

    The most derived registered class of ``obj`` wins; among entries building the
    same class, the one whose ``options`` all equal ``obj``'s attributes and name
    the most options.
    """
    for cls in type(obj).__mro__:
        path = _path(cls)
        candidates = [m for m in _installed().values()
                      if m.model is cls or (isinstance(m.model, str) and m.model == path)]
        candidates = [m for m in candidates
                      if all(getattr(obj, k, object()) == v for k, v in m.options.items())]
        if candidates:
            return max(candidates, key=lambda m: len(m.options))
    return None


def keyed(obj) -> bool:
    """Whether ``obj`` draws each trajectory from its own keyed stream: its registered entry's
    :attr:`Method.keyed`; for an object no entry builds, the engine's answer
    (:func:`tracs.engine.batch.takes_keys`: its class attribute ``keyed`` or a ``keys`` parameter)."""
    entry = method_of(obj)
    if entry is not None:
        return entry.keyed
    from ..engine.batch import takes_keys  # the engine's kernels load numba: not at the registry's import

    return takes_keys(obj)


def lattice_kind(obj) -> str | None:
    """The shape of ``obj``'s public lattice (one of :data:`LATTICES`) by its registered entry; None
    for an object no entry builds."""
    entry = method_of(obj)
    return None if entry is None else entry.lattice
