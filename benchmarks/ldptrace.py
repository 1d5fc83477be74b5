"""Synthetic trajectories from TraCS-C reports against LDPTrace, at equal ε per user.

LDPTrace (Du et al., VLDB 2023) is the peer that synthesises trajectories under
local differential privacy: each user reports, with optimised unary encoding on a
``G × G`` grid, the length of the trajectory, its first and last cells and each move
between adjacent cells, spending ε/10 on the length and 9ε/10 over the rest; the
collector builds a Markov chain from the counts and samples from it.  tracs' side:
every point released with TraCS-C under the same ε per user
(``TraCSC(region, epsilon_per_trajectory=ε)``: ε split evenly over the user's
points), then :func:`tracs.estimate.synthesize.fit_mobility_model` and
:func:`~tracs.estimate.synthesize.synthesize` on a 16 × 16 grid.

Both data sets of synthetic trajectories are scored with the same code,
:mod:`tracs.evaluation.synthesis_metrics`, against the true points (metres of the
region's projected CRS, one trajectory per user, the cities' public boxes:
:func:`tracs.evaluation.experiment_data.load_dataset`).

How LDPTrace is run: its published code, unchanged, from a checkout named by the
environment variable ``LDPTRACE_DIR`` (the repository's root, holding
``LDPTrace/code/main.py``); nothing of it is part of tracs.  The code folder is
copied to a temporary folder, the true trajectories are written in its input
layout (an lzma-compressed pickle of lists of ``(x, y)`` tuples, under the data set
name its reader knows, ``porto``), and ``main.py --dataset porto --grid_num G
--epsilon ε --re_syn`` runs until it has saved its synthetic trajectories (its own
seeds: 2022); its own evaluation that follows is not used.  LDPTrace takes its grid
from the data's bounding box (the true points): a data-dependent parameter that a
deployment would have to fix in advance; tracs' grid is the public region's.

Needs ``TRACS_DATA_DIR`` (the check-in files) and ``LDPTRACE_DIR``; without them the
section says what is missing and returns.
"""

from __future__ import annotations

import functools
import lzma
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: ε per user of the comparison
EPSILONS = (1.0, 4.0, 8.0)
#: LDPTrace's grid sizes (6 is its default; 16 is tracs' model grid)
LDPTRACE_GRIDS = (6, 16)
#: tracs' model grid
TRACS_GRID = 16
#: seconds LDPTrace may take to synthesise one data set
TIMEOUT = 1800
def ldptrace_code(root: Path) -> Path:
    """The folder of LDPTrace's ``main.py`` under a checkout's root."""
    code = root / "LDPTrace" / "code"
    if not (code / "main.py").is_file():
        raise FileNotFoundError(f"{code / 'main.py'} not found: LDPTRACE_DIR must be LDPTrace's repository root")
    return code


def run_ldptrace(root: Path, coords: np.ndarray, offsets: np.ndarray, epsilon: float, grid: int):
    """LDPTrace's synthetic trajectories of ``coords`` (split at ``offsets``) and its run time (s).

    Returns ``(points, offsets, seconds)``.
    """
    with tempfile.TemporaryDirectory(prefix="ldptrace-") as tmp:
        code = Path(tmp) / "code"
        shutil.copytree(ldptrace_code(root), code)
        data = Path(tmp) / "data"
        (data / "porto").mkdir(parents=True)
        db = [[(float(x), float(y)) for x, y in coords[a:b]] for a, b in zip(offsets[:-1], offsets[1:])]
        with lzma.open(data / "porto.xz", "wb") as f:
            pickle.dump(db, f)
        out = data / "porto" / f"syn_porto_eps_{epsilon}_max_0.9_grid_{grid}.pkl"
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "main.py", "--dataset", "porto", "--grid_num", str(grid),
                                    "--epsilon", str(epsilon), "--re_syn"], cwd=code,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            while not _complete(out):
                if process.poll() is not None:
                    raise RuntimeError(f"LDPTrace stopped before writing {out.name}: {process.stderr.read()[-2000:]}")
                if time.perf_counter() - start > TIMEOUT:
                    raise TimeoutError(f"LDPTrace took more than {TIMEOUT} s")
                time.sleep(0.2)
            took = time.perf_counter() - start
        finally:
            process.kill()
            process.wait()
            process.stderr.close()
        with open(out, "rb") as f:
            synthetic = pickle.load(f)
    lengths = np.array([len(t) for t in synthetic], dtype=np.int64)
    points = np.array([p for t in synthetic for p in t], dtype=np.float64).reshape(-1, 2)
    return points, np.concatenate([[0], np.cumsum(lengths)]), took


def _complete(path: Path) -> bool:
    """Whether a pickle file is fully written (it loads)."""
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            pickle.load(f)
    except (EOFError, pickle.UnpicklingError):
        return False
    return True


def run_tracs(data, epsilon: float, seed: int):
    """TraCS-C reports at ``epsilon`` per user, then a synthetic data set of as many trajectories."""
    from tracs.estimate.synthesize import fit_mobility_model, synthesize
    from tracs.perturbers import TraCSC

    start = time.perf_counter()
    perturber = TraCSC(data.region, epsilon_per_trajectory=epsilon)
    reports = perturber.perturb_many(data.coords, data.offsets, rng=seed)
    model = fit_mobility_model(reports, perturber, offsets=data.offsets, grid=TRACS_GRID)
    synthetic = synthesize(model, len(data.offsets) - 1, rng=seed)
    return reports, synthetic, time.perf_counter() - start


def rows(root: Path, datasets=("chi", "tky"), epsilons=EPSILONS, seed: int = 0) -> list[tuple]:
    """``(data, ε, method, metrics, seconds)`` for every data set, ε and method."""
    from tracs.evaluation.experiment_data import load_dataset
    from tracs.evaluation.synthesis_metrics import every_metric

    out = []
    for name in datasets:
        data = load_dataset(name)
        true, offsets, bounds = data.coords, data.offsets, data.region.bounds
        # every metric of a data set against the true points (the same query rectangles for all)
        metrics = functools.partial(every_metric, true, offsets, bounds=bounds, cells=TRACS_GRID, seed=seed)
        for eps in epsilons:
            reports, synthetic, took = run_tracs(data, eps, seed)
            out.append((name.upper(), eps, "TraCS-C reports", metrics(reports, offsets),
                        None))
            out.append((name.upper(), eps, f"TraCS-C synthetic ({TRACS_GRID}×{TRACS_GRID})",
                        metrics(synthetic.coords, synthetic.offsets), took))
            for grid in LDPTRACE_GRIDS:
                points, synthetic_offsets, took = run_ldptrace(root, true, offsets, eps, grid)
                out.append((name.upper(), eps, f"LDPTrace ({grid}×{grid})",
                            metrics(points, synthetic_offsets), took))
    return out


def run(quick: bool = False) -> None:
    print("\n## ldptrace: synthetic trajectories, TraCS-C + tracs.estimate.synthesize against LDPTrace, "
          "equal ε per user, the same metric code")
    root = os.environ.get("LDPTRACE_DIR")
    if not root or not os.environ.get("TRACS_DATA_DIR"):
        print("not run: set LDPTRACE_DIR (a checkout of LDPTrace's published code) and TRACS_DATA_DIR "
              "(the check-in files)")
        return
    from tracs._text import significant
    from tracs.evaluation.synthesis_metrics import METRICS

    datasets = ("chi",) if quick else ("chi", "tky")
    epsilons = EPSILONS[:1] if quick else EPSILONS
    print("| data | ε per user | data set | " + " | ".join(METRICS) + " | seconds |")
    print("| --- " * (len(METRICS) + 4) + "|")
    for name, eps, label, values, took in rows(Path(root), datasets, epsilons):
        seconds = "" if took is None else f"{took:.1f}"
        print(f"| {name} | {eps:g} | {label} | " + " | ".join(significant(v) for v in values) + f" | {seconds} |")
