"""The paper's appendix metrics on TKY and CHI: range query (share of points kept within δ) and hotspot error.

Scores the same released check-ins as ``examples/reproduce_discrete.py`` (same
methods, ε, repetitions and cell seeds) with :func:`tracs.query_metrics.range_preservation`
(δ = 0.1 degree, measured in degrees: our coordinates are UTM metres, converted per
axis at the data's latitude) and :func:`tracs.query_metrics.hotspot_count_error`
(hotspots: the top 20 % most visited venues of the true data).  Needs TRACS_DATA_DIR.
Writes ``paper_query_metrics.csv`` (one row per run) next to this file and prints the
tables (means over repetitions).

    TRACS_DATA_DIR=... python docs/figures/paper_query_metrics.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tracs.evaluation import (METHODS, MethodContext, _run_method, _stream, cell_seed, format_number,
                              load_dataset, parse_epsilons, parse_methods)
from tracs.query_metrics import hotspot_count_error, hotspot_locations, range_preservation

#: centre latitude of each data set's bounding box (degrees), for metres per degree
LATITUDE = {"tky": 35.69, "chi": 41.80}
DELTA_DEGREES = 0.1
HOTSPOT_SHARE = 0.2


def metres_per_degree(lat: float) -> tuple[float, float]:
    """(east, north) metres per degree of longitude / latitude on the WGS84 ellipsoid (series form)."""
    phi = np.radians(lat)
    north = 111132.92 - 559.82 * np.cos(2 * phi) + 1.175 * np.cos(4 * phi)
    east = 111412.84 * np.cos(phi) - 93.5 * np.cos(3 * phi)
    return float(east), float(north)


def main(datasets="tky,chi", methods="atp,ngram,lsrr,tracs-d,tracs-c", epsilons="2,4,6,8,10",
         repetitions: int = 3, seed: int = 0) -> pd.DataFrame:
    rows = []
    for name in datasets.split(","):
        data = load_dataset(name)
        ctx = MethodContext(region=data.region, pois=data.pois, anchor="center")
        offsets = np.asarray(data.offsets, dtype=np.int64)
        scale = metres_per_degree(LATITUDE[name])
        for rep in range(repetitions):
            coords = data.draw(_stream(seed, "data", rep))
            hot = hotspot_locations(coords, HOTSPOT_SHARE)
            for method in parse_methods(methods):
                spec = METHODS[method]
                for eps in parse_epsilons(epsilons):
                    rng = np.random.default_rng(cell_seed(seed, method, eps, rep))
                    out = _run_method(spec.build(ctx, eps), coords, offsets, ctx, not spec.discrete, rng)
                    rows.append({
                        "dataset": name, "method": method, "label": spec.label, "epsilon": eps,
                        "repetition": rep, "n_hotspots": len(hot),
                        "range_preservation": range_preservation(coords, out, offsets, radius=DELTA_DEGREES,
                                                                 scale=scale),
                        "hotspot_count_error": hotspot_count_error(coords, out, offsets, hotspots=hot),
                    })
                print(f"{name} {method} done", file=sys.stderr)
    runs = pd.DataFrame(rows)
    runs.to_csv(Path(__file__).with_name("paper_query_metrics.csv"), index=False)
    print_tables(runs)
    return runs


def print_tables(runs: pd.DataFrame) -> None:
    """Markdown tables of the means over repetitions, one per (data set, metric)."""
    for name, part in runs.groupby("dataset", sort=False):
        labels = list(part["label"].unique())
        means = part.groupby(["epsilon", "label"])[["range_preservation", "hotspot_count_error"]].mean()
        for metric in ("range_preservation", "hotspot_count_error"):
            print(f"\n{name.upper()} {metric} (mean of {part['repetition'].nunique()} repetitions, "
                  f"{int(part['n_hotspots'].iloc[0])} hotspots)\n")
            print("| ε | " + " | ".join(labels) + " |")
            print("|---:|" + "---:|" * len(labels))
            for eps in sorted(part["epsilon"].unique()):
                cells = [format_number(means.loc[(eps, label), metric]) for label in labels]
                print(f"| {eps:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
