"""Every shipped mechanism, perturber and baseline passes the audit (small budget, fixed seeds).

Budget: 4,000 draws per input at ε = 1 and confidence 0.99, seed 0, over the
audit's default candidates (83 inputs per 1-D mechanism, 246 trajectory scenarios
per perturber); a false alarm has probability at most 1 % per method whatever the
budget (the default budget's runs: ``python -m benchmarks audit``).  A shipped method
must show no violation and must declare an output lattice that every draw
lies on; the one method shipped only to reproduce a paper (``lsrr-thresholds``,
documented as not ε-LDP) must be flagged at its nominal budget.
"""

from __future__ import annotations

import pytest

from tracs.privacy.catalog import CATALOG, audit_target

LDP = [name for name, target in CATALOG.items() if target.ldp]


@pytest.mark.parametrize("name", LDP)
def test_shipped_method_shows_no_violation(name):
    report = audit_target(name, 1.0, samples=4_000)
    assert not report.violation, str(report)
    assert report.off_lattice == 0


def _declares_lattice(name) -> bool:
    method = CATALOG[name].build(1.0)
    return hasattr(method, "lattice") or hasattr(method, "poi_space")


# mechanisms and perturbers declare their lattice from the lattice-output release on;
# strict: once declared, the check must pass
LATTICE_CASES = [
    pytest.param(name, marks=pytest.mark.xfail(not _declares_lattice(name), strict=True,
                                               reason="no declared output lattice yet"))
    for name in LDP
]


@pytest.mark.parametrize("name", LATTICE_CASES)
def test_shipped_method_declares_a_lattice_its_outputs_lie_on(name):
    report = audit_target(name, 1.0, samples=2_000)
    assert report.passed, str(report)


def test_shipped_method_that_is_not_ldp_is_flagged():
    from tracs.privacy import audit_perturber

    method = CATALOG["lsrr-thresholds"].build(1.0)
    report = audit_perturber(method, 1.0, samples=20_000)
    assert report.violation and report.epsilon_lower_bound > 1.0, str(report)


# methods whose real loss at the audit's candidate inputs reaches their claim; the
# exponential-mechanism baselines (em, ngram, atp, tp) spend less than they claim on
# this POI set (their normalisers are nearly equal), so an inflated claim is not visible.
# In 2-D only TraCS-D here (the benchmark covers every method at ε in 0.5, 1, 2).
TIGHT = [name for name in LDP if CATALOG[name].kind == "1d"] + ["tracs-d"]


@pytest.mark.parametrize("name", TIGHT)
def test_shipped_method_at_one_and_a_half_epsilon_is_flagged(name):
    # built at ε = 1.5, claimed as ε = 1; budget 60,000 draws per input (20,000 in 2-D)
    from tracs.privacy import audit, audit_perturber

    target = CATALOG[name]
    method = target.build(1.5)
    if target.kind == "1d":
        report = audit(method, 1.0, samples=60_000)
    else:
        report = audit_perturber(method, 1.0, samples=20_000)
    assert report.violation and 1.0 < report.epsilon_lower_bound <= 1.5 * 1.02, str(report)
