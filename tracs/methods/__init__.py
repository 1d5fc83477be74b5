"""The registry of methods: every shipped 1-D mechanism, trajectory perturber and POI baseline, once.

Each :class:`Method` entry holds the method's name, label and kind, its factory
from public parameters (:class:`MethodContext`: region, POIs, anchor; ε per point
or per trajectory; options), the sidecar fields that rebuild it, its estimator
and its warm-up hook.  The command line (``tracs perturb``, ``evaluate``,
``audit``), the evaluation grids, the audit catalogue, the release sidecar, the
density estimator and the warm-up all read this registry, so adding a method is
its module plus one :func:`register` call::

    from tracs.methods import PERTURBER, Method, register

    register(Method("my-perturber", "Mine", PERTURBER, lambda ctx, budget: Mine(ctx.region, **budget),
                    model=Mine, estimator="axes"))

A method of another package is named by an entry point of the group
``tracs.methods`` instead (registered when the registry is first asked:
:mod:`tracs._plugins`; ``docs/extending.md``).

Lookups: :func:`get` by name, :func:`view` (a live mapping of some kinds),
:func:`method_of` (the entry that built an object).  Whether a method draws from keyed
per-user streams and the shape of its public lattice are fields of its entry
(``keyed``, ``lattice``): :func:`keyed`, :func:`lattice_kind`, :meth:`Method.lattice_of`
and :meth:`Method.public_lattice` answer from them, so the engine's callers, the audit,
the sidecar writer and the collector never ask a built object.
"""

from ._registry import (BASELINE, GRID, KINDS, LATTICES, LINE, MECHANISM, PERTURBER, POIS, POLAR, Method,
                        MethodContext, get, keyed, lattice_kind, method_of, register, registered, view)
from . import _shipped  # noqa: F401  (registers the shipped methods)

__all__ = ["Method", "MethodContext", "MECHANISM", "PERTURBER", "BASELINE", "KINDS", "LINE", "GRID", "POLAR",
           "POIS", "LATTICES", "register", "registered", "get", "view", "method_of", "keyed", "lattice_kind"]
