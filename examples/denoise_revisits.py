"""The revisit prior's weight: releases denoised onto the venues given the trajectory, AE against α.

The setting of the denoised tables of ``docs/results.md`` (``tracs evaluate --dataset chi
--denoise trajectory``): the same releases (seeds ``cell_seed(0, method, ε, r)``), the POI
nearest the posterior mean; only the revisit weight ``α`` of :mod:`tracs.estimate.revisits`
changes (``none``: without it).

* **TraCS-D** (``--methods tracs-d``): the prior fitted as :mod:`tracs.evaluation.denoised`
  fits it (64 × 64 cells, at most 200 EM passes, the stopping rule), the prior given the
  trajectory with the transition fixed in advance (one mean cell width, jump share 0.05) as
  every report's base prior;
* **L-SRR, EM, ATP** (``--methods lsrr``, …): the POI frequencies estimated from the release
  (at most 20 EM passes; ATP under its surrogate law) as every report's base prior
  (``baseline_posterior(..., revisit=α)``; ``none``: per report, the tables' column).

Prints a Markdown table of the mean AE in metres over the releases.

Run: ``TRACS_DATA_DIR=… python examples/denoise_revisits.py --datasets tky,chi --epsilons 2,4,8
[--methods tracs-d,lsrr] [--weights none,0.25,1,4,16,64,256] [--repetitions 1]`` (TraCS-D: about
half a minute per release and weight on one core; L-SRR: seconds).
"""

from __future__ import annotations

import argparse

import numpy as np

from tracs.estimate import baseline_posterior
from tracs.estimate.grid_density import check_perturber
from tracs.estimate.poi_posterior import poi_posterior
from tracs.evaluation import load_dataset
from tracs.evaluation import denoised as setting
from tracs.evaluation.choices import METHODS
from tracs.evaluation.runner import _errors, _run_method, _stream, cell_seed
from tracs.methods import MethodContext


def _weight(text: str):
    return None if text == "none" else float(text)


def errors_by_weight(name: str, method: str, epsilon: float, repetition: int, weights) -> dict:
    """``{weight: AE in metres}`` of one release of ``name`` by ``method`` at ``epsilon`` (repetition
    ``repetition``)."""
    ds = load_dataset(name)
    ctx = MethodContext(region=ds.region, pois=ds.pois, anchor="center")
    off = np.asarray(ds.offsets, dtype=np.int64)
    coords = ds.draw(_stream(0, "data", repetition))
    spec = METHODS[method]
    pert = spec.build(ctx, epsilon)
    raw = _run_method(spec, pert, ds.batch(coords), ctx, False,
                      np.random.default_rng(cell_seed(0, method, epsilon, repetition)))
    if method != "tracs-d":
        space = pert.poi_space.points
        return {w: float(_errors(coords, space[baseline_posterior(raw, pert, offsets=off, revisit=w,
                                                                  iterations=setting.BASELINE_PASSES)], off).mean())
                for w in weights}
    est = setting.fitted_prior(pert, raw, off)
    scale = setting.transition_scale(est)
    pois = ctx.poi_space.points
    out = {}
    for weight in weights:
        index = poi_posterior(raw, off, pert, check_perturber(pert), pois, est, rule="mean", trajectory=True,
                              scale=scale, jump=setting.JUMP, revisit=weight)
        out[weight] = float(_errors(coords, pois[index], off).mean())
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="tky,chi")
    p.add_argument("--epsilons", default="2,4,8")
    p.add_argument("--methods", default="tracs-d")
    p.add_argument("--weights", default="none,0.25,1,4,16,64,256")
    p.add_argument("--repetitions", type=int, default=1)
    args = p.parse_args(argv)
    weights = [_weight(w) for w in args.weights.split(",")]
    print("| data | method | ε | " + " | ".join("none" if w is None else f"α = {w:g}" for w in weights) + " |")
    print("| --- | --- | ---: |" + " ---: |" * len(weights))
    for name in args.datasets.split(","):
        for method in args.methods.split(","):
            for eps in (float(e) for e in args.epsilons.split(",")):
                runs = [errors_by_weight(name, method, eps, r, weights) for r in range(args.repetitions)]
                means = [np.mean([run[w] for run in runs]) for w in weights]
                print(f"| {name.upper()} | {METHODS[method].label} | {eps:g} | "
                      + " | ".join(f"{m:,.0f}" for m in means) + " |", flush=True)


if __name__ == "__main__":
    main()
