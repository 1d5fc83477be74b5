"""Density and query error of TraCS-C reports and of trajectories synthesised from them.

For CHI and TKY (one trajectory per user, the check-ins in the cities' public boxes) and
ε = 2 and 6 per point: (a) the raw reports and (b) synthetic trajectories sampled from the
mobility model fitted to the reports (:mod:`tracs.estimate.synthesize`), both scored against
the true points with :func:`tracs.evaluation.synthesis_metrics.density_error` and
:func:`~tracs.evaluation.synthesis_metrics.query_error`.  Prints one Markdown table
(docs/synthesis.md).  ``--all-metrics`` prints a second table: every metric of
:mod:`tracs.evaluation.synthesis_metrics` for the first run.  Needs ``TRACS_DATA_DIR``
(the check-in files)::

    python examples/synthesis_utility.py [--grid 16] [--seed 0] [--repeats 3] [--all-metrics]
                                         [--datasets chi,tky] [--epsilons 2,6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def run(grid: int, seed: int, repeats: int, datasets=("chi", "tky"), epsilons=(2.0, 6.0), every=None):
    from tracs.estimate.synthesize import fit_mobility_model, synthesize
    from tracs.evaluation.experiment_data import load_dataset
    from tracs.evaluation.synthesis_metrics import density_error, every_metric, query_error
    from tracs.perturbers import TraCSC

    rows = []
    for name in datasets:
        data = load_dataset(name)
        true, off, region = data.coords, data.offsets, data.region
        bounds = region.bounds
        for eps in epsilons:
            scores = []
            for r in range(repeats):
                perturber = TraCSC(region, epsilon=eps)
                reports = perturber.perturb_many(true, off, rng=seed + r)
                start = time.perf_counter()
                model = fit_mobility_model(reports, perturber, offsets=off, grid=grid)
                synthetic = synthesize(model, len(off) - 1, rng=seed + r)
                took = time.perf_counter() - start
                if every is not None and r == 0:
                    every.append((name.upper(), eps,
                                  every_metric(true, off, reports, off, bounds, cells=grid, seed=seed),
                                  every_metric(true, off, synthetic.coords, synthetic.offsets, bounds,
                                               cells=grid, seed=seed)))
                q = seed + 1000  # the same queries for both
                scores.append([density_error(true, reports, bounds, cells=grid),
                               density_error(true, synthetic.coords, bounds, cells=grid),
                               query_error(true, reports, bounds, rng=q),
                               query_error(true, synthetic.coords, bounds, rng=q), took])
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
    args = parser.parse_args(argv)
    datasets = tuple(args.datasets.split(","))
    epsilons = tuple(float(e) for e in args.epsilons.split(","))
    every = [] if args.all_metrics else None
    from tracs._text import significant, whole

    print("| data | ε | points | density JSD, reports | density JSD, synthetic | query AvRE, reports | "
          "query AvRE, synthetic | fit + sample (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, eps, n, dr, ds, qr, qs, took in run(args.grid, args.seed, args.repeats, datasets, epsilons,
                                                                 every=every):
        print(f"| {name} | {eps:g} | {whole(n)} | {significant(dr)} | {significant(ds)} | {significant(qr)} | "
              f"{significant(qs)} | {significant(took)} |")
    if every:
        print("\n| data | ε | data set | density JSD | query AvRE | NDCG@10 | trip JSD | length JSD | "
              "transition JSD | coverage τ |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, eps, raw, syn in every:
            for label, values in (("reports", raw), ("synthetic", syn)):
                print(f"| {name} | {eps:g} | {label} | " + " | ".join(significant(v) for v in values) + " |")


if __name__ == "__main__":
    main()
