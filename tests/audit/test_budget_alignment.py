"""Per-trajectory budgets: every trajectory of a mixed batch gets exactly ``ε_T / n_t``.

Trajectories of different lengths (empty ones included) share one compiled pass with one
row of mechanism constants per trajectory.  If a row were attached to the wrong
trajectory, a point would be perturbed at another trajectory's per-point ε and the ledger
would under-report.  Check: trajectory ``t`` of the batch is released bit for bit as a
per-point perturber at ``ε_T / n_t`` releases the trajectory at the same position (the
same keyed stream) of the batch cut after it.
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


CASES = [(TraCSD, {}), (TraCSD, {"anchor": "corner"}), (Strawman, {}), (TraCSC, {"x_share": 0.3}),
         (PlanarLaplace, {})]


@pytest.mark.parametrize("cls, kwargs", CASES)
def test_each_trajectory_spends_its_own_share(cls, kwargs):
    pts, off = _batch()
    whole = cls(REGION, epsilon_per_trajectory=EPS_T, **kwargs).perturb_many(pts, off, rng=5)
    for t, (a, b) in enumerate(zip(off[:-1], off[1:])):
        if b > a:
            per_point = cls(REGION, EPS_T / (b - a), **kwargs)
            alone = per_point.perturb_many(pts[:b], off[: t + 2], rng=5)
            assert np.array_equal(whole[a:b], alone[a:b])


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
