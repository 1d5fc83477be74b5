"""The paper's time table (Table 3): milliseconds per location, total and perturbation only.

"total" covers building the perturber, perturbing every trajectory and rounding to the
nearest venue; "perturb" only the perturbation call.  Best of --repeat runs on the TKY
check-ins (TRACS_DATA_DIR) or on a synthetic city.  Prints a Markdown table next to
the paper's numbers and writes time_table.csv into output/reproduce_time_table
(``--output-dir``; ``--write-docs`` replaces docs/figures/time_table.csv).

    python examples/reproduce_time_table.py --dataset tky --epsilon 4
"""

from __future__ import annotations

import argparse
import platform

from _reproduce import add_output_options, parse_output_args

from tracs._text import significant
from tracs.evaluation import load_dataset, time_methods

PAPER = {"atp": (145.7, 125.8), "ngram": (100.9, 92.8), "lsrr": (6.2, 0.003),
         "tracs-d": (0.06, 0.018), "tracs-c": (0.05, 0.003)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="tky", help="tky (default), chi, synthetic or a file")
    p.add_argument("--methods", default="atp,ngram,lsrr,tracs-d,tracs-c")
    p.add_argument("--epsilon", type=float, default=4.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--max-trajectories", type=int, default=None)
    add_output_options(p)
    args = parse_output_args(p, argv, script="reproduce_time_table")
    dataset = load_dataset(args.dataset, max_trajectories=args.max_trajectories)
    table = time_methods(dataset, args.methods, args.epsilon, repeat=args.repeat)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out_dir / "time_table.csv", index=False, float_format="%.6g")
    print(f"{dataset.name}: {dataset.n_points:,} points, {len(dataset.pois):,} POIs, ε = {args.epsilon:g}, "
          f"best of {args.repeat}; python {platform.python_version()}\n")
    print("| ms per location | " + " | ".join(table.label) + " |")
    print("|---|" + "---:|" * len(table))
    print("| total (here) | " + " | ".join(significant(v) for v in table.total_ms) + " |")
    print("| perturb (here) | " + " | ".join(significant(v) for v in table.perturb_ms) + " |")
    print("| total (paper) | " + " | ".join(f"{PAPER.get(m, ('–',))[0]}" for m in table.method) + " |")
    print("| perturb (paper) | " + " | ".join(f"{PAPER.get(m, ('–', '–'))[1]}" for m in table.method) + " |")


if __name__ == "__main__":
    main()
