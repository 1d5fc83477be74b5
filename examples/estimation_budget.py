"""How much the held-out pass budget of TraCS-D estimation depends on the fold permutation.

For every data set and release (the reports, boxes and seeds of
``examples/estimation_tables.py``), :func:`tracs.estimate.grid_density` is fitted with
the stopping rule alone (``stop="rule"``) and with the pass budget chosen on
held-out trajectories (``stop="cv"``) for several seeds of the permutation that
deals trajectories into folds (:data:`tracs.estimate.holdout.FOLD_SEED` is the
shipped one).  Prints, per data set and fold seed, the range-query error ratio
raw / estimate (ratio of the means over the releases) and the budgets chosen.
The true points only score the answers.

Run: ``TRACS_DATA_DIR=… python examples/estimation_budget.py`` (about 5 minutes on
one core).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tracs._text import significant
from tracs.estimate import holdout, density
from tracs.evaluation import load_dataset
from tracs.perturbers import TraCSD

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimation_tables import random_boxes, true_answers  # noqa: E402


def run(datasets, eps, seeds, fold_seeds, queries=500, seed=0, grid=32):
    lines = ["| data | stop | fold seed | passes per release | range query: raw / estimate |",
             "| --- | --- | ---: | --- | ---: |"]
    shipped = holdout.FOLD_SEED
    try:
        for name in datasets:
            data = load_dataset(name)
            pts, off, region = data.coords, data.offsets, data.region
            boxes = random_boxes(region, queries, np.random.default_rng(seed))
            answers = true_answers(pts, boxes)
            pert = TraCSD(region, eps)
            reports = [pert.perturb_many(pts, off, rng=np.random.default_rng([s, int(eps * 100)]))
                       for s in range(seeds)]
            raw = np.mean([np.abs(true_answers(r, boxes) - answers).mean() for r in reports])
            for stop, fold_seed in [("rule", None)] + [("cv", f) for f in fold_seeds]:
                if fold_seed is not None:
                    holdout.FOLD_SEED = fold_seed
                errors, passes = [], []
                for r in reports:
                    est = density(r, pert, offsets=off, grid=grid, stop=stop)
                    errors.append(np.abs(est.range_queries(boxes) - answers).mean())
                    passes.append(est.iterations)
                label = "–" if fold_seed is None else str(fold_seed)
                lines.append(f"| {name.upper()} | {stop} | {label} | {', '.join(map(str, passes))} | "
                             f"{significant(raw / np.mean(errors))}× |")
                print(lines[-1], flush=True)
    finally:
        holdout.FOLD_SEED = shipped
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="tky,chi")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seeds", type=int, default=3, help="releases per data set")
    p.add_argument("--fold-seeds", default="0,1,2")
    args = p.parse_args(argv)
    print(run(args.datasets.split(","), args.epsilon, args.seeds,
              [int(f) for f in args.fold_seeds.split(",")]))


if __name__ == "__main__":
    main()
