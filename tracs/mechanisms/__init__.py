"""One-dimensional bounded LDP mechanisms (numpy, and numba for the compiled samplers; nothing here knows of maps).

Every continuous mechanism is a small frozen object with keyword-only ``epsilon``,
an ``input_domain`` and ``output_domain`` (:class:`Interval`, :class:`Circle` or
:class:`RealLine`, each knowing its distance), and vectorised
``sample(x, *, rng=None)``, ``pdf``, ``cdf``, ``sf``, ``atoms``,
``expected_error(x, p)`` and ``worst_case_error(p)``.  The discrete-output
mechanisms :class:`KRR` and :class:`Duchi` offer ``pmf`` instead of ``pdf``.

Optimal mechanisms (``docs/mechanisms.md`` §1–3): :class:`OptimalClassical`,
:class:`OptimalCircular`, :class:`OptimalUnbiased`.
Peers (§4): :class:`PiecewiseMechanism`, :class:`SquareWave`, :class:`PTT`,
:class:`Duchi`, :class:`Laplace`, :class:`Staircase`, :class:`Purkayastha`,
:class:`KRR`.
Output transforms — one way for all, as wrappers (post-processing):
``Compressed(m)`` maps the enlarged output interval linearly onto the input
interval (PM-C, SW-C); ``Truncated(m)`` clips to the input interval (T-PM, T-SW,
T-Laplace, truncated staircase) and reports the two end point masses.
Budget split between two coordinates (§5): :func:`optimal_split`.

Every release lies on the mechanism's public :class:`Lattice`
(``lattice``, ``sample_index``, ``lattice_pmf``; :mod:`tracs.mechanisms.lattice`,
``docs/privacy.md``).
"""

from ._base import Mechanism, PiecewiseConstantMechanism
from ._domain import Categories, Circle, Interval, RealLine
from .additive import Laplace, Staircase, staircase_square_gamma
from .bounded_laplace import BoundedLaplace, bounded_laplace_scale
from .circular import Purkayastha
from .randomized_response import KRR, Duchi
from .ii_ptt import IIPTT
from .lattice import Lattice
from .optimal import OptimalCircular, OptimalClassical, OptimalUnbiased
from .piecewise import PTT, PiecewiseMechanism, SquareWave
from .split import BudgetSplit, optimal_split
from .transforms import Compressed, Truncated

__all__ = [
    "Mechanism",
    "PiecewiseConstantMechanism",
    "Interval",
    "Circle",
    "RealLine",
    "Categories",
    "Lattice",
    "OptimalClassical",
    "BoundedLaplace",
    "bounded_laplace_scale",
    "OptimalCircular",
    "OptimalUnbiased",
    "PiecewiseMechanism",
    "SquareWave",
    "PTT",
    "IIPTT",
    "Duchi",
    "Laplace",
    "Staircase",
    "staircase_square_gamma",
    "Purkayastha",
    "KRR",
    "Compressed",
    "Truncated",
    "optimal_split",
    "BudgetSplit",
]
