"""TraCS-C estimation: how the mass of the unresolved edge zones is split (``edge_decay``).

Near each end of an axis the optimal classical mechanism clamps its band, so the
reports fix only the total mass of an edge zone, never its split among the
zone's cells (:mod:`tracs.estimate.edge_zones`).  For every data set, ε and
release (the reports, boxes and seeds of ``examples/estimation_tables.py``:
perturbation seeds ``[s, 100·ε]``, ``s = 0 … releases − 1``, 500 boxes of seed
0, a 32×32 grid), :func:`tracs.estimate.grid_density` is fitted with its defaults
and every ``--decays`` value ``κ`` (0: the uniform split of plain EM).

Prints one row per (data set, ε): the cells of the widest edge zone on the grid
EM runs on, the raw reports' mean range-query error, and raw / estimate (ratio
of the means over the releases) for every ``κ``.  The true points only score
the answers.

Run: ``TRACS_DATA_DIR=… python examples/estimation_edges.py`` (about 3 minutes
on one core with the default nine releases).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tracs._text import given, significant
from tracs.estimate import density
from tracs.estimate.edge_zones import zone_labels
from tracs.estimate.grid_density import _tracsc_blocks
from tracs.perturbers import TraCSC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimation_tables import city_queries, scored_releases, sweep_parser  # noqa: E402


def widest_zone(perturber, cells: int) -> int:
    """Cells of the widest edge zone of the x axis on ``cells`` cells (the estimator's matrices)."""
    xmin, ymin, xmax, ymax = perturber.region.bounds
    (block,) = _tracsc_blocks(np.array([[xmin, ymin]]), perturber, np.array([perturber.epsilon]),
                              np.linspace(xmin, xmax, cells + 1), np.linspace(ymin, ymax, cells + 1), None)
    return int(np.bincount(zone_labels(block.first)).max())


def run(datasets, epsilons, decays, releases, queries=500, seed=0, grid=32):
    heads = [f"κ = {given(k)}" for k in decays]
    lines = ["| data | ε | zone cells | raw | " + " | ".join(heads) + " |",
             "| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in heads) + " |"]
    for name in datasets:
        data, boxes, answers = city_queries(name, queries, seed)
        for eps in epsilons:
            pert = TraCSC(data.region, eps)
            raw, errors = [], np.zeros((releases, len(decays)))
            fine = None
            for s, (reports, raw_error) in enumerate(scored_releases(pert, data, releases, boxes, answers)):
                raw.append(raw_error)
                for i, kappa in enumerate(decays):
                    est = density(reports, pert, offsets=data.offsets, grid=grid, edge_decay=kappa)
                    errors[s, i] = np.abs(est.range_queries(boxes) - answers).mean()
                    fine = len((est.detail or est).grid[0]) - 1
            ratios = np.mean(raw) / errors.mean(axis=0)
            lines.append(f"| {name.upper()} | {given(eps)} | {widest_zone(pert, fine)} of {fine} | "
                         f"{significant(np.mean(raw))} | "
                         + " | ".join(f"{significant(r)}×" for r in ratios) + " |")
            print(lines[-1], flush=True)
    return "\n".join(lines)


def main(argv=None):
    p = sweep_parser(__doc__.splitlines()[0], 9)
    p.add_argument("--decays", default="0,2,4,8", help="values of edge_decay to compare")
    args = p.parse_args(argv)
    print(run(args.datasets.split(","), [float(e) for e in args.epsilons.split(",")],
              [float(k) for k in args.decays.split(",")], args.releases))


if __name__ == "__main__":
    main()
