"""Run every experiment behind docs/results.md and rewrite its generated tables, figures and CSV files.

    python examples/reproduce_results.py --quick         # small sizes, same tables (for a check)
    python examples/reproduce_results.py --jobs 2 --only fig5,fig8
    python examples/reproduce_results.py --write-docs    # full run, rewrites docs/results.md
    python examples/reproduce_results.py --only continuous,fig7 --jobs 2 --denoise-laplace --repetitions-at 2=10

A run writes a copy of the page (``results.md``) and its CSV and PNG files into
``output/reproduce_results`` (``--output-dir``); only ``--write-docs`` rewrites
``docs/results.md`` and ``docs/figures``.

Needs TRACS_DATA_DIR (the check-in samples).  Every table cell is computed from one
*unit* (``_cells``) that depends only on its own arguments and ``--seed``, so the page
can be checked cell by cell (``tests/research/test_results_page.py``).  Only the text
between ``<!-- BEGIN GENERATED: name -->`` and ``<!-- END GENERATED: name -->`` is
replaced; the prose around it is not touched.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _cells  # noqa: E402
import _page  # noqa: E402
import _sections  # noqa: E402
import _tracs_figures  # noqa: E402
from _reproduce import ROOT, add_output_options, parse_output_args  # noqa: E402
from _tables import PAGE, Config  # noqa: E402

SECTIONS = {"continuous": _sections.continuous, "direction": _sections.direction,
            "discrete": _sections.discrete, "denoised": _sections.denoised, "degrees": _sections.degrees,
            "time": _sections.timing,
            "fig5": _tracs_figures.figure5, "fig7": _tracs_figures.figure7, "fig8": _tracs_figures.figure8,
            "total": _tracs_figures.per_trajectory}
#: units of these kinds run last and alone (wall-clock timings)
SOLO = _cells.NOT_REPRODUCIBLE


def sections(cfg: Config, only=None) -> list:
    names = list(SECTIONS) if not only else only
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    return [SECTIONS[n](cfg) for n in names]


#: data sets the denoised tables run on (the names of ``--repetitions-at``)
DENOISED_DATA = ("tky", "chi", "unit-square", "2x10")


def parse_repetitions_at(text: str) -> tuple:
    """``"2=10,chi:4=5"`` as ``(((None, 2.0), 10), (("chi", 4.0), 5))``; ``ValueError`` naming the bad item."""
    pairs = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        where, _, rest = item.rpartition(":")
        eps, sep, count = rest.partition("=")
        try:
            key, n = (where or None, float(eps)), int(count)
        except ValueError:
            key, n = None, 0
        if not sep or key is None or n < 2 or not key[1] > 0 or (where and where not in DENOISED_DATA):
            raise ValueError(f"--repetitions-at: {item!r} is not [DATA:]EPS=N with N >= 2, EPS > 0 and DATA "
                             f"among {', '.join(DENOISED_DATA)}")
        pairs[key] = n
    return tuple(pairs.items())


def run_units(units: list, seed: int, jobs: int, log=print) -> dict:
    """Every unit's result; progress on ``log``.  Timings run after the rest, one at a time."""
    results, start = {}, time.perf_counter()
    parallel = [u for u in units if u[0] not in SOLO]
    solo = [u for u in units if u[0] in SOLO]
    total = len(units)

    def report(unit, seconds):
        log(f"[{len(results):>3}/{total}] {_cells.describe(unit):<40} {seconds:6.1f} s   "
            f"(elapsed {time.perf_counter() - start:5.0f} s)")

    if jobs > 1 and len(parallel) > 1:
        # the costliest units first, so that no worker is left with a long one at the end
        parallel.sort(key=lambda u: _cells.cost(u, seed), reverse=True)
        with ProcessPoolExecutor(max_workers=jobs, initializer=_cells.worker_blas) as pool:
            futures = [pool.submit(_cells.timed, u, seed) for u in parallel]
            for future in as_completed(futures):
                unit, value, seconds = future.result()
                results[unit] = value
                report(unit, seconds)
    else:
        with _cells.one_blas_thread():  # as in the workers
            for u in parallel:
                unit, value, seconds = _cells.timed(u, seed)
                results[unit] = value
                report(unit, seconds)
    for u in solo:
        unit, value, seconds = _cells.timed(u, seed)
        results[unit] = value
        report(unit, seconds)
    return results


def header(cfg: Config, argv, seconds: float, jobs: int) -> str:
    import numpy

    now = datetime.datetime.now(datetime.timezone.utc)
    command = " ".join(["python examples/reproduce_results.py", *argv]).strip()
    return (f"Generated by `{command}` ({'quick' if cfg.quick else 'full'} run, seed {cfg.seed}) on "
            f"{now:%Y-%m-%d} at {now:%H:%M} UTC in {seconds / 60:.1f} min on {jobs} worker(s): "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, NumPy {numpy.__version__}.\n"
            f"<!-- settings: seed={cfg.seed} mode={'quick' if cfg.quick else 'full'} -->")


def main(argv=None) -> dict:
    argv = sys.argv[1:] if argv is None else list(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (fewer runs and users): a quick check")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1; timings always run alone)")
    p.add_argument("--seed", type=int, default=0, help="root seed of every cell (default 0)")
    p.add_argument("--only", default="", help=f"comma-separated sections among {', '.join(SECTIONS)}")
    p.add_argument("--denoise-laplace", action="store_true",
                   help="also run planar Laplace (T-Laplace) in the continuous spaces' denoised tables "
                        "(sections continuous, fig7; without it its columns are n/a)")
    p.add_argument("--repetitions-at", default="", metavar="[DATA:]EPS=N,...",
                   help="more repetitions for the rows of these ε in the denoised tables, e.g. 2=10 "
                        "(every data set) or chi:2=10 (one data set: tky, chi, unit-square, 2x10)")
    p.add_argument("--page", type=Path, default=None,
                   help="the page to rewrite (default: results.md in the output folder, a copy of "
                        "docs/results.md; with --write-docs, docs/results.md itself)")
    add_output_options(p)
    p.add_argument("--no-files", action="store_true", help="rewrite the page only, no CSV/PNG")
    p.add_argument("--dry-run", action="store_true", help="print the generated tables, write nothing")
    args = parse_output_args(p, argv, script="reproduce_results")
    if args.jobs < 1:
        p.error("--jobs must be >= 1")
    try:
        more = parse_repetitions_at(args.repetitions_at)
    except ValueError as exc:
        p.error(str(exc))
    cfg = Config(seed=args.seed, quick=args.quick, denoise_laplace=args.denoise_laplace, repetitions_at=more)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    chosen = sections(cfg, only)
    units = list(dict.fromkeys(u for s in chosen for u in s.units()))
    print(f"{len(chosen)} section(s), {len(units)} units, seed {cfg.seed}, "
          f"{'quick' if cfg.quick else 'full'} run, {args.jobs} worker(s)", flush=True)
    start = time.perf_counter()
    results = run_units(units, cfg.seed, args.jobs, log=lambda s: print(s, flush=True))
    seconds = time.perf_counter() - start
    bodies = {t.block: t.render(results) for s in chosen for t in s.tables}
    if args.dry_run:
        for name, body in bodies.items():
            print(f"\n{name}:\n{body}")
        return bodies
    if not only:  # the header speaks for the whole page: only a full regeneration rewrites it
        bodies["header"] = header(cfg, argv, seconds, args.jobs)
    page = args.page or (PAGE if args.write_docs else args.out_dir / "results.md")
    text = (page if page.exists() else PAGE).read_text(encoding="utf-8")
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(_page.replace_blocks(text, bodies), encoding="utf-8")
    print(f"rewrote {len(bodies)} block(s) of {page} in {seconds:.0f} s")
    failed = []
    if not args.no_files:
        for s in chosen:
            if s.files is None:
                continue
            try:
                for path in s.files(results, args.out_dir):
                    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
            except Exception as exc:  # noqa: BLE001 - the page is written; say which files are missing
                failed.append(s.name)
                print(f"FAILED to write the files of {s.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    if failed:
        raise SystemExit(f"files of {', '.join(failed)} not written")
    return bodies


if __name__ == "__main__":
    main()
