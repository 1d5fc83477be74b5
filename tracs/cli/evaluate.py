"""``tracs evaluate``: a grid of methods × ε × repetitions with confidence intervals."""

from __future__ import annotations

import argparse
import json
import sys

from .._text import counted
from . import _columns
from ..errors import InputError
from ._common import anchor_arg, positive_int, seed_int, writable_dir, writable_file

DESCRIPTION = """\
Run every method at every ε, several times, on a data set; print the mean average
error (AE) with a confidence interval and write the tidy results, a summary and a
figure of AE against ε into the output folder.

Data sets: unit-square and 2x10 (the paper's continuous regions [0,1)² and
[0,2)×[0,10), with --trajectories random trajectories of --points uniform points
per repetition), synthetic (a synthetic city), tky / nyc / chi (the check-in
samples in the folder named by TRACS_DATA_DIR, over their preset boxes) or the
path of a check-in file: over --region when given, else over the file's own
bounding box (a warning says so: an experiment, not a private setting).
On check-in data AE is in metres, and the "normalised" AE is measured after
min-max scaling the region to the unit square (the paper's units).  Outputs of
continuous methods are rounded to the nearest venue of data with a venue column
(check-ins) or to the points of --pois, unless --no-round-to-pois; traces (GPS
points, no venue column) are not rounded unless --round-to-pois (to every
distinct point of the data).  The first line of the output says which.

The same --seed gives the same table (except the timing column), whatever the
order or the subset of methods and ε.
"""

EPILOG = """\
examples:
  tracs evaluate --dataset unit-square --methods tracs-d,tracs-c,strawman,planar-laplace \\
                 --epsilons 2,4,6,8,10 --repetitions 10 --anchor corner
  tracs evaluate --dataset tky --methods atp,ngram,lsrr,tracs-d,tracs-c --epsilons 2,4,6,8,10
  tracs evaluate --dataset chi --methods lsrr,tracs-c --repetitions 3 \\
                 --metrics range_preservation,hotspot_count_error
  tracs evaluate --dataset synthetic --methods tracs-d,tracs-c --epsilons 2,4 --format json
  tracs evaluate --dataset chi --methods lsrr,tracs-c --epsilons 4 --repetitions 3 --denoise point
"""


METRICS_HELP = """\
metrics (--metrics, comma-separated; per run, then averaged over repetitions):
  range_preservation   the paper's range query: per trajectory, the share of points
                       released within δ = 0.1 of the true point, averaged over
                       trajectories (higher is better).  On check-in data δ is 0.1
                       DEGREE as in the paper: the metres between the points are
                       converted per axis to degrees at the latitude of the centre
                       of the data's bounding box.  On unit-square / 2x10, δ = 0.1
                       region units.
  hotspot_count_error  the paper's hotspot error: hotspots are the top 20 % most
                       visited distinct true locations; per trajectory |#released -
                       #true points on a hotspot|, averaged (lower is better).
                       Exact location matching: check-in data only.
  range_query_error    mean relative count error of 200 random rectangles.
  hotspot_precision    share of the 10 busiest true cells of a 20x20 grid recovered.
  hotspot_ndcg         NDCG@10 of the busiest grid cells.
"""


def add_parser(subparsers) -> None:
    from ._common import method_help

    p = subparsers.add_parser("evaluate", help="average error of methods over an ε grid",
                              description=DESCRIPTION,
                              epilog=EPILOG + "\nmethods: " + method_help() + "\n\n" + METRICS_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="unit-square", metavar="D",
                   help="unit-square, 2x10, synthetic, tky, nyc, chi, a file path or a Geolife / T-Drive "
                        "folder (default: unit-square)")
    p.add_argument("--methods", default="tracs-d,tracs-c", metavar="M1,M2",
                   help="comma-separated methods (default: tracs-d,tracs-c)")
    p.add_argument("--epsilons", default="2,4,6,8,10", metavar="E1,E2",
                   help="comma-separated ε per point, each > 0 (default: 2,4,6,8,10)")
    p.add_argument("--repetitions", type=positive_int, default=5, metavar="R",
                   help="independent runs per (method, ε) (default: 5)")
    p.add_argument("--points", type=positive_int, default=100, metavar="N",
                   help="points per random trajectory on unit-square / 2x10 (default: 100)")
    p.add_argument("--trajectories", type=positive_int, default=100, metavar="T",
                   help="random trajectories per repetition on unit-square / 2x10 (default: 100)")
    p.add_argument("--max-trajectories", type=positive_int, default=None, metavar="T",
                   help="on check-in data, keep only the first T trajectories (quick runs)")
    p.add_argument("--split-gap", default=None, metavar="GAP",
                   help="on check-in data, split a user's check-ins at gaps longer than GAP (e.g. 3h)")
    _columns.add_input_arguments(p)
    from ._public import add_outside_arguments, region_arg, region_help

    p.add_argument("--region", type=region_arg, default=None, metavar="BOX",
                   help=region_help() + ".  For check-in data: default, the preset of tky / nyc / chi, "
                        "and for a file the file's own bounding box (a warning says so: not private)")
    p.add_argument("--pois", default=None, metavar="FILE",
                   help="with --region: public points of interest (CSV with lat and lng columns) for "
                        "the discrete methods and rounding, instead of the data's venues")
    add_outside_arguments(p, "with --region: ")
    p.add_argument("--anchor", type=anchor_arg, default="center",
                   help="TraCS-D's first reference: center (default) or corner (the paper's code)")
    p.add_argument("--round-to-pois", action=argparse.BooleanOptionalAction, default=None,
                   help="round continuous methods' outputs to the nearest POI (default: on data with a "
                        "venue column or with --pois; not on traces)")
    p.add_argument("--metrics", default="", metavar="NAMES",
                   help="extra columns, comma-separated (see 'metrics' below)")
    p.add_argument("--units", choices=("metres", "degrees"), default="metres",
                   help="units of the errors: metres (default; region units on a continuous region) or "
                        "degrees, as the paper's check-in figures")
    p.add_argument("--denoise", choices=("point", "trajectory"), default=None,
                   help="also the AE of the denoised release of TraCS-C, TraCS-D, the Strawman and planar Laplace "
                        "(tracs.evaluation.denoised): point: every report's posterior on its own (over the "
                        "POIs when the outputs are rounded to them: its mode, and the POI nearest its mean); "
                        "trajectory: given the other reports of its trajectory (over the POIs with the revisit "
                        "prior of tracs.estimate.revisits; slower; planar Laplace per point); "
                        "EM, L-SRR and NGram (their exact laws) and ATP (a stated surrogate, "
                        "tracs.estimate.surrogate_law): every report's posterior over the POIs, with "
                        "trajectory the revisit prior too (not NGram, whose law follows the previous "
                        "released POI either way)")
    p.add_argument("--seed", type=seed_int, default=0, help="root seed (default: 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals (default: 0.95)")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="folder for results.csv, summary.csv and ae_vs_epsilon.svg (default: ./tracs-results "
                        "with --format table; none with --format json unless given)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default): a text table on stdout; json: only a JSON array, on stdout or -o")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="with --format json: write the JSON array to FILE instead of stdout")
    p.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def format_table(summary) -> str:
    """The summary as an aligned text table, numbers by the rule of :mod:`tracs._text`
    (measured values to 3 significant digits, counts whole, ε as given)."""
    from .._text import given, significant, whole
    from ..evaluation import EXTRA_METRICS

    units = summary["units"].iloc[0]
    extra = [c for c in EXTRA_METRICS if c in summary]
    denoised = [c for c in ("ae_denoised", "ae_denoised_mean") if c in summary and summary[c].notna().any()]
    names = {"ae_denoised": "AE denoised", "ae_denoised_mean": "AE denoised (mean)"}
    width = max(10, *(len(label) for label in summary["label"]))
    header = (f"{'method':<{width}} {'ε':>6} {'reps':>5} {'AE (' + units + ')':>14} {'95% CI':>25} "
              f"{'AE (paper units)':>17} {'µs/point':>10}" + "".join(f" {c:>18}" for c in extra)
              + "".join(f" {names[c]:>18}" for c in denoised))
    lines = [header, "-" * len(header)]
    for row in summary.itertuples(index=False):
        ci = f"[{significant(row.ae_ci_low)}, {significant(row.ae_ci_high)}]"
        line = (f"{row.label:<{width}} {given(row.epsilon):>6} {whole(row.repetitions):>5} "
                f"{significant(row.ae_mean):>14} {ci:>25} {significant(row.ae_mean_normalised):>17} "
                f"{significant(row.seconds_per_point * 1e6):>10}")
        line += "".join(f" {significant(getattr(row, c)):>18}" for c in extra)
        line += "".join(f" {'n/a' if getattr(row, c) != getattr(row, c) else significant(getattr(row, c)):>18}"
                        for c in denoised)
        lines.append(line)
    return "\n".join(lines)


def run(args) -> int:
    from .. import evaluation
    from ..evaluation.experiment_data import DATA_FILES

    methods = evaluation.parse_methods(args.methods)
    epsilons = evaluation.parse_epsilons(args.epsilons)
    metrics = evaluation.parse_metrics(args.metrics)
    if not 0 < args.confidence < 1:
        raise InputError(f"--confidence must be in (0, 1), got {args.confidence}")
    if args.output is not None and args.format != "json":
        raise InputError("-o/--output goes with --format json (tables go to stdout, files to --output-dir)")
    output_dir = args.output_dir
    if output_dir is None and args.format == "table":
        output_dir = "tracs-results"
    out_dir = writable_dir(output_dir) if output_dir is not None else None
    json_file = writable_file(args.output) if args.output is not None else None
    _check_public(args)
    dataset = evaluation.load_dataset(args.dataset, trajectories=args.trajectories, points=args.points,
                                      seed=args.seed, max_trajectories=args.max_trajectories,
                                      split_gap=args.split_gap, read_options=_file_options(args),
                                      fmt=_columns.read_options(args)["input_format"],
                                      box=args.region, pois=args.pois, on_read=_on_read(args))
    if args.region is None and dataset.units == "m" and args.dataset not in (*DATA_FILES, "synthetic"):
        print("tracs evaluate: " + FILE_BOUNDS_WARNING.format(name=args.dataset), file=sys.stderr)
    results = evaluation.run_grid(dataset, methods, epsilons, repetitions=args.repetitions, seed=args.seed,
                                  anchor=args.anchor, round_to_pois=args.round_to_pois, metrics=metrics,
                                  progress=not args.no_progress, on_estimate=_say_estimate, units=args.units,
                                  denoise=args.denoise)
    summary = evaluation.summarise(results, confidence=args.confidence)
    written = []
    if out_dir is not None:
        results.to_csv(out_dir / "results.csv", index=False)
        summary.to_csv(out_dir / "summary.csv", index=False)
        written += [out_dir / "results.csv", out_dir / "summary.csv"]
    if out_dir is not None and not args.no_figure:
        from ..charts import error_vs_epsilon_svg, write_svg

        title = (f"{dataset.name}: {counted(dataset.n_trajectories, 'trajectory')}, {counted(dataset.n_points, 'point')}, "
                 f"{args.repetitions} rep.")
        written.append(write_svg(error_vs_epsilon_svg(summary, title=title), out_dir / "ae_vs_epsilon.svg"))
    if args.format == "json":
        text = json.dumps(evaluation.summary_records(summary), indent=2) + "\n"
        if json_file is not None:
            json_file.write_text(text, encoding="utf-8")
            written.append(json_file)
        else:
            sys.stdout.write(text)
    else:
        print(first_line(dataset, args))
        print(format_table(summary))
    if written:
        print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    return 0


def first_line(dataset, args) -> str:
    """What the table compares: the data, the rows left out, the repetitions and the rounding target."""
    left = f" ({counted(dataset.left_out, 'row')} outside the region left out)" if dataset.left_out else ""
    rounding = ""
    if dataset.pois is not None:
        rounds = dataset.round_by_default if args.round_to_pois is None else args.round_to_pois
        rounding = (f"; continuous methods rounded to {dataset.pois_label}" if rounds else
                    "; continuous methods not rounded" + ("" if dataset.round_by_default else
                                                          " (a trace: no venue column)"))
    return (f"{dataset.name}: {counted(dataset.n_trajectories, 'trajectory')}, {counted(dataset.n_points, 'point')}"
            f"{left}, {counted(args.repetitions, 'repetition')}, seed {args.seed}{rounding}")


#: printed when a data set given by path is evaluated without --region
FILE_BOUNDS_WARNING = (
    "warning: --dataset {name} without --region: the region is the file's own bounding box, the "
    "points of interest its distinct venues and the projection the UTM zone of its data, all computed "
    "from the file: fine for experiments on a data set whose extent is published, NOT the setting of a "
    "private release; give --region (a preset, a box or a polygon file) and --pois to evaluate over "
    "public parameters, as 'tracs perturb' requires")
#: printed when --region is given without --pois for check-in data
DATA_POIS_NOTE = (
    "note: the points of interest (discrete methods, rounding) are the data's distinct venues, as in "
    "the paper; --pois FILE gives public ones")


def _check_public(args) -> None:
    """Refuse options that do not fit the data set; warn when a file's own bounds are the region."""
    from ..evaluation.experiment_data import REGIONS
    from . import _public
    from ._common import CLIError

    name = args.dataset
    if args.region is None:
        for flag, given in (("--pois", args.pois), ("--clip", args.clip), ("--drop", args.drop)):
            if given:
                raise CLIError(f"{flag} goes with --region (the public region it applies to)")
        return
    if name in REGIONS:
        raise CLIError(f"--region applies to check-in data; {name} is a continuous region of the paper, "
                       "fixed in advance")
    _public.check_region_file(args, "evaluate")
    _public.check_projection(args.region)
    if args.pois is None:
        print("tracs evaluate: " + DATA_POIS_NOTE, file=sys.stderr)


def _on_read(args):
    """Report what the loader dropped from a file, then refuse, drop or clip the rows
    outside --region (as 'tracs perturb' does), so the counts of the messages add up."""
    from ..errors import InputError
    from . import _output
    from ._public import frame_in_region

    def checked(frame, box):
        report = frame.attrs.get("report")
        if box is None:
            _output.report_drops("evaluate", report, strict=False)
            return frame
        try:
            frame, handled = frame_in_region(frame, args, command="evaluate")
        except InputError:  # rows outside the region (tracs.release.area.outside_rows)
            _output.report_drops("evaluate", report, strict=False)
            raise
        _output.report_drops("evaluate", report, strict=False,
                             extra=[("clipped" if args.clip else "dropped", handled)])
        return frame

    return checked


#: a run expected to take longer than this says so before it starts
ESTIMATE_NOTE_SECONDS = 15.0


def _say_estimate(seconds: dict) -> None:
    """Print the expected run time on stderr when it exceeds :data:`ESTIMATE_NOTE_SECONDS`."""
    total = sum(seconds.values())
    if total <= ESTIMATE_NOTE_SECONDS:
        return
    slowest = max(seconds, key=seconds.get)
    print(f"tracs evaluate: this run will take about {total:,.0f} s ({slowest}: about {seconds[slowest]:,.0f} s); "
          "use --max-trajectories, fewer --epsilons or --repetitions for a quicker run", file=sys.stderr)


def _file_options(args) -> dict:
    """Column and time options for a data set given by path (the named ones need none)."""
    options = _columns.read_options(args)
    options.pop("input_format")
    return options
