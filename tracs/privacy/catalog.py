"""Every registered mechanism, perturber and baseline, ready to audit.

``CATALOG`` maps a method's name in the registry (:mod:`tracs.methods`) to an
:class:`AuditTarget`: how to build the method at a budget ε and which audit
applies (1-D or 2-D).  Perturbers work on a public 2 km × 1 km rectangle;
baselines on 40 public POIs drawn once from a fixed seed inside it (public
parameters, never data).  The audit releases each candidate point as the last
point of trajectories of its scenario and checks the per-point claim.  A method registered later is in the catalogue
too (``CATALOG`` is a live view).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._progress import progress_bar
from ..errors import InputError
from ..methods import MECHANISM, MethodContext, view
from ..region import Rectangle
from .audit import audit
from .perturber_audit import audit_perturber

__all__ = ["AuditTarget", "CATALOG", "audit_target", "run_catalog", "REGION_BOUNDS"]

#: the public rectangle (metres) the perturbers are audited on
REGION_BOUNDS = (0.0, 0.0, 2000.0, 1000.0)


@dataclass(frozen=True)
class AuditTarget:
    """A registered method: ``build(epsilon)`` and whether it releases ``"1d"`` values or ``"2d"`` points.

    ``ldp=False`` marks a method shipped only to reproduce a paper and known not
    to be ε-LDP: the audit is expected to flag it.
    """

    name: str
    kind: str
    build: Callable[[float], object]
    ldp: bool = True


def _context() -> MethodContext:
    """The audit's public parameters: the rectangle and 40 POIs drawn from a fixed seed."""
    gen = np.random.default_rng(20260501)
    xmin, ymin, xmax, ymax = REGION_BOUNDS
    points = np.column_stack([gen.uniform(xmin, xmax, 40), gen.uniform(ymin, ymax, 40)])
    return MethodContext(region=Rectangle(*REGION_BOUNDS), pois=points)


def _target(method) -> AuditTarget:
    if method.kind == MECHANISM:
        return AuditTarget(method.name, "1d", lambda eps: method.build(None, eps), method.ldp)
    return AuditTarget(method.name, "2d", lambda eps: method.build(_context(), eps), method.ldp)


class _Catalog(Mapping):
    """name -> :class:`AuditTarget` of every registered method (1-D mechanisms first)."""

    _methods = view()

    def __getitem__(self, name):
        return _target(self._methods[name])

    def __iter__(self):
        methods = list(self._methods.values())
        return iter([m.name for m in methods if m.kind == MECHANISM] +
                    [m.name for m in methods if m.kind != MECHANISM])

    def __len__(self):
        return len(self._methods)


CATALOG: Mapping = _Catalog()


def audit_target(name: str, epsilon: float, **options):
    """Build the catalogued method ``name`` at ``epsilon`` and audit it; returns an AuditReport.

    A 1-D method is audited with :func:`tracs.audit`, a 2-D one with
    :func:`tracs.audit_perturber`: the claim is its own per-point ledger, or the
    nominal ``epsilon`` for a method marked ``ldp=False`` (its ledger reports the
    true loss; the audit shows the nominal claim is broken).
    """
    if name not in CATALOG:
        raise InputError(f"unknown method {name!r}; choose from {', '.join(CATALOG)}")
    target = CATALOG[name]
    method = target.build(epsilon)
    if target.kind == "1d":
        return audit(method, epsilon, **options)
    return audit_perturber(method, None if target.ldp else epsilon, **options)


def run_catalog(names, epsilon: float, **options):
    """Audit each of ``names`` at ``epsilon``; returns ``[(name, report, seconds)]``."""
    rows = []
    with progress_bar(len(names), desc="audit", unit="method") as bar:
        for name in names:
            start = time.perf_counter()
            report = audit_target(name, epsilon, **options)
            rows.append((name, report, time.perf_counter() - start))
            bar.update(1)
    return rows
