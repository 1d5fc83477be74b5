"""The registry of estimators (tracs.estimate.estimators): entries checked once, looked up by the
methods' entries, and the one source of what the estimating code used to decide by name."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate.estimators import (DENSITY, Estimator, density_estimator, estimator_of, estimators,
                                       get_estimator, register_estimator, unregister_estimator)
from tracs.methods import PERTURBER, Method, MethodContext, get, registered
from tracs.perturbers import TraCSC

REGION = Rectangle(0.0, 0.0, 10.0, 5.0)


def _blocks(plan, pts, off, eps, weights=None):
    return []


@pytest.mark.parametrize("make, error, message", [
    (lambda: Estimator("Bad Name", DENSITY, blocks=_blocks), ValueError,
     "an estimator name is a non-empty lower-case word, got 'Bad Name'"),
    (lambda: Estimator("ring", "volume", blocks=_blocks), ValueError,
     "target must be one of density, distribution, frequencies, got 'volume'"),
    (lambda: Estimator("ring", DENSITY), ValueError, "the density estimator 'ring' needs blocks"),
    (lambda: Estimator("ring", DENSITY, blocks=_blocks, counts=_blocks), ValueError,
     "estimator 'ring': counts and from_counts go together"),
    (lambda: register_estimator("axes"), TypeError, "register_estimator takes an Estimator, got str"),
    (lambda: register_estimator(Estimator("axes", DENSITY, blocks=_blocks)), ValueError,
     "an estimator named 'axes' is already registered"),
    (lambda: get_estimator("ring"), ValueError,
     "unknown estimator 'ring'; choose from distribution, axes, directional, grid, frequencies"),
    (lambda: Method("m", "M", PERTURBER, _blocks, family="fast"), ValueError, "family must be one of tracs-d, "),
    (lambda: Method("m", "M", PERTURBER, _blocks, estimator=""), ValueError,
     "estimator must be an estimator's name or None, got ''"),
])
def test_bad_entries_are_refused(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert str(info.value).startswith(message)


def test_a_method_naming_no_registered_estimator_is_refused_by_name():
    from tracs.estimate import density

    class Typo(TraCSC):
        pass

    entry = Method("typo", "typo", PERTURBER, lambda ctx, budget: Typo(ctx.region, **budget), model=Typo,
                   estimator="axis")
    with registered(entry), pytest.raises(ValueError, match="unknown estimator 'axis'; choose from distribution, "):
        density(np.array([[1.0, 1.0]]), entry.build(MethodContext(region=REGION), 2.0), grid=4)


def test_the_shipped_entries_say_what_the_branches_said():
    table = estimators()
    assert [n for n, e in table.items() if e.target == DENSITY] == ["axes", "directional", "grid"]
    assert table["directional"].trajectories and table["directional"].support is not None
    assert table["axes"].weighted and table["axes"].held_out_smoothing and table["axes"].merge is not None
    assert table["grid"].counts is not None and not table["grid"].trajectories
    assert estimator_of(TraCSC(REGION, 2.0)) is table["axes"]


def test_a_new_estimator_reaches_density_through_the_method_entry():
    """A perturber whose entry names a registered estimator is estimated with its blocks: here the
    "axes" likelihood under a new name (the same numbers, bit for bit, seed 5)."""
    axes = get_estimator("axes")
    copy = register_estimator(Estimator("axes-copy", DENSITY, blocks=axes.blocks, merge=axes.merge,
                                        weighted=True, held_out_smoothing=True))

    class Copy(TraCSC):
        pass

    entry = Method("axes-copy-method", "copy", PERTURBER, lambda ctx, budget: Copy(ctx.region, **budget),
                   model=Copy, estimator="axes-copy")
    try:
        with registered(entry):
            from tracs.estimate import density

            built = entry.build(MethodContext(region=REGION), 4.0)
            assert density_estimator(built) is copy
            points = np.array([[1.0, 1.0], [2.0, 3.5], [9.0, 4.0], [5.0, 2.5]])
            reports = built.perturb_many(points, np.array([0, 4]), rng=5)
            mine = density(reports, built, grid=4, iterations=5)
            shipped = density(reports, get("tracs-c").build(MethodContext(region=REGION), 4.0), grid=4,
                              iterations=5)
            assert np.array_equal(mine.probabilities, shipped.probabilities)
    finally:
        unregister_estimator("axes-copy")


def test_the_evaluation_estimates_every_method_with_a_density_estimator():
    """The estimated range-query column of a method whose entry names a density estimator is a number,
    NaN for one whose entry names none (a perturber of another class: tests/test_extending.py)."""
    from types import SimpleNamespace

    from tracs.evaluation.estimated import range_query_estimated

    class Renamed(TraCSC):
        pass

    entry = Method("renamed", "renamed", PERTURBER, lambda ctx, budget: Renamed(ctx.region, **budget),
                   model=Renamed, estimator="axes")
    dataset = SimpleNamespace(region=REGION)
    points = np.random.default_rng(0).uniform([0.0, 0.0], [10.0, 5.0], (40, 2))
    offsets = np.array([0, 20, 40])
    with registered(entry):
        built = entry.build(MethodContext(region=REGION), 4.0)
        reports = built.perturb_many(points, offsets, rng=1)
        error = range_query_estimated(points, reports, offsets, dataset, np.random.default_rng(2),
                                      perturber=built)
        assert np.isfinite(error) and 0.0 <= error < 1.0
    paper = get("tracs-d-paper").build(MethodContext(region=REGION), 4.0)  # "directional", its distance mode
    reports = paper.perturb_many(points, offsets, rng=1)
    error = range_query_estimated(points, reports, offsets, dataset, np.random.default_rng(2), perturber=paper)
    assert np.isfinite(error) and 0.0 <= error < 1.0

    class Unestimated(TraCSC):
        pass

    bare = Method("unestimated", "unestimated", PERTURBER, lambda ctx, budget: Unestimated(ctx.region, **budget),
                  model=Unestimated, estimator=None)
    with registered(bare):
        built = bare.build(MethodContext(region=REGION), 4.0)
        reports = built.perturb_many(points, offsets, rng=1)
        assert np.isnan(range_query_estimated(points, reports, offsets, dataset, np.random.default_rng(2),
                                              perturber=built))


def test_warm_up_hooks_run_with_the_family_their_entry_names():
    from tracs.warmup import FAMILIES, methods_of

    def warm(rng):
        return None

    named = Method("warm-named", "w", PERTURBER, _blocks, warm=warm, family="staircase")
    unnamed = Method("warm-unnamed", "w", PERTURBER, _blocks, warm=warm)
    with registered(named), registered(unnamed):
        assert named in methods_of("staircase") and unnamed in methods_of("other")
        assert all(named not in methods_of(f) for f in FAMILIES if f != "staircase")
