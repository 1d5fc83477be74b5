"""Every registered method that names an estimator (tracs.methods) has its reports accepted by that
estimator, and every method without one is refused by the estimators of its kind: the registry's
``estimator`` field is what the estimators do, not a wish."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import density, distribution, frequencies
from tracs.estimate.estimators import (DENSITY, DISTRIBUTION, FREQUENCIES, TARGETS, estimators,
                                       get_estimator)
from tracs.methods import BASELINE, MECHANISM, PERTURBER, MethodContext, get, view

REGION = Rectangle(0.0, 0.0, 10.0, 5.0)
POIS = np.array([[1.0, 1.0], [2.0, 3.5], [9.0, 4.0], [5.0, 2.5], [0.5, 4.5], [7.0, 0.5], [4.0, 4.0],
                 [8.0, 2.0]])
POINTS = np.array([[1.0, 1.0], [2.0, 3.5], [9.0, 4.0], [5.0, 2.5], [0.5, 4.5], [7.0, 0.5]])
OFFSETS = np.array([0, 2, 6])
EPSILON = 4.0


def _inputs(mechanism) -> np.ndarray:
    """Twelve inputs spread over the mechanism's input domain."""
    dom = mechanism.input_domain
    if hasattr(dom, "k"):
        return np.arange(12) % dom.k
    if hasattr(dom, "period"):
        return np.linspace(0.0, dom.period, 12, endpoint=False)
    return np.linspace(dom.low, dom.high, 12)


def _mechanism_estimate(method):
    mechanism = method.build(None, EPSILON)
    reports = mechanism.sample(_inputs(mechanism), rng=5)
    return distribution(reports, mechanism, bins=4, bootstrap=0, max_iterations=5)


def _trajectory_estimate(method, target):
    built = method.build(MethodContext(region=REGION, pois=POIS), EPSILON)
    reports = built.perturb_many(POINTS, OFFSETS, rng=5)
    if target == FREQUENCIES:
        return frequencies(reports, built, offsets=OFFSETS, iterations=5)
    return density(reports, built, offsets=OFFSETS, grid=4, iterations=5)


#: how the estimators of each target (tracs.estimate.estimators) are called on a method's reports
CALLS = {DISTRIBUTION: _mechanism_estimate,
         DENSITY: lambda method: _trajectory_estimate(method, DENSITY),
         FREQUENCIES: lambda method: _trajectory_estimate(method, FREQUENCIES)}


def test_every_target_is_called_here():
    assert set(CALLS) == set(TARGETS) >= {e.target for e in estimators().values()}


@pytest.mark.parametrize("name", [n for n, m in view().items() if m.estimator is not None])
def test_the_registered_estimator_accepts_the_reports(name):
    method = get(name)
    est = CALLS[get_estimator(method.estimator).target](method)
    p = np.asarray(est.probabilities)
    assert p.size > 1 and np.all(np.isfinite(p)) and p.min() >= 0.0
    assert abs(p.sum() - 1.0) < 1e-9


# the estimator each kind of method without one would be handed, and the refusal it gives (by name)
REFUSALS = {PERTURBER: (DENSITY, TypeError, "without one"),
            BASELINE: (FREQUENCIES, TypeError, "baseline must be a registered baseline with the frequencies "
                                                 r"estimator \(em, ngram, lsrr\); .* without it")}


@pytest.mark.parametrize("name", [n for n, m in view().items() if m.estimator is None])
def test_methods_without_an_estimator_are_refused(name):
    method = get(name)
    assert method.kind in REFUSALS, f"{name}: a {method.kind} without an estimator has no refusal checked here"
    target, error, message = REFUSALS[method.kind]
    with pytest.raises(error, match=message):
        _trajectory_estimate(method, target)


def test_atp_tp_and_the_thresholds_variant_have_no_estimator():
    # tracs.estimate.frequencies has no likelihood for sector reports (ATP, TP), and the
    # thresholds grouping of L-SRR is not ε-LDP
    assert [n for n, m in view(BASELINE).items() if m.estimator is None] == ["lsrr-thresholds", "atp", "tp"]
    assert all(m.estimator == "distribution" for m in view(MECHANISM).values())


@pytest.mark.parametrize("name, message", [
    ("em", "no density estimator for method 'em'; use tracs.estimate.frequencies for its POI reports"),
    ("lsrr", "no density estimator for method 'lsrr'; use tracs.estimate.frequencies for its POI reports"),
    ("atp", "no density estimator for method 'atp'; it has no estimator"),
    ("tp", "no density estimator for method 'tp'; it has no estimator"),
    ("lsrr-thresholds", "no density estimator for method 'lsrr-thresholds'; it has no estimator"),
])
def test_a_baseline_sidecar_names_its_estimator_or_none(name, message):
    from tracs.estimate.sidecar import perturber_from_sidecar

    with pytest.raises(ValueError) as info:
        perturber_from_sidecar({"method": name})
    assert str(info.value) == message
