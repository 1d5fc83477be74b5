"""How far can denoising take a release on the paper's regions?  The Bayes-optimal error.

On the regions of the paper's Figure 4 (``[0,1)²`` and ``[0,2) × [0,10)``) the true points
are independent and uniform, so nothing a collector computes from the reports knows
more about a point than the reports and the uniform prior.  Under that *true* prior
the estimator with the least expected Euclidean error is the posterior's geometric
median (the posterior mean minimises the squared error instead); its average error is
the least any post-processing of the release can reach.  This prints it beside the raw
error and the posterior mean's, as ratios to the raw error, for TraCS-C, TraCS-D, the
Strawman and planar Laplace, from ``n`` uniform points per region and ε in walks of
:data:`LENGTH` (one release, seed ``--seed``; TraCS-D's first reference the region's
lower-left corner, as in the denoised tables of ``docs/results.md``).

The posterior of a point given the whole release is that of its own report: a report
depends on its true point and on the previous *released* point (TraCS-D, the Strawman)
or on nothing else (TraCS-C, planar Laplace), and the true points are independent, so
the later reports add nothing.  It is computed on a ``G × G`` grid of cell centres from
the estimator's own exact likelihoods: TraCS-C's two axes are independent (the product
of the axes' posteriors ``∝ pdf(y | x)`` of the perturber's per-axis mechanisms,
:func:`tracs.estimate.grid_density.axis_mechanisms`); TraCS-D and the Strawman through
their runs (:class:`tracs.estimate._emissions.DirectionalTables`, the likelihood at
every centre given the report and its reference); planar Laplace through
:func:`tracs.estimate._emissions.laplace_rows` (clamped reports integrate the density
over what clamps onto them).  The median is found by Weiszfeld's iteration.  The grid
and the Monte Carlo sample set the precision (about 0.01 in the ratio with the defaults).

Run: ``python examples/denoise_bound.py [--points 3000] [--grid 200] [--seed 0]
[--methods tracs-c,tracs-d,strawman,planar-laplace] [--epsilons 1,2,4] [--regions ...]`` (about
15 minutes on one core).
"""

from __future__ import annotations

import argparse
import math

import numba
import numpy as np

from tracs import Rectangle
from tracs.estimate._emissions import DirectionalTables, laplace_rows
from tracs.estimate.grid_density import _epsilons, axis_mechanisms
from tracs.methods import MethodContext, get

#: the regions (the evaluation's names): their labels and bounds
REGIONS = {"unit-square": ("[0,1)²", (0.0, 0.0, 1.0, 1.0)), "2x10": ("[0,2) × [0,10)", (0.0, 0.0, 2.0, 10.0))}
EPSILONS = (1.0, 2.0, 4.0)
METHODS = ("tracs-c", "tracs-d", "strawman", "planar-laplace")
#: points per walk (the denoised tables' trajectories of 100 uniform points)
LENGTH = 100
#: Weiszfeld passes (the medians move by less than 1e-6 of the region after about 40)
PASSES = 60
#: reports whose posteriors are held at once (G² floats each; whole walks)
BLOCK = 200


def _axis_posteriors(mechanism, released, centres):
    """``(reports, G)`` posterior of one axis under the uniform prior."""
    p = mechanism.pdf(released[:, None], centres[None, :])
    return p / p.sum(axis=1, keepdims=True)


def dense_medians(post, points):
    """Geometric medians (Weiszfeld, from the mean) and means of posteriors ``post`` (reports ×
    points, rows summing to 1) over ``points`` (points × 2)."""
    mean = post @ points
    med = mean.copy()
    _weiszfeld(np.ascontiguousarray(post), np.ascontiguousarray(points), med)
    return med, mean


@numba.njit(cache=True, nogil=True)
def _weiszfeld(post, points, med):
    """:data:`PASSES` Weiszfeld steps of every row of ``post`` from ``med`` (in place)."""
    for r in range(post.shape[0]):
        mx, my = med[r, 0], med[r, 1]
        for _ in range(PASSES):
            sw = 0.0
            sx = 0.0
            sy = 0.0
            for k in range(points.shape[0]):
                dx, dy = mx - points[k, 0], my - points[k, 1]
                w = post[r, k] / (math.sqrt(dx * dx + dy * dy) + 1e-12)
                sw += w
                sx += w * points[k, 0]
                sy += w * points[k, 1]
            mx, my = sx / sw, sy / sw
        med[r, 0], med[r, 1] = mx, my


def _posteriors(name, perturber, epsilon, released, offsets, xe, ye):
    """``(start, stop, posterior, points)`` per block of whole walks: the posterior (reports × G²)
    under the uniform prior at the cell centres ``points`` (G² × 2, cells in (i, j) order)."""
    cx, cy = 0.5 * (xe[:-1] + xe[1:]), 0.5 * (ye[:-1] + ye[1:])
    points = np.stack(np.meshgrid(cx, cy, indexing="ij"), axis=-1).reshape(-1, 2)
    tables = DirectionalTables(released, offsets, perturber, (xe, ye), 1) if name in ("tracs-d", "strawman") else None
    mx, my = axis_mechanisms(perturber, epsilon) if name == "tracs-c" else (None, None)
    eps = _epsilons(perturber, offsets, len(released))
    for start in range(0, len(released), BLOCK):
        stop = min(start + BLOCK, len(released))
        part = released[start:stop]
        if tables is not None:
            lik = tables.chunk(start, stop, means=False)[0].reshape(stop - start, -1)
        elif mx is not None:
            lik = (_axis_posteriors(mx, part[:, 0], cx)[:, :, None]
                   * _axis_posteriors(my, part[:, 1], cy)[:, None, :]).reshape(stop - start, -1)
        else:
            lik = laplace_rows(part, perturber, eps[start:stop], points)
        yield start, stop, lik / lik.sum(axis=1, keepdims=True), points


def bound(bounds, epsilon: float, points: int, grid: int, seed: int,
          method: str = "tracs-c") -> tuple[float, float, float, float]:
    """``(raw AE, posterior-mean AE / raw, posterior-median AE / raw, its standard error)`` of one
    release of ``method`` (``points`` uniform points in walks of :data:`LENGTH`); the standard
    error of the ratio of two means by the delta method, ``sd(e_med − ratio·e_raw) / (√n · AE_raw)``
    (the points' errors are independent given the walks: the Monte Carlo precision)."""
    if points % LENGTH:
        raise ValueError(f"points must be a multiple of {LENGTH}, got {points}")
    region = Rectangle(*bounds)
    anchor = "corner" if method == "tracs-d" else "center"  # as in the denoised tables
    perturber = get(method).build(MethodContext(region=region, anchor=anchor), epsilon)
    rng = np.random.default_rng(seed)
    lo, hi = np.array(bounds[:2]), np.array(bounds[2:])
    true = rng.uniform(lo, hi, (points, 2))
    offsets = np.arange(0, points + 1, LENGTH)
    released = perturber.perturb_many(true, offsets, rng=seed + 1)
    xe, ye = (np.linspace(lo[k], hi[k], grid + 1) for k in (0, 1))
    med, mean = np.empty_like(true), np.empty_like(true)
    for start, stop, post, cells in _posteriors(method, perturber, epsilon, released, offsets, xe, ye):
        med[start:stop], mean[start:stop] = dense_medians(post, cells)
    e_raw, e_mean, e_med = (np.linalg.norm(est - true, axis=1) for est in (released, mean, med))
    raw = float(e_raw.mean())
    ratio = float(e_med.mean()) / raw
    se = float(np.std(e_med - ratio * e_raw, ddof=1) / (np.sqrt(points) * raw))
    return raw, float(e_mean.mean()) / raw, ratio, se


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=3000)
    parser.add_argument("--grid", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    parser.add_argument("--regions", default=",".join(REGIONS), help="of " + ", ".join(REGIONS))
    args = parser.parse_args(argv)
    regions = args.regions.split(",")
    unknown = [r for r in regions if r not in REGIONS]
    if unknown:
        parser.error(f"unknown region {unknown[0]!r}: one of {', '.join(REGIONS)}")
    print("| method | region | ε | raw AE | posterior mean / raw | Bayes-optimal (posterior median) / raw "
          "| its standard error |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for method in args.methods.split(","):
        for name in regions:
            label, bounds = REGIONS[name]
            for eps in map(float, args.epsilons.split(",")):
                raw, mean, med, se = bound(bounds, eps, args.points, args.grid, args.seed, method)
                print(f"| {method} | {label} | {eps:g} | {raw:.3g} | {mean:.3f} | {med:.3f} | {se:.3f} |", flush=True)


if __name__ == "__main__":
    main()
