"""One-sided Clopper–Pearson bounds and the ε lower bound built from them.

For ``k`` successes in ``n`` independent trials with success probability ``p``,
the Clopper–Pearson bounds (Clopper & Pearson, Biometrika 1934) are exact:
``P(p < lower(k, n, α)) <= α`` and ``P(p > upper(k, n, α)) <= α`` whatever ``p``
is.  They are the quantiles of beta distributions.

For an output event ``E`` and inputs ``x1, x2``, an ε-LDP sampler satisfies
``P(E | x1) <= e^ε P(E | x2)``.  With ``k1`` of ``n1`` draws at ``x1`` and ``k2``
of ``n2`` draws at ``x2`` landing in ``E``,

    ε_lower = ln(lower(k1, n1, α/2) / upper(k2, n2, α/2))

is below the sampler's true privacy loss with probability at least ``1 − α``
(union bound over the two one-sided bounds; this holds whether or not the two
counts are independent).  This is the bound used by DP-Sniper (Bichsel et al.,
S&P 2021), StatDP (Ding et al., CCS 2018) and Delta-Siege (Lokna et al., 2023).
"""

from __future__ import annotations

import numpy as np

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound"]


def clopper_pearson_lower(k, n, alpha) -> np.ndarray:
    """Exact one-sided lower confidence bound on a binomial proportion (0 where ``k == 0``)."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def clopper_pearson_upper(k, n, alpha) -> np.ndarray:
    """Exact one-sided upper confidence bound on a binomial proportion (1 where ``k == n``)."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(1.0 - alpha, k + 1.0, n - k)
    return np.where(k >= n, 1.0, out)


def epsilon_lower_bound(k1, n1, k2, n2, confidence: float) -> np.ndarray:
    """``ln(CP_lower(k1, n1) / CP_upper(k2, n2))``, each one-sided at ``(1 − confidence)/2``.

    Returns ``-inf`` where ``k1 == 0`` (no evidence).  Vectorised over the counts.
    """
    alpha = (1.0 - confidence) / 2.0
    low = clopper_pearson_lower(k1, n1, alpha)
    high = clopper_pearson_upper(k2, n2, alpha)
    with np.errstate(divide="ignore"):
        return np.log(low) - np.log(high)
