"""TraCS-D's two distance normalisations on the paper's continuous regions, beside the paper's values.

``tracs-d`` normalises the distance along the *released* direction; ``tracs-d-paper``
(``TraCSD(distance_along="true")``) along the *true* one, as the authors' code does.
Setting of the paper's continuous figures (the authors' ``experiment_1_1.py`` and
``experiment_1_2.py``): S = [0,1)² and S = [0,2) × [0,10), trajectories of 100 uniform
points, first reference the lower-left corner, ε per point.  The authors average each
trajectory's error over its 100 points and the fixed start (error 0), so their values are
100/101 of an AE: the column ``paper-variant × 100/101`` is the one to compare.

    python examples/tracs_d_variants.py            # 20 repetitions of 100 trajectories

Prints one Markdown table per region (mean AE ± half-width of the 95 % interval) and writes
``tracs_d_variants_<region>.csv`` (the summary) into ``output/tracs_d_variants`` (or
``--output-dir``; ``--write-docs``: ``docs/figures``).
"""

from __future__ import annotations

from _reproduce import Stopwatch, parse_output_args, parser

from tracs._text import plus_minus, significant
from tracs.evaluation import continuous_dataset, run_grid, summarise

#: the authors' result files (experiments/continuous_space/results/experiment_1_1.csv and
#: experiment_1_2.csv of their repository): TraCS-D's value at ε = 2, 4, 6, 8, 10
PAPER = {"unit-square": (0.4483, 0.3237, 0.2305, 0.1659, 0.1246),
         "2x10": (3.030, 2.380, 1.769, 1.249, 0.9000)}
TITLES = {"unit-square": "[0,1)²", "2x10": "[0,2)×[0,10)"}


def table(summary, region: str, epsilons) -> str:
    """The Markdown table of one region: both variants, the paper, the relative gaps."""
    def cell(method, eps):
        row = summary[(summary["method"] == method) & (summary["epsilon"] == eps)].iloc[0]
        return float(row["ae_mean"]), float(row["ae_ci_high"] - row["ae_mean"])

    lines = ["| ε | tracs-d (released) | tracs-d-paper (true) | tracs-d-paper × 100/101 | paper | "
             "paper variant vs paper | tracs-d vs paper variant |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for eps in epsilons:
        (ours, h1), (variant, h2) = cell("tracs-d", eps), cell("tracs-d-paper", eps)
        paper = dict(zip((2.0, 4.0, 6.0, 8.0, 10.0), PAPER[region])).get(eps)
        scaled = variant * 100 / 101
        versus = "" if paper is None else f"{significant(100 * (scaled / paper - 1), 2)} %"
        lines.append(f"| {eps:g} | {plus_minus(ours, h1)} | {plus_minus(variant, h2)} | {significant(scaled)} | "
                     f"{'' if paper is None else f'{paper:g}'} | {versus} | "
                     f"{significant(100 * (ours / variant - 1), 2)} % |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = parser(__doc__.splitlines()[0], repetitions=20)
    p.add_argument("--trajectories", type=int, default=100, help="trajectories per repetition (default: 100)")
    args = parse_output_args(p, argv, script="tracs_d_variants")
    epsilons = [float(e) for e in args.epsilons.split(",")]
    for region in ("unit-square", "2x10"):
        dataset = continuous_dataset(region, trajectories=args.trajectories, points=100)
        with Stopwatch() as clock:
            results = run_grid(dataset, ["tracs-d", "tracs-d-paper"], epsilons, repetitions=args.repetitions,
                               seed=args.seed, anchor="corner", progress=not args.no_progress)
        print(f"\n### S = {TITLES[region]} ({args.trajectories} trajectories × 100 points, "
              f"{args.repetitions} repetitions, {clock.seconds:.0f} s)\n")
        summary = summarise(results)
        args.out_dir.mkdir(parents=True, exist_ok=True)
        summary.to_csv(args.out_dir / f"tracs_d_variants_{region}.csv", index=False, float_format="%.6g")
        print(table(summary, region, epsilons))


if __name__ == "__main__":
    main()
