"""Check the installed extension through the real ``tracs`` command (CI runs it after installing it).

``pip install --no-deps --no-build-isolation examples/extending`` installs the package
``tracs-toy``; this script writes a small check-in file, then runs ``tracs perturb``
(the toy perturber, written in the toy format), ``tracs estimate`` (the toy estimator,
reading the toy format), ``tracs audit`` and ``tracs evaluate`` with the toy method.
It exits non-zero at the first command that fails or gives an unexpected result.

Usage: ``python examples/extending/check_installed.py [--tracs PATH]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _checkins(path: Path) -> None:
    """Three users (``007``, ``042``, ``100``), ten check-ins each in Tokyo, ten minutes apart."""
    lines = ["uid,datetime,lat,lng"]
    for u, uid in enumerate(("007", "042", "100")):
        for k in range(10):
            lines.append(f"{uid},2012-04-03T{10 + u:02d}:{k * 5:02d}:00+00:00,{35.61 + 0.01 * k:.4f},"
                         f"{139.62 + 0.012 * k + 0.03 * u:.4f}")
    path.write_text("\n".join(lines) + "\n")


def _run(tracs: str, *args, expect=(0,)) -> str:
    done = subprocess.run([tracs, *map(str, args)], capture_output=True, text=True, timeout=900)
    print(f"$ tracs {' '.join(map(str, args))}  -> exit {done.returncode}", flush=True)
    if done.returncode not in expect:
        sys.exit(f"check_installed: 'tracs {args[0]}' failed (exit {done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tracs", default=shutil.which("tracs", path=str(Path(sys.executable).parent))
                        or shutil.which("tracs"), help="the tracs executable (default: beside this Python)")
    args = parser.parse_args(argv)
    if not args.tracs:
        sys.exit("check_installed: no tracs executable found")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        _checkins(folder / "checkins.csv")
        if "toy-cells" not in _run(args.tracs, "perturb", "--help"):
            sys.exit("check_installed: 'tracs perturb --help' does not list the method toy-cells")
        released = folder / "released.toytext"
        _run(args.tracs, "perturb", folder / "checkins.csv", "-o", released, "-m", "toy-cells", "-e", "2",
             "--region", "tky", "--seed", "1", "-q")
        first, header, *rows = released.read_text().splitlines()
        if not first.startswith("#tracs ") or json.loads(first[7:])["method"] != "toy-cells" or len(rows) != 30:
            sys.exit(f"check_installed: {released.name} does not hold the 30 released rows and their parameters")
        uids = {row.split("|")[header.split("|").index("uid")].strip('"') for row in rows}
        if uids != {"007", "042", "100"}:
            sys.exit(f"check_installed: the user ids were not kept as written: {sorted(uids)}")
        _run(args.tracs, "estimate", released, "-o", folder / "density.csv", "--grid", "4")
        if not (folder / "density.csv").is_file():
            sys.exit("check_installed: tracs estimate wrote no density")
        audit = _run(args.tracs, "audit", "-m", "toy-cells", "--samples", "2000", "--seed", "1")
        if "toy-cells" not in audit or "unverifiable" in audit:
            sys.exit(f"check_installed: the audit of toy-cells did not pass:\n{audit}")
        table = json.loads(_run(args.tracs, "evaluate", "--dataset", "unit-square", "--methods", "toy-cells",
                                "--epsilons", "2", "--repetitions", "2", "--points", "5", "--trajectories", "4",
                                "--no-figure", "--no-progress", "--format", "json"))
        if [row["method"] for row in table] != ["toy-cells"]:
            sys.exit(f"check_installed: tracs evaluate gave {table}")
    print("check_installed: the toy method, format and estimator work through the installed tracs command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
