"""Estimation from reports on TKY and CHI: range-query error, TV and hotspots, raw vs estimated.

For every data set, method and ε, the check-ins are perturbed ``--seeds`` times
(perturbation seeds ``[s, 100·ε]``, ``s = 0, 1, …``) over the data set's public
region (the fixed city box of :data:`tracs.public.CITY_BOXES`, projected to its UTM
zone; never the data's own extent).  Every answer is scored against the true
points on the same ``--queries`` boxes (sides 10–50 % of the region's, seed
``--seed``, the same for every method, ε and release):

* **raw**: the share of reports inside each box, counted exactly (``raw (hist)``:
  the reports' G×G histogram over the region, mass spread uniformly in each cell);
* **plain EM**: :func:`tracs.estimate.grid_density` with ``refine=1, stop="rule",
  edge_decay=0`` — the exact likelihood on the G×G grid, no smoothing, the
  log-likelihood stopping rule, edge zones split evenly (EM's own split);
* **EM λ**: a light partial EMS step after every M-step (``smoothing=0.005``),
  otherwise as plain EM;
* **EMS**: full EMS smoothing (Li et al. 2020), otherwise as plain EM;
* **default**: ``density()`` as shipped (``smoothing="auto"``: TraCS-C from
  ε = 2 chooses its EMS weight on held-out reports; ``refine="auto"``: at ε ≥ 4,
  and for those TraCS-C fits from ε = 2, EM runs on a 2G×2G grid whose estimate
  answers the queries; ``stop="auto"``: TraCS-D below ε = 2 stops at the pass
  budget chosen on held-out trajectories; ``edge_decay=4``: TraCS-C's edge zones,
  which the reports cannot resolve, split by a density decaying towards the
  region's edge; otherwise the same as plain EM);
* **cv** (TraCS-C, planar Laplace): the default with ``smoothing="cv"`` (the EMS
  weight chosen by the likelihood of held-out reports; the default itself for
  TraCS-C from ε = 2).

Columns are means over the releases; ratios are ratios of those means.  Also the
total-variation distance to the true G×G histogram and the share of the true
top-20 cells among the estimate's top 20.  The true points' own histogram gives
the grid's floor.  Writes ``estimation_tables.csv`` (one row per release),
``estimation_tables.md`` (pasted into ``docs/estimation.md``) and
``estimation_density.png`` (true / raw / estimated, TKY, TraCS-D, ε = 4, first
release) into ``output/estimation_tables`` (``--output-dir``); ``--write-docs``
replaces the published ones in ``docs/figures``.

Run: ``TRACS_DATA_DIR=… python examples/estimation_tables.py`` (about 20 minutes
on one core; ``--methods TraCS-C,TraCS-D,Strawman,T-Laplace`` for more).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tracs.estimate import Density, density
from tracs._text import given, significant
from tracs.evaluation import load_dataset
from tracs.perturbers import PlanarLaplace, Strawman, TraCSC, TraCSD
from tracs.query_metrics import range_query_counts

from _reproduce import add_output_options, parse_output_args

METHODS = {"TraCS-C": TraCSC, "TraCS-D": TraCSD, "Strawman": Strawman, "T-Laplace": PlanarLaplace}
HOT = 20
#: weight of the light smoothing variant, θ <- (1 − λ)θ + λ·smooth(θ)
LIGHT = 0.005
#: the textbook references split edge zones evenly, as EM started from uniform does
TEXTBOOK = {"refine": 1, "stop": "rule", "edge_decay": 0.0}
VARIANTS = {"plain": {**TEXTBOOK, "smoothing": None}, "light": {**TEXTBOOK, "smoothing": LIGHT},
            "ems": {**TEXTBOOK, "smoothing": "ems"}, "default": {}, "cv": {"smoothing": "cv"}}
#: methods whose reports are counted in bins (``smoothing="cv"`` applies)
BINNED = {"TraCS-C", "T-Laplace"}


def random_boxes(region, m, rng):
    """``m`` boxes with sides of 10–50 % of the region's, uniformly placed inside it."""
    xmin, ymin, xmax, ymax = region.bounds
    side = rng.uniform(0.1, 0.5, (m, 2)) * [xmax - xmin, ymax - ymin]
    low = np.column_stack([rng.uniform(xmin, xmax - side[:, 0]), rng.uniform(ymin, ymax - side[:, 1])])
    return np.column_stack([low, low + side])


def true_answers(points, boxes):
    """Share of ``points`` in every closed box (exact counts)."""
    return range_query_counts(points, boxes) / len(points)


def city_queries(name, queries, seed):
    """``(data, boxes, answers)``: a data set, its ``queries`` boxes (seed ``seed``) and true answers."""
    data = load_dataset(name)
    boxes = random_boxes(data.region, queries, np.random.default_rng(seed))
    return data, boxes, true_answers(data.coords, boxes)


def scored_releases(perturber, data, count, boxes, answers):
    """The releases ``s = 0 … count − 1`` (seeds ``[s, 100·ε]``), each with the raw reports' error."""
    for s in range(count):
        rng = np.random.default_rng([s, int(perturber.epsilon * 100)])
        reports = perturber.perturb_many(data.coords, data.offsets, rng=rng)
        yield reports, np.abs(true_answers(reports, boxes) - answers).mean()


def sweep_parser(description, releases):
    """Arguments of the TraCS-C sweeps: ``--datasets``, ``--epsilons``, ``--releases``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--datasets", default="tky,chi")
    p.add_argument("--epsilons", default="1,2,4,8")
    p.add_argument("--releases", type=int, default=releases, help="releases per (data set, ε)")
    return p


def hotspot_share(estimate, truth, k=HOT):
    a = {tuple(c) for c in estimate.hotspots(k).cells}
    b = {tuple(c) for c in truth.hotspots(k).cells}
    return len(a & b) / k


def _default_is_plain(method, eps):
    """Whether ``density()``'s defaults reduce to plain EM (refine 1, no smoothing, the rule).

    Never for TraCS-C: its default splits the edge zones by the decaying prior.
    """
    if method == "TraCS-C":
        return False
    return eps < 4 and (method != "TraCS-D" or eps >= 2)


def _score(row, label, est, boxes, answers, truth, seconds=None):
    row[f"{label}_rq"] = np.abs(est.range_queries(boxes) - answers).mean()
    row[f"{label}_tv"] = est.total_variation(truth)
    row[f"{label}_hot"] = hotspot_share(est, truth)
    if seconds is not None:
        row[f"{label}_seconds"] = seconds
        row[f"{label}_passes"] = est.iterations


def run(datasets, epsilons, grid, queries, seed, methods, seeds):
    rows, figure = [], None
    for name in datasets:
        data = load_dataset(name)
        pts, off, region = data.coords, data.offsets, data.region
        xmin, ymin, xmax, ymax = region.bounds
        edges = (np.linspace(xmin, xmax, grid + 1), np.linspace(ymin, ymax, grid + 1))
        truth = Density.from_points(pts, edges)
        boxes = random_boxes(region, queries, np.random.default_rng(seed))
        answers = true_answers(pts, boxes)
        floor = np.abs(truth.range_queries(boxes) - answers).mean()
        for method in methods:
            for eps in epsilons:
                for s in range(seeds):
                    pert = METHODS[method](region, eps)
                    reports = pert.perturb_many(pts, off, rng=np.random.default_rng([s, int(eps * 100)]))
                    raw = Density.from_points(reports, edges)
                    row = {"data": name.upper(), "method": method, "epsilon": eps, "release": s,
                           "points": len(pts), "floor_rq": floor,
                           "raw_rq": np.abs(true_answers(reports, boxes) - answers).mean()}
                    _score(row, "rawhist", raw, boxes, answers, truth)
                    fits = {}
                    for label, options in VARIANTS.items():
                        if label == "cv" and method not in BINNED:
                            continue
                        if label == "default" and _default_is_plain(method, eps):
                            est, sec = fits["plain"]  # the default is plain EM here (see density())
                        elif label == "cv" and method == "TraCS-C" and eps >= 2:
                            est, sec = fits["default"]  # the default is smoothing="cv" here
                        else:
                            start = time.perf_counter()
                            est = density(reports, pert, offsets=off, grid=grid, **options)
                            sec = time.perf_counter() - start
                        fits[label] = (est, sec)
                        _score(row, label, est, boxes, answers, truth, sec)
                    if name == datasets[0] and method == "TraCS-D" and eps == 4 and s == 0:
                        figure = (truth, raw, fits["default"][0])
                    rows.append(row)
                    print(f"{name} {method} ε={eps:g} #{s}: raw {row['raw_rq']:.4f}, plain {row['plain_rq']:.4f}, "
                          f"default {row['default_rq']:.4f} ({row['default_seconds']:.1f} s), "
                          f"λ {row['light_rq']:.4f}, EMS {row['ems_rq']:.4f}, "
                          f"cv {row.get('cv_rq', float('nan')):.4f}", flush=True)
    return pd.DataFrame(rows), figure


def markdown(table: pd.DataFrame) -> str:
    m = table.groupby(["data", "method", "epsilon"], sort=False).mean(numeric_only=True).reset_index()
    n = table.groupby(["data", "method", "epsilon"], sort=False).size().max()
    if "cv_rq" not in m.columns:
        m["cv_rq"] = np.nan
    lines = [f"| data | method | ε | range query: raw | raw (hist) | plain EM | EM λ={LIGHT:g} | EMS | "
             f"default | cv | raw / default | plain / default | TV: raw | plain | default | "
             f"top-{HOT} kept: raw | default | default time (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: | ---: | ---: | ---: | ---: |"]
    for r in m.itertuples():
        cv = "–" if np.isnan(r.cv_rq) else significant(r.cv_rq)
        cells = [r.raw_rq, r.rawhist_rq, r.plain_rq, r.light_rq, r.ems_rq, r.default_rq]
        rest = [r.rawhist_tv, r.plain_tv, r.default_tv, r.rawhist_hot, r.default_hot, r.default_seconds]
        lines.append(f"| {r.data} | {r.method} | {given(r.epsilon)} | "
                     + " | ".join(significant(v) for v in cells)
                     + f" | {cv} | {significant(r.raw_rq / r.default_rq)}× | {significant(r.plain_rq / r.default_rq)}× | "
                     + " | ".join(significant(v) for v in rest) + " |")
    floors = table.groupby("data").floor_rq.first()
    lines.append("")
    lines.append(f"Means over {n} releases per row.  Range-query error of the true points' own grid "
                 "histogram (the grid's floor): "
                 + ", ".join(f"{d} {significant(v)}" for d, v in floors.items()) + ".")
    return "\n".join(lines) + "\n"


def draw(figure, path: Path, grid: int):
    from tracs.plots import pyplot

    plt = pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), constrained_layout=True)
    top = max(d.probabilities.max() for d in figure)
    for ax, d, title in zip(axes, figure, ("true points", "raw reports", "EM estimate")):
        xe, ye = d.grid
        im = ax.pcolormesh((xe - xe[0]) / 1000, (ye - ye[0]) / 1000, d.probabilities.T,
                           cmap="magma", vmin=0, vmax=top)
        ax.set_title(title)
        ax.set_aspect("equal")
        ax.set_xlabel("km east")
    axes[0].set_ylabel("km north")
    fig.colorbar(im, ax=axes, shrink=0.8, label=f"share of points per cell ({grid}×{grid})")
    fig.suptitle("TKY, TraCS-D, ε = 4 per point")
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="tky,chi")
    p.add_argument("--epsilons", default="1,2,4,8")
    p.add_argument("--methods", default="TraCS-C,TraCS-D")
    p.add_argument("--grid", type=int, default=32)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=int, default=3, help="releases per (data, method, ε)")
    add_output_options(p)
    args = parse_output_args(p, argv, script="estimation_tables")
    datasets = args.datasets.split(",")
    epsilons = [float(e) for e in args.epsilons.split(",")]
    table, figure = run(datasets, epsilons, args.grid, args.queries, args.seed, args.methods.split(","),
                        args.seeds)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out_dir / "estimation_tables.csv", index=False, float_format="%.6g")
    (args.out_dir / "estimation_tables.md").write_text(markdown(table), encoding="utf-8")
    if figure is not None:
        draw(figure, args.out_dir / "estimation_density.png", args.grid)
    print(markdown(table))


if __name__ == "__main__":
    main()
