"""The collector's computations after a fit: smoothing, per-point posterior, TraCS-D's fit, synthesis.

``python -m benchmarks postprocess`` runs every part; ``python -m benchmarks.postprocess --fits``
the fit ratios alone, ``--distinct`` how many TraCS-D reports have distinct likelihoods,
``--floor`` TraCS-D's one-pass fit against TraCS-C's whole fit at 10^5, 10^6 and 10^7 reports,
``--workers`` the wall and CPU time of ``denoise(..., workers=1)`` and ``workers=2``.

Reports of the generated city of :mod:`benchmarks.estimate` (walks of 100 points,
ε = 2 per point) on a 64×64 grid.  Every figure is CPU seconds of this process
(``time.process_time``: other jobs on a shared machine do not inflate it), measured
once after a warm-up call on a small input (the kernels are compiled outside the
timing), the before and after of the same run side by side:

* **smoothing** (``denoise(..., trajectory=True)`` with a given transition, on the
  estimate's fine grid when it has one): µs per point, the compiled recursions against
  the former batched NumPy steps with dense kernels (:mod:`benchmarks.reference.smoothing`),
  their largest difference, both with BLAS on one thread (the former steps ran on
  threaded BLAS, which on a loaded machine spent 65 times the CPU of one thread on a
  pair of 128 × 128 products, and is not timed);
* **posterior** (``denoise(...)``, one point at a time): µs per point, target ≤ 10;
* **TraCS-D / TraCS-C**: CPU seconds of the two ``density(...)`` fits on the same
  reports' positions, their ratio (target ≤ 10×; the estimate section measures 10^6
  reports), on 64×64 and 32×32, at ε = 1, 2 and 4 per point, over five seeds (seed
  ``s``: the city :func:`benchmarks.estimate.city` ``(n, s)``, perturbed with ``rng=s + 1``),
  every ratio printed and the largest per grid and ε recorded, beside TraCS-D's cheapest fit
  (one EM pass: its runs built and read once) as a ratio to TraCS-C's whole fit;
* **synthesis**: seconds for 10^5 trajectories of a 24×24 chain with lengths of mean
  about 290 (a TKY-like model: ~2.9·10^7 points), the compiled sampler against the
  former step loop (:mod:`benchmarks.reference.synthesis`), same output; target ≤ 10 s.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks._record import record
from benchmarks.estimate import _perturber, city

GRID = 64


def _cpu(fn):
    """``(CPU seconds, result)`` of one call."""
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def _fitted(method: str, n: int):
    from tracs.estimate import density

    pert, rep, off = _city_reports(method, n, 2.0, 0)
    return pert, rep, off, density(rep, pert, offsets=off, grid=GRID)


def smoothing_rows(n: int) -> list[tuple]:
    """``(method, grid smoothed on, µs/point compiled, µs/point NumPy steps, largest difference)``."""
    from benchmarks.reference import smoothing as former
    from tracs.estimate import smoothing
    from tracs.estimate.expectation_maximisation import one_blas_thread

    rows = []
    for method, family in (("tracs-c", "axes"), ("tracs-d", "directional")):
        pert, rep, off, est = _fitted(method, n)
        prior = est.detail if est.detail is not None else est
        args = (pert, est, family, 2)
        smoothing.smooth(rep[:200], off[:3], *args, scale=500.0, jump=0.2)  # compile outside the timing
        new_s, new = _cpu(lambda: smoothing.smooth(rep, off, *args, scale=500.0, jump=0.2))
        with one_blas_thread():
            old_s, old = _cpu(lambda: former.smooth(rep, off, *args, scale=500.0, jump=0.2))
        rows.append((method, prior.probabilities.shape[0], 1e6 * new_s / len(rep), 1e6 * old_s / len(rep),
                     float(np.abs(new.points - old.points).max())))
    return rows


def posterior_rows(n: int) -> list[tuple]:
    """``(method, µs/point)`` of the per-point posterior means."""
    from tracs.estimate.denoising import denoise

    rows = []
    for method in ("tracs-c", "tracs-d"):
        pert, rep, off, est = _fitted(method, n)
        denoise(rep[:200], pert, est, offsets=off[:3])
        seconds, _ = _cpu(lambda: denoise(rep, pert, est, offsets=off))
        rows.append((method, 1e6 * seconds / len(rep)))
    return rows


def workers_rows(n: int, workers=(1, 2), repeats: int = 3) -> list[tuple]:
    """``(part, method, workers, CPU s, wall s)`` of ``denoise`` on ``n`` reports: per point (TraCS-C,
    TraCS-D) and TraCS-C's smoothing (transition given: scale 500 m, jump 0.2); the fastest wall
    time of ``repeats`` calls (one for the smoothing) and its CPU time."""
    from tracs.estimate.denoising import denoise

    rows = []
    for method in ("tracs-c", "tracs-d"):
        pert, rep, off, est = _fitted(method, n)
        parts = [("per point", {}, repeats)]
        if method == "tracs-c":
            parts.append(("smoothing", {"trajectory": True, "scale": 500.0, "jump": 0.2}, 1))
        for part, options, count in parts:
            denoise(rep[:200], pert, est, offsets=off[:3], **options)  # compile outside the timing
            for w in workers:
                runs = []
                for _ in range(count):
                    wall = time.perf_counter()
                    cpu, _ = _cpu(lambda: denoise(rep, pert, est, offsets=off, workers=w, **options))
                    runs.append((time.perf_counter() - wall, cpu))
                wall, cpu = min(runs)
                rows.append((part, method, w, cpu, wall))
    return rows


#: the fit ratio's settings: grids, per-point ε and seeds
FIT_GRIDS, FIT_EPSILONS, FIT_SEEDS = (64, 32), (1.0, 2.0, 4.0), (0, 1, 2, 3, 4)


def _city_reports(method: str, n: int, epsilon: float, seed: int):
    """``(perturber, reports, offsets)``: ``city(n, seed)`` released by ``method`` with ``rng=seed + 1``."""
    pert = _perturber(method, epsilon)
    pts, off = city(n, seed)
    return pert, pert.perturb_many(pts, off, rng=seed + 1), off


def _timed_fit(pert, rep, off, grid: int, **options):
    """``(CPU seconds, estimate)`` of ``density(rep, ...)``, its kernels compiled outside the timing."""
    from tracs.estimate import density

    density(rep[:2000], pert, offsets=off[off <= 2000], grid=grid, **options)
    return _cpu(lambda: density(rep, pert, offsets=off, grid=grid, **options))


def estimation_ratio(n: int, grid: int = GRID, epsilon: float = 2.0, seed: int = 0) -> dict:
    """CPU seconds of TraCS-C's and TraCS-D's fits of ``n`` reports on ``grid``×``grid`` at
    ``epsilon`` per point (city and perturbation of ``seed``), and EM passes; under ``"floor"``
    the CPU seconds of TraCS-D's cheapest fit, one EM pass (``iterations=1, stop="rule"``: its
    reports' runs built and read once), which no fit of its exact likelihood can undercut."""
    out = {}
    for method in ("tracs-c", "tracs-d"):
        pert, rep, off = _city_reports(method, n, epsilon, seed)
        seconds, est = _timed_fit(pert, rep, off, grid)
        out[method] = (seconds, est.iterations)
        if method == "tracs-d":
            out["floor"] = _timed_fit(pert, rep, off, grid, iterations=1, stop="rule")[0]
    return out


def floor_ratio(n: int, grid: int, epsilon: float = 2.0, seed: int = 0) -> tuple[float, float]:
    """``(TraCS-C's whole fit, TraCS-D's one-pass fit)`` in CPU seconds on ``n`` reports of the
    city (seed ``seed``) on ``grid``×``grid`` at ``epsilon``: how far TraCS-D's floor grows
    against TraCS-C's fit, whose binned reports cost the same pass for any ``n``."""
    out = []
    for method, options in (("tracs-c", {}), ("tracs-d", {"iterations": 1, "stop": "rule"})):
        pert, rep, off = _city_reports(method, n, epsilon, seed)
        out.append(_timed_fit(pert, rep, off, grid, **options)[0])
        del rep
    return out[0], out[1]


def fit_ratios(n: int, grids=FIT_GRIDS, epsilons=FIT_EPSILONS, seeds=FIT_SEEDS) -> list[tuple]:
    """``(grid, ε, seed, TraCS-C CPU s, passes, TraCS-D CPU s, passes, TraCS-D one pass CPU s)`` of
    every setting, printed as they come, with the ratios' range per grid and ε (the largest is
    recorded)."""
    rows = []
    for grid in grids:
        for eps in epsilons:
            ratios = []
            for seed in seeds:
                fits = estimation_ratio(n, grid, eps, seed)
                (c_s, c_it), (d_s, d_it) = fits["tracs-c"], fits["tracs-d"]
                floor = fits["floor"]
                rows.append((grid, eps, seed, c_s, c_it, d_s, d_it, floor))
                ratios.append(d_s / c_s)
                print(f"  {grid}×{grid}, ε = {eps:g}, seed {seed}: TraCS-C {c_s:.2f} CPU s ({c_it} passes), "
                      f"TraCS-D {d_s:.2f} CPU s ({d_it} passes): {d_s / c_s:.1f}×; TraCS-D's one pass "
                      f"{floor:.2f} CPU s: {floor / c_s:.1f}×", flush=True)
            prev = record(f"postprocess / fit ratio {grid}x{grid} eps {eps:g}, largest", max(ratios), "x")
            print(f"  {grid}×{grid}, ε = {eps:g}: {min(ratios):.1f}× – {max(ratios):.1f}× over {len(seeds)} "
                  f"seeds, median {np.median(ratios):.1f}× (target ≤ 10×; vs prev {prev})", flush=True)
    return rows


def distinct_likelihoods(n: int, grid: int, epsilon: float = 2.0, seed: int = 0) -> int:
    """How many of ``n`` TraCS-D reports of the generated city have distinct likelihoods over the
    ``grid``×``grid`` points of its fit (distinct runs, :mod:`tracs.estimate._runs`): the reports an
    exact binning would leave."""
    from tracs.estimate import _runs
    from tracs.estimate.grid_density import plan_density

    pert, rep, off = _city_reports("tracs-d", n, epsilon, seed)
    plan = plan_density(pert, len(rep), epsilon, epsilon, grid=grid)
    block = next(b for b in plan.blocks(rep, off, np.full(len(rep), epsilon)) if isinstance(b, _runs.RunBlock))
    runs = np.concatenate(block.runs)
    rows = np.ascontiguousarray(runs.reshape(len(runs), -1))
    return len(np.unique(rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()))


def tky_like_model(seed: int = 0):
    """A 24×24 chain with sparse rows and lengths uniform-ish up to 576 (mean about 290)."""
    from tracs.estimate.synthesize import MobilityModel

    rng = np.random.default_rng(seed)
    g, c = 24, 24 * 24
    trans = rng.random((c, c)) ** 8
    start = rng.random(c)
    lengths = np.r_[0.0, rng.random(2 * 288)]
    return MobilityModel(np.linspace(0, 2e4, g + 1), np.linspace(0, 1e4, g + 1), start / start.sum(),
                         trans / trans.sum(axis=1, keepdims=True), lengths / lengths.sum())


def synthesis_row(n: int) -> tuple:
    """``(points, seconds compiled, seconds step loop, same output)``."""
    from benchmarks.reference.synthesis import synthesize as former
    from tracs.estimate.synthesize import synthesize

    model = tky_like_model()
    synthesize(model, 10, rng=1)
    new_s, new = _cpu(lambda: synthesize(model, n, rng=5))
    old_s, old = _cpu(lambda: former(model, n, rng=5))
    same = all(np.array_equal(getattr(new, f), getattr(old, f)) for f in ("offsets", "cells", "coords"))
    return len(new.cells), new_s, old_s, same


def run(quick: bool = False) -> None:
    load = os.getloadavg()[0]
    print(f"\n## postprocess (generated city, ε = 2 per point, {GRID}×{GRID}; CPU time; load average {load:.1f})")
    n_smooth = 2_000 if quick else 10_000
    print(f"smoothing, {n_smooth:,} reports, transition given (scale 500 m, jump 0.2):")
    for method, grid, new, old, diff in smoothing_rows(n_smooth):
        prev = record(f"postprocess / smoothing {method}", 1e6 / new, "points/s")
        print(f"  {method:<8} on {grid}×{grid}: {new:8.0f} µs/point compiled, {old:8.0f} µs/point NumPy steps "
              f"({old / new:.2f}× faster); largest difference {diff:.1e} (vs prev {prev})")
    n_post = 10_000 if quick else 100_000
    print(f"per-point posterior, {n_post:,} reports (target ≤ 10 µs/point):")
    for method, us in posterior_rows(n_post):
        prev = record(f"postprocess / posterior {method}", 1e6 / us, "points/s")
        print(f"  {method:<8} {us:8.2f} µs/point (vs prev {prev})")
    n_fit = 20_000 if quick else 100_000
    print(f"density, {n_fit:,} reports, TraCS-D's fit against TraCS-C's (target ≤ 10×):")
    fit_ratios(n_fit, *(((32,), (2.0,), (0, 1)) if quick else ()))
    n_syn = 10_000 if quick else 100_000
    points, new, old, same = synthesis_row(n_syn)
    prev = record("postprocess / synthesis", points / new, "points/s")
    print(f"synthesis, {n_syn:,} trajectories ({points:,} points; target ≤ 10 s at 10^5): {new:.2f} s compiled, "
          f"{old:.2f} s step loop ({old / new:.2f}× faster), same output: {same} (vs prev {prev})")


if __name__ == "__main__":
    import sys

    if "--distinct" in sys.argv:
        for n in (100_000, 1_000_000):
            for grid in (32, 64):
                k = distinct_likelihoods(n, grid)
                print(f"{n:,} TraCS-D reports (ε = 2, seed 0) on {grid}×{grid}: {k:,} distinct likelihoods "
                      f"({100 * k / n:.1f} %)", flush=True)
    elif "--floor" in sys.argv:
        for n in (100_000, 1_000_000, 10_000_000):
            for grid in (32, 64):
                c_s, d_s = floor_ratio(n, grid)
                print(f"{n:,} reports, {grid}×{grid}, ε = 2: TraCS-C's fit {c_s:.2f} CPU s, TraCS-D's one pass "
                      f"{d_s:.2f} CPU s ({d_s / c_s:.1f}×)", flush=True)
    elif "--workers" in sys.argv:
        print(f"denoise, 100,000 reports, workers 1 and 2 (load average {os.getloadavg()[0]:.1f}):")
        for part, method, w, cpu, wall in workers_rows(100_000):
            print(f"  {part:<9} {method:<8} workers={w}: {wall:6.2f} s wall, {cpu:6.2f} s CPU", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    elif "--fits" in sys.argv:
        print(f"density, 100,000 reports, TraCS-D's fit against TraCS-C's (CPU time; load average "
              f"{os.getloadavg()[0]:.1f}):")
        fit_ratios(100_000)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    else:
        run(quick="--quick" in sys.argv)
