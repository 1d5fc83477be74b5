"""The shipped methods, one entry each: 1-D mechanisms, trajectory perturbers, POI baselines.

Factories import their classes on first use, so reading the registry (the
command line's parser, its help) imports no mechanism.  Warm-up hooks make the
first calls of each method's compiled kernels on tiny public inputs.
"""

from __future__ import annotations

import math

import numpy as np

from ._registry import BASELINE, GRID, MECHANISM, PERTURBER, POLAR, Method, register

#: TraCS-D's default direction share ε_φ / ε (the paper's)
DIRECTION_SHARE = math.pi / (math.pi + 1.0)


# ----------------------------------------------------------------------------- 1-D mechanisms

def _mechanism(class_name, **fixed):
    def build(epsilon, **options):
        from .. import mechanisms

        return getattr(mechanisms, class_name)(epsilon=epsilon, **{**fixed, **options})

    return build


def _wrapped(transform, class_name):
    def build(epsilon, **options):
        from .. import mechanisms

        return getattr(mechanisms, transform)(getattr(mechanisms, class_name)(epsilon=epsilon, **options))

    return build


def _sample_at(*values):
    """Warm-up: one draw at each of ``values``."""
    def warm(rng, build):
        build(1.0).sample(np.array(values), rng=rng)

    return warm


def _inverted_law(rng, build):
    """Warm-up of a law sampled by inverting its compiled cdf (bounded Laplace, II-PTT)."""
    mech = build(1.0)
    inside = mech.input_lattice.points(np.array([0, 1, 2]))
    mech.sample(inside, rng=rng)
    mech.cdf(inside, inside)


def _exact_rows(rng, build):
    """Warm-up of the exact rows and cumulative masses (estimators, audits) of a compiled law."""
    mech = build(1.0, resolution=1 / 63)
    if hasattr(mech, "lattice_row"):
        mech.lattice_row(0)
        mech.lattice_cumulative(np.array([0, 1, 2]), np.array([0, 1]))
    mech.lattice_pmf(mech.input_lattice.points(np.array([1]))[0])


def _warm(*steps, **fixed):
    """A ``warm(rng)`` hook running ``steps`` on the method built by the entry's factory."""
    def bind(factory):
        def build(epsilon, **options):
            return factory(epsilon, **{**fixed, **options})

        def warm(rng):
            for step in steps:
                step(rng, build)

        return warm

    return bind


def _mechanism_entry(name, label, factory, help, *warm_steps, family=None):
    return Method(name, label, MECHANISM, factory, help, estimator="distribution",
                  warm=_warm(*warm_steps)(factory) if warm_steps else None, family=family)


_THREE = _sample_at(0.1, 0.5, 0.9)
_ON_CIRCLE = _sample_at(0.1, 3.0)

MECHANISMS = [
    _mechanism_entry("optimal-classical", "optimal classical", _mechanism("OptimalClassical"),
                     "optimal piecewise mechanism on [0, 1] (absolute error)", _THREE, family="optimal"),
    _mechanism_entry("optimal-circular", "optimal circular", _mechanism("OptimalCircular"),
                     "optimal piecewise mechanism on the circle (absolute error)", _ON_CIRCLE, family="optimal"),
    _mechanism_entry("optimal-classical-square", "optimal classical (square)",
                     _mechanism("OptimalClassical", loss="square"), "optimal piecewise mechanism, square error"),
    _mechanism_entry("optimal-circular-square", "optimal circular (square)",
                     _mechanism("OptimalCircular", loss="square"),
                     "optimal circular mechanism, square error"),
    _mechanism_entry("optimal-unbiased", "optimal unbiased", _mechanism("OptimalUnbiased"),
                     "optimal unbiased piecewise mechanism", _THREE, family="optimal"),
    _mechanism_entry("piecewise", "PM", _mechanism("PiecewiseMechanism"), "piecewise mechanism", _THREE,
                     family="classical"),
    _mechanism_entry("square-wave", "SW", _mechanism("SquareWave"), "square wave", _THREE, family="classical"),
    _mechanism_entry("ptt", "PTT", _mechanism("PTT"), "piecewise-then-truncate", _THREE, family="classical"),
    _mechanism_entry("duchi", "Duchi", _mechanism("Duchi"), "Duchi et al.'s binary mechanism",
                     _THREE, _exact_rows, family="classical"),
    _mechanism_entry("laplace", "Laplace", _mechanism("Laplace"), "discrete Laplace offset",
                     _THREE, _exact_rows, family="classical"),
    _mechanism_entry("bounded-laplace", "B-Laplace", _mechanism("BoundedLaplace"), "bounded Laplace",
                     _inverted_law, _exact_rows, family="bounded"),
    _mechanism_entry("ii-ptt", "II-PTT", _mechanism("IIPTT"), "II-PTT", _inverted_law, _exact_rows,
                     family="bounded"),
    _mechanism_entry("staircase", "staircase", _mechanism("Staircase"), "staircase mechanism",
                     _THREE, _exact_rows, family="staircase"),
    _mechanism_entry("purkayastha", "Purkayastha", _mechanism("Purkayastha"),
                     "Purkayastha's mechanism on the circle", _ON_CIRCLE, _exact_rows, family="classical"),
    _mechanism_entry("krr", "k-RR", _mechanism("KRR", k=8), "k-ary randomized response (k = 8)",
                     _sample_at(0, 3), family="classical"),
    _mechanism_entry("compressed-pm", "compressed PM", _wrapped("Compressed", "PiecewiseMechanism"),
                     "PM with outputs compressed into the input domain"),
    _mechanism_entry("compressed-sw", "compressed SW", _wrapped("Compressed", "SquareWave"),
                     "SW with outputs compressed into the input domain"),
    _mechanism_entry("truncated-pm", "truncated PM", _wrapped("Truncated", "PiecewiseMechanism"),
                     "PM with outputs truncated to the input domain"),
    _mechanism_entry("truncated-sw", "truncated SW", _wrapped("Truncated", "SquareWave"),
                     "SW with outputs truncated to the input domain"),
    _mechanism_entry("truncated-laplace", "truncated Laplace", _wrapped("Truncated", "Laplace"),
                     "Laplace with outputs truncated to the input domain"),
    _mechanism_entry("truncated-staircase", "truncated staircase", _wrapped("Truncated", "Staircase"),
                     "staircase with outputs truncated to the input domain"),
]


# ----------------------------------------------------------------------------- perturbers

def _tracs_d(ctx, budget, *, direction_share=DIRECTION_SHARE, distance_along="released", anchor=None, **public):
    """TraCS-D; its first reference is the context's anchor (``--anchor``) unless ``anchor`` is given.

    ``public``: the perturbers' other public options (``resolution``, ``round_to``), as given."""
    from ..perturbers import TraCSD

    return TraCSD(ctx.region, anchor=ctx.anchor if anchor is None else anchor, direction_share=direction_share,
                  distance_along=distance_along, **budget, **public)


def _tracs_c(ctx, budget, *, x_share=0.5, **public):
    from ..perturbers import TraCSC

    return TraCSC(ctx.region, x_share=x_share, **budget, **public)


def _strawman(ctx, budget, *, direction_share=DIRECTION_SHARE, sectors=6, anchor="center", **public):
    """The Strawman; the context's anchor is TraCS-D's (``--anchor``), not the Strawman's."""
    from ..perturbers import Strawman

    return Strawman(ctx.region, anchor=anchor, direction_share=direction_share, sectors=sectors, **budget,
                    **public)


def _planar_laplace(ctx, budget, **public):
    from ..perturbers import PlanarLaplace

    return PlanarLaplace(ctx.region, **budget, **public)


def warm_trajectories(factory, epsilon: float = 2.0):
    """A ``warm(rng)`` hook: the method on a 1 km square (and 20 fixed POIs) perturbs two tiny
    trajectories directly and through the engine with text and integer keys."""
    def warm(rng):
        from ..engine import perturb_many
        from ..region import Rectangle
        from ._registry import MethodContext

        region = Rectangle(0.0, 0.0, 1000.0, 1000.0)
        pois = np.random.default_rng(0).uniform(0.0, 1000.0, (20, 2))  # a baseline's public POIs
        method = factory(MethodContext(region=region, pois=pois), {"epsilon": epsilon})
        xy = np.array([[10.0, 20.0], [300.0, 400.0], [500.0, 600.0], [700.0, 100.0]])
        offsets = np.array([0, 2, 4])
        method.perturb_many(xy, offsets, rng=rng)
        if not hasattr(method, "poi_space"):
            perturb_many(method, xy, offsets, rng=rng, keys=["a", "b"])
            perturb_many(method, xy, offsets, rng=rng, keys=np.array([7, 9]))

    return warm


def _perturber(name, label, factory, help, model, estimator, sidecar=(), *, family, lattice, pointwise=True,
               **options):
    return Method(name, label, PERTURBER, factory, help, model=f"tracs.perturbers.{model}", options=options,
                  sidecar=sidecar, estimator=estimator, family=family, keyed=True, lattice=lattice,
                  pointwise=pointwise,
                  warm=warm_trajectories(lambda ctx, budget: factory(ctx, budget, **options)))


PERTURBERS = [
    _perturber("tracs-d", "TraCS-D", _tracs_d, "direction + distance (TraCS-D)", "tracsd.TraCSD",
               "directional", ("direction_share", "anchor"), family="tracs-d", lattice=POLAR),
    _perturber("tracs-c", "TraCS-C", _tracs_c, "coordinates (TraCS-C)", "tracsc.TraCSC", "axes",
               ("x_share",), family="tracs-c", lattice=GRID),
    _perturber("strawman", "Strawman", _strawman, "6-sector k-RR direction + TraCS-D distance",
               "strawman.Strawman", "directional", ("direction_share", "sectors", "anchor"), family="tracs-d",
               lattice=POLAR),
    _perturber("planar-laplace", "planar Laplace", _planar_laplace, "planar Laplace with ε/diameter, clipped",
               "planar_laplace.PlanarLaplace", "grid", family="planar-laplace", lattice=GRID,
               pointwise=False),  # its kernel's per-point streams take no stream position of one point
    # the authors' code: ε-LDP like tracs-d, its distance estimate biased (docs/results.md); the
    # "directional" likelihood follows its distance input (tracs.estimate._runs: A and L scaled regions)
    _perturber("tracs-d-paper", "TraCS-D (paper)", _tracs_d,
               "TraCS-D with the distance normalised along the true direction (the authors' code; "
               "a reproduction variant)", "tracsd.TraCSD", "directional",
               ("direction_share", "anchor", "distance_along"),
               family="tracs-d", lattice=POLAR, distance_along="true"),
]


# ----------------------------------------------------------------------------- POI baselines

def _baseline(class_name):
    def build(ctx, budget, **options):
        from .. import baselines

        return getattr(baselines, class_name)(ctx.poi_space, **budget, **options)

    return build


def _poi_baseline(name, label, class_name, module, help, *, ldp=True, warm_epsilon=2.0, sidecar=(),
                  estimator="frequencies", **options):
    factory = _baseline(class_name)
    return Method(name, label, BASELINE, factory, help, ldp=ldp, model=f"tracs.baselines.{module}.{class_name}",
                  options=options, sidecar=sidecar, estimator=estimator,
                  family=None if warm_epsilon is None else "baselines",
                  warm=None if warm_epsilon is None else
                  warm_trajectories(lambda ctx, budget: factory(ctx, budget, **options), warm_epsilon))


# estimator "frequencies": tracs.estimate.frequencies fits the exact channel of EM, N-gram and L-SRR
# (fixed groups); it has no likelihood for ATP and TP (sector reports), nor for the thresholds variant of
# L-SRR, which is not ε-LDP
BASELINES = [
    _poi_baseline("em", "EM", "ExponentialMechanism", "exponential", "exponential mechanism over the POIs"),
    _poi_baseline("ngram", "NGram", "NGram", "ngram", "NGram, per-location form"),
    _poi_baseline("lsrr", "L-SRR", "LSRR", "lsrr", "staircase randomized response"),
    _poi_baseline("lsrr-thresholds", "L-SRR (paper's thresholds, not LDP)", "LSRR", "lsrr",
                  "L-SRR with the paper's distance-threshold groups (0.3, 0.6 of the unit-square "
                  "normalised box); NOT ε-LDP, for reproducing the paper only", ldp=False,
                  warm_epsilon=None, estimator=None, grouping="thresholds"),
    _poi_baseline("atp", "ATP", "ATP", "tp", "ATP (anchor + direction perturbation)", warm_epsilon=4.0,
                  sidecar=("sectors",), estimator=None),
    _poi_baseline("tp", "TP", "TP", "tp", "TP (direction perturbation, no anchor)", warm_epsilon=4.0,
                  sidecar=("sectors",), estimator=None),
]

for _method in (*MECHANISMS, *PERTURBERS, *BASELINES):
    register(_method)
