"""Worst-case noisy variance of the PTT mechanisms (Ma, Zhu & Wang, TMC 2024) against Duchi's.

The PTT paper's Theorem 9 example takes type-I PTT with η = B/a = 1.9 and
a = (10/9)(e^ε + 0.9)/(e^ε − 1) and states that its worst-case variance, Eq. (25),
is below Duchi's scheme's for every ε > 0.  Evaluating the paper's own variance
formulas (Eq. (15) for type I, Eq. (22) for type II, k = (η − 1)a, inputs in [−1, 1])
shows the example wins only above a threshold ε: about 1.45 for type I.  This script
prints both thresholds and the three worst-case variances on a grid of ε.

Run: ``python examples/ptt_worst_case.py``.
"""
import numpy as np
from scipy.optimize import brentq

ETA = 1.9


def example_a(eps, eta=ETA):
    """The paper's choice of a for η = 1.9: a = (10/9)(e^ε + 0.9)/(e^ε − 1)."""
    t = np.exp(eps)
    return (1.0 / (eta - 1.0)) * (t + eta - 1.0) / (t - 1.0)


def ptt_worst_variance(eps, kind="I", eta=ETA, a=None):
    """max over A in [−1, 1] of Var = (k − 1)A² + c·a, Eq. (15) (type I) or Eq. (22) (type II)."""
    t = np.exp(eps)
    a = example_a(eps, eta) if a is None else a
    k = (eta - 1.0) * a
    if kind == "I":
        c = (eta ** 3 / (t - 1.0) + 1.0) / (3.0 * (eta - 1.0))
    elif kind == "II":
        c = (4.0 * eta ** 3 / (t - 1.0) + 1.0) / (6.0 * (eta - 1.0))
    else:
        raise ValueError(f"kind must be 'I' or 'II', got {kind!r}")
    return np.maximum(k - 1.0, 0.0) + c * a


def duchi_worst_variance(eps):
    """Duchi's scheme: Var = ((e^ε + 1)/(e^ε − 1))² − A², largest at A = 0."""
    t = np.exp(eps)
    return ((t + 1.0) / (t - 1.0)) ** 2


def threshold(kind):
    """The ε above which the η = 1.9 example's worst-case variance is below Duchi's."""
    return brentq(lambda e: ptt_worst_variance(e, kind) - duchi_worst_variance(e), 0.5, 5.0,
                  xtol=1e-10)


def main():
    for kind in ("I", "II"):
        print(f"type-{kind} PTT (eta=1.9) beats Duchi's worst-case variance for eps > "
              f"{threshold(kind):.4f}")
    print(f"{'eps':>5} {'I-PTT':>10} {'II-PTT':>10} {'Duchi':>10}")
    for e in (0.5, 1.0, 1.45, 1.5, 2.0, 3.0, 5.0):
        print(f"{e:5.2f} {ptt_worst_variance(e, 'I'):10.4f} {ptt_worst_variance(e, 'II'):10.4f} "
              f"{duchi_worst_variance(e):10.4f}")


if __name__ == "__main__":
    main()
