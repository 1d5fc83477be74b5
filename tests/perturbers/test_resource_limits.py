"""Resolutions, grids and budgets whose tables would exceed 1 GiB are refused up front.

Every case is refused at construction (or at the call that would build the table),
before any allocation, with a ValueError naming the limit and the size needed.
"""

from __future__ import annotations

import pytest

import tracs
import tracs.mechanisms as m
from tracs.mechanisms.lattice import TABLE_LIMIT

RECT = tracs.Rectangle(0, 0, 2000, 1000)
LIMIT = "more than the limit of 1 GiB (tracs.mechanisms.lattice.TABLE_LIMIT)"


@pytest.mark.parametrize("build, error, message", [
    (lambda: tracs.TraCSD(RECT, 1.0, resolution=2.0 ** -40), ValueError,
     "the angle lattice of 1099511627776 directions (resolution=9.094947017729282e-13) needs 32 GiB of tables, "
     + LIMIT),
    (lambda: tracs.Strawman(RECT, 1.0, resolution=2.0 ** -40), ValueError,  # 6 sectors of whole cells
     "the angle lattice of 1099511627778 directions (resolution=9.094947017729282e-13) needs 32 GiB of tables, "
     + LIMIT),
    (lambda: tracs.TraCSD(RECT, 1.0, resolution=2.0 ** -36), ValueError,
     "the angle lattice of 68719476736 directions (resolution=1.4551915228366852e-11) needs 2 GiB of tables, "
     + LIMIT),
    (lambda: tracs.TraCSD(RECT, epsilon_per_trajectory=4.0, resolution=2.0 ** -38), ValueError,
     "needs 8 GiB of tables, " + LIMIT),
    (lambda: tracs.Strawman(RECT, 1.0, sectors=2 ** 36, resolution=0.25), ValueError,
     "the angle lattice of 68719476736 directions (resolution=0.25) needs 2 GiB of tables, " + LIMIT),
    (lambda: m.Laplace(epsilon=1.0).lattice_pmf(0.5), ValueError,
     "enumerating the lattice's 84934657 values (lattice_pmf, lattice_row) needs 1.27 GiB of tables, " + LIMIT),
    (lambda: tracs.TraCSD(RECT, 1.0, resolution=2.0 ** -41), ValueError,
     "resolution 4.54747e-13 asks for more than 2^40 cells"),
    (lambda: tracs.PlanarLaplace(RECT, 1e-12, resolution=2.0 ** -40), ValueError,
     "is below the smallest supported budget"),
])
def test_too_large_tables_are_refused_up_front(build, error, message):
    with pytest.raises(error) as info:
        build()
    assert message in str(info.value)


def test_just_within_the_limit_is_accepted_and_tables_stay_lazy():
    assert TABLE_LIMIT == 2 ** 30
    tracsd = tracs.TraCSD(RECT, 1.0, resolution=2.0 ** -35)  # angle tables of exactly 1 GiB, not built yet
    assert tracsd._tables is None and tracsd.lattice.direction.count == 2 ** 35
    coarse = m.Laplace(epsilon=1.0, resolution=2.0 ** -8).lattice_pmf(0.5)
    assert coarse.sum() == pytest.approx(1.0, abs=1e-12)
