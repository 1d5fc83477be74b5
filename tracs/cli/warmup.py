"""``tracs warmup``: compile (or load) every numba kernel once, ahead of the first real call."""

from __future__ import annotations

import os
import time


def add_parser(subparsers) -> None:
    """Add the ``warmup`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "warmup", help="compile the numba kernels now, so the first perturbation needs no compiling",
        description="Compile every cached numba kernel of tracs on tiny inputs (minutes the first "
                    "time; a second when they are already cached).  Installing from the source tree with "
                    "pip already does this; run it after installing another way.")
    p.add_argument("--secure", action="store_true",
                   help="also compile the ChaCha20 versions used by --secure-rng / rng='secure' "
                        "(as long again; installing compiles only the default Philox ones)")
    p.add_argument("--timings", action="store_true",
                   help="list the seconds of every compilation (nested ones included), slowest first; "
                        "with a warm cache there are none")


def run(args) -> int:
    import tracs
    from tracs._warmup import compile_all

    start = time.perf_counter()
    kernels = [] if args.timings else None
    compile_all(secure=args.secure, verbose=not args.quiet, kernels=kernels)
    for seconds, name, signature in sorted(kernels or [], reverse=True):
        if not name.startswith("numba."):  # numba's own overloads compile in hundredths of a second
            print(f"{seconds:7.2f} s  {name}  {signature[:100]}")
    if not args.quiet:
        where = os.environ.get("NUMBA_CACHE_DIR") or f"beside the modules in {tracs.__path__[0]}"
        print(f"kernels ready in {time.perf_counter() - start:.1f} s (numba cache: {where})")
    return 0
