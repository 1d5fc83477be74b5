"""The paper's discrete figures: AE on Tokyo (TKY, Foursquare) and Chicago (CHI, Gowalla)
check-ins for ATP, NGram, L-SRR and TraCS-D / TraCS-C rounded to the nearest venue,
plus the appendix's aggregate metrics (range-query error, hotspot preservation).

Needs TRACS_DATA_DIR (the folder with the check-in samples).  Errors are in metres
(UTM projection) and, in the "paper units" tables, after min-max scaling the data's
bounding box to the unit square.  Writes discrete_<data>.{csv,png}
into output/reproduce_discrete (``--output-dir``; ``--write-docs`` replaces docs/figures).
The same grid from the command line:

    tracs evaluate --dataset tky --methods atp,ngram,lsrr,tracs-d,tracs-c \\
        --epsilons 2,4,6,8,10 --repetitions 3 \\
        --metrics range_query_error,hotspot_precision,hotspot_ndcg
"""

from __future__ import annotations

from _reproduce import Stopwatch, parse_output_args, parser, save

import pandas as pd

from tracs.evaluation import load_dataset, markdown_table, parse_epsilons, parse_methods, run_grid, summarise

METHODS = "atp,ngram,lsrr,tracs-d,tracs-c"
METRICS = ["range_query_error", "hotspot_precision", "hotspot_ndcg"]


def main(argv=None) -> None:
    p = parser(__doc__.splitlines()[0], repetitions=3)
    p.add_argument("--datasets", default="tky,chi", help="check-in data sets (default: tky,chi)")
    p.add_argument("--methods", default=METHODS, help=f"methods (default: {METHODS})")
    p.add_argument("--max-trajectories", type=int, default=None, help="keep the first T trajectories only")
    p.add_argument("--anchor", default="center", help="TraCS-D first reference (default: center)")
    args = parse_output_args(p, argv, script="reproduce_discrete")
    for name in args.datasets.split(","):
        dataset = load_dataset(name, max_trajectories=args.max_trajectories)
        # one small grid per (method, ε): the cells' seeds make this identical to one big grid,
        # and a failing cell is reported instead of stopping the whole run
        parts, failures = [], []
        with Stopwatch() as clock:
            for method in parse_methods(args.methods):
                for eps in parse_epsilons(args.epsilons):
                    try:
                        parts.append(run_grid(dataset, [method], [eps], repetitions=args.repetitions,
                                              seed=args.seed, anchor=args.anchor, metrics=METRICS,
                                              progress=not args.no_progress))
                    except Exception as exc:  # noqa: BLE001 - reported below, with its message
                        failures.append(f"{method} at ε = {eps:g}: {type(exc).__name__}: {exc}")
        results = pd.concat(parts, ignore_index=True)
        summary = summarise(results)
        path = save(summary, results, args.out_dir, f"discrete_{name}",
                    title=f"{name.upper()}: {dataset.n_trajectories} trajectories, {dataset.n_points:,} "
                          f"check-ins, {len(dataset.pois):,} venues", ylabel="average error (m)")
        print(f"\n### {name.upper()} ({dataset.n_trajectories} trajectories, {dataset.n_points:,} points, "
              f"{len(dataset.pois):,} POIs, {args.repetitions} repetitions, {clock.seconds:.0f} s)\n")
        print("AE in metres, mean ± half-width of the 95 % CI:\n")
        print(markdown_table(summary))
        print("\nAE in the paper's normalised units (bounding box scaled to the unit square):\n")
        print(markdown_table(summary, value="ae_mean_normalised", low=None))
        for metric in METRICS:
            print(f"\n{metric} (mean over repetitions):\n")
            print(markdown_table(summary, value=metric, low=None))
        for failure in failures:
            print(f"\nFAILED: {failure}")
        print(f"\nfigure: {path}")


if __name__ == "__main__":
    main()
