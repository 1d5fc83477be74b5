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

__all__ = ["continuous_classical", "continuous_circular", "continuous_laplace", "continuous_staircase",
           "continuous_purkayastha", "continuous_duchi", "continuous_tracsc", "continuous_planar_laplace",
           "continuous_sequential",
           "EARLIER_MECHANISMS"]


@njit(cache=True, nogil=True, inline="always")
def _classical_one(t, select, position, c, mass):
    """The continuous optimal classical mechanism on ``[0, 1]`` at ``t``: half-width ``c`` of the
    central piece, ``mass`` its probability; ``select``, ``position`` two uniforms."""
    left = min(max(t - c, 0.0), 1.0 - 2.0 * c)
    if select < mass:
        return left + 2.0 * c * position
    z = position * (1.0 - 2.0 * c)
    return z if z < left else z + 2.0 * c


@njit(cache=True, nogil=True, inline="always")
def _circular_one(x, select, position, c, mass, period):
    """The continuous optimal circular mechanism on ``[0, period)`` at ``x`` (half-width ``c``)."""
    if select < mass:
        y = x - c + 2.0 * c * position
    else:
        y = x + c + (period - 2.0 * c) * position
    y = y % period
    return 0.0 if y >= period else y


@njit(cache=True, nogil=True)
def _classical(x, u, epsilon):
    s = math.exp(epsilon / 2.0)
    c, mass = 0.5 / (s + 1.0), s / (s + 1.0)
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = _classical_one(x[i], u[i, 0], u[i, 1], c, mass)
    return out


@njit(cache=True, nogil=True)
def _circular(x, u, epsilon, period):
    s = math.exp(epsilon / 2.0)
    c, mass = period / (2.0 * (s + 1.0)), s / (s + 1.0)
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = _circular_one(x[i], u[i, 0], u[i, 1], c, mass, period)
    return out


def continuous_classical(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The earlier continuous optimal classical sampler on ``[0, 1]`` (raw doubles)."""
    return _classical(x, rng.random((x.size, 2)), epsilon)


def continuous_circular(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The earlier continuous optimal circular sampler on ``[0, 2π)`` (raw doubles)."""
    return _circular(x, rng.random((x.size, 2)), epsilon, 2.0 * math.pi)


def _validated(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """The earlier input check of ``sample``: every entry finite and inside ``[low, high]``."""
    if not np.all(np.isfinite(x)) or (x.size and (x.min() < low or x.max() > high)):
        raise ValueError("inputs outside the domain")
    return x


def continuous_laplace(x: np.ndarray, epsilon: float, rng: np.random.Generator, sensitivity: float = 1.0):
    """The earlier Laplace sampler: ``x`` plus numpy's Laplace noise of scale Δ/ε."""
    x = _validated(x, 0.0, sensitivity)
    return x + rng.laplace(0.0, sensitivity / epsilon, size=x.shape)


def continuous_staircase(x: np.ndarray, epsilon: float, rng: np.random.Generator, step_fraction: float,
                         sensitivity: float = 1.0):
    """The earlier staircase sampler (Geng & Viswanath): whole steps from an exponential, the
    inner or outer part of the step, a uniform position in it, a sign."""
    x = _validated(x, 0.0, sensitivity)
    g = step_fraction
    steps = np.floor(rng.standard_exponential(x.shape) / epsilon)
    outer = (1.0 - g) * math.exp(-epsilon)
    inner = rng.random(x.shape) < g / (g + outer)
    u = rng.random(x.shape)
    offset = np.where(inner, g * u, g + (1.0 - g) * u)
    sign = np.where(rng.random(x.shape) < 0.5, -1.0, 1.0)
    return x + sign * (sensitivity * (steps + offset))


def continuous_purkayastha(x: np.ndarray, epsilon: float, rng: np.random.Generator):
    """The earlier Purkayastha sampler on ``[0, 2π)``: a truncated exponential arc length, a sign."""
    x = _validated(x, 0.0, 2.0 * math.pi)
    kappa = epsilon / math.pi
    distance = -np.log1p(rng.random(x.shape) * math.expm1(-epsilon)) / kappa
    sign = np.where(rng.random(x.shape) < 0.5, -1.0, 1.0)
    y = np.mod(x + sign * distance, 2.0 * math.pi)
    return np.where(y >= 2.0 * math.pi, 0.0, y)


def continuous_duchi(x: np.ndarray, epsilon: float, rng: np.random.Generator):
    """The earlier Duchi et al. sampler on ``[−1, 1]``: one of ``±(e^ε + 1)/(e^ε − 1)``, each
    decided against the less likely output's probability."""
    x = _validated(x, -1.0, 1.0)
    bound = (math.exp(epsilon) + 1.0) / math.expm1(epsilon)
    w = (x + 1.0) / 2.0
    hi, lo = 1.0 / (1.0 + math.exp(-epsilon)), 1.0 / (1.0 + math.exp(epsilon))
    plus, minus = w * hi + (1.0 - w) * lo, w * lo + (1.0 - w) * hi
    u = rng.random(x.shape)
    return np.where(plus <= minus, np.where(u < np.maximum(plus, 5e-324), bound, -bound),
                    np.where(u < np.maximum(minus, 5e-324), -bound, bound))


@njit(cache=True, nogil=True)
def _tracsc(coords, u, out, start, bbox, epsilon_x, epsilon_y):
    for axis, eps in ((0, epsilon_x), (1, epsilon_y)):
        low, high = bbox[axis], bbox[axis + 2]
        width = high - low
        s = math.exp(eps / 2.0)
        c = 0.5 / (s + 1.0)
        mass = s / (s + 1.0)
        for r in range(u.shape[0]):
            t = (coords[start + r, axis] - low) / width
            out[start + r, axis] = low + width * _classical_one(t, u[r, 2 * axis], u[r, 2 * axis + 1], c, mass)


def continuous_tracsc(coords: np.ndarray, bbox: np.ndarray, epsilon: float, rng: np.random.Generator,
                      chunk: int = 1 << 16) -> np.ndarray:
    """The earlier TraCS-C: per coordinate the continuous optimal classical sampler at ε/2,
    four numpy uniforms per point drawn in chunks, one compiled pass per chunk."""
    out = np.empty_like(coords)
    for start in range(0, len(coords), chunk):
        u = rng.random((min(chunk, len(coords) - start), 4))
        _tracsc(coords, u, out, start, bbox, epsilon / 2.0, epsilon / 2.0)
    return out


def continuous_planar_laplace(coords: np.ndarray, bbox: np.ndarray, epsilon: float, rng: np.random.Generator,
                              chunk: int = 1 << 16) -> np.ndarray:
    """The earlier planar Laplace: a Gamma(2) radius of scale diameter/ε and a uniform angle,
    clamped to the rectangle ``bbox``, over chunks of numpy uniforms."""
    scale = math.hypot(bbox[2] - bbox[0], bbox[3] - bbox[1]) / epsilon
    out = np.empty_like(coords)
    for start in range(0, len(coords), chunk):
        stop = min(len(coords), start + chunk)
        u = rng.random((stop - start, 3))
        radius = -(np.log1p(-u[:, 0]) + np.log1p(-u[:, 1])) * scale
        angle = 2.0 * np.pi * u[:, 2]
        block = out[start:stop]
        np.multiply(radius, np.cos(angle), out=block[:, 0])
        np.multiply(radius, np.sin(angle), out=block[:, 1])
        block += coords[start:stop]
        np.clip(block[:, 0], bbox[0], bbox[2], out=block[:, 0])
        np.clip(block[:, 1], bbox[1], bbox[3], out=block[:, 1])
    return out


@njit(cache=True, nogil=True)
def _sequential(coords, offsets, start, stop, traj, u, anchor, nx, ny, hb, bbox, eps_dir, eps_dist, k, out):
    s_d = math.exp(eps_dir / 2.0)
    half_d, mass_d = math.pi / (s_d + 1.0), s_d / (s_d + 1.0)
    lie = (k - 1) / (math.exp(eps_dir) + k - 1) if k > 0 else 0.0
    s_r = math.exp(eps_dist / 2.0)
    c_r, mass_r = 0.5 / (s_r + 1.0), s_r / (s_r + 1.0)
    for i in range(start, stop):
        while i >= offsets[traj + 1]:
            traj += 1
        if i == offsets[traj]:
            ox, oy = anchor[0], anchor[1]
        else:
            ox, oy = out[i - 1, 0], out[i - 1, 1]
        dx, dy = coords[i, 0] - ox, coords[i, 1] - oy
        phi = math.atan2(dy, dx) % (2.0 * math.pi)
        # normalised distance along the true direction, edge by edge
        dist = 0.0
        for e in range(nx.shape[0]):
            nd = nx[e] * dx + ny[e] * dy
            if nd > 0.0:
                slack = hb[e] - (nx[e] * ox + ny[e] * oy)
                dist = max(dist, nd / slack) if slack > 0.0 else 1.0
        dist = min(dist, 1.0)
        r = i - start
        if k == 0:  # optimal circular
            y = _circular_one(phi, u[r, 0], u[r, 1], half_d, mass_d, 2.0 * math.pi)
        else:  # k-RR over sectors, then a uniform angle in the sector
            w = 2.0 * math.pi / k
            j = min(int(phi / w), k - 1)
            if u[r, 0] < lie:
                j = (j + 1 + min(int(u[r, 4] * (k - 1)), k - 2)) % k
            y = (j + u[r, 1]) * w
        v = _classical_one(dist, u[r, 2], u[r, 3], c_r, mass_r)
        c, s = math.cos(y), math.sin(y)
        reach = np.inf
        for e in range(nx.shape[0]):
            nd = nx[e] * c + ny[e] * s
            if nd > 0.0:
                reach = min(reach, max(hb[e] - (nx[e] * ox + ny[e] * oy), 0.0) / nd)
        step = v * (reach if reach < np.inf else 0.0)
        out[i, 0] = min(max(ox + step * c, bbox[0]), bbox[2])
        out[i, 1] = min(max(oy + step * s, bbox[1]), bbox[3])
    return traj


def continuous_sequential(coords: np.ndarray, offsets: np.ndarray, bbox: np.ndarray, epsilon: float,
                          rng: np.random.Generator, direction_share: float, sectors: int = 0,
                          chunk: int = 1 << 16) -> np.ndarray:
    """The earlier TraCS-D (``sectors=0``) and Strawman on the rectangle ``bbox``: direction
    from the previous release by the continuous circular mechanism (or k-RR over sectors),
    the distance normalised along the true direction by the continuous classical one; four
    (five) numpy uniforms per point drawn in chunks, one compiled recursion per chunk."""
    x0, y0, x1, y1 = (float(v) for v in bbox)
    nx, ny = np.array([0.0, 1.0, 0.0, -1.0]), np.array([-1.0, 0.0, 1.0, 0.0])
    hb = np.array([-y0, x1, y1, -x0])
    anchor = np.array([(x0 + x1) / 2.0, (y0 + y1) / 2.0])
    eps_dir = direction_share * epsilon
    out = np.empty_like(coords)
    traj = 0
    for start in range(0, len(coords), chunk):
        stop = min(len(coords), start + chunk)
        u = rng.random((stop - start, 5 if sectors else 4))
        traj = _sequential(coords, offsets, start, stop, traj, u, anchor, nx, ny, hb, bbox, eps_dir,
                           epsilon - eps_dir, sectors, out)
    return out


#: mechanism name in the benchmark -> (earlier sampler(x, ε, rng, mechanism), input span)
EARLIER_MECHANISMS = {
    "OptimalClassical": (lambda x, e, rng, mech: continuous_classical(x, e, rng), (0.0, 1.0)),
    "OptimalCircular": (lambda x, e, rng, mech: continuous_circular(x, e, rng), (0.0, 2 * math.pi)),
    "Laplace": (lambda x, e, rng, mech: continuous_laplace(x, e, rng), (0.0, 1.0)),
    "Staircase": (lambda x, e, rng, mech: continuous_staircase(x, e, rng, mech.step_fraction), (0.0, 1.0)),
    "Purkayastha": (lambda x, e, rng, mech: continuous_purkayastha(x, e, rng), (0.0, 2 * math.pi)),
    "Duchi": (lambda x, e, rng, mech: continuous_duchi(x, e, rng), (-1.0, 1.0)),
}
