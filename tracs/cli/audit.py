"""``tracs audit``: run the empirical ε audit on shipped methods and print a table."""

from __future__ import annotations

import argparse

from ._common import CLIError, _int_at_least, positive_float, seed_int

DESCRIPTION = """\
Audit shipped mechanisms, perturbers and baselines: draw SAMPLES outputs at each of
many candidate inputs (adversarial pairs, stratified points over the whole domain,
points near the region's vertices, every trajectory position up to 8 and lengths 16
and 32, released with per-user keys as 'tracs perturb' releases), pick the 4 most
suspicious (input pair, output event) on these draws, and bound their privacy loss
from below on fresh draws with exact Clopper–Pearson bounds (Bonferroni over the 4).
A method is flagged (VIOLATION) when a lower bound exceeds the claimed ε at the given
confidence, or when an output is off its declared public lattice (a low-bit leak).
A method without a declared lattice is reported as unverifiable, never as passing.

Only released positions are audited: 'tracs perturb' writes each row's time as it
was read (the datetime column is the true time), so times are neither protected
nor audited.

Exit status: 0 when every method passed, 1 when any violation was found, 3 when
none was found but some method could not be checked for low-bit leaks.
"""


#: what the audit does not cover, printed under every table
TIME_NOTE = ("note: only released positions are audited; a release's datetime column is the input's "
             "times as read (not perturbed): times are neither protected nor audited")


def _epilog() -> str:
    from ..privacy.catalog import CATALOG  # imports every mechanism: only for the help

    return "methods: " + ", ".join(CATALOG)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("audit", help="check shipped methods' ε-LDP claims empirically",
                              description=DESCRIPTION, epilog=_epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("-m", "--method", action="append", metavar="METHOD",
                       help="a method to audit (repeat or separate by commas)")
    which.add_argument("--all", action="store_true",
                       help="every shipped ε-LDP method (lsrr-thresholds, not ε-LDP, only by name)")
    p.add_argument("-e", "--epsilon", type=positive_float, default=1.0, metavar="E",
                   help="the budget to build and audit each method at (default 1)")
    p.add_argument("--samples", type=_samples, default=None, metavar="N",
                   help="draws per candidate input, >= 100 (default 100000 for 1-D mechanisms, "
                        "20000 for perturbers and baselines)")
    p.add_argument("--confidence", type=_confidence, default=0.99, metavar="C",
                   help="confidence of the lower bound, in [0.5, 1) (default 0.99)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the audit's draws (default 0)")
    p.add_argument("-v", "--verbose", action="store_true", help="also print each method's full report")


#: argparse type: draws per input, at least 100
_samples = _int_at_least(100, "an integer >= 100")


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from exc
    if not 0.5 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0.5, 1), got {value}")
    return value


def _names(args, catalog) -> list[str]:
    if args.all:
        return [name for name, target in catalog.items() if target.ldp]
    names = [n.strip() for item in args.method for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in catalog]
    if unknown or not names:
        raise CLIError(f"unknown method(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(catalog)}")
    return list(dict.fromkeys(names))


def run(args) -> int:
    from ..privacy import format_table
    from ..privacy.catalog import CATALOG, run_catalog

    names = _names(args, CATALOG)
    budget = {} if args.samples is None else {"samples": args.samples}
    rows = run_catalog(names, args.epsilon, confidence=args.confidence, rng=args.seed, **budget)
    print(format_table(rows))
    print(f"\n{TIME_NOTE}")
    for name, report, _ in rows:
        if args.verbose or report.violation:
            print(f"\n{name}:\n{report}")
    reports = [report for _, report, _ in rows]
    if any(r.violation for r in reports):
        return 1
    return 3 if any(r.unverifiable_low_bits for r in reports) else 0
