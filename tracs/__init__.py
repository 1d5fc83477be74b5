"""tracs: trajectory collection under local differential privacy.

Perturb GPS traces and check-in sequences on the user's side so that every
released point is ε-LDP (TraCS-D, TraCS-C and baselines), round to points of
interest, measure the utility cost in metres and draw maps.

Public names are loaded on first use, so ``import tracs`` stays light (it never
imports folium or matplotlib).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

from ._numba_cache import configure as _configure_numba_cache  # noqa: E402

_configure_numba_cache(__path__[0], __version__)  # before any kernel is compiled

# public name -> module that defines it
_LAZY = {
    "as_generator": "tracs._validation",
    "TracsError": "tracs.errors",
    "Rectangle": "tracs.region",
    "ConvexRegion": "tracs.region",
    "TraCSD": "tracs.perturbers",
    "TraCSC": "tracs.perturbers",
    "Strawman": "tracs.perturbers",
    "PlanarLaplace": "tracs.perturbers",
    "PrivacyLedger": "tracs.releaser",
    "Releaser": "tracs.releaser",
    "average_error": "tracs.metrics",
    "trajectory_errors": "tracs.metrics",
    "POISpace": "tracs.poi_space",
    "Batch": "tracs.trajectory_batch",
    "Trajectories": "tracs.trajectories",
    "perturb_gdf": "tracs.gdf",
    "audit": "tracs.privacy",
    "audit_perturber": "tracs.privacy",
    "AuditReport": "tracs.privacy",
}
_SUBMODULES = {"io", "random", "public", "mechanisms", "baselines", "maps", "plots", "evaluation", "geo", "metrics",
               "region", "gdf", "adapters", "perturbers", "trajectories", "trajectory_batch", "query_metrics", "cli",
               "estimate", "privacy", "engine", "dask", "errors", "releaser"}

__all__ = sorted(_LAZY) + ["mechanisms", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f"tracs.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tracs' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
