"""tracs.dask.estimate: the E-step over partitions equals the in-process estimate, any partitioning."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

from tracs import Rectangle
from tracs.estimate import density
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
distributed = pytest.importorskip("distributed", reason="tracs[dask] is not installed")

REGION = Rectangle(0.0, 0.0, 2000.0, 1000.0)
#: partitions of the run on the distributed cluster (users spanning partitions, shuffled)
CLUSTER_PARTS = 7


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def _released(perturber, n=1500, users=40, seed=0):
    """Released points of ``users`` users with two trajectories each, rows shuffled."""
    rng = np.random.default_rng(seed)
    uid = np.sort(rng.integers(0, users, n))
    day = rng.integers(0, 2, n)
    order = np.lexsort([day, uid])
    uid, day = uid[order], day[order]
    pts = np.clip(rng.normal([700, 400], [300, 200], (n, 2)), [0, 0], [2000, 1000])
    starts = np.flatnonzero(np.r_[True, (uid[1:] != uid[:-1]) | (day[1:] != day[:-1])])
    offsets = np.r_[starts, n]
    rep = perturber.perturb_many(pts, offsets, rng=3)
    frame = pd.DataFrame({"uid": uid, "day": day, "t": np.arange(n), "x": rep[:, 0], "y": rep[:, 1]})
    return frame.sample(frac=1.0, random_state=1), rep, offsets


@pytest.mark.slow  # E-steps over three partitionings
@pytest.mark.parametrize("make, options, atol", [
    (lambda: TraCSD(REGION, 1.0), {}, 1e-9),  # ε < 2: the held-out pass budget over partitions
    # 104 passes on a 16×16 grid: the partitions' other summation order, amplified along
    # the path (SQUAREM's longer capped steps), moves the result by 1.1e-8 (measured; one
    # partition: 0; 2.2e-9 over the 248 passes of the uncapped steps)
    (lambda: TraCSD(REGION, 4.0), {"subpoints": 2}, 1e-7),
    (lambda: Strawman(REGION, 2.0), {}, 1e-9),
    (lambda: TraCSC(REGION, 2.0), {}, 1e-9),  # EMS weight on held-out counts, on a finer grid
    (lambda: PlanarLaplace(REGION, 4.0), {}, 1e-9),
], ids=["tracs-d-1", "tracs-d-4", "strawman", "tracs-c", "planar-laplace"])
def test_equals_in_process_for_any_partitioning(client, make, options, atol):
    from tracs import dask as tdask

    pert = make()
    frame, rep, offsets = _released(pert)
    ref = density(rep, pert, offsets=offsets, grid=8, **options)
    for parts in (1, 3, 7):
        ddf = dd.from_pandas(frame, npartitions=parts, sort=False)  # users span partitions
        # every EM pass is a Dask computation (about 800 per estimate with the held-out pass budget),
        # each costing the cluster 10-20 ms of scheduling: the most split partitioning runs on the
        # cluster (its shuffle peer to peer), the others on the synchronous scheduler (task shuffle)
        with (dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"})
              if parts < CLUSTER_PARTS else contextlib.nullcontext()):
            est = tdask.estimate(ddf, pert, grid=8, user="uid", trajectory="day", time="t", x="x", y="y",
                                 **options)
        np.testing.assert_allclose(est.probabilities, ref.probabilities, rtol=0, atol=atol)
        assert est.iterations == ref.iterations and est.method == ref.method


def test_bad_inputs(client):
    from tracs import dask as tdask

    frame, _, _ = _released(TraCSD(REGION, 2.0), n=100)
    ddf = dd.from_pandas(frame, npartitions=2, sort=False)
    cases = [
        (dict(perturber=TraCSD(REGION, 2.0), x="x", y="y", user="nope"), ValueError, "missing column"),
        (dict(perturber="tracs-d", x="x", y="y"), TypeError, "perturber must be"),
        (dict(perturber=TraCSD(REGION, 2.0), x="x", y="y", shuffle="maybe"), ValueError, "shuffle must"),
        (dict(perturber=TraCSD(REGION, 2.0), x="x", y="y", grid=1), ValueError, "grid sizes"),
    ]
    for kwargs, exc, fragment in cases:
        kwargs = {"user": "uid", **kwargs}
        with pytest.raises(exc, match=fragment):
            tdask.estimate(ddf, kwargs.pop("perturber"), **kwargs)
