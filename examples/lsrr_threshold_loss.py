"""Actual privacy loss of L-SRR with the paper's distance-threshold groups on TKY and CHI.

The paper's L-SRR groups the venues by their distance to the true venue in the
unit-square-normalised box (≤ 0.3, ≤ 0.6, the rest), so the group sizes depend on
the true venue and the mechanism is not ε-LDP.  This prints, for each nominal ε, the
exact worst-case loss ``max ln P(y|x)/P(y|x')`` over the data set's venues
(:meth:`tracs.baselines.LSRR.privacy_loss`) and the spread of the group sizes.
Needs TRACS_DATA_DIR.

    TRACS_DATA_DIR=... python examples/lsrr_threshold_loss.py
"""

from __future__ import annotations

import argparse

import numpy as np

from tracs._text import significant
from tracs.evaluation import METHODS, MethodContext, load_dataset, parse_epsilons


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="tky,chi", help="check-in data sets (default: tky,chi)")
    p.add_argument("--epsilons", default="2,4,6,8,10", help="nominal ε per point (default: 2,4,6,8,10)")
    args = p.parse_args(argv)
    epsilons = parse_epsilons(args.epsilons)
    rows = []
    for name in args.datasets.split(","):
        data = load_dataset(name)
        ctx = MethodContext(region=data.region, pois=data.pois)
        model = METHODS["lsrr-thresholds"].build(ctx, epsilons[0])
        sizes = model.group_sizes()
        low, mid, high = np.percentile(sizes, [0, 50, 100], axis=0)
        print(f"{name.upper()}: {len(sizes):,} venues; group sizes n_1, n_2, n_3 over the true venues: "
              f"min {low.astype(int).tolist()}, median {mid.astype(int).tolist()}, "
              f"max {high.astype(int).tolist()}")
        rows.append((name.upper(), [model.privacy_loss(eps) for eps in epsilons]))
    print("\n| nominal ε | " + " | ".join(f"{eps:g}" for eps in epsilons) + " |")
    print("|---|" + "---:|" * len(epsilons))
    for name, losses in rows:
        print(f"| {name}: actual loss | " + " | ".join(significant(v) for v in losses) + " |")


if __name__ == "__main__":
    main()
