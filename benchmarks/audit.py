"""The ε audit over every shipped method, with a big budget, plus the bad samplers it must flag.

``python -m benchmarks audit [--quick]``: 5·10^5 draws per input for the 1-D
mechanisms and 2·10^5 for the 2-D perturbers and baselines (2·10^4 with
``--quick``), ε = 1, confidence 0.99, seed 0.  Prints the Markdown table of
``docs/audit.md``, the draws per second of each audit (throughput), the peak
traced memory, and the ratio of the vectorised audit's draw rate to the
per-draw fallback's (a scalar-only callable) measured in the same run.  Then
the power table: every ε-LDP method built at 1.5ε and audited against the claim
ε, for ε in {0.5, 1, 2} (a fifth of the budget in 1-D, a quarter in 2-D).
Last, the release rate under ``Secure(seed)`` (ChaCha20) against Philox.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from tracs import mechanisms as m
from tracs._text import significant
from tracs.privacy import audit, audit_perturber, format_table
from tracs.privacy.catalog import CATALOG, audit_target

CONFIDENCE = 0.99


class _ReturnsInput:
    """The optimal classical mechanism at ε, except that it returns its input 2 % of the time."""

    input_domain = m.OptimalClassical(epsilon=1.0).input_domain

    def __init__(self, epsilon):
        self.base = m.OptimalClassical(epsilon=epsilon)

    def sample(self, x, *, rng=None):
        gen = np.random.default_rng(rng)
        y = self.base.sample(x, rng=gen)
        return np.where(gen.random(np.shape(x)) < 0.02, x, y)


class _LowBits:
    """A k-RR over 8 values that adds the input times 2^-40 to its release (a low-bit leak)."""

    input_domain = m.KRR(epsilon=1.0, k=8).input_domain
    lattice = (0.0, 1.0, 8)

    def __init__(self, epsilon):
        self.base = m.KRR(epsilon=epsilon, k=8)

    def sample(self, x, *, rng=None):
        return self.base.sample(x, rng=rng) + np.asarray(x, dtype=float) * 2.0 ** -40


def _bad_rows(samples):
    cases = [("bad: returns input 2 % (ε=1)", lambda: audit(_ReturnsInput(1.0), 1.0, samples=samples)),
             ("bad: low-bit leak (k-RR, ε=1)", lambda: audit(_LowBits(1.0), 1.0, samples=samples))]
    for eps in (0.5, 1.0, 2.0):
        cases.append((f"bad: optimal-classical at 1.5ε claimed ε={eps:g}",
                      (lambda e: lambda: audit(m.OptimalClassical(epsilon=1.5 * e), e, samples=samples))(eps)))
    return cases


def _timed(fn):
    start = time.perf_counter()
    report = fn()
    return report, time.perf_counter() - start


def _fallback_ratio(samples: int) -> str:
    mech = m.OptimalClassical(epsilon=1.0)
    small = 2_000
    fast, vec = _timed(lambda: audit(mech, 1.0, samples=samples))
    slow, loop = _timed(lambda: audit(lambda x, rng: float(mech.sample(np.array([x]), rng=rng)[0])
                                      if np.ndim(x) == 0 else _refuse(), 1.0, domain=(0, 1), samples=small))
    vec_rate, loop_rate = fast.inputs * samples / vec, slow.inputs * small / loop
    return (f"vectorised audit {vec_rate:,.0f} draws/s vs per-draw fallback {loop_rate:,.0f} draws/s: "
            f"ratio {vec_rate / loop_rate:,.0f}")


def _refuse():
    raise TypeError("scalar input only")


def _power_table(n1: int, n2: int) -> None:
    """Each ε-LDP method built at 1.5ε and audited against the claim ε, for ε in {0.5, 1, 2}."""
    print(f"\npower: built at 1.5ε, claimed ε ({n1:,} draws/input in 1-D, {n2:,} in 2-D; "
          "ε lower bound, VIOLATION when flagged)")
    print("| method | ε = 0.5 | ε = 1 | ε = 2 |\n| --- | --- | --- | --- |")
    for name, target in CATALOG.items():
        if not target.ldp:
            continue
        cells = []
        for eps in (0.5, 1.0, 2.0):
            method = target.build(1.5 * eps)
            report = (audit(method, eps, samples=n1) if target.kind == "1d"
                      else audit_perturber(method, eps, samples=n2))
            cells.append(significant(report.epsilon_lower_bound) + (" VIOLATION" if report.violation else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")


def _secure_ratio(n: int) -> None:
    """Release rate under ChaCha20 (``Secure(seed)``) against the default Philox key, same run."""
    from benchmarks._timing import best_time
    from tracs.random import Secure

    print(f"\nsecure generator: releases per second, {n:,} inputs, best of 3")
    xs = np.full(n, 0.3)
    tracsd = CATALOG["tracs-d"].build(1.0)
    mechanism = CATALOG["optimal-classical"].build(1.0)
    points = np.tile([700.0, 300.0], (n, 1))
    offsets = np.arange(0, n + 1, 100)
    for name, call in [("optimal-classical", lambda rng: mechanism.sample(xs, rng=rng)),
                       ("tracs-d", lambda rng: tracsd.perturb_many(points, offsets, rng=rng))]:
        try:
            philox = best_time(lambda: call(1))
            chacha = best_time(lambda: call(Secure(1)))
        except TypeError as exc:
            print(f"  {name:<22} not available: {exc}")
            continue
        print(f"  {name:<22} Philox {n / philox:14,.0f}/s  ChaCha20 {n / chacha:14,.0f}/s  "
              f"ChaCha20 rate / Philox rate {philox / chacha:5.2f}")


def run(quick: bool = False) -> None:
    n1 = 20_000 if quick else 500_000
    n2 = 20_000 if quick else 200_000
    print(f"\n## audit (ε = 1, confidence {CONFIDENCE}, seed 0; {n1:,} draws/input for 1-D methods, "
          f"{n2:,} for 2-D)")
    rows, throughput = [], []
    tracemalloc.start()
    for name, target in CATALOG.items():
        n = n1 if target.kind == "1d" else n2
        audit_target(name, 1.0, samples=200)  # warm-up: compile kernels outside the timing
        report, seconds = _timed(lambda: audit_target(name, 1.0, samples=n, confidence=CONFIDENCE))
        rows.append((name + ("" if target.ldp else " (not ε-LDP, nominal ε)"), report, seconds))
        throughput.append((name, report.samples * report.inputs / seconds))
    for name, fn in _bad_rows(n1 // 5):
        report, seconds = _timed(fn)
        rows.append((name, report, seconds))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(format_table(rows))
    print("\nthroughput (draws per second, whole audit):")
    for name, rate in throughput:
        print(f"  {name:<22} {rate:14,.0f}")
    print(f"peak traced memory: {peak / 2**20:,.0f} MiB")
    print(_fallback_ratio(n1 // 10))
    _power_table(n1 // 5, n2 // 4)
    _secure_ratio(100_000 if quick else 2_000_000)
