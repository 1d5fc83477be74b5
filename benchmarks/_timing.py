"""Timing helpers shared by every benchmark section.

Timings on a shared machine are noisy: each figure is the best of a few runs, and
the useful number is the ratio against the naive per-item Python loop measured in
the same run.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass
from typing import Callable

from benchmarks._record import record


def best_time(fn: Callable[[], object], repeat: int = 3,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """Best seconds of ``repeat`` calls of ``fn`` (after one warm-up call) on ``clock``.

    The default clock is wall-clock time; ``clock=time.process_time`` gives the CPU
    time of this process, which other processes sharing the machine do not inflate.
    """
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def peak_bytes(fn: Callable[[], object]) -> float:
    """Peak bytes allocated during one call of ``fn`` (tracemalloc; numpy reports to it)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return float(peak - base)


@dataclass
class Row:
    name: str
    items: int
    seconds: float
    naive_items: int = 0
    naive_seconds: float = 0.0
    extra: str = ""

    @property
    def rate(self) -> float:
        return self.items / self.seconds

    @property
    def naive_rate(self) -> float:
        return self.naive_items / self.naive_seconds if self.naive_seconds else float("nan")

    @property
    def speedup(self) -> float:
        return self.rate / self.naive_rate if self.naive_seconds else float("nan")


def section_key(title: str) -> str:
    """The stable part of a table title (before any parenthesis or colon)."""
    return title.split(" (")[0].split(":")[0].strip()


def print_table(title: str, rows: list[Row], unit: str = "samples") -> None:
    """Print one section: rate, naive-loop rate, their ratio and the ratio to the previous run.

    Every row's rate is recorded (:mod:`benchmarks._record`) under
    ``"<section> / <row name>"``.
    """
    print(f"\n## {title}")
    header = (f"{'name':<34} {'n':>10} {unit + '/s':>16} {'naive loop/s':>14} {'ratio':>9} "
              f"{'vs prev':>8}  notes")
    print(header)
    print("-" * len(header))
    for row in rows:
        naive = f"{row.naive_rate:14,.0f}" if row.naive_seconds else f"{'-':>14}"
        ratio = f"{row.speedup:9,.0f}" if row.naive_seconds else f"{'-':>9}"
        prev = record(f"{section_key(title)} / {row.name.strip()}", row.rate, f"{unit}/s")
        print(f"{row.name:<34} {row.items:>10,} {row.rate:16,.0f} {naive} {ratio} {prev:>8}  {row.extra}")
