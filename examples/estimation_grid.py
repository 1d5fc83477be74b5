"""TraCS-C estimation: a finer EM grid and the held-out EMS weight, alone and together.

For every data set, ε and release (the reports, boxes and seeds of
``examples/estimation_tables.py``: perturbation seeds ``[s, 100·ε]``,
``s = 0 … releases − 1``, 500 boxes of seed 0, a 32×32 grid),
:func:`tracs.estimate.grid_density` is fitted four ways, all with the stopping rule and
edge zones split evenly (``edge_decay=0``):

* **plain**: ``refine=1, smoothing=None`` (plain EM on the 32×32 grid);
* **fine**: ``refine=2, smoothing=None`` (plain EM on 64×64, which answers the queries);
* **cv**: ``refine=1, smoothing="cv"`` (the EMS weight chosen on held-out reports);
* **fine + cv**: ``refine=2, smoothing="cv"`` (the default's grid and weight from ε = 2).

Prints one row per (data set, ε): the mean range-query error of each variant over
the releases, the ratios raw / plain and raw / fine + cv (ratios of the means) and
the number of releases on which fine + cv is below plain and below fine, and the
EMS weight fine + cv chose on every release.  The true points only score the
answers.

Run: ``TRACS_DATA_DIR=… python examples/estimation_grid.py`` (about 2 minutes on
one core; ``--releases 9`` for six more releases).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tracs._text import given, significant
from tracs.estimate import density
from tracs.perturbers import TraCSC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimation_tables import city_queries, scored_releases, sweep_parser  # noqa: E402

VARIANTS = {"plain": {"refine": 1, "smoothing": None}, "fine": {"refine": 2, "smoothing": None},
            "cv": {"refine": 1, "smoothing": "cv"}, "fine + cv": {"refine": 2, "smoothing": "cv"}}
#: every variant splits the edge zones evenly, so that only the grid and the weight differ
#: (``examples/estimation_edges.py`` compares the splits)
COMMON = {"stop": "rule", "edge_decay": 0.0}


def run(datasets, epsilons, releases, queries=500, seed=0, grid=32):
    names = list(VARIANTS)
    lines = ["| data | ε | raw | " + " | ".join(names) + " | raw / plain | raw / fine + cv | "
             "fine + cv below plain | below fine | weights chosen |",
             "| --- | ---: | ---: | " + " | ".join("---:" for _ in names) + " | ---: | ---: | ---: | ---: | --- |"]
    for name in datasets:
        data, boxes, answers = city_queries(name, queries, seed)
        for eps in epsilons:
            pert = TraCSC(data.region, eps)
            raw, errors, weights = [], {k: [] for k in names}, []
            for reports, raw_error in scored_releases(pert, data, releases, boxes, answers):
                raw.append(raw_error)
                for label, options in VARIANTS.items():
                    est = density(reports, pert, offsets=data.offsets, grid=grid, **COMMON, **options)
                    errors[label].append(np.abs(est.range_queries(boxes) - answers).mean())
                    if label == "fine + cv":
                        weights.append("0" if est.method == "em" else est.method.split("=")[1])
            mean = {k: float(np.mean(v)) for k, v in errors.items()}
            both = np.array(errors["fine + cv"])
            below = [int(np.sum(both < np.array(errors[k]))) for k in ("plain", "fine")]
            lines.append(f"| {name.upper()} | {given(eps)} | {significant(np.mean(raw))} | "
                         + " | ".join(significant(mean[k]) for k in names)
                         + f" | {significant(np.mean(raw) / mean['plain'])}× | "
                         f"{significant(np.mean(raw) / mean['fine + cv'])}× | {below[0]} of {releases} | "
                         f"{below[1]} of {releases} | {', '.join(weights)} |")
            print(lines[-1], flush=True)
    return "\n".join(lines)


def main(argv=None):
    args = sweep_parser(__doc__.splitlines()[0], 3).parse_args(argv)
    print(run(args.datasets.split(","), [float(e) for e in args.epsilons.split(",")], args.releases))


if __name__ == "__main__":
    main()
