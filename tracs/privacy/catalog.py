"""Every shipped mechanism, perturber and baseline, ready to audit.

``CATALOG`` maps a command-line name to an :class:`AuditTarget`: how to build
the method at a budget ε and which audit applies (1-D or 2-D).  Perturbers work
on a public 2 km × 1 km rectangle; baselines on 40 public POIs drawn once from a
fixed seed inside it (public parameters, never data).  The audit draws each
point as a one-point trajectory and checks the per-point claim.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import mechanisms as m
from .audit import audit
from .perturber_audit import audit_perturber

__all__ = ["AuditTarget", "CATALOG", "audit_target", "run_catalog", "REGION_BOUNDS"]

#: the public rectangle (metres) the perturbers are audited on
REGION_BOUNDS = (0.0, 0.0, 2000.0, 1000.0)


@dataclass(frozen=True)
class AuditTarget:
    """A shipped method: ``build(epsilon)`` and whether it releases ``"1d"`` values or ``"2d"`` points.

    ``ldp=False`` marks a method shipped only to reproduce a paper and known not
    to be ε-LDP: the audit is expected to flag it.
    """

    name: str
    kind: str
    build: Callable[[float], object]
    ldp: bool = True


def _region():
    from ..region import Rectangle

    return Rectangle(*REGION_BOUNDS)


def _pois():
    from ..poi_space import POISpace

    gen = np.random.default_rng(20260501)
    xmin, ymin, xmax, ymax = REGION_BOUNDS
    points = np.column_stack([gen.uniform(xmin, xmax, 40), gen.uniform(ymin, ymax, 40)])
    return POISpace(points, region=_region())


def _perturber(class_name, **options):
    def build(eps):
        from .. import perturbers

        return getattr(perturbers, class_name)(_region(), eps, **options)

    return build


def _baseline(class_name, **options):
    def build(eps):
        from .. import baselines

        return getattr(baselines, class_name)(_pois(), eps, **options)

    return build


_MECHANISMS = {
    "optimal-classical": lambda e: m.OptimalClassical(epsilon=e),
    "optimal-circular": lambda e: m.OptimalCircular(epsilon=e),
    "optimal-classical-square": lambda e: m.OptimalClassical(epsilon=e, loss="square"),
    "optimal-circular-square": lambda e: m.OptimalCircular(epsilon=e, loss="square"),
    "optimal-unbiased": lambda e: m.OptimalUnbiased(epsilon=e),
    "piecewise": lambda e: m.PiecewiseMechanism(epsilon=e),
    "square-wave": lambda e: m.SquareWave(epsilon=e),
    "ptt": lambda e: m.PTT(epsilon=e),
    "duchi": lambda e: m.Duchi(epsilon=e),
    "laplace": lambda e: m.Laplace(epsilon=e),
    "bounded-laplace": lambda e: m.BoundedLaplace(epsilon=e),
    "ii-ptt": lambda e: m.IIPTT(epsilon=e),
    "staircase": lambda e: m.Staircase(epsilon=e),
    "purkayastha": lambda e: m.Purkayastha(epsilon=e),
    "krr": lambda e: m.KRR(epsilon=e, k=8),
    "compressed-pm": lambda e: m.Compressed(m.PiecewiseMechanism(epsilon=e)),
    "compressed-sw": lambda e: m.Compressed(m.SquareWave(epsilon=e)),
    "truncated-pm": lambda e: m.Truncated(m.PiecewiseMechanism(epsilon=e)),
    "truncated-sw": lambda e: m.Truncated(m.SquareWave(epsilon=e)),
    "truncated-laplace": lambda e: m.Truncated(m.Laplace(epsilon=e)),
    "truncated-staircase": lambda e: m.Truncated(m.Staircase(epsilon=e)),
}

CATALOG: dict[str, AuditTarget] = {
    **{name: AuditTarget(name, "1d", build) for name, build in _MECHANISMS.items()},
    "tracs-d": AuditTarget("tracs-d", "2d", _perturber("TraCSD")),
    "tracs-c": AuditTarget("tracs-c", "2d", _perturber("TraCSC")),
    "strawman": AuditTarget("strawman", "2d", _perturber("Strawman")),
    "planar-laplace": AuditTarget("planar-laplace", "2d", _perturber("PlanarLaplace")),
    "em": AuditTarget("em", "2d", _baseline("ExponentialMechanism")),
    "ngram": AuditTarget("ngram", "2d", _baseline("NGram")),
    "lsrr": AuditTarget("lsrr", "2d", _baseline("LSRR")),
    "atp": AuditTarget("atp", "2d", _baseline("ATP")),
    "tp": AuditTarget("tp", "2d", _baseline("TP")),
    "lsrr-thresholds": AuditTarget("lsrr-thresholds", "2d", _baseline("LSRR", grouping="thresholds"),
                                   ldp=False),
}


def audit_target(name: str, epsilon: float, **options):
    """Build the catalogued method ``name`` at ``epsilon`` and audit it; returns an AuditReport.

    A 1-D method is audited with :func:`tracs.audit`, a 2-D one with
    :func:`tracs.audit_perturber`: the claim is its own per-point ledger, or the
    nominal ``epsilon`` for a method marked ``ldp=False`` (its ledger reports the
    true loss; the audit shows the nominal claim is broken).
    """
    if name not in CATALOG:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(CATALOG)}")
    target = CATALOG[name]
    method = target.build(epsilon)
    if target.kind == "1d":
        return audit(method, epsilon, **options)
    return audit_perturber(method, None if target.ldp else epsilon, **options)


def run_catalog(names, epsilon: float, **options):
    """Audit each of ``names`` at ``epsilon``; returns ``[(name, report, seconds)]``."""
    from .._progress import progress_bar

    rows = []
    with progress_bar(len(names), desc="audit", unit="method") as bar:
        for name in names:
            start = time.perf_counter()
            report = audit_target(name, epsilon, **options)
            rows.append((name, report, time.perf_counter() - start))
            bar.update(1)
    return rows
