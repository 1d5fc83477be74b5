"""Independent numerical integration of a mechanism's density (adaptive quadrature)."""

from __future__ import annotations

import numpy as np
from scipy import integrate


def integrate_moment(mech, x0: float, lo: float, hi: float, power: int = 0, centre: float = 0.0) -> float:
    """``∫ (y − centre)^power · pdf(y | x0) dy`` over ``[lo, hi]``, split at the density's jumps."""
    cuts = np.sort(mech._breakpoints(np.array(x0)).ravel())
    cuts = np.unique(np.concatenate([[lo, hi], cuts[(cuts > lo) & (cuts < hi)]]))
    total = 0.0
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a < 1e-12 * (hi - lo):  # a sliver between two rounded end points
            total += (0.5 * (a + b) - centre) ** power * float(mech.pdf(0.5 * (a + b), x0)) * (b - a)
            continue
        value, _ = integrate.quad(lambda t: (t - centre) ** power * float(mech.pdf(t, x0)), a, b,
                                  limit=200, epsabs=1e-14, epsrel=1e-12)
        total += value
    return total
