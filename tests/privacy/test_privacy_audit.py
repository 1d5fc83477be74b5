"""tracs.audit and tracs.audit_perturber: they flag what is not ε-LDP, pass what is.

Every audit here runs with a fixed seed (``rng=0`` unless stated), so each test
is deterministic; the confidence is 0.99 throughout.  The bad samplers are
flagged with margins far above the bound's noise (stated per test); the
false-alarm rate on a tight ε-LDP sampler is checked over 100 seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from audit_toys import GridPerturber, LatticeExponential, ReturnsInput, scalar_only

import tracs
import tracs.mechanisms as m
from tracs.privacy import clopper_pearson_lower, clopper_pearson_upper

CONF = 0.99


def test_flags_sampler_returning_its_input_two_percent_of_the_time():
    # true loss is infinite (an atom at x); the bound at 40k draws/input is about 5
    bad = ReturnsInput(m.OptimalClassical(epsilon=1.0), leak=0.02)
    report = tracs.audit(bad, 1.0, samples=40_000, confidence=CONF)
    assert report.violation and not report.passed
    assert report.epsilon_lower_bound > 3.0
    assert report.worst_event.startswith("Y = ")
    assert report.confidence == CONF


@pytest.mark.parametrize("family, epsilon", [
    *[(family, eps) for family in ("OptimalClassical", "SquareWave") for eps in (0.5, 1.0, 2.0)],
    ("Laplace", 1.0),  # every shipped mechanism at ε = 1: test_privacy_shipped.py
])
def test_flags_a_mechanism_of_one_and_a_half_epsilon_claimed_as_epsilon(family, epsilon):
    mech = getattr(m, family)(epsilon=1.5 * epsilon)
    report = tracs.audit(mech, epsilon, samples=100_000, confidence=CONF)
    assert report.violation, str(report)
    assert epsilon < report.epsilon_lower_bound <= 1.5 * epsilon * 1.02  # a lower bound: below the truth


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_honest_claim_of_the_same_mechanisms_passes_the_budget_check(epsilon):
    report = tracs.audit(m.OptimalClassical(epsilon=epsilon), epsilon, samples=100_000)
    assert not report.violation
    # the audit is also tight: its Clopper–Pearson margin at 100,000 draws is about 0.1 in ε
    assert 0.75 * epsilon < report.epsilon_lower_bound <= epsilon


def test_flags_low_bit_leak_off_the_declared_lattice():
    report = tracs.audit(LatticeExponential(1.0, leak_low_bits=True), 1.0, domain=(0, 1), samples=2_000)
    assert report.violation and report.off_lattice > 0
    assert any("off-lattice output (low-bit leak)" in r for r in report.reasons)


def test_non_finite_outputs_are_a_violation():
    base = LatticeExponential(1.0)

    def sometimes_nan(x, rng):
        y = base.sample(x, rng=rng)
        return np.where(y > 0.9, np.nan, y)

    report = tracs.audit(sometimes_nan, 1.0, domain=(0, 1), samples=2_000, lattice=base.lattice)
    assert report.violation and any("NaN or infinite" in r for r in report.reasons)


def test_lattice_sampler_passes():
    report = tracs.audit(LatticeExponential(1.0), 1.0, domain=(0, 1), samples=40_000)
    assert report.passed and report.verdict == "pass"
    assert report.off_lattice == 0 and not report.unverifiable_low_bits


def test_sampler_without_lattice_is_unverifiable_never_passing():
    base = LatticeExponential(1.0)
    report = tracs.audit(lambda x, rng: base.sample(x, rng=rng), 1.0, domain=(0, 1), samples=4_000)
    assert not report.violation and not report.passed
    assert report.unverifiable_low_bits and report.verdict == "unverifiable (no lattice)"


def test_explicit_lattice_argument_overrides():
    base = LatticeExponential(1.0)
    report = tracs.audit(lambda x, rng: base.sample(x, rng=rng), 1.0, domain=(0, 1), samples=2_000,
                         lattice=(0.0, 1 / 16, 17))  # half the true lattice's points: others are off
    assert report.violation and report.off_lattice > 0


def test_callable_rejecting_arrays_is_called_per_draw_and_says_so():
    report = tracs.audit(scalar_only(LatticeExponential(1.0)), 1.0, domain=(0, 1), samples=400,
                         lattice=(0.0, 1 / 32, 33))
    assert not report.vectorised and report.passed
    assert any("once per draw" in r for r in report.reasons)


def test_report_is_reproducible_and_printable():
    a = tracs.audit(m.Laplace(epsilon=1.0), 1.0, samples=2_000, rng=7)
    b = tracs.audit(m.Laplace(epsilon=1.0), 1.0, samples=2_000, rng=7)
    assert a == b
    text = str(a)
    assert "claimed ε = 1" in text and "confidence 0.99" in text


def test_false_alarm_rate_at_most_the_stated_level():
    # k-RR with k=2 at ε=1 is exactly tight (ratio e^ε on both outputs): the
    # hardest honest case.  At 99 % at most 1 % of audits may flag it; over 100
    # seeds, 6 or more flags has probability < 5e-4 if the audit is sound.
    mech = m.KRR(epsilon=1.0, k=2)
    flags = sum(tracs.audit(mech, 1.0, samples=400, rng=s, lattice=(0, 1, 2)).violation for s in range(100))
    assert flags <= 5


def test_clopper_pearson_edges_are_exact():
    n, alpha = 1000, 0.005
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-9)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-9)
    assert clopper_pearson_lower(0, n, alpha) == 0.0 and clopper_pearson_upper(n, n, alpha) == 1.0


# -- 2-D ---------------------------------------------------------------------------------

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]])


def test_2d_lattice_perturber_passes():
    report = tracs.audit_perturber(GridPerturber(1.0), 1.0, points=SQUARE, samples=20_000)
    assert report.passed, str(report)


def test_2d_flags_returned_inputs_and_inflated_budget():
    leaky = tracs.audit_perturber(GridPerturber(1.0, leak=0.02), 1.0, points=SQUARE, samples=20_000)
    assert leaky.violation and leaky.epsilon_lower_bound > 1.0
    axis = m.OptimalClassical(epsilon=1.5)  # two axes at 1.5 each: a 3-LDP point claimed as 2

    def inflated_sampler(points, rng):
        return np.column_stack([axis.sample(points[:, 0], rng=rng), axis.sample(points[:, 1], rng=rng)])

    inflated = tracs.audit_perturber(inflated_sampler, 2.0, points=SQUARE, samples=50_000)
    assert inflated.violation and 2.0 < inflated.epsilon_lower_bound <= 3.0


def test_2d_flags_off_lattice_points():
    toy = GridPerturber(1.0)
    report = tracs.audit_perturber(lambda p, rng: toy(p, rng) + 1e-9, 1.0, points=SQUARE,
                                   samples=1_000, lattice=toy.lattice)
    # every draw is off: the 5 × 1,000 of the search and the fresh ones of the confirmation
    assert report.violation and report.off_lattice > 5 * 1_000


def test_2d_claim_defaults_to_the_ledger():
    tracsd = tracs.TraCSD(tracs.Rectangle(0, 0, 2000, 1000), 1.5)
    report = tracs.audit_perturber(tracsd, samples=2_000)
    assert report.epsilon == 1.5 and not report.violation


# -- bad arguments -----------------------------------------------------------------------

LAP = m.Laplace(epsilon=1.0)


@pytest.mark.parametrize(
    "call, error, fragment",
    [
        (lambda: tracs.audit(object(), 1.0, domain=(0, 1)), TypeError, "sample(x, rng=...)"),
        (lambda: tracs.audit(LAP, 0.0), ValueError, "epsilon must be > 0"),
        (lambda: tracs.audit(LAP, float("nan")), ValueError, "epsilon must be finite"),
        (lambda: tracs.audit(LAP, "1"), TypeError, "epsilon must be a real number"),
        (lambda: tracs.audit(LAP, 1.0, samples=10), ValueError, "samples must be >= 100"),
        (lambda: tracs.audit(LAP, 1.0, samples=1e5), TypeError, "samples must be an int"),
        (lambda: tracs.audit(LAP, 1.0, confidence=1.0), ValueError, "confidence must be in [0.5, 1)"),
        (lambda: tracs.audit(LAP, 1.0, confidence=True), TypeError, "confidence must be a real"),
        (lambda: tracs.audit(lambda x, r: x, 1.0), TypeError, "domain=(lo, hi) is required"),
        (lambda: tracs.audit(LAP, 1.0, domain=(1, 0)), ValueError, "lo < hi"),
        (lambda: tracs.audit(LAP, 1.0, domain=5), TypeError, "domain must be a pair"),
        (lambda: tracs.audit(LAP, 1.0, inputs=[0.5]), ValueError, "at least 2 values"),
        (lambda: tracs.audit(LAP, 1.0, inputs=[0, np.inf]), ValueError, "inputs must be finite"),
        (lambda: tracs.audit(LAP, 1.0, bins=0), ValueError, "bins must be an int >= 1"),
        (lambda: tracs.audit(LAP, 1.0, rng=-1), TypeError, "rng must be None"),
        (lambda: tracs.audit(LAP, 1.0, lattice="grid"), TypeError, "lattice must be"),
        (lambda: tracs.audit(LAP, 1.0, lattice=(0, 0, 5)), ValueError, "spacing > 0"),
        (lambda: tracs.audit(LAP, 2.0, inputs=[0.0, 2.0]), ValueError, "outside the input domain"),
        (lambda: tracs.audit_perturber(object(), 1.0), TypeError, "perturb_many"),
        (lambda: tracs.audit_perturber(lambda p, r: p, None), TypeError, "epsilon is required"),
        (lambda: tracs.audit_perturber(lambda p, r: p, 1.0), TypeError, "points= is required"),
        (lambda: tracs.audit_perturber(lambda p, r: p, 1.0, points=[[0, 0]]), ValueError, "m >= 2"),
        (lambda: tracs.audit_perturber(lambda p, r: p, 1.0, points=SQUARE, bins=2), ValueError, "bins"),
    ],
)
def test_bad_arguments(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


def test_indexed_release_check_catches_points_that_are_not_a_function_of_indices():
    from tracs.privacy.lattice_check import IndexedRelease

    check = IndexedRelease([(0.0, 1.0, 4), (0.0, 1.0, 3)])
    idx = np.array([[0, 0], [1, 2], [0, 0], [3, 1]])
    pts = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [5.0, 6.0]])
    check.record(idx)
    assert check.contains(pts).all()
    check.record(np.array([[1, 2], [0, 0], [4, 0], [3, 1]]))  # (4, 0) is out of range
    got = check.contains(np.array([[3.0, 4.0], [1.0, 2.0 + 2**-40], [0.0, 0.0], [5.0, 6.0]]))
    assert got.tolist() == [True, False, False, True]  # a low-bit change of a seen index's point
