"""The audit's power and false-alarm rate: ``python -m benchmarks audit-power [--quick]``.

1. **Planted leaks** (``tests/privacy/audit_toys.py``): every leak the audit must
   flag at 99 %, claimed ε = 1, seed 0, with the ε lower bound found, at the test's
   budget (20,000 draws per input) and at 100,000.
2. **False alarms**: every shipped ε-LDP method audited at its own claim (ε = 1,
   confidence 0.99) over seeds ``0 … S − 1`` (``S = 100``; 10 with ``--quick``) at
   2,000 draws per input, and the exactly tight k-RR (k = 2) over ``10·S`` seeds at
   400 draws: the number of violations reported.  A sound audit flags each run with
   probability at most 1 %.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

from tracs._text import significant, whole
import tracs.mechanisms as m
from tracs.privacy import audit
from tracs.privacy.catalog import CATALOG, audit_target

# the planted leaks live with the audit's tests (one table for both)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "privacy"))
from audit_toys import planted_leaks  # noqa: E402

print = functools.partial(print, flush=True)  # rows appear as they are measured


def _planted(budgets) -> None:
    print("\nplanted leaks (claimed ε = 1, confidence 0.99, seed 0; ε lower bound, verdict)")
    head = " | ".join(f"{b:,} draws/input" for b in budgets)
    print(f"| planted leak | {head} |\n| --- |" + " ---: |" * len(budgets))
    rows = {}
    for budget in budgets:
        for name, run in planted_leaks(budget, budget):
            report = run()
            rows.setdefault(name, []).append(f"{significant(report.epsilon_lower_bound)} {report.verdict}")
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells) + " |")


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


def run(quick: bool = False) -> None:
    print("\n## audit power and false alarms")
    _planted([20_000] if quick else [20_000, 100_000])
    _false_alarms(10 if quick else 100)
