"""Average error of TraCS-C / TraCS-D reports before and after denoising, on check-in data.

The setting of ``docs/results.md`` (``tracs evaluate --dataset chi``): the data set of
:func:`tracs.evaluation.load_dataset`, per-user streams, seeds
``cell_seed(0, "tracs-c", ε, r)`` for the repetitions ``r``.  Every release is fitted
with :func:`tracs.estimate.grid_density` (``grid=64``, the defaults otherwise) and denoised
with :func:`tracs.estimate.denoise`, per point and per trajectory (``trajectory=True``,
the transition fitted from the reports); the errors are those of the raw reports, of
the per-point and the smoothed points, each as is and rounded to the POIs (the table
of ``docs/results.md`` rounds to the POIs), and of the posterior over the POIs
(``pois=``: its mode and the POI nearest its mean; ``--poi-passes k`` adds the same
after ``k`` EM passes over the POIs).

Run: ``TRACS_DATA_DIR=… python examples/denoise_ae.py [--dataset chi] [--epsilon 2]
[--method tracs-d] [--repetitions 3] [--no-smoothing] [--poi-passes 5]`` (a few minutes
per release on one core).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tracs.estimate import denoise, density
from tracs.estimate.denoising import smooth_trajectories
from tracs.evaluation import load_dataset
from tracs.evaluation.choices import METHODS
from tracs.evaluation.runner import _errors, _run_method, _stream, cell_seed
from tracs.methods import MethodContext
from tracs.poi_space import POISpace


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="chi")
    p.add_argument("--epsilon", type=float, default=2.0)
    p.add_argument("--method", default="tracs-c", choices=("tracs-c", "tracs-d", "strawman"))
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--grid", type=int, default=64)
    p.add_argument("--no-smoothing", action="store_true", help="leave out the smoothed columns (the slow part)")
    p.add_argument("--poi-passes", type=int, default=0, help="also the POI posterior after this many EM passes")
    p.add_argument("--poi-trajectory", default=None, metavar="CELLS,JUMP",
                   help="also the POI posterior given the trajectory (trajectory=True), the transition's "
                        "scale in mean cell widths and its jump share given (the fit is slow)")
    args = p.parse_args(argv)
    ds = load_dataset(args.dataset)
    ctx = MethodContext(region=ds.region, pois=ds.pois, anchor="center")
    off = np.asarray(ds.offsets, dtype=np.int64)
    pois = POISpace(ds.pois)  # every POI of the data set, as the evaluation's rounding
    keys = ["raw", "raw, POIs", "per point", "per point, POIs", "POI mode", "POI mean"]
    keys += [f"POI mode, {args.poi_passes} passes", f"POI mean, {args.poi_passes} passes"] if args.poi_passes else []
    keys += ["POI mode, trajectory", "POI mean, trajectory"] if args.poi_trajectory else []
    errors = {k: [] for k in keys + ([] if args.no_smoothing else ["smoothed", "smoothed, POIs"])}
    for rep in range(args.repetitions):
        coords = ds.draw(_stream(0, "data", rep))
        pert = METHODS[args.method].build(ctx, args.epsilon)
        rng = np.random.default_rng(cell_seed(0, args.method, args.epsilon, rep))
        out = _run_method(METHODS[args.method], pert, ds.batch(coords), ctx, False, rng)
        est = density(out, pert, offsets=off, grid=args.grid)
        start = time.process_time()
        den = denoise(out, pert, est, offsets=off)
        cpu = time.process_time() - start
        start = time.process_time()
        smo = None if args.no_smoothing else smooth_trajectories(out, pert, est, offsets=off)
        cpu_smooth = time.process_time() - start
        pairs = [("raw", out), ("per point", den)] + ([] if smo is None else [("smoothed", smo.points)])
        for key, points in pairs:
            for k, p in ((key, points), (key + ", POIs", pois.round(points)[0])):
                errors[k].append(float(_errors(coords, np.asarray(p, dtype=np.float64), off).mean()))
        for passes, tail in ((0, ""), (args.poi_passes, f", {args.poi_passes} passes"))[:1 + bool(args.poi_passes)]:
            for rule in ("mode", "mean"):
                p = denoise(out, pert, est, offsets=off, pois=ds.pois, rule=rule, iterations=passes)
                errors[f"POI {rule}{tail}"].append(float(_errors(coords, p, off).mean()))
        if args.poi_trajectory:
            cells, jump = (float(v) for v in args.poi_trajectory.split(","))
            scale = cells * float(np.mean([np.mean(np.diff(e)) for e in est.grid]))
            for rule in ("mode", "mean"):
                p = denoise(out, pert, est, offsets=off, pois=ds.pois, rule=rule, trajectory=True, scale=scale,
                            jump=jump)
                errors[f"POI {rule}, trajectory"].append(float(_errors(coords, p, off).mean()))
        print(f"release {rep}: " + ", ".join(f"{k} {v[-1]:,.0f} m" for k, v in errors.items())
              + f"; per point {cpu:.2f} CPU s"
              + ("" if smo is None else f", smoothing {cpu_smooth:.1f} CPU s (scale {smo.scale:,.0f} m, "
                 f"jump {smo.jump})") + f", {est.method}")
    print("mean: " + ", ".join(f"{k} {np.mean(v):,.0f} m" for k, v in errors.items()))


if __name__ == "__main__":
    main()
