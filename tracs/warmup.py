"""``python -m tracs.warmup``: compile (or load) every numba kernel of tracs once.

Installing with pip from the source tree already does this (see the README);
run it after installing another way (a copied folder, a wheel built elsewhere,
a new numba), or to fill a per-user cache folder ahead of the first call.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracs.warmup", description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    import tracs
    from tracs._warmup import compile_all

    start = time.perf_counter()
    compile_all(verbose=not args.quiet)
    if not args.quiet:
        where = os.environ.get("NUMBA_CACHE_DIR") or f"beside the modules in {tracs.__path__[0]}"
        print(f"kernels ready in {time.perf_counter() - start:.1f} s (numba cache: {where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
