"""The paper's appendix metrics on TKY and CHI: range query (share of points kept within δ) and hotspot error.

Scores the same released check-ins as ``examples/reproduce_discrete.py`` (same
methods, ε, repetitions and cell seeds, so the same outputs) with the
``range_preservation`` and ``hotspot_count_error`` metrics of
:func:`tracs.evaluation.run_grid`:

* range query — per trajectory, the share of points released within δ = 0.1 degree
  of the true point (our coordinates are UTM metres, converted per axis to degrees
  at the latitude of the centre of the data's bounding box), averaged over
  trajectories; higher is better;
* hotspot error — hotspots are the top 20 % most visited venues of the true data;
  per trajectory ``|#released − #true points on a hotspot|``, averaged; lower is better.

Needs TRACS_DATA_DIR.  Writes ``paper_query_metrics.csv`` (one row per run) into
``--output-dir`` (default ``output/reproduce_query_metrics``; ``--write-docs``: ``docs/figures``) and prints the tables (means over
repetitions).  One data set from the command line gives the same numbers:

    tracs evaluate --dataset chi --methods atp,ngram,lsrr,lsrr-thresholds,tracs-d,tracs-c \\
        --epsilons 2,4,6,8,10 --repetitions 3 --metrics range_preservation,hotspot_count_error
"""

from __future__ import annotations

from _reproduce import Stopwatch, parse_output_args, parser

import pandas as pd

from tracs.evaluation import HOTSPOT_SHARE, load_dataset, markdown_table, run_grid, summarise
from tracs.query_metrics import hotspot_locations

METHODS = "atp,ngram,lsrr,lsrr-thresholds,tracs-d,tracs-c"
METRICS = ["range_preservation", "hotspot_count_error"]
COLUMNS = ["dataset", "method", "label", "epsilon", "repetition", "n_hotspots", *METRICS]


def main(argv=None) -> pd.DataFrame:
    p = parser(__doc__.splitlines()[0], repetitions=3)
    p.add_argument("--datasets", default="tky,chi", help="check-in data sets (default: tky,chi)")
    p.add_argument("--methods", default=METHODS, help=f"methods (default: {METHODS})")
    p.add_argument("--max-trajectories", type=int, default=None, help="keep the first T trajectories only")
    args = parse_output_args(p, argv, script="reproduce_query_metrics")
    parts = []
    for name in args.datasets.split(","):
        dataset = load_dataset(name, max_trajectories=args.max_trajectories)
        with Stopwatch() as clock:
            runs = run_grid(dataset, args.methods, args.epsilons, repetitions=args.repetitions, seed=args.seed,
                            metrics=METRICS, progress=not args.no_progress)
        # check-in data are the same in every repetition, hence the same hotspots
        runs["n_hotspots"] = len(hotspot_locations(dataset.coords, HOTSPOT_SHARE))
        parts.append(runs[COLUMNS])
        summary = summarise(runs)
        print(f"\n### {name.upper()} ({dataset.n_trajectories} trajectories, {dataset.n_points:,} points, "
              f"{int(runs['n_hotspots'].iloc[0]):,} hotspots, {args.repetitions} repetitions, "
              f"{clock.seconds:.0f} s)")
        for metric in METRICS:
            print(f"\n{metric} (mean over repetitions):\n")
            print(markdown_table(summary, value=metric, low=None))
    runs = pd.concat(parts, ignore_index=True)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out_dir / "paper_query_metrics.csv", index=False, float_format="%.6g")
    return runs


if __name__ == "__main__":
    main()
