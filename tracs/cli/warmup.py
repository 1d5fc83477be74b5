"""``tracs warmup``: compile (or load) every numba kernel once, ahead of the first real call."""

from __future__ import annotations

import os
import time


def add_parser(subparsers) -> None:
    """Add the ``warmup`` subcommand to ``subparsers``."""
    subparsers.add_parser(
        "warmup", help="compile the numba kernels now, so the first perturbation needs no compiling",
        description="Compile every cached numba kernel of tracs on tiny inputs (minutes the first "
                    "time; a second when they are already cached).  Installing from the source tree with "
                    "pip already does this; run it after installing another way.")


def run(args) -> int:
    import tracs
    from tracs._warmup import compile_all

    start = time.perf_counter()
    compile_all(verbose=not args.quiet)
    if not args.quiet:
        where = os.environ.get("NUMBA_CACHE_DIR") or f"beside the modules in {tracs.__path__[0]}"
        print(f"kernels ready in {time.perf_counter() - start:.1f} s (numba cache: {where})")
    return 0
