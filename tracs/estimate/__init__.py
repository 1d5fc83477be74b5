"""Collector-side estimation: population statistics from LDP reports.

* :func:`distribution`, :func:`mean` — one-dimensional mechanisms (EM / EMS with an
  exact transition matrix; unbiased or circular means with standard errors).
* :func:`density` — the 2-D density of the true points on a grid from the reports
  of TraCS-C, TraCS-D, the Strawman or planar Laplace; a :class:`Density` answers
  range queries and hotspots.
* :func:`denoise` — every report's posterior mean of its true point under a
  fitted density (post-processing); ``trajectory=True`` smooths every trajectory
  given all its reports (:mod:`tracs.estimate.smoothing`).
* :func:`frequencies` — POI frequencies from the discrete baselines' reports;
  :func:`baseline_posterior` — every report's posterior POI under them (EM, L-SRR,
  N-gram under their exact law; ATP and TP under a stated surrogate law).
* :func:`write_sidecar`, :func:`read_sidecar` — the public parameters of a release.

The estimators take only the reports and the public mechanism or perturber.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "distribution": "tracs.estimate.univariate",
    "mean": "tracs.estimate.univariate",
    "Distribution": "tracs.estimate.univariate",
    "MeanEstimate": "tracs.estimate.univariate",
    "density": "tracs.estimate.grid_density",
    "denoise": "tracs.estimate.denoising",
    "Density": "tracs.estimate.result",
    "Hotspots": "tracs.estimate.result",
    "frequencies": "tracs.estimate.poi_frequencies",
    "baseline_posterior": "tracs.estimate.discrete_posterior",
    "Frequencies": "tracs.estimate.poi_frequencies",
    "write_sidecar": "tracs.estimate.sidecar",
    "read_sidecar": "tracs.estimate.sidecar",
    "sidecar_path": "tracs.estimate.sidecar",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tracs.estimate' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
