"""Density and query error of TraCS-C (or TraCS-D) reports and of trajectories synthesised from them.

For CHI and TKY (one trajectory per user, the check-ins in the cities' public boxes) and
ε = 2 and 6 per point: (a) the raw reports and (b) synthetic trajectories sampled from the
mobility model fitted to the reports (:mod:`tracs.estimate.synthesize`), both scored against
the true points with :func:`tracs.evaluation.synthesis_metrics.density_error` and
:func:`~tracs.evaluation.synthesis_metrics.query_error`.  Prints one Markdown table
(docs/synthesis.md).  ``--binned`` adds (c) the trajectories of the model fitted to the same
reports binned as they are (``binned=True``), sampled with the same seed.
``--all-metrics`` prints a second table: every metric of
:mod:`tracs.evaluation.synthesis_metrics` for the first run; ``--sample N`` one more: the
seconds to sample ``N`` trajectories from the first run's model.  Needs ``TRACS_DATA_DIR``
(the check-in files)::

    python examples/synthesis_utility.py [--grid 16] [--seed 0] [--repeats 3] [--all-metrics]
                                         [--datasets chi,tky] [--epsilons 2,6]
                                         [--method tracs-c] [--binned] [--iterations 25] [--sample N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def run(grid: int, seed: int, repeats: int, datasets=("chi", "tky"), epsilons=(2.0, 6.0), every=None,
        method="tracs-c", binned=False, iterations=25, timed=None, sample=100_000):
    from tracs.estimate.synthesize import fit_mobility_model, synthesize
    from tracs.evaluation.experiment_data import load_dataset
    from tracs.evaluation.synthesis_metrics import density_error, every_metric, query_error
    from tracs.perturbers import TraCSC, TraCSD

    perturber_class = {"tracs-c": TraCSC, "tracs-d": TraCSD}[method]

    rows = []
    for name in datasets:
        data = load_dataset(name)
        true, off, region = data.coords, data.offsets, data.region
        bounds = region.bounds
        for eps in epsilons:
            scores = []
            for r in range(repeats):
                perturber = perturber_class(region, epsilon=eps)
                reports = perturber.perturb_many(true, off, rng=seed + r)
                start = time.perf_counter()
                model = fit_mobility_model(reports, perturber, offsets=off, grid=grid, iterations=iterations)
                synthetic = synthesize(model, len(off) - 1, rng=seed + r)
                took = time.perf_counter() - start
                if timed is not None and r == 0:
                    start = time.perf_counter()
                    many = synthesize(model, sample, rng=seed)
                    timed.append((name.upper(), eps, len(many.coords), time.perf_counter() - start))
                q = seed + 1000  # the same queries for all
                data_sets = {"reports": (reports, off), "synthetic": (synthetic.coords, synthetic.offsets)}
                if binned:
                    plain = synthesize(fit_mobility_model(reports, perturber, offsets=off, grid=grid, binned=True),
                                       len(off) - 1, rng=seed + r)
                    data_sets["binned synthetic"] = (plain.coords, plain.offsets)
                if every is not None and r == 0:
                    every.append((name.upper(), eps, [(label, every_metric(true, off, d, o, bounds, cells=grid,
                                                                           seed=seed))
                                                      for label, (d, o) in data_sets.items()]))
                scores.append([density_error(true, d, bounds, cells=grid) for d, _ in data_sets.values()]
                              + [query_error(true, d, bounds, rng=q) for d, _ in data_sets.values()] + [took])
            m = np.mean(scores, axis=0)
            rows.append((name.upper(), eps, len(true), *m))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--all-metrics", action="store_true")
    parser.add_argument("--datasets", default="chi,tky", help="comma-separated: chi, tky, nyc")
    parser.add_argument("--epsilons", default="2,6", help="comma-separated ε per point")
    parser.add_argument("--method", default="tracs-c", choices=("tracs-c", "tracs-d"))
    parser.add_argument("--iterations", type=int, default=25, help="cap on the EM passes of the pair fit")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="also time sampling N trajectories from the first run's model")
    parser.add_argument("--binned", action="store_true",
                        help="also the model fitted to the reports binned as they are")
    args = parser.parse_args(argv)
    datasets = tuple(args.datasets.split(","))
    epsilons = tuple(float(e) for e in args.epsilons.split(","))
    every = [] if args.all_metrics else None
    timed = [] if args.sample else None
    from tracs._text import significant, whole

    sets = ["reports", "synthetic"] + (["binned synthetic"] if args.binned else [])
    header = ["data", "ε", "points"] + [f"{m}, {d}" for m in ("density JSD", "query AvRE") for d in sets]
    print("| " + " | ".join(header + ["fit + sample (s)"]) + " |")
    print("|" + " --- |" * (len(header) + 1))
    for name, eps, n, *values in run(args.grid, args.seed, args.repeats, datasets, epsilons, every=every,
                                     method=args.method, binned=args.binned, iterations=args.iterations,
                                     timed=timed, sample=args.sample):
        print(f"| {name} | {eps:g} | {whole(n)} | " + " | ".join(significant(v) for v in values) + " |")
    if timed:
        print(f"\n| data | ε | trajectories | points | sampling (s) |\n| --- | --- | --- | --- | --- |")
        for name, eps, points, seconds in timed:
            print(f"| {name} | {eps:g} | {whole(args.sample)} | {whole(points)} | {significant(seconds)} |")
    if every:
        print("\n| data | ε | data set | density JSD | query AvRE | NDCG@10 | trip JSD | length JSD | "
              "transition JSD | coverage τ |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, eps, scored in every:
            for label, values in scored:
                print(f"| {name} | {eps:g} | {label} | " + " | ".join(significant(v) for v in values) + " |")


if __name__ == "__main__":
    main()
