"""The command blocks of ``docs/data.md`` ("Your own files"), run for real.

Writes small files in each layout (``tests/track_samples.py``: made-up points, a few
bad lines on purpose) into a temporary folder, runs each documented ``tracs perturb``
command there (in this process, through :func:`tracs.cli.main`, standard output and
standard error captured together in the order they are written) and puts the command
with everything it printed into the page's ``<!-- BEGIN GENERATED: name -->`` block.

The README's "Your own files" section shows an excerpt of one block (:data:`SAMPLE`):
its command, first dropped row, first note, the count of rows read and the release.

A run writes copies of the pages into ``output/data_docs/`` (``data.md`` and
``README.md``, ``--output-dir``); only ``--write-docs`` rewrites ``docs/data.md`` and
``README.md``.  Blocks named in :data:`ERRORS` show a
command that is refused; every other command must succeed.  The one-off line announcing
the first compilation of a kernel family (printed once per install) is switched off
(``TRACS_COMPILE_NOTICE=0``), so the blocks do not depend on the cache.

    python examples/data_docs.py                # -> output/data_docs/data.md
    python examples/data_docs.py --write-docs   # -> docs/data.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _reproduce import DOCS, ROOT, add_output_options, parse_output_args  # noqa: E402

import _page  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
import track_samples as samples  # noqa: E402

PAGE = DOCS / "data.md"
README = ROOT / "README.md"
MUNICH = "--region=11.4,48.0,11.8,48.3"
LISBON = "--region=-9.3,38.6,-9.0,38.8"


@dataclass(frozen=True)
class Example:
    """One block: the file it needs (written by ``write`` at the path ``source``) and the command."""

    block: str
    source: str
    write: Callable[[Path], Path]
    command: str
    #: lines of the released file shown in the block ``<block>-head`` (0: none)
    head: int = 0


EXAMPLES = (
    Example("geolife", "geolife", samples.write_geolife,
            "tracs perturb geolife -o geolife-released.csv -m tracs-c -e 2 --region beijing --seed 1", head=3),
    Example("tdrive", "taxi_log", samples.write_tdrive,
            "tracs perturb taxi_log -o taxi-released.csv -m tracs-c -e 2 --region beijing "
            "--timezone Asia/Shanghai --seed 1"),
    Example("porto", "train.csv", samples.write_porto,
            "tracs perturb train.csv -o porto-released.csv -m tracs-c -e 2 --region porto --seed 1"),
    Example("gpx", "ride.gpx", samples.write_gpx,
            f"tracs perturb ride.gpx -o ride-released.gpx -m tracs-d -e 2 {MUNICH} --seed 1"),
    Example("lines", "walks.gpkg", samples.write_lines,
            f"tracs perturb walks.gpkg -o walks-released.csv -m tracs-d -e 2 {MUNICH} --seed 1"),
    Example("lines-out", "walks.gpkg", samples.write_lines,
            f"tracs perturb walks.gpkg -o walks-released.gpkg --geometry lines -m tracs-d -e 2 {MUNICH} --seed 1"),
    Example("epoch", "phones.csv", samples.write_epoch_csv,
            "tracs perturb phones.csv -o phones-released.csv -m tracs-d -e 2 --region porto "
            "--user-col device --time-col ts_ms --seed 1", head=3),
    Example("date-time", "visits.csv", samples.write_date_time_csv,
            f"tracs perturb visits.csv -o visits-released.csv -m tracs-d -e 2 {LISBON} "
            "--time-col date,time --timezone Europe/Lisbon --seed 1"),
    Example("bad-zone", "visits.csv", samples.write_date_time_csv,
            f"tracs perturb visits.csv -o visits-released.csv -m tracs-d -e 2 {LISBON} "
            "--time-col date,time --timezone Lisbon --seed 1"),
    Example("layouts", "visits.csv", samples.write_layouts_csv,
            f"tracs perturb visits.csv -o visits-released.csv -m tracs-d -e 2 {LISBON} "
            "--timezone Europe/Lisbon --seed 1"),
    Example("no-time-refused", "stops.csv", samples.write_untimed_csv,
            f"tracs perturb stops.csv -o stops-released.csv -m tracs-d -e 2 {LISBON} --seed 1"),
    Example("no-time", "stops.csv", samples.write_untimed_csv,
            f"tracs perturb stops.csv -o stops-released.csv -m tracs-d -e 2 {LISBON} --no-time --seed 1"),
)
#: The blocks that show a refusal (``tracs perturb: error: ...``) on purpose.
ERRORS = frozenset({"bad-zone", "no-time-refused"})
#: The block whose excerpt the README shows, and the README block holding it.
SAMPLE, README_BLOCK = "porto", "own-files-sample"


def run(example: Example, folder: Path) -> dict[str, str]:
    """The blocks' text: ``$ command`` and what it printed, run inside ``folder`` (an empty one),
    and with ``example.head`` the first lines of the file it wrote."""
    from tracs.cli import main

    os.environ["TRACS_COMPILE_NOTICE"] = "0"
    example.write(folder / example.source)
    argv = shlex.split(example.command)[1:]
    printed = io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            status = main(argv)
    finally:
        os.chdir(here)
    text = printed.getvalue()
    for path in {str(folder), str(folder.resolve())}:
        text = text.replace(path + os.sep, "").replace(path, ".")
    if (status != 0) != (example.block in ERRORS):
        raise RuntimeError(f"block {example.block!r}: `{example.command}` exited with {status}:\n{text}")
    bodies = {example.block: f"```text\n$ {example.command}\n{text.rstrip()}\n```"}
    if example.head:
        output = argv[argv.index("-o") + 1]
        with open(folder / output, encoding="utf-8") as released:
            first = [next(released).rstrip("\n") for _ in range(example.head)]
        bodies[f"{example.block}-head"] = "\n".join(["```text", f"$ head -n {example.head} {output}", *first, "```"])
    return bodies


def render() -> dict[str, str]:
    """``{block: text}`` of every example, each run in a fresh temporary folder."""
    bodies = {}
    for example in EXAMPLES:
        with tempfile.TemporaryDirectory(prefix="tracs-data-docs-") as tmp:
            bodies.update(run(example, Path(tmp)))
    return bodies


def excerpt(block: str) -> str:
    """The command, first dropped row, first note, rows-read count and release line of ``block``."""
    lines = block.strip().splitlines()[1:-1]
    printed = lines[1:]
    picks = [next(line for line in printed if line.startswith(prefix))
             for prefix in ("tracs perturb: dropped ", "tracs perturb: note: ", "tracs perturb: read ")]
    return "\n".join(["```text", lines[0], *picks, printed[-1], "```"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_output_options(p, published=DOCS)
    args = parse_output_args(p, argv, script="data_docs")
    bodies = render()
    pages = {PAGE: bodies, README: {README_BLOCK: excerpt(bodies[SAMPLE])}}
    for source, blocks in pages.items():
        page = source if args.write_docs else args.out_dir / source.name
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(_page.replace_blocks(source.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        print(f"rewrote {len(blocks)} block(s) of {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
