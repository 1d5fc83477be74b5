"""``tracs demo``: the whole job on a fresh machine in well under a minute."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .._text import counted
from ._common import positive_int, seed_int, writable_dir

DESCRIPTION = """\
Perturb a city's check-ins with TraCS-D and TraCS-C at a few ε, print the average
error in metres, and write a figure, a map and the released points.

The data are the Tokyo check-ins when TRACS_DATA_DIR holds them, otherwise a
synthetic city (no download needed).  Outputs of both methods are rounded to the
nearest venue, as in the paper's discrete experiments.
"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="perturb a city with TraCS-D and TraCS-C: table, figure, map",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output-dir", default="tracs-demo", metavar="DIR",
                   help="folder for the figure, map and files (default: ./tracs-demo)")
    p.add_argument("--dataset", default="auto", metavar="D",
                   help="auto (default: tky when TRACS_DATA_DIR has it, else synthetic), synthetic, tky, "
                        "nyc, chi or a file path")
    p.add_argument("--epsilons", default="1,4,8", metavar="E1,E2", help="ε per point (default: 1,4,8)")
    p.add_argument("--repetitions", type=positive_int, default=3, metavar="R", help="runs per cell (default: 3)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed (default: 0)")
    p.add_argument("--tiles", default=None, metavar="NAME",
                   help="map background tiles: a folium tile name (default: OpenStreetMap) or none")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _choose_dataset(name: str) -> str:
    """``auto``: Tokyo when its file is found (where ``data_loaders.data_dirs`` looks), else synthetic."""
    if name != "auto":
        return name
    from data_loaders.datasets import dataset_path

    try:
        dataset_path("tky")
    except FileNotFoundError as exc:
        print(f"tracs demo: using the synthetic city, because the Tokyo check-ins were not found ({exc})",
              file=sys.stderr)
        return "synthetic"
    return "tky"


def run(args) -> int:
    from .. import evaluation
    from ..charts import error_vs_epsilon_svg, write_svg
    from ..engine import perturb_many
    from .evaluate import format_table
    from .perturb import released_frame, write_frame

    epsilons = evaluation.parse_epsilons(args.epsilons)
    out_dir = writable_dir(args.output_dir)
    name = _choose_dataset(args.dataset)
    if not getattr(args, "quiet", False):
        print(f"loading {name} ...", file=sys.stderr)
    dataset = evaluation.load_dataset(name, seed=args.seed)
    methods = ["tracs-d", "tracs-c"]
    results = evaluation.run_grid(dataset, methods, epsilons, repetitions=args.repetitions,
                                  seed=args.seed, progress=not args.no_progress)
    summary = evaluation.summarise(results)
    results.to_csv(out_dir / "results.csv", index=False)
    print(f"{dataset.name}: {counted(dataset.n_trajectories, 'trajectory')}, {counted(dataset.n_points, 'point')}, "
          f"{len(dataset.pois):,} points of interest; outputs rounded to the nearest one")
    print(format_table(summary))

    written = [out_dir / "results.csv"]
    title = dataset.name.upper() if dataset.name in evaluation.DATA_FILES else dataset.name
    chart = error_vs_epsilon_svg(summary, title=f"{title}: TraCS-D and TraCS-C, rounded to the nearest venue")
    written.append(write_svg(chart, out_dir / "ae_vs_epsilon.svg"))

    # one released data set to look at: TraCS-D at the middle ε
    eps = epsilons[len(epsilons) // 2]
    ctx = evaluation.MethodContext(region=dataset.region, pois=dataset.pois)
    method = evaluation.METHODS["tracs-d"]
    # each user's keyed stream of --seed, as 'tracs perturb --seed' draws it (tracs.random)
    raw = perturb_many(method.build(ctx, eps), dataset.batch(), rng=args.seed, keyed=method.keyed).coords
    released = ctx.poi_space.round(raw)[0]
    trajs = dataset.trajectories
    eps_point = np.full(len(released), eps)
    eps_traj = np.repeat(eps * np.diff(dataset.offsets), np.diff(dataset.offsets))
    path = out_dir / f"released_tracs-d_eps{eps:g}.csv"
    write_frame(released_frame(trajs, released, eps_point, eps_traj), path, "CSV")
    written.append(path)
    written.extend(_write_map(trajs, raw, released, out_dir / "map.html", eps, args.tiles))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _write_map(trajs, raw, rounded, path: Path, eps: float, tiles: str | None) -> list[Path]:
    """True, released and rounded trajectories of a few users on a map.

    Leaflet is embedded in the page (``offline=True``), so it opens without a
    network; only the background tiles, if any, are fetched.
    """
    from ..maps import DEFAULT_TILES, save_map, trajectory_map

    tiles = DEFAULT_TILES if tiles is None else (None if tiles.lower() == "none" else tiles)
    page = trajectory_map(trajs, raw, rounded=rounded, users=5, epsilon=eps, method="TraCS-D",
                          tiles=tiles, title=f"TraCS-D, ε = {eps:g} per point: 5 users")
    return [save_map(page, path, offline=True)]
