"""TraCS-D's density fit stopped after a fixed number of EM passes against the stopping rule.

A budget of a few passes would make TraCS-D's fit as cheap as TraCS-C's, so this measures
what it costs in accuracy: the mean range-query error (boxes with sides of 10–50 % of the
region's, the same boxes for every fit) of ``density(reports, TraCSD, grid=32,
iterations=k, stop="rule")`` for ``k`` = 4, 8, 16, 32 and of the default fit (the stopping
rule), on the check-ins of TKY and CHI over their public boxes (releases ``s = 0, 1, 2``,
seeds ``[s, 100·ε]``, 300 boxes of seed 0, as ``examples/estimation_tables.py``) and on the
generated city of the benchmarks (10^5 reports, seeds 0–2, 400 boxes of seed 99).

Run: ``TRACS_DATA_DIR=… python examples/estimation_passes.py [--epsilons 2,4] [--data tky,chi,city]``
(about five minutes on one core).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from tracs import Rectangle
from tracs.estimate import density
from tracs.evaluation import load_dataset
from tracs.perturbers import TraCSD

from estimation_tables import random_boxes, true_answers

BUDGETS = (4, 8, 16, 32, None)


def _releases(name: str, epsilon: float):
    """``(perturber, reports, offsets, boxes, answers)`` of the three releases of ``name`` at ``epsilon``."""
    if name == "city":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks.estimate import BOX, city

        region = Rectangle(*BOX)
        boxes = random_boxes(region, 400, np.random.default_rng(99))
        for seed in range(3):
            pts, off = city(100_000, seed)
            pert = TraCSD(region, epsilon)
            yield pert, pert.perturb_many(pts, off, rng=seed + 1), off, boxes, true_answers(pts, boxes)
        return
    data = load_dataset(name)
    boxes = random_boxes(data.region, 300, np.random.default_rng(0))
    answers = true_answers(data.coords, boxes)
    for s in range(3):
        pert = TraCSD(data.region, epsilon)
        reports = pert.perturb_many(data.coords, data.offsets, rng=np.random.default_rng([s, int(epsilon * 100)]))
        yield pert, reports, data.offsets, boxes, answers


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", default="2,4")
    p.add_argument("--data", default="tky,chi,city")
    args = p.parse_args(argv)
    labels = [f"{k} passes" for k in BUDGETS[:-1]] + ["the rule"]
    print("| data | ε | " + " | ".join(labels) + " | passes of the rule |")
    print("| --- | ---: |" + " ---: |" * (len(labels) + 1))
    for name in args.data.split(","):
        for eps in (float(e) for e in args.epsilons.split(",")):
            errors = {k: [] for k in BUDGETS}
            passes = []
            for pert, reports, off, boxes, answers in _releases(name, eps):
                for k in BUDGETS:
                    options = {} if k is None else {"iterations": k, "stop": "rule"}
                    start = time.process_time()
                    est = density(reports, pert, offsets=off, grid=32, **options)
                    errors[k].append(float(np.abs(est.range_queries(boxes) - answers).mean()))
                    if k is None:
                        passes.append(f"{est.iterations} ({time.process_time() - start:.1f} s)")
            cells = [f"{np.mean(errors[k]):.3g}" for k in BUDGETS]
            print(f"| {name.upper()} | {eps:g} | " + " | ".join(cells) + f" | {', '.join(passes)} |", flush=True)


if __name__ == "__main__":
    main()
