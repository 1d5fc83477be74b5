"""The registry of perturbation methods: command-line name, label, factory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._validation import check_epsilon


@dataclass
class MethodContext:
    """What a method factory may use: the public region, the POIs, options.

    ``poi_space`` is built once (KD-tree) on first use and shared by every cell.
    """

    region: object
    pois: np.ndarray | None = None
    anchor: object = "center"
    _poi_space: object = field(default=None, repr=False)

    @property
    def poi_space(self):
        if self.pois is None:
            raise ValueError("this data set has no points of interest (a continuous region); "
                             "discrete methods and --round-to-pois need check-in data")
        if self._poi_space is None:
            from ..poi_space import POISpace

            self._poi_space = POISpace(self.pois, region=self.region)
        return self._poi_space


@dataclass(frozen=True)
class MethodSpec:
    """A perturbation method: command-line ``name``, the paper's ``label``, its factory.

    ``discrete`` methods pick outputs among the points of interest; the others
    release points of the continuous region (and may be rounded to POIs afterwards,
    which is post-processing and keeps the guarantee).  ``ldp`` is false for a
    method kept only to reproduce a published experiment that is not ε-LDP as run
    there (``lsrr-thresholds``): it may be evaluated, never used to release data.
    """

    name: str
    label: str
    discrete: bool
    build: Callable[[MethodContext, float], object]
    help: str = ""
    ldp: bool = True


def _tracs_d(ctx, eps):
    from ..perturbers import TraCSD

    return TraCSD(ctx.region, eps, anchor=ctx.anchor)


def _tracs_c(ctx, eps):
    from ..perturbers import TraCSC

    return TraCSC(ctx.region, eps)


def _strawman(ctx, eps):
    from ..perturbers import Strawman

    return Strawman(ctx.region, eps, sectors=6)


def _planar_laplace(ctx, eps):
    from ..perturbers import PlanarLaplace

    return PlanarLaplace(ctx.region, eps)


def _baseline(class_name, **options):
    def build(ctx, eps):
        from .. import baselines

        return getattr(baselines, class_name)(ctx.poi_space, eps, **options)

    return build


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in [
        MethodSpec("tracs-d", "TraCS-D", False, _tracs_d, "direction + distance (TraCS-D)"),
        MethodSpec("tracs-c", "TraCS-C", False, _tracs_c, "coordinates (TraCS-C)"),
        MethodSpec("strawman", "Strawman", False, _strawman, "6-sector k-RR direction + TraCS-D distance"),
        MethodSpec("planar-laplace", "planar Laplace", False, _planar_laplace, "planar Laplace with ε/diameter, clipped"),
        MethodSpec("em", "EM", True, _baseline("ExponentialMechanism"), "exponential mechanism over the POIs"),
        MethodSpec("ngram", "NGram", True, _baseline("NGram"), "NGram, per-location form"),
        MethodSpec("lsrr", "L-SRR", True, _baseline("LSRR"), "staircase randomized response"),
        MethodSpec("lsrr-thresholds", "L-SRR (paper's thresholds, not LDP)", True,
                   _baseline("LSRR", grouping="thresholds"),
                   "L-SRR with the paper's distance-threshold groups (0.3, 0.6 of the unit-square "
                   "normalised box); NOT ε-LDP, for reproducing the paper only", ldp=False),
        MethodSpec("atp", "ATP", True, _baseline("ATP"), "ATP (anchor + direction perturbation)"),
        MethodSpec("tp", "TP", True, _baseline("TP"), "TP (direction perturbation, no anchor)"),
    ]
}


def parse_methods(methods) -> list[str]:
    """Validate method names (a comma-separated string or a sequence); keep their order."""
    names = _parse_names(methods, METHODS, "method")
    if not names:
        raise ValueError("no method given")
    return names


def _parse_names(values, registry, what: str) -> list[str]:
    """Names from a comma-separated string or a sequence, each a key of ``registry``, no repeats."""
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    names = [str(v).strip().lower() for v in values]
    unknown = [v for v in names if v not in registry]
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r}; choose from {', '.join(registry)}")
    if len(set(names)) != len(names):
        raise ValueError(f"a {what} is listed twice")
    return names


def parse_epsilons(epsilons) -> list[float]:
    """Validate privacy parameters (a comma-separated string or a sequence), each > 0."""
    if isinstance(epsilons, str):
        parts = [e.strip() for e in epsilons.split(",") if e.strip()]
        values = []
        for part in parts:
            try:
                values.append(float(part))
            except ValueError:
                raise ValueError(f"epsilon must be a number, got {part!r}") from None
        epsilons = values
    values = [check_epsilon(e) for e in epsilons]
    if not values:
        raise ValueError("no epsilon given")
    if len(set(values)) != len(values):
        raise ValueError("an epsilon is listed twice")
    return values


# ----------------------------------------------------------------------------- data sets

#: file names of the real check-in samples, looked up in ``TRACS_DATA_DIR``
