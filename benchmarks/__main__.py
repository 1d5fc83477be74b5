"""Benchmark entry point: ``python -m benchmarks [SECTION ...] [--quick] [--write-docs]``.

Sections: mechanisms, perturbers, rounding (also named discrete), loaders, porto (streaming read of a
generated Porto-shaped taxi file of 10^7 points: points/s and peak memory), estimate, postprocess
(smoothing, per-point posterior, TraCS-D's fit against TraCS-C's, synthesis), audit,
audit-power (planted leaks and false alarms over 100 seeds), cli
(``tracs perturb`` on a generated file against a plain pyarrow read + write), keyed
(the cost of per-user keyed streams), setup (install, first and warm call per
method, test suite), collect (``tracs serve``'s ingest over HTTP, the device's
releases with their state committed), scaling (1, 2, 4, … workers), reference (the
published code's per-point structure, DP libraries), ldptrace (synthetic trajectories
against LDPTrace's published code, at equal ε per user; needs ``LDPTRACE_DIR``).
Each prints items per second, memory and ratios measured in the same run (against
a naive or reference per-item loop, and against the previous documented run,
``benchmarks/previous.json``).  ``--quick`` uses smaller inputs (a smoke run).
``--write-docs`` stores the figures as the previous run on this CPU model; after
a run of every section it also regenerates every speed figure of ``README.md`` and
``docs/performance.md`` (with the scaling plot), with the machine, date and core
count.  The estimate section writes the Speed block of ``docs/estimation.md``
(``python -m benchmarks estimate --write-docs`` writes that block alone).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform

SECTIONS = {
    "mechanisms": "benchmarks.mechanisms",
    "perturbers": "benchmarks.perturbers",
    "rounding": "benchmarks.discrete",
    "loaders": "benchmarks.loaders",
    "porto": "benchmarks.porto",
    "estimate": "benchmarks.estimate",
    "postprocess": "benchmarks.postprocess",
    "audit": "benchmarks.audit",
    "audit-power": "benchmarks.audit_power",
    "scaling": "benchmarks.scaling",
    "reference": "benchmarks.reference_compare",
    "cli": "benchmarks.cli",
    "keyed": "benchmarks.keyed",
    "setup": "benchmarks.setup",
    "collect": "benchmarks.collect",
    "ldptrace": "benchmarks.ldptrace",
}
#: other names of sections
ALIASES = {"discrete": "rounding"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("sections", nargs="*", metavar="SECTION",
                        help=f"one of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="small inputs, for a smoke run")
    parser.add_argument("--write-docs", action="store_true",
                        help="store the figures as the previous run on this CPU model; with every section "
                             "(none named) also regenerate the speed figures of README.md and "
                             "docs/performance.md from this run")
    args = parser.parse_args(argv)
    args.sections = [ALIASES.get(name, name) for name in args.sections]
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    if args.write_docs and args.quick:
        parser.error("--write-docs needs full-size figures: drop --quick")
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} logical cores; best of 3 runs per figure")
    from benchmarks import _record

    others = _record.other_cpus()
    if others and not _record.comparable():
        print(f"vs prev: not compared — no documented run on {_record.cpu_model()}, only on {', '.join(others)} "
              "(the exact samplers' speed differs by CPU model)")
    for name in args.sections or list(SECTIONS):
        try:
            module = importlib.import_module(SECTIONS[name])
        except ModuleNotFoundError as exc:
            print(f"\n## {name}: not available ({exc})")
            continue
        module.run(quick=args.quick)
    if args.write_docs:
        from benchmarks import _docs

        for path in _docs.write_docs(args.sections or None):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
