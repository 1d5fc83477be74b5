"""TraCS-D, TraCS-C and POI rounding, one Python iteration per point (see the package docstring)."""

from __future__ import annotations

import math
import random

import numpy as np


class _Classical:
    """Optimal classical mechanism on [0, 1], constants computed per instance (per point)."""

    def __init__(self, value: float, epsilon: float):
        self.value = value
        s = math.exp(epsilon / 2)
        self.half = 1.0 / (2.0 * (s + 1.0))
        self.central = s / (s + 1.0)

    def sample(self) -> float:
        c, x = self.half, self.value
        left = 0.0 if x < c else (1.0 - 2.0 * c if x >= 1.0 - c else x - c)
        right = left + 2.0 * c
        if random.uniform(0, 1) < self.central:
            return random.uniform(left, right)
        # the two side pieces, in proportion to their lengths
        t = random.uniform(0, 1 - 2.0 * c)
        return t if t < left else t + 2.0 * c


class _Circular:
    """Optimal circular mechanism on [0, 2π), constants computed per instance (per point)."""

    def __init__(self, value: float, epsilon: float):
        self.value = value
        s = math.exp(epsilon / 2)
        self.half = math.pi / (s + 1.0)
        self.central = s / (s + 1.0)

    def sample(self) -> float:
        c = self.half
        if random.uniform(0, 1) < self.central:
            y = self.value - c + random.uniform(0, 2.0 * c)
        else:
            y = self.value + c + random.uniform(0, 2.0 * math.pi - 2.0 * c)
        return y % (2.0 * math.pi)


def _exit_distance(x, y, phi, bounds) -> float:
    """Distance from (x, y) along direction phi to the rectangle's boundary."""
    xmin, ymin, xmax, ymax = bounds
    dx, dy = math.cos(phi), math.sin(phi)
    reach = math.inf
    if dx > 0:
        reach = min(reach, (xmax - x) / dx)
    elif dx < 0:
        reach = min(reach, (xmin - x) / dx)
    if dy > 0:
        reach = min(reach, (ymax - y) / dy)
    elif dy < 0:
        reach = min(reach, (ymin - y) / dy)
    return max(reach, 0.0)


class _DirectionDistance:
    """One TraCS-D step: a point and its reference (the previous released point)."""

    def __init__(self, reference, location, epsilon, direction_share, bounds):
        self.reference = np.array(reference, dtype=float)
        self.location = np.array(location, dtype=float)
        self.eps_direction = direction_share * epsilon
        self.eps_distance = epsilon - self.eps_direction
        self.bounds = bounds

    def perturb(self) -> np.ndarray:
        delta = self.location - self.reference
        phi = float(np.arctan2(delta[1], delta[0])) % (2.0 * math.pi)
        reach = _exit_distance(self.reference[0], self.reference[1], phi, self.bounds)
        u = min(1.0, float(np.linalg.norm(delta)) / reach) if reach > 0 else 0.0
        phi_out = _Circular(phi, self.eps_direction).sample()
        u_out = _Classical(u, self.eps_distance).sample()
        step = u_out * _exit_distance(self.reference[0], self.reference[1], phi_out, self.bounds)
        out = self.reference + step * np.array([math.cos(phi_out), math.sin(phi_out)])
        xmin, ymin, xmax, ymax = self.bounds
        return np.array([min(max(out[0], xmin), xmax), min(max(out[1], ymin), ymax)])


def tracs_d_loop(trajectory, epsilon, bounds, direction_share=math.pi / (math.pi + 1), anchor=None):
    """TraCS-D on one trajectory, one point at a time (reference structure)."""
    xmin, ymin, xmax, ymax = bounds
    reference = ((xmin + xmax) / 2, (ymin + ymax) / 2) if anchor is None else anchor
    out = np.array(trajectory, dtype=float).copy()
    for i in range(len(out)):
        step = _DirectionDistance(reference, out[i], epsilon, direction_share, bounds)
        out[i] = step.perturb()
        reference = (out[i][0], out[i][1])
    return out


def tracs_c_loop(trajectory, epsilon, bounds, x_share=0.5):
    """TraCS-C on one trajectory, one point at a time (reference structure)."""
    xmin, ymin, xmax, ymax = bounds
    out = np.array(trajectory, dtype=float).copy()
    for i in range(len(out)):
        x = (out[i][0] - xmin) / (xmax - xmin)
        y = (out[i][1] - ymin) / (ymax - ymin)
        x_out = _Classical(x, x_share * epsilon).sample()
        y_out = _Classical(y, (1 - x_share) * epsilon).sample()
        out[i] = (xmin + x_out * (xmax - xmin), ymin + y_out * (ymax - ymin))
    return out


def round_loop(points, pois):
    """Nearest POI of each point: ``argmin`` of the norm over every POI, per point."""
    pois = np.asarray(pois, dtype=float)
    out = np.array(points, dtype=float).copy()
    for i in range(len(out)):
        out[i] = pois[np.argmin(np.linalg.norm(pois - out[i], axis=1))]
    return out
