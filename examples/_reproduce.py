"""Shared plumbing of the reproduction scripts: options, output files, Markdown."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
#: Where a run writes unless told otherwise: ``output/<script>`` below the working directory.
OUTPUT = Path("output")


def add_output_options(p: argparse.ArgumentParser, *, published: Path = FIGURES) -> None:
    """``--output-dir DIR`` (alias ``--out-dir``) and ``--write-docs``.

    A run writes into ``output/<script>`` (or ``DIR``); only ``--write-docs`` replaces the
    published files in ``published`` (a folder of ``docs/``), so a quick or trial run never
    overwrites the figures the documentation shows.
    """
    where = published.relative_to(ROOT) if published.is_relative_to(ROOT) else published
    p.add_argument("--output-dir", "--out-dir", dest="out_dir", type=Path, default=None,
                   help="folder for the files this run writes (default: output/<script name>)")
    p.add_argument("--write-docs", action="store_true",
                   help=f"replace the published files in {where} (full runs only)")
    p.set_defaults(published_dir=published)


def parse_output_args(p: argparse.ArgumentParser, argv, *, script: str) -> argparse.Namespace:
    """Parse ``argv`` and resolve ``args.out_dir`` from the options of :func:`add_output_options`.

    ``--write-docs`` excludes ``--output-dir`` and ``--quick`` (quick numbers are not published).
    """
    args = p.parse_args(argv)
    if args.write_docs:
        if args.out_dir is not None:
            p.error("--write-docs writes into the docs; it excludes --output-dir")
        if getattr(args, "quick", False):
            p.error("--write-docs publishes a full run; it excludes --quick")
        args.out_dir = args.published_dir
    elif args.out_dir is None:
        args.out_dir = OUTPUT / script
    return args


def parser(description: str, *, repetitions: int, epsilons: str = "2,4,6,8,10") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--epsilons", default=epsilons, help=f"ε per point (default: {epsilons})")
    p.add_argument("--repetitions", type=int, default=repetitions,
                   help=f"independent runs per cell (default: {repetitions})")
    p.add_argument("--seed", type=int, default=0, help="root seed (default: 0)")
    add_output_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def save(summary, results, out_dir: Path, stem: str, *, title: str, ylabel: str | None = None,
         logy: bool = False) -> Path:
    """Write ``<stem>.csv`` (summary), ``<stem>_runs.csv`` (tidy runs) and ``<stem>.png``."""
    from tracs.plots import error_vs_epsilon, save_figure

    out_dir.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_dir / f"{stem}.csv", index=False, float_format="%.6g")
    if results is not None:
        results.to_csv(out_dir / f"{stem}_runs.csv", index=False, float_format="%.6g")
    fig = error_vs_epsilon(summary, title=title, ylabel=ylabel, logy=logy)
    return save_figure(fig, out_dir / f"{stem}.png")


class Stopwatch:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
