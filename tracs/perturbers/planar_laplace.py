"""Planar Laplace calibrated to the region, then clipped ("T-Laplace" in the TraCS paper).

Density ``∝ exp(−ε'·‖z − τ‖)`` on the plane with ``ε' = ε / diam(S)``: for any
two points of ``S`` and any output, the ratio is at most
``exp(ε'·‖τ1 − τ2‖) <= e^ε``, so each point is ε-LDP over ``S``.  The radius is
Gamma(2, 1/ε') (the sum of two exponentials), the angle uniform.  The noisy
point is then replaced by the nearest point of the region: clipping is
post-processing and costs no privacy.
"""

from __future__ import annotations

import numpy as np

from ._base import Perturber

__all__ = ["PlanarLaplace"]


class PlanarLaplace(Perturber):
    """Planar Laplace noise with ``ε' = ε / diameter``, clipped to the region.

    Parameters
    ----------
    region : Rectangle or ConvexRegion
    epsilon : float, optional
        Budget per point (or ``epsilon_per_trajectory``, split evenly).
    epsilon_per_trajectory, round_to
        As for :class:`TraCSD`.

    Notes
    -----
    Uses three uniforms per point: radius ``−(ln(1 − U1) + ln(1 − U2))/ε'``
    (never infinite, since ``1 − U > 0``) and angle ``2π·U3``.  Points are
    independent.
    """

    uniforms_per_point = 3

    def _run(self, coords, offsets, rng):
        diameter = self.region.diameter
        out = np.empty_like(coords)
        if self.epsilon is not None:
            scale = None
            inv = diameter / self.epsilon
        else:
            scale = np.repeat(diameter / self.epsilon_per_point(np.diff(offsets)), np.diff(offsets))
        for start, stop, uni in self._draw_chunks(len(coords), rng):
            s = inv if scale is None else scale[start:stop]
            radius = -(np.log1p(-uni[:, 0]) + np.log1p(-uni[:, 1])) * s
            angle = 2.0 * np.pi * uni[:, 2]
            block = out[start:stop]
            np.multiply(radius, np.cos(angle), out=block[:, 0])
            np.multiply(radius, np.sin(angle), out=block[:, 1])
            block += coords[start:stop]
            self.region._clip(block)
        return out
