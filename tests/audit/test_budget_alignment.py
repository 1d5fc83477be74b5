"""Per-trajectory budgets: every trajectory of a mixed batch gets exactly ``ε_T / n_t``.

Trajectories of different lengths (empty ones included) share one compiled pass with one
row of mechanism constants per trajectory.  If a row were attached to the wrong
trajectory, a point would be perturbed at another trajectory's per-point ε and the ledger
would under-report.  Check: the batch gives bit for bit what per-point perturbers at
``ε_T / n_t`` give, trajectory after trajectory, from the same generator stream.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.region import Rectangle

REGION = Rectangle(0.0, 0.0, 3.0, 2.0)
LENGTHS = [3, 0, 1, 7, 0, 2, 5, 1]  # distinct per-point budgets, and empty trajectories
EPS_T = 12.0


def _batch():
    rng = np.random.default_rng(4)
    pts = rng.uniform((0.0, 0.0), (3.0, 2.0), (sum(LENGTHS), 2))
    pts[0] = (0.0, 0.0)  # a corner, an edge point, the centre
    pts[1] = (3.0, 1.0)
    pts[2] = REGION.center
    return pts, np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int64)


CASES = [(cls, kwargs, engine)
         for cls, kwargs in [(TraCSD, {}), (TraCSD, {"anchor": "corner"}), (Strawman, {}),
                             (TraCSC, {"x_share": 0.3})]
         for engine in ("compiled", "numpy")] + [(PlanarLaplace, {}, None)]


@pytest.mark.parametrize("cls, kwargs, engine", CASES)
def test_each_trajectory_spends_its_own_share(cls, kwargs, engine):
    pts, off = _batch()
    extra = {} if engine is None else {"engine": engine}
    whole = cls(REGION, epsilon_per_trajectory=EPS_T, **kwargs).perturb_many(pts, off, rng=5, **extra)
    parts = []
    for t, (a, b) in enumerate(zip(off[:-1], off[1:])):
        if b > a:  # trajectory t alone, under its position key t: the same stream as in the batch
            per_point = cls(REGION, EPS_T / (b - a), **kwargs)
            parts.append(per_point.perturb(pts[a:b], rng=5, key=t, **extra))
    assert np.array_equal(whole, np.concatenate(parts))


@pytest.mark.parametrize("cls", [TraCSD, Strawman, TraCSC, PlanarLaplace])
def test_ledger_matches_what_is_spent(cls):
    p = cls(REGION, epsilon_per_trajectory=EPS_T)
    n = np.array([1, 2, 7, 1000])
    ledger = p.privacy_spent(n)
    assert np.allclose(ledger.per_trajectory, EPS_T, rtol=1e-15, atol=0)
    assert np.allclose(ledger.per_point * n, EPS_T, rtol=1e-15, atol=0)
    if hasattr(p, "split"):
        for k in n:  # the two parts of a point's budget add up to the reported per-point ε
            parts = p.split(int(k))
            assert sum(parts) == pytest.approx(EPS_T / k, rel=1e-14)
            assert min(parts) > 0
