"""What a grid runs: the registry's perturbers and baselines by name, and the parsers
of ``--methods`` and ``--epsilons``."""

from __future__ import annotations

from .._validation import check_epsilon
from ..errors import InputError
from ..methods import BASELINE, PERTURBER, MethodContext, view

__all__ = ["METHODS", "MethodContext", "parse_methods", "parse_epsilons"]

#: the registered trajectory perturbers and POI baselines by command-line name (a live view of
#: :mod:`tracs.methods`: a method registered later appears here too)
METHODS = view(PERTURBER, BASELINE)


def parse_methods(methods) -> list[str]:
    """Validate method names (a comma-separated string or a sequence); keep their order."""
    names = _parse_names(methods, METHODS, "method")
    if not names:
        raise InputError("no method given")
    return names


def _parse_names(values, registry, what: str) -> list[str]:
    """Names from a comma-separated string or a sequence, each a key of ``registry``, no repeats."""
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    names = [str(v).strip().lower() for v in values]
    unknown = [v for v in names if v not in registry]
    if unknown:
        raise InputError(f"unknown {what} {unknown[0]!r}; choose from {', '.join(registry)}")
    if len(set(names)) != len(names):
        raise InputError(f"a {what} is listed twice")
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
                raise InputError(f"epsilon must be a number, got {part!r}") from None
        epsilons = values
    values = [check_epsilon(e) for e in epsilons]
    if not values:
        raise InputError("no epsilon given")
    if len(set(values)) != len(values):
        raise InputError("an epsilon is listed twice")
    return values
