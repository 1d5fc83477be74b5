"""The perturbers' release path (and the directional likelihood) reads the mechanisms' constants from
the private closed forms: it builds no public mechanism object, whose constructor would validate
every per-point budget again.  The public constructors are made to raise here, and every registered
perturber releases per-trajectory budgets (one per-point budget per length) through it."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import density
from tracs.mechanisms import KRR, OptimalCircular, OptimalClassical
from tracs.mechanisms._base import Mechanism
from tracs.methods import PERTURBER, MethodContext, get, view

REGION = Rectangle(0.0, 0.0, 10.0, 5.0)
LENGTHS = [1, 2, 3, 5, 8]
OFFSETS = np.concatenate([[0], np.cumsum(LENGTHS)])
POINTS = np.random.default_rng(4).uniform((0.0, 0.0), (10.0, 5.0), size=(OFFSETS[-1], 2))
#: options that take other paths to the kernel rows (the optimal split of TraCS-D)
OPTIONS = {"tracs-d": [{}, {"direction_share": "optimal"}]}


@pytest.fixture
def no_public_mechanisms(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError(f"a public {type(self).__name__} was built on the release path")

    for cls in (OptimalClassical, OptimalCircular, KRR):
        monkeypatch.setattr(cls, "__init__", refuse)
    monkeypatch.setattr(Mechanism, "__post_init__", refuse)  # any other continuous mechanism
    with pytest.raises(AssertionError, match="a public OptimalClassical was built"):
        OptimalClassical(epsilon=1.0)


def _cases():
    return [(name, options) for name in view(PERTURBER) for options in OPTIONS.get(name, [{}])]


@pytest.mark.parametrize("name, options", _cases(), ids=lambda v: v if isinstance(v, str) else str(v))
def test_per_trajectory_releases_build_no_public_mechanism(no_public_mechanisms, name, options):
    method = get(name)
    context = MethodContext(region=REGION, anchor="corner")
    built = method.build(context, 12.0, per_trajectory=True, **options)
    out = built.perturb_many(POINTS, OFFSETS, rng=9)
    assert out.shape == POINTS.shape and np.all(REGION.contains(out))
    # the engine's chunks and the lattice indices take the same path
    assert np.array_equal(built.perturb_many(POINTS, OFFSETS, rng=9, workers=2), out)
    if hasattr(built, "lattice_indices"):
        assert built.lattice_indices(POINTS, OFFSETS, rng=9).shape == POINTS.shape
    # a per-point budget's rows are computed when the perturber is built
    assert method.build(context, 3.0, **options).perturb_many(POINTS, OFFSETS, rng=9).shape == POINTS.shape


@pytest.mark.parametrize("name", [n for n, m in view(PERTURBER).items() if m.estimator == "directional"])
def test_the_directional_likelihood_builds_no_public_mechanism(no_public_mechanisms, name):
    built = get(name).build(MethodContext(region=REGION, anchor="corner"), 12.0, per_trajectory=True)
    reports = built.perturb_many(POINTS, OFFSETS, rng=9)
    est = density(reports, built, offsets=OFFSETS, grid=4, iterations=3)
    assert abs(est.probabilities.sum() - 1.0) < 1e-9


@pytest.mark.parametrize("build, message", [
    (lambda: get("tracs-d").build(MethodContext(region=REGION), 2000.0), "epsilon = 1517.09 exceeds 700"),
    (lambda: get("tracs-c").build(MethodContext(region=REGION), 1500.0), "epsilon = 750 exceeds 700"),
    (lambda: get("strawman").build(MethodContext(region=REGION), 1e-100), "is below the smallest supported budget"),
    (lambda: get("tracs-d").build(MethodContext(region=REGION), 1.5e-100, direction_share=0.5),
     "epsilon = 7.5e-101 is below the smallest supported budget"),
])
def test_split_budgets_out_of_range_are_refused_once_when_built(build, message):
    with pytest.raises(ValueError) as info:
        build()
    assert message in str(info.value)


def test_per_trajectory_budgets_out_of_range_are_refused_when_the_lengths_are_known():
    perturber = get("tracs-c").build(MethodContext(region=REGION), 3000.0, per_trajectory=True)
    # lengths 1 and 2 spend 3000 and 1500 per point, halves 1500 and 750: the smallest is named
    with pytest.raises(ValueError, match="epsilon = 750 exceeds 700"):
        perturber.perturb_many(POINTS, OFFSETS, rng=1)
    long_only = np.array([0, 5, 13])
    assert perturber.perturb_many(POINTS[:13], long_only, rng=1).shape == (13, 2)
