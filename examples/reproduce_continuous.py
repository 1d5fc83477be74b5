"""The paper's continuous figures: AE of TraCS-D, TraCS-C, Strawman and planar Laplace (the paper's T-Laplace) on
S = [0,1)² and S = [0,2) × [0,10), trajectories of 100 uniformly random points.

Writes continuous_<region>[_<anchor>].{csv,png} into output/reproduce_continuous (``--output-dir``;
``--write-docs`` replaces docs/figures) and prints Markdown tables
(mean AE ± half-width of the 95 % CI over the repetitions, in the region's units).
The same grid from the command line, one region at a time:

    tracs evaluate --dataset unit-square --methods tracs-d,tracs-c,strawman,planar-laplace \\
        --epsilons 2,4,6,8,10 --repetitions 20 --trajectories 100 --points 100 --anchor corner
"""

from __future__ import annotations

from _reproduce import Stopwatch, parse_output_args, parser, save

from tracs.evaluation import continuous_dataset, markdown_table, run_grid, summarise

METHODS = ["tracs-d", "tracs-c", "strawman", "planar-laplace"]


def main(argv=None) -> None:
    p = parser(__doc__.splitlines()[0], repetitions=20)
    p.add_argument("--trajectories", type=int, default=100, help="trajectories per repetition (default: 100)")
    p.add_argument("--points", type=int, default=100, help="points per trajectory (default: 100)")
    p.add_argument("--anchors", default="corner,center",
                   help="TraCS-D first references to run: corner (the paper's code), center (default: both)")
    args = parse_output_args(p, argv, script="reproduce_continuous")
    for region in ("unit-square", "2x10"):
        dataset = continuous_dataset(region, trajectories=args.trajectories, points=args.points)
        for anchor in args.anchors.split(","):
            # the anchor only changes TraCS-D; the other methods' cells have the same seeds, hence
            # the same numbers, in both tables
            with Stopwatch() as clock:
                results = run_grid(dataset, METHODS, args.epsilons, repetitions=args.repetitions,
                                   seed=args.seed, anchor=anchor, progress=not args.no_progress)
            summary = summarise(results)
            stem = f"continuous_{region}_{anchor}"
            path = save(summary, results, args.out_dir, stem,
                        title=f"S = {'[0,1)²' if region == 'unit-square' else '[0,2)×[0,10)'}, "
                              f"TraCS-D anchor: {anchor}",
                        ylabel="average error (region units)")
            print(f"\n### {region}, TraCS-D anchor {anchor} ({args.trajectories} trajectories × "
                  f"{args.points} points, {args.repetitions} repetitions, {clock.seconds:.0f} s)\n")
            print(markdown_table(summary))
            print(f"\nfigure: {path}")


if __name__ == "__main__":
    main()
