"""Discrete location spaces: rounding to POIs, the exponential mechanism, and time per location.

Three parts, on one core:

1. **Rounding** (:meth:`tracs.POISpace.round`): 10^6 uniform points (10^5 with
   ``--quick``) against 10^4 uniform POIs; scikit-learn's ``KDTree`` on the same
   queries for comparison; the naive loop is a per-point ``argmin`` over all POIs.
   Target: at least 10^6 points/s.
2. **Exponential mechanism** on a 7,800-POI space (the Tokyo sample's POIs when
   ``TRACS_DATA_DIR`` is set, else 7,800 uniform points): both exact samplers
   (rejection first; the blocked inverse CDF alone), ε = 2 and 8; the naive loop
   computes each point's distribution and draws with ``Generator.choice``.
   Target: at most 50 µs per point.
3. **Time per location** of every method, the way the TraCS paper's Table 3 reports
   it (ms per location: *total* from metre coordinates, including snapping to POIs
   and any per-input precomputation; *perturb* the mechanism alone on POI indices,
   and for TraCS the perturbation without rounding), with the average error (m) of
   the same runs.  On the Tokyo, New York and Chicago samples (``TRACS_DATA_DIR``):
   check-ins grouped per user, split at gaps over 3 hours, POIs = every distinct
   location; the first 10,000 points (2,000 with ``--quick``) in trajectory order.
   All methods at the same per-point ε (TP and ATP get ``n·ε`` for an ``n``-point
   trajectory).  Each figure is the best of 3 runs (1 run for TP and ATP).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import Row, best_time, print_table
from tracs.baselines import ATP, LSRR, TP, ExponentialMechanism, NGram
from tracs.baselines._exponential_sampler import sample_em
from tracs.poi_space import POISpace
from tracs.metrics import average_error
from tracs.perturbers import TraCSC, TraCSD

DATA_FILES = {
    "TKY": ("foursquare_tky_101users.csv", "foursquare"),
    "NYC": ("foursquare_nyc_subset.csv", "foursquare"),
    "CHI": ("gowalla_chi_subset.csv", "gowalla"),
}
#: the TraCS paper's Table 3 (ms per location: total, perturbation only)
PAPER_MS = {"ATP": (145.7, 125.8), "NGram": (100.9, 92.8), "L-SRR": (6.2, 0.003),
            "TraCS-D": (0.06, 0.018), "TraCS-C": (0.05, 0.003)}


def load_dataset(key: str):
    """``(POISpace, coords, offsets)`` of a real sample, or ``None`` without data."""
    root = os.environ.get("TRACS_DATA_DIR")
    if not root:
        return None
    name, kind = DATA_FILES[key]
    path = Path(root) / name
    if not path.is_file():
        return None
    from data_loaders import load_foursquare, load_gowalla, to_trajectories

    checkins = (load_foursquare if kind == "foursquare" else load_gowalla)(path)
    trajectories = to_trajectories(checkins, split_gap="3h")
    space = POISpace(trajectories.pois().coords)
    return space, np.asarray(trajectories.coords), np.asarray(trajectories.offsets)


def _head(coords, offsets, n_points):
    """The first whole trajectories holding at most ``n_points`` points (at least one)."""
    last = max(1, int(np.searchsorted(offsets, n_points, side="right")) - 1)
    return coords[:offsets[last]], offsets[:last + 1]


def _rounding_rows(quick: bool) -> list[Row]:
    from sklearn.neighbors import KDTree

    rng = np.random.default_rng(0)
    pois = rng.uniform(0, 20_000, (10_000, 2))
    queries = rng.uniform(0, 20_000, (100_000 if quick else 1_000_000, 2))
    start = time.perf_counter()
    space = POISpace(pois)
    build = time.perf_counter() - start
    seconds = best_time(lambda: space.round(queries))
    cpu = best_time(lambda: space.round(queries), clock=time.process_time)
    naive_n = 1_000 if quick else 5_000

    def naive():
        for q in queries[:naive_n]:
            int(np.argmin(((pois - q) ** 2).sum(axis=1)))

    naive_s = best_time(naive, repeat=1)
    sk_tree = KDTree(pois)
    sk_seconds = best_time(lambda: sk_tree.query(queries, k=1), repeat=1)
    return [
        Row("POISpace.round (cKDTree)", len(queries), seconds, naive_n, naive_s,
            f"cpu {len(queries) / cpu:,.0f}/s; 10^4 POIs; build {build * 1e3:.1f} ms; "
            "target >= 1,000,000/s"),
        Row("scikit-learn KDTree.query", len(queries), sk_seconds, naive_n, naive_s,
            "same queries (for the choice of tree)"),
    ]


def _em_rows(quick: bool, tky) -> list[Row]:
    rng = np.random.default_rng(1)
    space = tky[0] if tky is not None else POISpace(rng.uniform(0, [40_000, 30_000], (7_800, 2)))
    label = "Tokyo POIs" if tky is not None else "7,800 uniform POIs"
    n = 20_000 if quick else 200_000
    inputs = rng.integers(0, len(space), n)
    rows = []
    for eps in (2.0, 8.0):
        em = ExponentialMechanism(space, eps)
        seconds = best_time(lambda: em.perturb_indices(inputs, [0, n], rng=2))
        cpu = best_time(lambda: em.perturb_indices(inputs, [0, n], rng=2), clock=time.process_time)
        scale = eps / (2 * space.diameter)
        x = space.points[inputs[:n // 10]]
        def cdf_only():
            sample_em(space.points, x, scale, np.random.default_rng(3), budget=0)

        cdf_seconds = best_time(cdf_only, repeat=1)
        cdf_cpu = best_time(cdf_only, repeat=1, clock=time.process_time)
        naive_n = 200 if quick else 1_000

        def naive():
            gen = np.random.default_rng(4)
            for i in inputs[:naive_n]:
                gen.choice(len(space), p=em.probabilities(i))

        naive_s = best_time(naive, repeat=1)
        rows.append(Row(f"EM ε={eps:g} (rejection + CDF)", n, seconds, naive_n, naive_s,
                        f"{seconds / n * 1e6:.2f} µs/pt (cpu {cpu / n * 1e6:.2f}); {label}; "
                        "target <= 50 µs"))
        rows.append(Row(f"EM ε={eps:g} (inverse CDF only)", len(x), cdf_seconds, naive_n, naive_s,
                        f"{cdf_seconds / len(x) * 1e6:.1f} µs/pt (cpu {cdf_cpu / len(x) * 1e6:.1f}): "
                        "the exact fallback path"))
    return rows


def _methods(space, eps):
    return {
        "EM": (ExponentialMechanism(space, eps), None),
        "NGram": (NGram(space, eps), None),
        "L-SRR": (LSRR(space, eps), None),
        "TP": (TP(space, eps), None),
        "ATP": (ATP(space, eps), None),
        "TraCS-D": (TraCSD(space.region, eps, round_to=space), TraCSD(space.region, eps)),
        "TraCS-C": (TraCSC(space.region, eps, round_to=space), TraCSC(space.region, eps)),
    }


def _per_location(key, data, quick: bool, epsilons) -> list[tuple]:
    space, coords, offsets = data
    coords, offsets = _head(coords, offsets, 2_000 if quick else 10_000)
    _, indices = space.round(coords)
    n = len(coords)
    lines = []
    for eps in epsilons:
        for name, (model, unrounded) in _methods(space, eps).items():
            repeat = 1 if name in ("TP", "ATP") else 3
            result = {}

            def total():
                result["out"] = model.perturb_many(coords, offsets, rng=5)

            total_s = best_time(total, repeat=repeat)
            if unrounded is None:
                perturb_s = best_time(lambda: model.perturb_indices(indices, offsets, rng=5), repeat=repeat)
            else:
                perturb_s = best_time(lambda: unrounded.perturb_many(coords, offsets, rng=5), repeat=repeat)
            error = average_error(coords, result["out"], offsets)
            lines.append((key, len(space), n, eps, name, total_s / n * 1e3, perturb_s / n * 1e3, error))
    # the naive per-point loop of the same run: EM, one point at a time
    em = ExponentialMechanism(space, epsilons[0])
    naive_n = 200 if quick else 1_000
    gen = np.random.default_rng(6)

    def naive():
        for q in coords[:naive_n]:
            i = int(np.argmin(((space.points - q) ** 2).sum(axis=1)))
            gen.choice(len(space), p=em.probabilities(i))

    naive_s = best_time(naive, repeat=1)
    lines.append((key, len(space), naive_n, epsilons[0], "naive EM loop", naive_s / naive_n * 1e3,
                  float("nan"), float("nan")))
    return lines


def _print_per_location(lines) -> None:
    print("\n## Time per location (ms) and average error (m), as the paper's Table 3")
    header = (f"{'data':<5} {'POIs':>6} {'points':>7} {'ε':>3}  {'method':<14} {'total ms':>10} "
              f"{'perturb ms':>11} {'AE (m)':>9}  paper total / perturb")
    print(header)
    print("-" * len(header))
    for key, m, n, eps, name, total, perturb, error in lines:
        paper = PAPER_MS.get(name)
        paper_text = f"{paper[0]:g} / {paper[1]:g}" if paper else "-"
        perturb_text = f"{perturb:11.5f}" if np.isfinite(perturb) else f"{'-':>11}"
        error_text = f"{error:9.0f}" if np.isfinite(error) else f"{'-':>9}"
        print(f"{key:<5} {m:>6,} {n:>7,} {eps:>3g}  {name:<14} {total:10.5f} {perturb_text} "
              f"{error_text}  {paper_text}")


def run(quick: bool = False) -> None:
    """Print the three parts (see the module docstring)."""
    print_table("rounding to the nearest POI (one core)", _rounding_rows(quick), unit="points")
    tky = load_dataset("TKY")
    print_table("exponential mechanism over 7,800 POIs", _em_rows(quick, tky), unit="points")
    lines = []
    for key in DATA_FILES:
        data = tky if key == "TKY" else load_dataset(key)
        if data is None:
            print(f"\n(time per location on {key}: TRACS_DATA_DIR not set or file missing)")
            continue
        lines += _per_location(key, data, quick, (2.0,) if quick else (2.0, 8.0))
    if lines:
        _print_per_location(lines)
