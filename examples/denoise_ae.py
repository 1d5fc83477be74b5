"""Average error of TraCS-C / TraCS-D reports before and after denoising, on check-in data.

The setting of ``docs/results.md`` (``tracs evaluate --dataset chi``): the data set of
:func:`tracs.evaluation.load_dataset`, per-user streams, seeds
``cell_seed(0, "tracs-c", ε, r)`` for the repetitions ``r``.  Every release is fitted
with :func:`tracs.estimate.grid_density` (``grid=64``, the defaults otherwise) and denoised
with :func:`tracs.estimate.denoise`, per point and per trajectory (``trajectory=True``,
the transition fitted from the reports); the errors are those of the raw reports, of
the per-point and the smoothed points, each as is and rounded to the POIs (the table
of ``docs/results.md`` rounds to the POIs).

Run: ``TRACS_DATA_DIR=… python examples/denoise_ae.py [--dataset chi] [--epsilon 2]
[--method tracs-d] [--repetitions 3]`` (a few minutes per release on one core).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tracs.estimate import denoise, density
from tracs.estimate.denoise import smooth_trajectories
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
    args = p.parse_args(argv)
    ds = load_dataset(args.dataset)
    ctx = MethodContext(region=ds.region, pois=ds.pois, anchor="center")
    off = np.asarray(ds.offsets, dtype=np.int64)
    pois = POISpace(ds.pois)  # every POI of the data set, as the evaluation's rounding
    errors = {k: [] for k in ("raw", "raw, POIs", "per point", "per point, POIs", "smoothed", "smoothed, POIs")}
    for rep in range(args.repetitions):
        coords = ds.draw(_stream(0, "data", rep))
        pert = METHODS[args.method].build(ctx, args.epsilon)
        rng = np.random.default_rng(cell_seed(0, args.method, args.epsilon, rep))
        out = _run_method(pert, coords, off, ctx, False, rng, ds.keys)
        est = density(out, pert, offsets=off, grid=args.grid)
        start = time.process_time()
        den = denoise(out, pert, est, offsets=off)
        cpu = time.process_time() - start
        start = time.process_time()
        smo = smooth_trajectories(out, pert, est, offsets=off)
        cpu_smooth = time.process_time() - start
        for key, points in (("raw", out), ("per point", den), ("smoothed", smo.points)):
            for k, p in ((key, points), (key + ", POIs", pois.round(points)[0])):
                errors[k].append(float(_errors(coords, np.asarray(p, dtype=np.float64), off).mean()))
        print(f"release {rep}: " + ", ".join(f"{k} {v[-1]:,.0f} m" for k, v in errors.items())
              + f"; per point {cpu:.2f} CPU s, smoothing {cpu_smooth:.1f} CPU s (scale {smo.scale:,.0f} m, "
              f"jump {smo.jump}), {est.method}")
    print("mean: " + ", ".join(f"{k} {np.mean(v):,.0f} m" for k, v in errors.items()))


if __name__ == "__main__":
    main()
