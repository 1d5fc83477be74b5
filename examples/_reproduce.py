"""Shared plumbing of the reproduction scripts: options, output files, Markdown."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"


def parser(description: str, *, repetitions: int, epsilons: str = "2,4,6,8,10") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--epsilons", default=epsilons, help=f"ε per point (default: {epsilons})")
    p.add_argument("--repetitions", type=int, default=repetitions,
                   help=f"independent runs per cell (default: {repetitions})")
    p.add_argument("--seed", type=int, default=0, help="root seed (default: 0)")
    p.add_argument("--out-dir", type=Path, default=FIGURES,
                   help="folder for the CSV files and figures (default: docs/figures)")
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
