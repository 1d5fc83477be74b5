"""``python -m benchmarks --write-docs``: every speed figure of the docs from this run.

Writes ``docs/performance.md`` (machine, date, cores, the scaling table and plot,
the reference ratios, every recorded figure with its ratio to the previous run)
and the block between ``<!-- speed:begin -->`` and ``<!-- speed:end -->`` in
``README.md`` (the page's hand-written notes, from ``<!-- notes:begin``, are kept), then
stores the figures in ``benchmarks/previous.json`` as the previous run on this CPU model.
Figures of sections that did not run are left out of the pages (never copied from an
older run).  A run of some sections only stores its figures and keeps the pages.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import _record
from tracs._text import given, significant


def _percent(share: float) -> str:
    """A share as the docs write it: three significant digits, then `` %``."""
    return f"{significant(100 * share)} %"

ROOT = Path(__file__).resolve().parents[1]
PERFORMANCE = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
PLOT = ROOT / "docs" / "images" / "scaling.png"
DASK_RUN = Path(__file__).with_name("dask_run.json")
BEGIN, END = "<!-- speed:begin -->", "<!-- speed:end -->"
#: where the hand-written part of docs/performance.md starts (kept by :func:`write_docs`)
NOTES = "<!-- notes:begin"


def _m(value: float) -> str:
    """Items per second in M/s (3 significant digits, the rule of :mod:`tracs._text`)."""
    if value < 1e4:
        return f"{significant(value)}/s"
    return f"{significant(value / 1e6)} M/s"


def _scaled(value: float, unit: str) -> str:
    """A figure by the rule of :mod:`tracs._text`; rates from 10^4 per second in millions (``16.5 M``)."""
    return f"{significant(value / 1e6)} M" if unit.endswith("/s") and value >= 1e4 else significant(value)


def _figure(key: str):
    entry = _record.RESULTS.get(key)
    return None if entry is None else entry["value"]


def _machine_line(info: dict) -> str:
    load = f", load average {info['load']:.2f} at the end" if info.get("load") is not None else ""
    return (f"{info['date']}, {info['cpu']}, {info['cores']} logical cores, Python {info['python']}, "
            f"{info['system']}{load}")


def _scaling_section(lines: list[str]) -> None:
    from benchmarks import scaling

    table = {k: v for k, v in scaling.TABLE.items() if not k.startswith("_")}
    if not table:
        lines += ["", "(The scaling section did not run.)"]
        return
    counts = scaling.TABLE["_serial"]["counts"]
    head = "| workload | " + " | ".join(f"{p} worker{'s' if p > 1 else ''}" for p in counts)
    head += (" | speed-up (measured) | serial fraction | predicted 8 / 16 cores | free-core estimate |"
             " peak MB (1 worker) |")
    lines += ["", head, "|" + " --- |" * (len(counts) + 6)]
    for name, entry in table.items():
        rates = entry["rates"]
        cells = " | ".join(_m(rates[p]) for p in counts)
        top = counts[-1]
        if "serial_fraction" in entry:
            f = entry["serial_fraction"]
            pred = f"{significant(entry['predicted'][8])}× / {significant(entry['predicted'][16])}×"
            extra = f"{significant(rates[top] / rates[1])}× | {significant(f)} | {pred}"
        else:
            extra = "- | - | -"
        estimate = f"{significant(entry['estimate'][top])}×" if top > 1 else "-"
        lines.append(f"| {name} | {cells} | {extra} | {estimate} | {significant(entry['peak_mb'][1])} |")
    serial = scaling.TABLE["_serial"]
    lines += ["", "Serial share of each workload's 1-worker CPU time, measured directly (every step the "
              "engine runs on one thread, timed on its own; `glue`: the Python between the steps):", "",
              "| workload | serial share | Amdahl at 16 cores | largest serial steps |", "| --- | --- | --- | --- |"]
    for name, entry in table.items():
        steps = sorted(entry["serial_steps"].items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"| {name} | {_percent(entry['serial_share'])} | "
                     f"{significant(scaling.amdahl(entry['serial_share'], 16))}× | "
                     + ", ".join(f"{step} {_percent(share)}" for step, share in steps) + " |")
    flagged = serial["flagged"]
    lines += ["", ("Serial steps above 2 %: " + "; ".join(f"{n}: {s} {_percent(v)}" for n, s, v in flagged) + ".")
              if flagged else "No serial step takes more than 2 % of its workload's 1-worker CPU time."]
    lines += ["", f"Load average when the section started: {serial['load']:.2f} (other jobs on the machine "
              "lower the measured speed-up; the Karp–Flatt serial fraction is then an upper bound).  The "
              "free-core estimate is `cpu(1) / (s + (cpu(p) − s)/p)` from the CPU times of the same run "
              "(`s`: the measured serial CPU time): what the same work would reach with `p` free cores — "
              "an estimate, not a measurement."]
    _plot(table, counts)
    lines += ["", f"![Throughput against workers](images/{PLOT.name})"]


def _plot(table: dict, counts: list[int]) -> None:
    from tracs.plots import pyplot

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, entry in table.items():
        speedups = [entry["rates"][p] / entry["rates"][1] for p in counts]
        ax.plot(counts, speedups, marker="o", label=name)
    ax.plot(counts, counts, color="grey", linestyle="--", label="ideal")
    ax.set_xlabel("workers (threads)")
    ax.set_ylabel("speed-up over 1 worker")
    ax.set_xticks(counts)
    ax.set_title("tracs.engine: speed-up over cores (bit-identical outputs)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)


def _reference_section(lines: list[str]) -> None:
    from benchmarks import reference_compare

    if not reference_compare.TABLE:
        lines += ["", "(The reference section did not run.)"]
        return
    lines += ["", "| workload | tracs | reference | ratio | reference measured |", "| --- | --- | --- | --- | --- |"]
    for name, row in reference_compare.TABLE.items():
        ref = _m(row["reference_rate"]) if row["reference_rate"] else "-"
        ratio = f"{significant(row['ratio'])}×" if row["reference_rate"] else "-"
        lines.append(f"| {name} | {_m(row['rate'])} | {ref} | {ratio} | {row['reference']} |")


def _dask_section(lines: list[str]) -> None:
    if not DASK_RUN.is_file():
        lines += ["", "(No Dask scaling run is recorded: `python -m benchmarks.dask_run`.)"]
        return
    run = json.loads(DASK_RUN.read_text(encoding="utf-8"))
    lines += ["", f"Run of {run['date']} on {run['machine']}: {run['points']:,} synthetic points, "
              f"{run['users']:,} users, {run['partitions']} Parquet partitions of "
              f"{run['points'] // run['partitions']:,} points (written in chunks), "
              f"`distributed.LocalCluster` with one thread per worker.", "",
              "| workers | seconds | points/s | speed-up | peak worker memory (GB) | peak RSS of the run (GB) |",
              "| --- | --- | --- | --- | --- | --- |"]
    if run.get("note"):
        lines[-3:-3] = ["", f"Note: {run['note']}."]
    base = run["runs"][0]["seconds"]
    for entry in run["runs"]:
        lines.append(f"| {given(entry['workers'])} | {significant(entry['seconds'])} | "
                     f"{_m(run['points'] / entry['seconds'])} | {significant(base / entry['seconds'])}× | "
                     f"{significant(entry['worker_memory_gb'])} | {significant(entry['rss_gb'])} |")


def _all_figures(lines: list[str]) -> None:
    before = _record.previous()  # the previous run on the same CPU model only
    lines += ["", "| figure | this run | previous run | ratio |", "| --- | --- | --- | --- |"]
    for key in sorted(_record.RESULTS):
        entry = _record.RESULTS[key]
        old = before.get(key, {}).get("value")
        ratio = significant(entry["value"] / old) if old else "-"
        old_text = _scaled(old, entry["unit"]) if old else "-"
        lines.append(f"| {key} | {_scaled(entry['value'], entry['unit'])} {entry['unit']} | {old_text} | {ratio} |")


def performance_page(info: dict) -> str:
    lines = ["# Performance", "",
             "Every figure on this page comes from one run of `python -m benchmarks --write-docs`",
             f"(machine: {_machine_line(info)}).  Re-run the command to regenerate the page, the",
             "plot and the README's speed section.  Ratios are measured in the same run; timings on a",
             "shared machine are noisy, ratios less so.",
             "", "## Scaling over cores (`tracs.engine`, `workers=`)", "",
             "`python -m benchmarks scaling` runs the same batch on 1, 2, 4, … up to `os.cpu_count()`",
             "threads; every output is checked bit-identical to the 1-worker output.  The speed-up is",
             "at the largest worker count; the serial fraction `f` is the Karp–Flatt estimate from it and",
             "Amdahl's law `1 / (f + (1 − f)/p)` gives the predictions for 8 and 16 cores."]
    _scaling_section(lines)
    lines += ["", "## Against the reference implementation's structure", "",
              "`python -m benchmarks reference`: `benchmarks/reference/` re-implements, for this",
              "comparison only, the per-point structure of the authors' published code (a Python loop",
              "over points with NumPy / `math` scalar calls and `random.uniform` draws, and rounding by",
              "`argmin` of `numpy.linalg.norm` over every POI per point).  It was written here, not",
              "copied.  DP libraries are optional; a row says why one is missing."]
    _reference_section(lines)
    lines += ["", "## Beyond one machine: Dask", "",
              "`python -m benchmarks.dask_run` (run once, by hand; not part of CI) perturbs synthetic",
              "points written as a partitioned Parquet directory with `tracs.dask.perturb` on a local",
              "`distributed` cluster of 1 and 2 workers.  See [Running on a cluster](cluster.md)."]
    _dask_section(lines)
    lines += ["", "## Every figure of this run", "",
              "Each figure next to the one of the previous documented run (`benchmarks/previous.json`)."]
    _all_figures(lines)
    return "\n".join(lines) + "\n"


def readme_block(info: dict) -> str:
    from benchmarks import reference_compare, scaling

    parts = [f"Measured by `python -m benchmarks --write-docs` on {info['date']} ({info['cpu']}, "
             f"{info['cores']} logical cores, shared with other jobs); details and the scaling plot in",
             "[`docs/performance.md`](docs/performance.md)."]
    facts = []
    oc, ocirc = _figure("mechanisms / OptimalClassical"), _figure("mechanisms / OptimalCircular")
    if oc and ocirc:
        facts.append(f"`OptimalClassical` {_m(oc)} and `OptimalCircular` {_m(ocirc)} samples on one core")
    c, d = _figure("perturbers / TraCS-C (many)"), _figure("perturbers / TraCS-D (many)")
    if c and d:
        facts.append(f"TraCS-C {_m(c)} and TraCS-D {_m(d)} points on one core "
                     "(10^7 points in trajectories of 100)")
    r = _figure("rounding to the nearest POI / POISpace.round (cKDTree)")
    if r:
        facts.append(f"rounding to 10^4 POIs {_m(r)} points on one core")
    loading = _figure("loaders / load + project + group")
    if loading:
        facts.append(f"loading, projecting and grouping 10^6 check-ins in {1e6 / loading:.1f} s")
    table = scaling.TABLE
    if "TraCS-C" in table and "_serial" in table:
        top = table["_serial"]["counts"][-1]
        if top > 1:
            s_c = table["TraCS-C"]["rates"][top] / table["TraCS-C"]["rates"][1]
            s_d = table["TraCS-D"]["rates"][top] / table["TraCS-D"]["rates"][1]
            e_c, e_d = table["TraCS-C"]["estimate"][top], table["TraCS-D"]["estimate"][top]
            facts.append(f"on {top} workers (`workers=`, bit-identical output) TraCS-C ran {s_c:.2f}× and "
                         f"TraCS-D {s_d:.2f}× as fast as on one on this shared machine (load average "
                         f"{table['_serial']['load']:.1f}; from CPU times, {e_c:.2f}× and {e_d:.2f}× with free "
                         "cores)")
    ref = reference_compare.TABLE
    if "TraCS-D, 1 worker" in ref:
        facts.append(f"against a per-point re-implementation of the reference code's structure, one core: "
                     f"TraCS-D {ref['TraCS-D, 1 worker']['ratio']:,.0f}×, "
                     f"TraCS-C {ref['TraCS-C, 1 worker']['ratio']:,.0f}×, rounding "
                     f"{ref['rounding to 10^4 POIs, 1 worker']['ratio']:,.0f}× faster")
    if facts:
        parts += ["", "; ".join(facts) + "."]
    return "\n".join(parts)


def write_docs(sections=None) -> list[Path]:
    """Store this run's figures and regenerate the docs' speed figures from them; return the paths written.

    ``sections`` None: every section ran, and ``docs/performance.md``, its plot and
    the README's block are rewritten.  Some sections only: their figures are stored
    in ``previous.json`` (the pages need every section, so they are kept as they
    are), and the Speed block of ``docs/estimation.md`` is written when the estimate
    section ran; the estimate section alone writes only that block.
    """
    from benchmarks import estimate

    if sections is not None and set(sections) == {"estimate"}:
        return estimate.write_docs()
    if sections is not None:
        written = estimate.write_docs()  # nothing unless the estimate section ran
        _record.save()
        print("README.md and docs/performance.md kept: they are regenerated by a run of every section")
        return [*written, _record.PREVIOUS_PATH]
    info = _record.machine()
    kept = ""
    if PERFORMANCE.is_file():  # the hand-written notes at the end of the page stay
        old = PERFORMANCE.read_text(encoding="utf-8")
        if NOTES in old:
            kept = "\n" + old[old.index(NOTES):]
    PERFORMANCE.write_text(performance_page(info) + kept, encoding="utf-8")
    written = [PERFORMANCE]
    if PLOT.is_file():
        written.append(PLOT)
    text = README.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{BEGIN}\n{readme_block(info)}\n{END}{tail}", encoding="utf-8")
        written.append(README)
    written += estimate.write_docs()  # docs/estimation.md's Speed block, when that section ran
    _record.save()
    written.append(_record.PREVIOUS_PATH)
    return written
