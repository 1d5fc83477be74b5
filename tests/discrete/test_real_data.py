"""Every discrete-space method on the Tokyo and Chicago samples: errors fall with ε.

Data preparation: check-ins grouped per user and split at gaps over 3 hours; the POI
space is every distinct location of the whole file.  To keep the test fast, a fixed
subsample (seed 2024) of at most 300 trajectories with at least 2 points is kept,
each cut to its first 20 points.  All methods run at the same per-point ε (TP and
ATP, which protect a whole trajectory, get ``n·ε`` for an ``n``-point trajectory).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.poi_space import POISpace
from tracs.metrics import average_error
from tracs.perturbers import TraCSC, TraCSD

pytestmark = pytest.mark.data

MAX_TRAJECTORIES = 300
MAX_POINTS = 20


@functools.lru_cache(maxsize=None)
def _prepared(path: str, kind: str):
    from data_loaders import load_foursquare, load_gowalla, to_trajectories

    checkins = (load_foursquare if kind == "foursquare" else load_gowalla)(path)
    trajectories = to_trajectories(checkins, split_gap="3h")
    space = POISpace(trajectories.pois().coords)
    lengths = np.asarray(trajectories.lengths)
    eligible = np.flatnonzero(lengths >= 2)
    rng = np.random.default_rng(2024)
    chosen = np.sort(rng.choice(eligible, size=min(MAX_TRAJECTORIES, eligible.size), replace=False))
    coords = np.asarray(trajectories.coords)
    offsets = np.asarray(trajectories.offsets)
    parts = [coords[offsets[t]:offsets[t] + min(MAX_POINTS, lengths[t])] for t in chosen]
    flat = np.concatenate(parts)
    sub_offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])])
    return space, flat, sub_offsets


def _methods(space, epsilon):
    return {
        "EM": ExponentialMechanism(space, epsilon),
        "NGram": NGram(space, epsilon),
        "L-SRR": LSRR(space, epsilon),
        "TP": TP(space, epsilon),
        "ATP": ATP(space, epsilon),
        "TraCS-D": TraCSD(space.region, epsilon, round_to=space),
        "TraCS-C": TraCSC(space.region, epsilon, round_to=space),
    }


@pytest.mark.parametrize("dataset", ["tky", "chi"])
def test_every_method_errors_fall_with_epsilon(dataset, request):
    path = request.getfixturevalue(f"{dataset}_path")
    space, coords, offsets = _prepared(str(path), "foursquare" if dataset == "tky" else "gowalla")
    assert np.isin(coords.view(np.complex128), space.points.view(np.complex128)).all()
    errors = {}
    for epsilon in (2.0, 8.0):
        for name, method in _methods(space, epsilon).items():
            out = method.perturb_many(coords, offsets, rng=17)
            # outputs are POIs, in input order
            assert out.shape == coords.shape
            assert np.isin(out.view(np.complex128), space.points.view(np.complex128)).all()
            errors[name, epsilon] = average_error(coords, out, offsets)
    table = "\n".join(f"{name:8s} ε=2: {errors[name, 2.0]:8.0f} m   ε=8: {errors[name, 8.0]:8.0f} m"
                      for name in _methods(space, 1.0))
    print(f"\n{dataset.upper()} ({len(offsets) - 1} trajectories, {len(coords)} points)\n{table}")
    for name in _methods(space, 1.0):
        assert errors[name, 8.0] < errors[name, 2.0], (name, errors[name, 2.0], errors[name, 8.0])
