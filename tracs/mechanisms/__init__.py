"""One-dimensional bounded LDP mechanisms (numpy only; nothing here knows of maps).

Every mechanism is a small frozen object with keyword-only ``epsilon``, an
``input_domain`` and ``output_domain`` (:class:`Interval` or :class:`Circle`, each
knowing its distance), and vectorised ``sample(x, *, rng=None)``, ``pdf``,
``cdf``, ``expected_error(x, p)`` and ``worst_case_error(p)``.
"""

from ._base import Mechanism, PiecewiseConstantMechanism
from ._domain import Categories, Circle, Interval, RealLine
from .discrete import KRR, Duchi
from .optimal import OptimalCircular, OptimalClassical, OptimalUnbiased
from .piecewise import SquareWave

__all__ = [
    "Mechanism",
    "PiecewiseConstantMechanism",
    "Interval",
    "Circle",
    "RealLine",
    "Categories",
    "OptimalClassical",
    "OptimalCircular",
    "OptimalUnbiased",
    "KRR",
    "Duchi",
    "SquareWave",
]
