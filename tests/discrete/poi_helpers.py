"""Small synthetic POI spaces and an exact privacy-loss helper for the discrete-space tests.

Kept apart from ``conftest.py`` under a unique name: test folders are imported by
base name, and several folders have a ``conftest``.
"""

from __future__ import annotations

import numpy as np


def grid_points(nx: int = 5, ny: int = 4, step: float = 100.0) -> np.ndarray:
    """A regular grid: many exact distance ties, the nasty case for group boundaries."""
    xs, ys = np.meshgrid(np.arange(nx) * step, np.arange(ny) * step)
    return np.column_stack([xs.ravel(), ys.ravel()])


def adversarial_points() -> np.ndarray:
    """A grid plus a far outlier (makes D large) and a tight cluster of near-duplicates."""
    rng = np.random.default_rng(20240601)
    cluster = np.array([[210.0, 150.0]]) + rng.normal(scale=0.5, size=(4, 2))
    return np.vstack([grid_points(4, 3), [[2500.0, -800.0]], cluster])


def max_log_ratio(probs: np.ndarray) -> float:
    """``max_{x, x', y} log(P[y|x] / P[y|x'])`` over the rows of ``probs`` (inputs × outputs)."""
    probs = np.asarray(probs, dtype=float)
    assert np.all(probs > 0), "every output must be possible from every input"
    logp = np.log(probs)
    return float((logp.max(axis=0) - logp.min(axis=0)).max())
