"""The registry's ``keyed`` and ``lattice`` fields agree with what each entry builds.

Everything that needs a method's key use or lattice asks these fields (the release
steps, the engine's callers, the audit, the sidecar writer, the collector), never the
built object: an entry whose fields disagree with what it builds fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracs.engine.batch import takes_keys
from tracs.errors import InputError, InputTypeError
from tracs.methods import (GRID, LINE, MECHANISM, PERTURBER, POIS, POLAR, Method, MethodContext, get, keyed,
                           lattice_kind, registered, view)
from tracs.region import Rectangle

#: a public context fixed in advance: a 1 km square and 20 POIs (seed 0), as the warm-up's
CONTEXT = MethodContext(region=Rectangle(0.0, 0.0, 1000.0, 1000.0),
                        pois=np.random.default_rng(0).uniform(0.0, 1000.0, (20, 2)))


def built(entry: Method):
    """The entry built from public parameters only (ε = 1 for a mechanism, 2 for the others)."""
    return entry.build(None, 1.0) if entry.kind == MECHANISM else entry.build(CONTEXT, 2.0)


def disagreements(entry: Method) -> list:
    """How ``entry``'s ``keyed``, ``lattice`` and ``pointwise`` fields disagree with the object it builds
    (a pointwise entry's object releases one point at a time: ``release_at``, checked against the batch
    release by ``tests/collect/test_release_contract.py``)."""
    obj = built(entry)
    found = []
    if entry.keyed != takes_keys(obj):
        found.append(f"keyed={entry.keyed} but the built object {'takes' if takes_keys(obj) else 'takes no'} keys")
    lattice = getattr(obj, "lattice", None)
    shape = (POIS if lattice is None and hasattr(obj, "poi_space") else
             POLAR if hasattr(lattice, "direction") and hasattr(lattice, "distance") else
             GRID if isinstance(lattice, tuple) and len(lattice) == 2 else
             LINE if all(hasattr(lattice, a) for a in ("origin", "spacing", "count")) else None)
    if entry.lattice != shape:
        found.append(f"lattice={entry.lattice!r} but the built object's lattice is {shape!r}")
    if entry.pointwise and not callable(getattr(obj, "release_at", None)):
        found.append("pointwise=True but the built object has no release_at")
    return found


@pytest.mark.parametrize("name", list(view()))
def test_every_registered_method_agrees_with_what_it_builds(name):
    assert disagreements(get(name)) == []


@pytest.mark.parametrize("name", list(view(PERTURBER)))
def test_the_registry_answers_for_a_built_perturber(name):
    entry, obj = get(name), built(get(name))
    assert keyed(obj) is entry.keyed and lattice_kind(obj) == entry.lattice
    assert entry.lattice_of(obj) == obj.lattice
    public = entry.public_lattice(CONTEXT, 2.0)  # from public parameters only: the same lattice
    assert type(public) is type(obj.lattice) and repr(public) == repr(obj.lattice)


def test_a_baseline_declares_its_pois_and_no_lattice_of_values():
    entry = get("em")
    assert entry.lattice == POIS and entry.public_lattice(CONTEXT, 2.0) is None
    assert entry.lattice_of(built(entry)) is None


def test_an_entry_whose_fields_disagree_is_caught():
    """A perturber registered as unkeyed with a grid lattice, building TraCS-D (keyed, polar): both
    fields are named."""
    wrong = Method("wrong-fields", "wrong", PERTURBER, get("tracs-d").factory, keyed=False, lattice=GRID)
    with registered(wrong):
        found = disagreements(wrong)
    assert len(found) == 2
    assert found[0].startswith("keyed=False but the built object takes keys")
    assert found[1] == "lattice='grid' but the built object's lattice is 'direction-distance'"


def test_a_pointwise_entry_must_build_a_one_point_release():
    wrong = Method("wrong-pointwise", "wrong", PERTURBER, get("em").factory, lattice=POIS, pointwise=True)
    with registered(wrong):
        assert disagreements(wrong) == ["pointwise=True but the built object has no release_at"]


def test_defaults_by_kind():
    mechanism = Method("a-mechanism", "m", MECHANISM, lambda epsilon: None)
    perturber = Method("a-perturber", "p", PERTURBER, lambda ctx, budget: None)
    assert (mechanism.keyed, mechanism.lattice) == (False, LINE)
    assert (perturber.keyed, perturber.lattice) == (True, None)  # a perturber declares its lattice itself
    assert not mechanism.pointwise and not perturber.pointwise  # released point by point only when declared


@pytest.mark.parametrize("fields, error, message", [
    ({"keyed": "yes"}, InputTypeError, "keyed of 'bad' must be True or False, got 'yes'"),
    ({"keyed": 1}, InputTypeError, "keyed of 'bad' must be True or False, got 1"),
    ({"pointwise": 1}, InputTypeError, "pointwise of 'bad' must be True or False, got 1"),
    ({"lattice": "hexagonal"}, InputError,
     "lattice must be one of line, grid, direction-distance, pois or None, got 'hexagonal'"),
])
def test_bad_fields(fields, error, message):
    with pytest.raises(error) as caught:
        Method("bad", "bad", PERTURBER, lambda ctx, budget: None, **fields)
    assert str(caught.value) == message
