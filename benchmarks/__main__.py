"""Benchmark entry point: ``python -m benchmarks [SECTION ...] [--quick]``.

Sections: mechanisms, perturbers, rounding (discrete), loaders, estimate, audit, cli
(``tracs perturb`` on a generated file against a plain pyarrow read + write), keyed
(the cost of per-user keyed streams).  Each prints items
per second for every method and the ratio against a naive per-item Python loop
measured in the same run.  ``--quick`` uses smaller inputs (a smoke run).
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
    "estimate": "benchmarks.estimate",
    "audit": "benchmarks.audit",
    "cli": "benchmarks.cli",
    "keyed": "benchmarks.keyed",
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("sections", nargs="*", metavar="SECTION",
                        help=f"one of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="small inputs, for a smoke run")
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} logical cores; best of 3 runs per figure")
    for name in args.sections or list(SECTIONS):
        try:
            module = importlib.import_module(SECTIONS[name])
        except ModuleNotFoundError as exc:
            print(f"\n## {name}: not available ({exc})")
            continue
        module.run(quick=args.quick)


if __name__ == "__main__":
    main()
