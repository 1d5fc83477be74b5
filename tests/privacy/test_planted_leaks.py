"""The audit flags every planted leak at 99 % (seed 0), and raises few false alarms on honest methods.

The 20-seed measurements (every planted leak, the smallest band width and ε excess
found in ≥ 95 % of the seeds, false alarms) are ``python -m benchmarks audit-power``
(``docs/audit.md``); here one or two seeds each.

The planted leaks (``audit_toys.planted_leaks``) but the identity leak release only
values of their declared lattice, so the lattice check cannot see them; each must be
found by the statistics alone (its ε lower bound above the claim ε = 1).  Each must
also reach 90 % of the bound the audit found before it searched (sample splitting on
19 inputs, 20,000 draws per input, seed 0; 10,000 in 2-D now): the search must not
be weaker where the old candidates already sufficed.  The 2 % band is new (threshold
1.5, far below what an ε = 20 leak gives).

| planted leak | ε lower bound before the search |
| --- | ---: |
| input's low bit in the index parity | 7.54 |
| 4ε on the last 5 % of the domain (its end excluded) | 2.27 |
| odd low bit released at its lattice point half the time | 6.83 |
| TraCS-D leaking at the second point only | 6.11 |
| returns its input 2 % of the time | 3.47 |
| optimal classical at 1.5ε | 1.31 |
| ε = 20 on an interior band of 2 % of the domain (new: a threshold) | 1.5 |
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from audit_toys import ParityLeak, low_bit, planted_leaks
from planted_perturbers import PlantedLeak

import tracs
import tracs.mechanisms as m
from tracs.privacy.catalog import audit_target

# the lower bounds of the table above: a run must find at least 90 % of each (the same seed
# gives the same bound; the margin allows other platforms' last-bit differences in scipy)
FOUND = {
    "input's low bit in the index parity": 7.54,
    "4ε on the last 5 % of the domain (its end excluded)": 2.27,
    "odd low bit released at its lattice point half the time": 6.83,
    "TraCS-D leaking at the second point only": 6.11,
    "returns its input 2 % of the time": 3.47,
    "optimal classical at 1.5ε": 1.31,
    "ε = 20 on an interior band of 2 % of the domain": 1.5,
}


@functools.lru_cache(maxsize=None)
def _second_point_report():
    return dict(planted_leaks(20_000, 10_000))["TraCS-D leaking at the second point only"]()


@pytest.mark.parametrize("name, run", planted_leaks(20_000, 10_000), ids=lambda v: v if isinstance(v, str) else "")
def test_planted_leak_is_flagged(name, run):
    report = _second_point_report() if name == "TraCS-D leaking at the second point only" else run()
    # the bound alone must exceed the claim: all but the identity leak release on their lattice
    assert report.violation and (report.off_lattice == 0) == (name != "returns its input 2 % of the time")
    assert report.epsilon_lower_bound > 1.0
    assert report.epsilon_lower_bound >= 0.9 * FOUND[name], str(report)


def test_second_point_leak_is_reported_at_the_second_point():
    report = _second_point_report()
    assert report.worst_event.startswith("point 2 after fixed points (1000, 500), with"), report.worst_event
    k1, n1, k2, n2 = report.counts
    # one input in the right half (an event of mass > 0.2), one in the left (none: 90 % of its
    # second releases sit at the first, distance index 0)
    assert k1 / n1 > 0.2 and k2 == 0, str(report)
    assert report.worst_pair[0][0] > 1000.0 > report.worst_pair[1][0]


def test_parity_leak_needs_inputs_with_different_low_bits():
    # given only inputs sharing their low bit (as the evenly spaced defaults do), nothing shows
    leak = ParityLeak(m.OptimalClassical(epsilon=1.0))
    even = np.linspace(0, 1, 5)
    assert (low_bit(even) == 0).all()
    report = tracs.audit(leak, 1.0, inputs=even, samples=20_000)
    assert not report.violation, str(report)
    assert tracs.audit(leak, 1.0, samples=20_000).violation  # the default candidates differ in it


@pytest.mark.parametrize("name, seeds", [("optimal-classical", 10), ("laplace", 10), ("tracs-d", 3),
                                         ("planar-laplace", 3)])
def test_few_false_alarms_on_shipped_methods(name, seeds):
    # seeds 0 … seeds − 1 at 1,000 draws per input: at 99 % a sound audit flags each with
    # probability <= 1 %, so 2 or more flags in 10 has probability < 0.5 % (in 3: < 0.03 %);
    # the longer measurement is python -m benchmarks audit-power (docs/audit.md)
    flags = sum(audit_target(name, 1.0, samples=1_000, rng=seed).violation for seed in range(seeds))
    assert flags <= 1


def test_2d_parity_leak_in_one_axis_is_flagged():
    # a per-axis lattice perturber whose x index carries the input x's low bit: found by the
    # per-axis low-bit cells (no histogram bin moves); seed 0, 10,000 draws per input
    from audit_toys import GridPerturber

    toy = GridPerturber(1.0)
    _, spacing, count = toy.axis.lattice

    def leaky(points, rng):
        out = toy(points, rng)
        k = np.rint(out[:, 0] / spacing).astype(np.int64)
        k = (k & ~1) | low_bit(points[:, 0])
        out[:, 0] = np.where(k >= count, k - 2, k) * spacing
        return out

    x = 0.3
    points = [[x, 0.5], [np.nextafter(x, 1.0), 0.5], [0.0, 0.0], [1.0, 1.0]]
    report = tracs.audit_perturber(leaky, 1.0, points=points, samples=10_000, lattice=toy.lattice)
    assert report.violation and report.off_lattice == 0, str(report)
    assert report.worst_event.startswith("index low bits: (x mod"), report.worst_event
    assert report.epsilon_lower_bound > 5.0


# -- leaks the search must find: a 2 % band, a position, a length, near a vertex, the keyed path ---

@pytest.mark.parametrize("name", ["third", "long", "near-vertex", "keyed"])
def test_planted_perturber_leak_is_flagged(name):
    # TraCS-C at ε = 1 releasing some points at ε = 20 on its own lattice (planted_perturbers);
    # seed 0, 4,000 draws per input (the default 20,000 over 20 seeds: the benchmark); the bound
    # of an ε = 20 leak is far above the claim (about 6 at this budget)
    report = tracs.audit_perturber(PlantedLeak(name), samples=4_000, rng=0)
    assert report.violation and report.off_lattice == 0, str(report)
    assert report.epsilon_lower_bound > 3.0, str(report)
    where = {"third": "point 3 after", "long": "point 16 after|point 32 after", "keyed": "with keys="}
    if name in where:
        assert any(w in report.worst_event for w in where[name].split("|")), report.worst_event


@pytest.mark.parametrize("seed", [0])
def test_default_audit_finds_the_two_percent_band(seed):
    # the band 1200 <= x < 1240 m of the 2,000 m width: the 64 stratified first points are
    # 31.25 m apart in x, so one always lies in it; default draws (20,000), seed 0 (20 seeds:
    # the benchmark)
    report = tracs.audit_perturber(PlantedLeak("band"), rng=seed)
    assert report.violation and report.epsilon_lower_bound > 3.0, str(report)
    assert any(1200.0 <= x[0] < 1240.0 for x in report.worst_pair), report.worst_pair


def test_points_add_to_the_scenarios():
    # before, points= replaced every default scenario and the 3rd-point leak went unseen
    leak = PlantedLeak("third")
    report = tracs.audit_perturber(leak, points=[[500.0, 500.0], [1500.0, 500.0]], samples=2_000)
    assert report.inputs > 200 and report.violation, str(report)
    assert "point 3 after" in report.worst_event


@pytest.mark.parametrize("seed", range(10))
def test_stratified_candidates_cover_every_two_percent_band(seed):
    from tracs import Rectangle
    from tracs.privacy.candidates import interval_inputs, perturber_scenarios

    starts = np.linspace(0.0, 0.98, 491)
    xs = np.asarray(interval_inputs(0.0, 1.0, None, np.random.default_rng(seed)))
    assert all(((xs >= a) & (xs < a + 0.02)).any() for a in starts)
    first = np.array([s.point for s in perturber_scenarios(Rectangle(0, 0, 2000, 1000), np.random.default_rng(seed))
                      if s.position == 1])
    for axis, width in ((0, 2000.0), (1, 1000.0)):
        v = first[:, axis] / width
        assert all(((v >= a) & (v < a + 0.02)).any() for a in starts)


def test_confirmed_hypotheses_and_the_bonferroni_level():
    # four hypotheses of the search meet the fresh draws; each bound is at 1 − 0.01/4
    from tracs.privacy import epsilon_lower_bound

    report = tracs.audit(m.OptimalClassical(epsilon=1.5), 1.0, samples=20_000)
    assert report.confirmed == 4
    k1, n1, k2, n2 = report.counts
    assert report.epsilon_lower_bound == pytest.approx(float(epsilon_lower_bound(k1, n1, k2, n2, 1 - 0.01 / 4)))
