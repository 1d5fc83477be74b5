"""One releaser contract: perturbers and baselines share the budget, its messages, keyed streams
and the engine's public chunk path (tracs.releaser.Releaser)."""

from __future__ import annotations

import numpy as np
import pytest

import tracs
from tracs import engine
from tracs.baselines import LSRR, NGram, ExponentialMechanism
from tracs.perturbers import Perturber, PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.baselines import Baseline
from tracs.poi_space import POISpace
from tracs.region import Rectangle
from tracs.releaser import PrivacyLedger, Releaser, takes_keys

REGION = Rectangle(0, 0, 100, 100)
SPACE = POISpace(np.array([[x, y] for x in range(5, 100, 10) for y in range(5, 100, 10)], dtype=float))


def _perturber(epsilon=None, **kw):
    return TraCSC(REGION, epsilon, **kw)


def _baseline(epsilon=None, **kw):
    return NGram(SPACE, epsilon, **kw)


BUILDERS = {"perturber": _perturber, "baseline": _baseline}

#: (budget arguments, error class, message fragment): the same for every releaser
BAD_BUDGETS = [
    ({}, TypeError, "give exactly one of epsilon (per point) and epsilon_per_trajectory"),
    ({"epsilon": 1.0, "epsilon_per_trajectory": 2.0}, ValueError, "give exactly one of epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"epsilon_per_trajectory": 0.0}, ValueError, "epsilon_per_trajectory"),
]


def test_the_package_root_names_the_releaser_and_its_ledger():
    assert tracs.Releaser is Releaser and tracs.PrivacyLedger is PrivacyLedger
    from tracs.perturbers import PrivacyLedger as from_perturbers

    assert from_perturbers is PrivacyLedger


@pytest.mark.parametrize("cls", [TraCSD, TraCSC, Strawman, PlanarLaplace, NGram, LSRR, ExponentialMechanism])
def test_every_shipped_releaser_derives_from_the_one_base_and_is_keyed(cls):
    assert issubclass(cls, Releaser) and cls.keyed is True
    assert issubclass(cls, (Perturber, Baseline))


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("budget, error, fragment", BAD_BUDGETS, ids=lambda v: str(v)[:40])
def test_one_set_of_budget_messages(kind, budget, error, fragment):
    budget = dict(budget)
    epsilon = budget.pop("epsilon", None)
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        BUILDERS[kind](epsilon, **budget)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_budget_properties_and_ledger(kind):
    per_point = BUILDERS[kind](2.0)
    assert (per_point.epsilon, per_point.epsilon_per_trajectory, per_point.basis) == (2.0, None, "per_point")
    ledger = per_point.privacy_spent(5)
    assert (ledger.per_point, ledger.per_trajectory, ledger.n_points) == (2.0, 10.0, 5)
    per_traj = BUILDERS[kind](epsilon_per_trajectory=8.0)
    assert per_traj.basis == "per_trajectory"
    np.testing.assert_array_equal(per_traj.epsilon_per_point([1, 4]), [8.0, 2.0])
    with pytest.raises(ValueError, match="n must be >= 1"):
        per_traj.privacy_spent(0)
    with pytest.raises(TypeError, match="n must be an integer number of points"):
        per_traj.privacy_spent(2.5)


class _Plain:
    def perturb_many(self, coords, offsets, *, rng=None):
        return np.asarray(coords, dtype=float)


class _WithKeys(_Plain):
    def perturb_many(self, coords, offsets, *, rng=None, keys=None):
        return np.asarray(coords, dtype=float)


class _Flagged(_WithKeys):
    keyed = False  # says it draws from no keyed streams, whatever its signature


@pytest.mark.parametrize("obj, expected", [(_perturber(1.0), True), (_baseline(1.0), True), (_Plain(), False),
                                           (_WithKeys(), True), (_Flagged(), False), (object(), False)],
                         ids=["perturber", "baseline", "no keys", "keys parameter", "flag false", "no method"])
def test_takes_keys_reads_the_class_flag_first(obj, expected):
    assert takes_keys(obj) is expected


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_engine_calls_the_public_chunk_path(kind, monkeypatch):
    releaser = BUILDERS[kind](1.0)
    calls = []
    original = type(releaser).release_into

    def counting(self, coords, offsets, streams, out):
        calls.append(len(coords))
        return original(self, coords, offsets, streams, out)

    monkeypatch.setattr(type(releaser), "release_into", counting)
    rng = np.random.default_rng(0)
    coords = rng.uniform(1, 99, (60, 2))
    offsets = np.array([0, 10, 25, 40, 60])
    out = engine.perturb_many(releaser, coords, offsets, rng=3, keys=["a", "b", "c", "d"], workers=2)
    assert sum(calls) == 60
    monkeypatch.undo()
    serial = releaser.perturb_many(coords, offsets, rng=3, keys=["a", "b", "c", "d"])
    np.testing.assert_array_equal(out, serial)
