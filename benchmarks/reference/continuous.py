"""The continuous samplers tracs used before its releases moved to a public lattice.

Written for this benchmark so that the price of exact lattice sampling is measured in
the same run as the lattice samplers: the earlier optimal classical and circular
samplers drew two numpy uniforms per sample (piece choice, then position) and
returned a raw double in a compiled loop.  These functions have that structure
(numpy's generator for the uniforms, one compiled pass for the closed form).  They
are *not* private in floating point (the low bits of a raw double depend on the
input; ``docs/privacy.md``) and are not used by tracs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["continuous_classical", "continuous_circular"]


@njit(cache=True, nogil=True)
def _classical(x, u, epsilon):
    s = math.exp(epsilon / 2.0)
    c = 0.5 / (s + 1.0)
    mass = s / (s + 1.0)
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        left = min(max(x[i] - c, 0.0), 1.0 - 2.0 * c)
        if u[i, 0] < mass:
            out[i] = left + 2.0 * c * u[i, 1]
        else:
            z = u[i, 1] * (1.0 - 2.0 * c)
            out[i] = z if z < left else z + 2.0 * c
    return out


@njit(cache=True, nogil=True)
def _circular(x, u, epsilon, period):
    s = math.exp(epsilon / 2.0)
    c = period / (2.0 * (s + 1.0))
    mass = s / (s + 1.0)
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        if u[i, 0] < mass:
            y = x[i] - c + 2.0 * c * u[i, 1]
        else:
            y = x[i] + c + (period - 2.0 * c) * u[i, 1]
        y = y % period
        out[i] = 0.0 if y >= period else y
    return out


def continuous_classical(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The earlier continuous optimal classical sampler on ``[0, 1]`` (raw doubles)."""
    return _classical(x, rng.random((x.size, 2)), epsilon)


def continuous_circular(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The earlier continuous optimal circular sampler on ``[0, 2π)`` (raw doubles)."""
    return _circular(x, rng.random((x.size, 2)), epsilon, 2.0 * math.pi)
