"""Unit vectors of the public angle lattice from two small tables.

A direction–distance release turns its direction index ``a`` (angle ``a·h`` of
the lattice of ``n`` angles) into the unit vector ``(cos a·h, sin a·h)``.  With
``a = q·S + r`` (``S`` = :data:`SPLIT`), the angle-addition formulas give it from
``cos``/``sin`` of the ``⌈n/S⌉`` coarse angles ``q·S·h`` and of the ``S`` fine
angles ``r·h``: two loads, four products and two sums, where the two library
calls cost several times that on the recursion's critical path.  Each
coordinate is within a few units in the last place of the library's value, and
the vector is a deterministic function of ``a`` and the public lattice
(post-processing of the released index).  The compiled kernels and
:func:`unit_vectors` compute the same doubles from the same tables (products and
sums in the same order, no fused multiply–add).
"""

from __future__ import annotations

import numpy as np

from .._numba_cache import key_on_sources
from .._jit import helper

#: fine angles per coarse step (a power of two: ``a >> 10`` and ``a & 1023``)
SPLIT = 1024
_SHIFT = 10


def table_bytes(n: int) -> int:
    """Bytes of :func:`angle_tables` for ``n`` angles."""
    return 4 * 8 * max(-(-int(n) // SPLIT), SPLIT)


def angle_tables(n: int, h: float) -> np.ndarray:
    """``(4, L)`` rows: cos and sin of the coarse angles ``q·S·h``, then of the fine angles ``r·h``."""
    coarse = -(-int(n) // SPLIT)
    size = max(coarse, SPLIT)
    q = (np.arange(size, dtype=np.float64) * SPLIT) * h
    r = np.arange(size, dtype=np.float64) * h
    return np.ascontiguousarray(np.stack([np.cos(q), np.sin(q), np.cos(r), np.sin(r)]))


@helper
def unit_vector(a, tables):  # pragma: no cover - compiled; compared with unit_vectors in tests
    """``(cos, sin)`` of lattice angle index ``a`` (see the module notes)."""
    q = a >> _SHIFT
    r = a & (SPLIT - 1)
    cq = tables[0, q]
    sq = tables[1, q]
    cr = tables[2, r]
    sr = tables[3, r]
    return cq * cr - sq * sr, sq * cr + cq * sr


def unit_vectors(a, tables: np.ndarray) -> np.ndarray:
    """:func:`unit_vector` of every index in ``a``: an ``(N, 2)`` array."""
    a = np.asarray(a, dtype=np.int64).ravel()
    q, r = a >> _SHIFT, a & (SPLIT - 1)
    cq, sq, cr, sr = tables[0, q], tables[1, q], tables[2, r], tables[3, r]
    return np.column_stack([cq * cr - sq * sr, sq * cr + cq * sr])


key_on_sources(globals())  # cached kernels follow every source they compile in
