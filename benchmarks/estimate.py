"""Density estimation from reports: seconds, CPU seconds and peak memory, one process per row.

Reports come from a generated city (:func:`city`): a 20 km × 10 km box with eight
hotspots, trajectories of 100 points walking from a hotspot in steps of about 150 m,
ε = 2 per point.  Every row runs in a fresh process (``python -m benchmarks.estimate
--row …``), so ``peak GB`` is that fit's own maximum resident set size (it includes
generating and perturbing the points); the numba kernels are compiled (and cached)
before the timing.  ``CPU s`` (``time.process_time``) is the better measure on a
shared machine; the ratios to TraCS-C on 64×64 are ratios of CPU seconds of the same
run.

Targets (one core, 10^6 reports): TraCS-D, the Strawman and planar Laplace on 64×64
within 30× TraCS-C's time on 64×64 and ≤ 2 GB; on 32×32 within 10×; 10^7 reports
within 4 GB.  ``workers=2``: the same fit on two threads, its result equal to one
worker's (largest difference printed) and its wall-clock speed-up.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BOX = (0.0, 0.0, 20_000.0, 10_000.0)
HOTSPOTS = 8
TRAJECTORY = 100


def city(n: int, seed: int = 0):
    """``n`` points of a generated city (``n // 100`` walks of 100 points) and their offsets."""
    rng = np.random.default_rng(seed)
    walks = n // TRAJECTORY
    centres = rng.uniform(BOX[:2], BOX[2:], (HOTSPOTS, 2))
    start = centres[rng.integers(0, HOTSPOTS, walks)] + rng.normal(0, 600, (walks, 2))
    steps = rng.normal(0, 150, (walks, TRAJECTORY, 2))
    steps[:, 0] = 0.0
    pts = (start[:, None, :] + np.cumsum(steps, axis=1)).reshape(-1, 2)
    pts = np.clip(pts, BOX[:2], BOX[2:])
    return pts, np.arange(0, walks * TRAJECTORY + 1, TRAJECTORY)


def _perturber(method: str, epsilon: float = 2.0):
    """The registered perturber ``method`` (:mod:`tracs.methods`) on the city's box, ``epsilon`` per point."""
    from tracs import Rectangle
    from tracs.methods import MethodContext, get

    return get(method).build(MethodContext(region=Rectangle(*BOX)), epsilon)


def _peak_gb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / (1 << 30) if sys.platform == "darwin" else kb / (1 << 20)


def measure(method: str, grid: int, n: int, workers: int = 1, memory=None, compare: bool = False) -> dict:
    """One fit, in this process: seconds, CPU seconds, EM passes, peak GB (and the
    largest difference to a one-worker fit when ``compare``)."""
    from tracs.estimate import density

    pert = _perturber(method)
    pts, off = city(n)
    rep = pert.perturb_many(pts, off, rng=1)
    del pts
    density(rep[:2000], pert, offsets=off[off <= 2000], grid=grid)  # compile outside the timing
    start, cpu = time.perf_counter(), time.process_time()
    est = density(rep, pert, offsets=off, grid=grid, workers=workers, memory=memory)
    row = {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
           "passes": est.iterations, "peak_gb": _peak_gb()}
    if compare:
        start = time.perf_counter()
        one = density(rep, pert, offsets=off, grid=grid, workers=1, memory=memory)
        row["one_worker_seconds"] = time.perf_counter() - start
        row["max_difference"] = float(np.max(np.abs(one.probabilities - est.probabilities)))
    return row


def _child(method, grid, n, workers=1, memory=None, compare=False) -> dict:
    args = [sys.executable, "-m", "benchmarks.estimate", "--row",
            json.dumps([method, grid, n, workers, memory, compare])]
    out = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "TRACS_PROGRESS": "never"})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["killed"])[-1], "returncode": out.returncode}
    return json.loads(out.stdout.strip().splitlines()[-1])


#: rows of this run's main table (10^6 reports), in print order: ``(method, grid, reports, row, ratio, target)``
ROWS: list[tuple] = []
#: rows of this run's growth table (32×32 cells, TraCS-C and TraCS-D), the same fields
GROWTH: list[tuple] = []
#: the two-worker comparison of this run (``None`` until it ran)
TWO_WORKERS: dict = {}


def _print(name, grid, n, row, reference=None, target="", growth=False):
    ratio = row["cpu"] / reference if reference and "error" not in row else None
    (GROWTH if growth else ROWS).append((name, grid, n, row, ratio, target))
    if "error" in row:
        print(f"{name:<15}{grid:>5}²{n:>12,}  failed ({row['returncode']}): {row['error']}")
        return
    shown = f"{ratio:.1f}×" if ratio else "–"
    print(f"{name:<15}{grid:>5}²{n:>12,}{row['seconds']:>10.1f}{row['cpu']:>9.1f}{row['passes']:>8}"
          f"{row['peak_gb']:>9.2f}{shown:>9}{target:>12}", flush=True)


def run(quick: bool = False) -> None:
    n = 20_000 if quick else 1_000_000
    ROWS.clear()
    GROWTH.clear()
    TWO_WORKERS.clear()
    print(f"\n## estimate (generated city 20 km × 10 km, ε = 2 per point, one process per row; "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"{'method':<15}{'grid':>6}{'reports':>12}{'seconds':>10}{'CPU s':>9}{'passes':>8}{'peak GB':>9}"
          f"{'/ TraCS-C':>9}{'target':>12}")
    base = _child("tracs-c", 64, n)
    _print("tracs-c", 64, n, base)
    reference = base.get("cpu")
    for method in ("tracs-d", "strawman", "planar-laplace"):
        for grid, target in ((64, "≤ 30×, 2 GB"), (32, "≤ 10×")):
            _print(method, grid, n, _child(method, grid, n), reference, target)
    two = _child("tracs-d", 32, n, workers=2, compare=True)
    if "error" not in two:
        TWO_WORKERS.update(two, reports=n)
        print(f"tracs-d 32² with workers=2: {two['seconds']:.1f} s against {two['one_worker_seconds']:.1f} s "
              f"with one worker ({two['one_worker_seconds'] / two['seconds']:.2f}× speed-up), largest "
              f"difference {two['max_difference']:.1e}")
    print("\ngrowth with the number of reports (32×32 cells):")
    sizes = (10_000, 20_000) if quick else (100_000, 1_000_000, 10_000_000)
    for size in sizes:
        for method in ("tracs-c", "tracs-d"):
            _print(method, 32, size, _child(method, 32, size), target="≤ 4 GB"
                   if size >= 10_000_000 else "", growth=True)


def growth_rows() -> list[tuple[str, int, float, float]]:
    """``(method, reports, CPU s, peak GB)`` of this run's growth rows (32×32, TraCS-C and TraCS-D)."""
    return sorted(((name, n, row["cpu"], row["peak_gb"]) for name, _, n, row, _, _ in GROWTH
                   if "error" not in row), key=lambda r: (r[0], r[1]))


def plot_growth(rows, path) -> None:
    """CPU seconds and peak memory against reports (log-log), one line per method."""
    from tracs.plots import pyplot

    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for method, label in (("tracs-c", "TraCS-C"), ("tracs-d", "TraCS-D")):
        mine = sorted((n, cpu, gb) for m, n, cpu, gb in rows if m == method)
        if not mine:
            continue
        n, cpu, gb = map(np.array, zip(*mine))
        axes[0].plot(n, cpu, "o-", label=label)
        axes[1].plot(n, gb, "o-", label=label)
    axes[0].set(xscale="log", yscale="log", xlabel="reports", ylabel="CPU seconds", title="time (32×32)")
    axes[1].set(xscale="log", yscale="log", xlabel="reports", ylabel="peak GB", title="memory (32×32)")
    axes[1].axhline(4.0, color="grey", lw=0.8, ls="--")
    for ax in axes:
        ax.legend()
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


LABELS = {"tracs-c": "TraCS-C", "tracs-d": "TraCS-D", "strawman": "Strawman",
          "planar-laplace": "planar Laplace"}
DOC = Path(__file__).resolve().parents[1] / "docs" / "estimation.md"
DOC_PLOT = DOC.parent / "figures" / "estimate_growth.png"
BEGIN, END = "<!-- estimate-speed:begin -->", "<!-- estimate-speed:end -->"


def _count(n: int) -> str:
    """A number of reports as the page writes it: ``10^6`` for a power of ten, else ``20,000``."""
    k = len(str(n)) - 1
    return f"10^{k}" if n == 10 ** k else f"{n:,}"


def _cell(row, key, fmt):
    return "failed" if "error" in row else fmt(row[key])


def docs_block(info: dict) -> str:
    """The Speed block of ``docs/estimation.md`` from this run's rows."""
    from tracs._text import significant

    lines = [f"`python -m benchmarks estimate --write-docs` ({info['date']}, {info['cpu']}, "
             f"{info['cores']} logical cores, Python {info['python']}, load average "
             f"{info['load']:.1f} at the end): each row is a fresh process fitting 10^6 reports of a "
             "generated city (20 km × 10 km, eight hotspots, walks of 100 points in steps of about "
             "150 m), ε = 2 per point, on one core.  CPU seconds are the figures to compare on a "
             "shared machine; the ratios divide CPU seconds of the same run.", "",
             "| method | grid | CPU seconds | EM passes | peak memory | CPU / TraCS-C 64×64 | "
             "CPU / TraCS-C same grid | target |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    # TraCS-C's CPU seconds per grid: the "same grid" ratio of every row
    tracs_c = {grid: row["cpu"] for name, grid, n, row, _, _ in ROWS if name == "tracs-c" and "error" not in row}
    for name, grid, n, row, ratio, target in ROWS:
        shown = f"{significant(ratio)}×" if ratio else "1×"
        same = (f"{significant(row['cpu'] / tracs_c[grid])}×" if "error" not in row and tracs_c.get(grid)
                else "")
        lines.append(f"| {LABELS[name]} | {grid}×{grid} | {_cell(row, 'cpu', significant)} | "
                     f"{_cell(row, 'passes', str)} | {_cell(row, 'peak_gb', lambda v: significant(v) + ' GB')} | "
                     f"{shown if 'error' not in row else ''} | {same} | {target.replace('2 GB', '≤ 2 GB')} |")
    if TWO_WORKERS:
        two = TWO_WORKERS
        lines += ["", f"`workers=2` (TraCS-D, 32×32, {_count(two['reports'])} reports, same run): {significant(two['seconds'])} s "
                      f"of wall time against {significant(two['one_worker_seconds'])} s with one worker, "
                      f"{significant(two['one_worker_seconds'] / two['seconds'])}× faster; largest "
                      f"difference between the two estimates {two['max_difference']:.1e}."
                      + (" The load average was above the core count, so the two workers shared the "
                         "cores with other jobs: this speed-up is a lower bound." if info["load"] is not None
                         and info["load"] > info["cores"] else "")]
    growth = growth_rows()
    if growth:
        lines += ["", "Growth with the number of reports (32×32 cells, the same run):", "",
                  "| reports | TraCS-C CPU s | TraCS-C peak | TraCS-D CPU s | TraCS-D peak |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        by = {(m, n): (cpu, gb) for m, n, cpu, gb in growth}
        for n in sorted({n for _, n, _, _ in growth}):
            cells = []
            for m in ("tracs-c", "tracs-d"):
                cpu, gb = by.get((m, n), (None, None))
                cells += ["–", "–"] if cpu is None else [significant(cpu), f"{significant(gb)} GB"]
            lines.append(f"| {_count(n)} | " + " | ".join(cells) + " |")
        lines += ["", "![CPU time and peak memory against reports](figures/estimate_growth.png)"]
    return "\n".join(lines)


def write_docs() -> list[Path]:
    """Replace the Speed block of ``docs/estimation.md`` (and its plot) with this run's figures."""
    from benchmarks import _record

    if not ROWS:
        return []
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise RuntimeError(f"{DOC} has no {BEGIN} … {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{docs_block(_record.machine())}\n{END}{tail}", encoding="utf-8")
    written = [DOC]
    if growth_rows():
        plot_growth(growth_rows(), DOC_PLOT)
        written.append(DOC_PLOT)
    return written


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--row":
        print(json.dumps(measure(*json.loads(sys.argv[2]))))
    else:
        run(quick="--quick" in sys.argv)
