"""tracs.dask.denoise: given the same prior, every partition's denoised points are tracs.estimate.denoise's
bit for bit, any partitioning (users spanning partitions shuffled, rows put back in the input's order);
the prior fitted on Dask is tracs.dask.estimate's (equal to the local fit to 1e-9).

The Dask runs use the synchronous scheduler in this process (small frames).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracs import Rectangle
from tracs.errors import InputError, InputTypeError
from tracs.estimate import denoise as local_denoise
from tracs.estimate import density
from tracs.perturbers import TraCSC, TraCSD

dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
pytest.importorskip("distributed", reason="tracs[dask] is not installed")

from tracs.dask import denoise, estimate  # noqa: E402 - after the skips

REGION = Rectangle(0.0, 0.0, 2000.0, 1000.0)
POIS = np.random.default_rng(7).uniform([0, 0], [2000, 1000], (30, 2))
METHODS = {"tracs-c": lambda: TraCSC(REGION, 2.0), "tracs-d": lambda: TraCSD(REGION, 2.0)}


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        yield


def _released(perturber, n=400, users=12):
    """Released points (seed 3) of ``users`` users with two trajectories each (points: seed 0); the frame's rows
    shuffled (seed 1), the reports and offsets in (user, trajectory, time) order."""
    rng = np.random.default_rng(0)
    keys = np.sort(rng.integers(0, 2 * users, n))  # user k // 2, trajectory k % 2
    pts = np.clip(rng.normal([700, 400], [300, 200], (n, 2)), [0, 0], [2000, 1000])
    offsets = np.r_[np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]), n]
    rep = perturber.perturb_many(pts, offsets, rng=3)
    frame = pd.DataFrame({"uid": keys // 2, "day": keys % 2, "t": np.arange(n), "x": rep[:, 0], "y": rep[:, 1],
                          "note": np.arange(n).astype(str)})
    return frame.sample(frac=1.0, random_state=1), rep, offsets


COLUMNS = dict(user="uid", trajectory_column="day", time="t", x="x", y="y")
OPTIONS = {"per point": {}, "per trajectory": {"trajectory": True}, "onto the POIs": {"pois": POIS},
           "onto the POIs given the trajectory": {"pois": POIS, "trajectory": True, "rule": "mode"},
           "onto the POIs given the trajectory, no revisits": {"pois": POIS, "trajectory": True, "revisit": None}}
HOW = {"per point": "posterior mean", "per trajectory": "smoothed", "onto the POIs": "POI nearest the posterior mean",
       "onto the POIs given the trajectory": "posterior mode at a POI given the trajectory",
       "onto the POIs given the trajectory, no revisits": "POI nearest the posterior mean given the trajectory"}


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_given_the_prior_every_point_is_the_local_one(method, case):
    pert = METHODS[method]()
    frame, rep, offsets = _released(pert)
    prior = density(rep, pert, offsets=offsets, grid=6)
    ref = local_denoise(rep, pert, prior, offsets=offsets, **OPTIONS[case])
    ref = pd.DataFrame(ref, columns=["x", "y"]).loc[frame.index]  # the frame's index: the row's position
    for parts in (1, 4):
        ddf = dd.from_pandas(frame, npartitions=parts, sort=False)  # users span partitions
        out = denoise(ddf, pert, prior=prior, **OPTIONS[case], **COLUMNS).compute()
        assert out.index.equals(frame.index) and list(out.columns) == [*frame.columns, "denoised"]
        assert np.array_equal(out[["x", "y"]].to_numpy(), ref.to_numpy())
        pd.testing.assert_frame_equal(out.drop(columns=["x", "y", "denoised"]), frame.drop(columns=["x", "y"]),
                                      check_dtype=False)  # dask holds text as its string dtype
        assert (out["denoised"] == HOW[case]).all()


@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_prior_is_the_dask_estimate(method):
    pert = METHODS[method]()
    frame, rep, offsets = _released(pert)
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    prior = estimate(ddf, pert, grid=6, user="uid", trajectory="day", time="t", x="x", y="y")
    np.testing.assert_allclose(prior.probabilities, density(rep, pert, offsets=offsets, grid=6).probabilities,
                               rtol=0, atol=1e-9)
    given = denoise(ddf, pert, prior=prior, **COLUMNS).compute()
    fitted = denoise(ddf, pert, grid=6, **COLUMNS).compute()
    assert given.equals(fitted)


def test_a_frame_shuffled_once_by_the_caller_gives_the_same_points():
    # docs/cluster.md: shuffle by user and persist once, then shuffle=False: the prior fitted, the transition
    # chosen and every point denoised as on the unshuffled frame, whose three steps each shuffle it the same
    # way (the same partitions, so the same partition sums): bit for bit, row for row by index
    pert = METHODS["tracs-d"]()
    frame, rep, offsets = _released(pert)
    ddf = dd.from_pandas(frame, npartitions=4, sort=False)  # users span partitions
    options = {**COLUMNS, "grid": 6, "trajectory": True}
    by_user = ddf.shuffle(on="uid").persist()
    once = denoise(by_user, pert, shuffle=False, **options).compute()
    default = denoise(ddf, pert, **options).compute()
    assert sorted(once.index) == sorted(default.index)
    assert np.array_equal(once.loc[default.index, ["x", "y"]].to_numpy(), default[["x", "y"]].to_numpy())


BAD = [
    (dict(x=None, y=None), InputError, "give the coordinate columns x= and y="),
    (dict(user="nope"), InputError, "missing column"),
    (dict(shuffle="maybe"), InputError, "shuffle must be 'auto', True or False, got 'maybe'"),
    (dict(scale=10.0), InputError, "scale and jump are parameters of trajectory=True"),
    (dict(perturber="tracs-d"), InputTypeError, "perturber must be"),
    (dict(frame="denoised"), InputError, "the frame already has a column 'denoised'; rename or drop it"),
    (dict(revisit=-2.0), InputError, "revisit must be a finite number > 0 or None, got -2.0"),
]


@pytest.mark.parametrize("kwargs, exc, message", BAD)
def test_bad_inputs(kwargs, exc, message):
    frame, rep, offsets = _released(TraCSD(REGION, 2.0), n=60)
    if kwargs.pop("frame", None):
        frame = frame.assign(denoised="x")
    pert = kwargs.pop("perturber", TraCSD(REGION, 2.0))
    prior = density(rep, TraCSD(REGION, 2.0), offsets=offsets, grid=4)
    with pytest.raises(exc, match=message):
        denoise(dd.from_pandas(frame, npartitions=2, sort=False), pert, prior=prior, **{**COLUMNS, **kwargs})
