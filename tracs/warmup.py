"""``python -m tracs.warmup``: the ``tracs warmup`` command (compile every numba kernel once).

Installing with pip from the source tree already does this (see the README);
run it after installing another way (a copied folder, a wheel built elsewhere,
a new numba), or to fill a per-user cache folder ahead of the first call.
"""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(["warmup", *sys.argv[1:]]))
