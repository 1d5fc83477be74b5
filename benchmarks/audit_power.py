"""The audit's power and false-alarm rate: ``python -m benchmarks audit-power [--quick]``.

Every audit here is the default one (``tracs.audit`` / ``tracs.audit_perturber``
with their default candidates, draws and confidence 0.99), over seeds ``0 … S − 1``
(``S = 20``; 2 with ``--quick``):

1. **Planted leaks** (``tests/privacy/audit_toys.py``, ``tests/privacy/planted_perturbers.py``):
   how many seeds flag each (the 2 % band over ``S`` seeds, the others over 5), and the
   smallest ε lower bound found.
2. **Band width**: TraCS-C at ε = 1 leaking at ε = 20 on a band ``1200 ≤ x < 1200 + w``
   of the 2 km width, for several ``w``: the smallest width flagged in ≥ 95 % of the seeds.
3. **ε excess**: TraCS-C built at ``1 + δ`` claimed ε = 1, for several δ (the leak on the
   whole domain): the smallest excess flagged in ≥ 95 % of the seeds.
4. **False alarms**: every shipped ε-LDP method audited at its own claim (ε = 1) over
   6 seeds at 2,000 draws per input (the guarantee does not depend on the draws),
   and the exactly tight k-RR (k = 2) over 60 seeds at 400 draws.  A sound audit
   flags each run with probability at most 1 %.

With the default audit's running time per method (seconds, on this machine).
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

from tracs._text import significant, whole
import tracs
import tracs.mechanisms as m
from tracs.privacy import audit
from tracs.privacy.catalog import CATALOG, audit_target

# the planted leaks live with the audit's tests (one table for both)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "privacy"))
from audit_toys import planted_leaks  # noqa: E402
from planted_perturbers import LEAKS, PlantedLeak  # noqa: E402

print = functools.partial(print, flush=True)  # rows appear as they are measured

#: band widths (metres of the 2,000 m width) and ε excesses tried
WIDTHS = (20.0, 32.0)
EXCESSES = (0.5, 1.0)


def _flagged(make, seeds):
    """``(flags, smallest bound, seconds per audit)`` of ``make(seed)`` over the seeds."""
    start = time.perf_counter()
    reports = [make(seed) for seed in seeds]
    seconds = (time.perf_counter() - start) / len(seeds)
    return sum(r.violation for r in reports), min(r.epsilon_lower_bound for r in reports), seconds


def _planted(seeds, band_seeds) -> None:
    print(f"\nplanted leaks (claimed ε = 1, default audit; the 2 % band over seeds 0–{len(band_seeds) - 1}, "
          f"the others over seeds 0–{len(seeds) - 1})")
    print("| planted leak | flagged | seeds | smallest ε lower bound | seconds per audit |\n"
          "| --- | ---: | ---: | ---: | ---: |")
    cases = [(name, lambda seed, run=run: run(seed), seeds) for name, run in planted_leaks(None, None)]
    cases += [(f"TraCS-C, {text}", lambda seed, name=name: tracs.audit_perturber(PlantedLeak(name), rng=seed),
               band_seeds if name == "band" else seeds) for name, (text, _) in LEAKS.items()]
    for name, make, over in cases:
        flags, low, seconds = _flagged(make, over)
        print(f"| {name} | {flags} | {len(over)} | {significant(low)} | {significant(seconds)} |")


def _smallest(label, values, make, seeds) -> None:
    print(f"\n{label} (default audit, seeds 0–{len(seeds) - 1})")
    print("| value | flagged | seeds | seconds per audit |\n| ---: | ---: | ---: | ---: |")
    found = None
    for value in values:
        flags, _, seconds = _flagged(lambda seed: make(value, seed), seeds)
        print(f"| {value:g} | {flags} | {len(seeds)} | {significant(seconds)} |")
        if found is None and flags >= 0.95 * len(seeds):
            found = value
    print(f"smallest flagged in >= 95 % of the seeds: {found if found is not None else 'none'}")


def _false_alarms(seeds: int) -> None:
    print(f"\nfalse alarms: violations over {seeds} seeds (ε = 1, confidence 0.99, 2,000 draws/input)")
    print("| method | violations | seeds | largest ε lower bound | seconds |\n| --- | ---: | ---: | ---: | ---: |")
    total = runs = 0
    for name, target in CATALOG.items():
        if not target.ldp:
            continue
        start = time.perf_counter()
        reports = [audit_target(name, 1.0, samples=2_000, rng=seed) for seed in range(seeds)]
        flags = sum(r.violation for r in reports)
        total, runs = total + flags, runs + seeds
        print(f"| {name} | {flags} | {whole(seeds)} | {significant(max(r.epsilon_lower_bound for r in reports))} | "
              f"{significant(time.perf_counter() - start)} |")
    krr = m.KRR(epsilon=1.0, k=2)
    tight = [audit(krr, 1.0, samples=400, rng=seed).violation for seed in range(10 * seeds)]
    print(f"| krr k=2 (exactly tight), 400 draws/input | {sum(tight)} | {whole(10 * seeds)} | | |")
    print(f"shipped methods: {total} violation(s) in {runs} audits ({100 * total / runs:.2g} %); "
          f"tight k-RR: {sum(tight)} in {10 * seeds} ({100 * sum(tight) / (10 * seeds):.2g} %)")
    print("at 99 % a sound audit flags each run with probability at most 1 %")


def _running_times() -> None:
    print("\ndefault audit's running time per method (ε = 1, seed 0; seconds)")
    print("| method | seconds | verdict |\n| --- | ---: | --- |")
    for name, target in CATALOG.items():
        audit_target(name, 1.0, samples=200)  # compile the kernels outside the timing
        start = time.perf_counter()
        report = audit_target(name, 1.0)
        print(f"| {name} | {significant(time.perf_counter() - start)} | {report.verdict} |")


def power(seeds) -> None:
    """The smallest band width and ε excess flagged in >= 95 % of ``seeds``."""
    _smallest("band width w (m of the 2,000 m width) leaking at ε = 20", WIDTHS,
              lambda w, seed: tracs.audit_perturber(PlantedLeak("band", band=(1200.0, w)), rng=seed), seeds)
    _smallest("ε excess δ: TraCS-C released at 1 + δ, claimed 1", EXCESSES,
              lambda d, seed: tracs.audit_perturber(PlantedLeak("band", hot=1.0 + d, band=(0.0, 2001.0)),
                                                    1.0, rng=seed), seeds)


def run(quick: bool = False) -> None:
    print("\n## audit power and false alarms")
    seeds = range(2 if quick else 20)
    _planted(range(2 if quick else 5), seeds)
    power(seeds)
    _false_alarms(2 if quick else 6)
    _running_times()
