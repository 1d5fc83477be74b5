"""Experiment grids: methods × ε × repetitions on a data set, with honest error bars.

The pieces:

* :data:`METHODS` — the registry of perturbation methods by command-line name
  (``tracs-d``, ``tracs-c``, ``strawman``, ``planar-laplace``, ``em``, ``ngram``,
  ``lsrr``, ``lsrr-thresholds``, ``atp``, ``tp``), each a factory
  ``(context, ε) -> perturber``.  ``lsrr-thresholds`` is the L-SRR grouping of the
  paper's experiments, which is not ε-LDP (see :class:`tracs.baselines.LSRR`).
* :class:`Dataset` — trajectories (flat ``(N, 2)`` coordinates + offsets), the public
  region, the points of interest when the space is discrete, the data's units and
  the map to the paper's normalised units.  :func:`load_dataset` builds one from a
  name (``unit-square``, ``2x10``, ``synthetic``, ``tky``, ``nyc``, ``chi``) or a path.
* :func:`run_grid` — the tidy results table, one row per (repetition, method, ε).
* :func:`summarise` — one row per (method, ε): mean AE with a confidence interval.
* :func:`direction_study` and :func:`time_methods` — the paper's direction-only study
  and its time table.

Seeds
-----
Every cell of the grid draws from its own stream,
``SeedSequence(seed, spawn_key=(tag(method), tag(ε), repetition))``, and the data of a
repetition (random trajectories on a continuous region) from
``SeedSequence(seed, spawn_key=(tag("data"), repetition))``.  Results therefore do not
depend on the order of the grid, on which other methods or ε are in it, nor on how
it is split across processes; all methods of one repetition see the same data
(paired comparisons).  Only the timing columns vary between two runs.
"""

from __future__ import annotations

import math
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ._validation import check_epsilon

__all__ = [
    "METHODS",
    "MethodSpec",
    "EXTRA_METRICS",
    "MetricSpec",
    "RANGE_DELTA",
    "HOTSPOT_SHARE",
    "parse_metrics",
    "MethodContext",
    "Dataset",
    "DATA_FILES",
    "REGIONS",
    "continuous_dataset",
    "checkin_dataset",
    "load_dataset",
    "degree_scale",
    "parse_methods",
    "parse_epsilons",
    "cell_seed",
    "run_grid",
    "summarise",
    "summary_records",
    "confidence_interval",
    "markdown_table",
    "format_number",
    "direction_study",
    "time_methods",
]

# ----------------------------------------------------------------------------- methods


@dataclass
class MethodContext:
    """What a method factory may use: the public region, the POIs, options.

    ``poi_space`` is built once (KD-tree) on first use and shared by every cell.
    """

    region: object
    pois: np.ndarray | None = None
    anchor: object = "center"
    _poi_space: object = field(default=None, repr=False)

    @property
    def poi_space(self):
        if self.pois is None:
            raise ValueError("this data set has no points of interest (a continuous region); "
                             "discrete methods and --round-to-pois need check-in data")
        if self._poi_space is None:
            from .discrete import POISpace

            self._poi_space = POISpace(self.pois, region=self.region)
        return self._poi_space


@dataclass(frozen=True)
class MethodSpec:
    """A perturbation method: command-line ``name``, the paper's ``label``, its factory.

    ``discrete`` methods pick outputs among the points of interest; the others
    release points of the continuous region (and may be rounded to POIs afterwards,
    which is post-processing and keeps the guarantee).  ``ldp`` is false for a
    method kept only to reproduce a published experiment that is not ε-LDP as run
    there (``lsrr-thresholds``): it may be evaluated, never used to release data.
    """

    name: str
    label: str
    discrete: bool
    build: Callable[[MethodContext, float], object]
    help: str = ""
    ldp: bool = True


def _tracs_d(ctx, eps):
    from .perturbers import TraCSD

    return TraCSD(ctx.region, eps, anchor=ctx.anchor)


def _tracs_c(ctx, eps):
    from .perturbers import TraCSC

    return TraCSC(ctx.region, eps)


def _strawman(ctx, eps):
    from .perturbers import Strawman

    return Strawman(ctx.region, eps, sectors=6)


def _planar_laplace(ctx, eps):
    from .perturbers import PlanarLaplace

    return PlanarLaplace(ctx.region, eps)


def _baseline(class_name, **options):
    def build(ctx, eps):
        from . import baselines

        return getattr(baselines, class_name)(ctx.poi_space, eps, **options)

    return build


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in [
        MethodSpec("tracs-d", "TraCS-D", False, _tracs_d, "direction + distance (TraCS-D)"),
        MethodSpec("tracs-c", "TraCS-C", False, _tracs_c, "coordinates (TraCS-C)"),
        MethodSpec("strawman", "Strawman", False, _strawman, "6-sector k-RR direction + TraCS-D distance"),
        MethodSpec("planar-laplace", "T-Laplace", False, _planar_laplace, "planar Laplace with ε/diameter, clipped"),
        MethodSpec("em", "EM", True, _baseline("ExponentialMechanism"), "exponential mechanism over the POIs"),
        MethodSpec("ngram", "NGram", True, _baseline("NGram"), "NGram, per-location form"),
        MethodSpec("lsrr", "L-SRR", True, _baseline("LSRR"), "staircase randomized response"),
        MethodSpec("lsrr-thresholds", "L-SRR (paper's thresholds, not LDP)", True,
                   _baseline("LSRR", grouping="thresholds"),
                   "L-SRR with the paper's distance-threshold groups (0.3, 0.6 of the unit-square "
                   "normalised box); NOT ε-LDP, for reproducing the paper only", ldp=False),
        MethodSpec("atp", "ATP", True, _baseline("ATP"), "ATP (anchor + direction perturbation)"),
        MethodSpec("tp", "TP", True, _baseline("TP"), "TP (direction perturbation, no anchor)"),
    ]
}


def parse_methods(methods) -> list[str]:
    """Validate method names (a comma-separated string or a sequence); keep their order."""
    names = _parse_names(methods, METHODS, "method")
    if not names:
        raise ValueError("no method given")
    return names


def _parse_names(values, registry, what: str) -> list[str]:
    """Names from a comma-separated string or a sequence, each a key of ``registry``, no repeats."""
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",") if v.strip()]
    names = [str(v).strip().lower() for v in values]
    unknown = [v for v in names if v not in registry]
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r}; choose from {', '.join(registry)}")
    if len(set(names)) != len(names):
        raise ValueError(f"a {what} is listed twice")
    return names


def parse_epsilons(epsilons) -> list[float]:
    """Validate privacy parameters (a comma-separated string or a sequence), each > 0."""
    if isinstance(epsilons, str):
        parts = [e.strip() for e in epsilons.split(",") if e.strip()]
        values = []
        for part in parts:
            try:
                values.append(float(part))
            except ValueError:
                raise ValueError(f"epsilon must be a number, got {part!r}") from None
        epsilons = values
    values = [check_epsilon(e) for e in epsilons]
    if not values:
        raise ValueError("no epsilon given")
    if len(set(values)) != len(values):
        raise ValueError("an epsilon is listed twice")
    return values


# ----------------------------------------------------------------------------- data sets

#: file names of the real check-in samples, looked up in ``TRACS_DATA_DIR``
DATA_FILES = {
    "tky": "foursquare_tky_101users.csv",
    "nyc": "foursquare_nyc_subset.csv",
    "chi": "gowalla_chi_subset.csv",
}
#: the paper's continuous regions, ``(xmin, ymin, xmax, ymax)``
REGIONS = {"unit-square": (0.0, 0.0, 1.0, 1.0), "2x10": (0.0, 0.0, 2.0, 10.0)}


@dataclass(frozen=True)
class Dataset:
    """Trajectories to perturb, with everything public about their space.

    Attributes
    ----------
    name : str
    region : tracs.Rectangle
        The public region every method perturbs over.
    offsets : ndarray, shape (T + 1,)
        Trajectory ``t`` is ``coords[offsets[t]:offsets[t + 1]]``.
    coords : ndarray, shape (N, 2), or None
        Fixed data (check-ins, in metres).  ``None`` when every repetition draws
        fresh trajectories with ``sampler``.
    units : str
        Units of the coordinates and of the AE column (``"m"`` for real data).
    pois : ndarray, shape (m, 2), or None
        Points of interest (the discrete location space), when there is one.
    sampler : callable ``Generator -> (N, 2)``, optional
        Draws the trajectories of one repetition.
    normalise : bool
        If true, the paper's units are the coordinates min-max normalised to the unit
        square by the region's bounds (the paper's convention for check-in data); if
        false the data's own units already are the paper's (continuous regions).
    trajectories : tracs.Trajectories, optional
        The source rows (ids, times), for writing results back to files.
    degree_scale : (float, float), optional
        Data units per degree of longitude and of latitude, to measure distances in
        degrees as the paper does (its range query uses δ = 0.1 degree).  For
        projected check-in data: the metres per degree at the latitude of the centre
        of the data's bounding box (:func:`tracs.query_metrics.metres_per_degree`);
        ``(1, 1)`` when the coordinates already are degrees; ``None`` on a continuous
        region (distances stay in region units).
    keys : ndarray, optional
        The user id of each trajectory: each user draws from the random stream of
        ``(cell seed, user id)``, so a user's release does not depend on the others.
        ``None``: the trajectory's position.
    """

    name: str
    region: object
    offsets: np.ndarray
    coords: np.ndarray | None = None
    units: str = "m"
    pois: np.ndarray | None = None
    sampler: Callable[[np.random.Generator], np.ndarray] | None = None
    normalise: bool = True
    trajectories: object = None
    degree_scale: tuple[float, float] | None = None
    keys: np.ndarray | None = None

    @property
    def n_points(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_trajectories(self) -> int:
        return len(self.offsets) - 1

    def draw(self, rng) -> np.ndarray:
        """The coordinates of one repetition (fixed data, or fresh random trajectories)."""
        if self.sampler is None:
            return self.coords
        return self.sampler(np.random.default_rng(rng))

    @property
    def paper_scale(self):
        """``normalize_by`` for :mod:`tracs.metrics`: the region when the paper's units are
        the min-max normalised ones, else ``None`` (the data's own units)."""
        return self.region if self.normalise else None


def _check_count(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def continuous_dataset(name: str = "unit-square", *, trajectories: int = 100, points: int = 100) -> Dataset:
    """The paper's continuous setting: random trajectories of uniform points.

    ``name`` is ``"unit-square"`` (``[0, 1)²``) or ``"2x10"`` (``[0, 2) × [0, 10)``);
    each repetition draws ``trajectories`` trajectories of ``points`` independent
    uniform points (the paper's setting uses 100 points per trajectory).
    """
    from .region import Rectangle

    if name not in REGIONS:
        raise ValueError(f"unknown continuous region {name!r}; choose from {', '.join(REGIONS)}")
    trajectories = _check_count(trajectories, "trajectories")
    points = _check_count(points, "points")
    xmin, ymin, xmax, ymax = REGIONS[name]
    region = Rectangle(xmin, ymin, xmax, ymax)
    n = trajectories * points
    low, high = np.array([xmin, ymin]), np.array([xmax, ymax])

    def sampler(rng):
        # uniform on [low, high): the half-open region of the paper
        return low + rng.random((n, 2)) * (high - low)

    offsets = np.arange(0, n + 1, points, dtype=np.int64)
    return Dataset(name=name, region=region, offsets=offsets, units="region units",
                   sampler=sampler, normalise=False)


def checkin_dataset(trajectories, *, name: str = "check-ins", max_trajectories: int | None = None,
                    region=None) -> Dataset:
    """A :class:`Dataset` from a :class:`tracs.Trajectories` (projected to metres).

    The region is ``region`` when given — a public region fixed in advance, such as
    the box of a shipped city (:data:`tracs.public.CITY_BOXES`); otherwise the
    bounding rectangle of the data (``trajectories.region()``), which depends on every
    user's points and is therefore **not** private: acceptable for measuring utility
    on a data set whose extent is published, never for releasing data.  The discrete
    location space is the data's distinct points of interest (the paper's setting,
    again a measurement convention, not a private release).  ``max_trajectories``
    perturbs the first trajectories only (for quick runs); the region and the POIs
    stay those of the whole data set.
    """
    # the location space and the region are those of the whole data set, even when only
    # the first trajectories are perturbed
    if len(trajectories.coords) == 0:
        raise ValueError(f"{name}: no points left to perturb")
    pois = np.asarray(trajectories.pois().coords, dtype=np.float64)
    region = trajectories.region() if region is None else region
    scale = None if trajectories.crs is None else degree_scale(trajectories)
    if max_trajectories is not None:
        max_trajectories = _check_count(max_trajectories, "max_trajectories")
        if max_trajectories < len(trajectories):
            trajectories = trajectories.select(np.arange(max_trajectories))
    coords = np.asarray(trajectories.coords, dtype=np.float64)
    offsets = np.asarray(trajectories.offsets, dtype=np.int64)
    keys = None
    if "uid" in trajectories.frame.columns and len(offsets) > 1:
        keys = np.asarray([str(k) for k in trajectories.frame["uid"].to_numpy()[offsets[:-1]]], dtype=object)
    return Dataset(name=name, region=region, offsets=offsets, coords=coords, units="m",
                   pois=pois, normalise=True, trajectories=trajectories, degree_scale=scale, keys=keys)


def degree_scale(trajectories) -> tuple[float, float]:
    """Data units per degree (east, north) of a :class:`tracs.Trajectories`, for distances in degrees.

    Projected coordinates (metres): :func:`tracs.query_metrics.metres_per_degree` at
    the latitude of the centre of the data's WGS84 bounding box (a local, per-axis
    conversion: accurate to a fraction of a percent over a city-sized area).
    Geographic coordinates: ``(1, 1)``.  Raises ``ValueError`` when the CRS is unknown.
    """
    import pyproj

    from .query_metrics import metres_per_degree

    if trajectories.crs is None:
        raise ValueError("the trajectories have no CRS: cannot measure distances in degrees")
    crs = pyproj.CRS.from_user_input(trajectories.crs)
    if crs.is_geographic:
        return 1.0, 1.0
    coords = np.asarray(trajectories.coords, dtype=np.float64)
    to_wgs84 = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    _, lat = to_wgs84.transform(coords[:, 0], coords[:, 1])
    return metres_per_degree((np.min(lat) + np.max(lat)) / 2.0)


def data_path(name: str) -> Path:
    """Path of a named real data file (``tky``, ``nyc``, ``chi``) in ``TRACS_DATA_DIR``."""
    root = os.environ.get("TRACS_DATA_DIR")
    if not root:
        raise FileNotFoundError(f"data set {name!r} needs TRACS_DATA_DIR (the folder holding "
                                f"{DATA_FILES[name]}); or pass the file's path")
    path = Path(root) / DATA_FILES[name]
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (TRACS_DATA_DIR={root})")
    return path


def read_checkins(source, *, name: str | None = None, fmt: str = "auto"):
    """Read check-ins with the matching loader.

    ``name`` among :data:`DATA_FILES` reads that sample from ``TRACS_DATA_DIR``.
    Otherwise ``source`` is a path read as ``fmt``: ``"checkins"`` (any table with
    ``uid``, ``datetime``, ``lat``, ``lng`` columns, GeoJSON or GeoParquet —
    ``data_loaders.load_checkins``), ``"foursquare"``, ``"gowalla"``, or ``"auto"``:
    the first of these three that reads the file.
    """
    import data_loaders

    loaders = {"checkins": data_loaders.load_checkins, "foursquare": data_loaders.load_foursquare,
               "gowalla": data_loaders.load_gowalla}
    if name in DATA_FILES:
        return (data_loaders.load_gowalla if name == "chi" else data_loaders.load_foursquare)(data_path(name))
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if fmt != "auto":
        if fmt not in loaders:
            raise ValueError(f"unknown input format {fmt!r}; choose from auto, {', '.join(loaders)}")
        return loaders[fmt](path)
    errors = []
    for loader in loaders.values():
        try:
            return loader(path)
        except ValueError as exc:  # not this format (or no usable row): try the next one
            errors.append(exc)
    raise ValueError(f"cannot read {path.name} as check-ins: {errors[0]}")


def load_dataset(name: str, *, trajectories: int = 100, points: int = 100, seed: int = 0,
                 max_trajectories: int | None = None, split_gap=None, min_points: int = 1,
                 synthetic_users: int = 50, fmt: str = "auto") -> Dataset:
    """Build a :class:`Dataset` from a name or a path.

    Parameters
    ----------
    name : str
        ``unit-square`` or ``2x10`` (random uniform trajectories, see
        :func:`continuous_dataset`); ``synthetic`` (a synthetic city of
        ``synthetic_users`` users, ``data_loaders.synthetic_checkins``); ``tky``,
        ``nyc``, ``chi`` (the check-in samples in ``TRACS_DATA_DIR``); or the path of
        a check-in file in any format the loaders read.
    trajectories, points : int
        Size of the random trajectories on a continuous region.
    seed : int
        Seed of the synthetic city.
    max_trajectories : int, optional
        Keep only the first trajectories of check-in data.
    split_gap, min_points
        Passed to ``data_loaders.to_trajectories`` (by default one trajectory per user).
    fmt : str
        Format of a file given by path (see :func:`read_checkins`).
    """
    if name in REGIONS:
        return continuous_dataset(name, trajectories=trajectories, points=points)
    import data_loaders

    if name == "synthetic":
        checkins = data_loaders.synthetic_checkins(users=synthetic_users, seed=seed)
    else:
        checkins = read_checkins(name, name=name, fmt=fmt)
    if len(checkins) == 0:
        raise ValueError(f"{name}: the file holds no check-ins")
    # the shipped cities are perturbed over their fixed public boxes (tracs.public.CITY_BOXES),
    # projected to the UTM zone of the box's centre; other files over their own bounding box
    # (published extent of a research data set: a measurement convention, not a private release)
    from .public import CITY_BOXES

    box = CITY_BOXES.get(name) if name in DATA_FILES else None
    crs = "utm" if box is None else box.metric_crs()
    trajs = data_loaders.to_trajectories(checkins, split_gap=split_gap, min_points=min_points, crs=crs)
    label = name if (name in DATA_FILES or name == "synthetic") else Path(name).stem
    return checkin_dataset(trajs, name=label, max_trajectories=max_trajectories,
                           region=None if box is None else box.to_region(trajs.crs))


# ----------------------------------------------------------------------------- seeds


def _tag(value) -> int:
    """A stable 32-bit tag of a name or number (independent of PYTHONHASHSEED)."""
    return zlib.crc32(str(value).encode("utf-8"))


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return int(seed)


def cell_seed(seed: int, method: str, epsilon: float, repetition: int) -> np.random.SeedSequence:
    """The random stream of one grid cell; depends only on its own coordinates."""
    return np.random.SeedSequence(_check_seed(seed),
                                  spawn_key=(_tag(method), _tag(repr(float(epsilon))), int(repetition)))


def _stream(seed: int, purpose: str, repetition: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(_check_seed(seed), spawn_key=(_tag(purpose), int(repetition)))


# ----------------------------------------------------------------------------- grid

#: the range ``δ`` of the ``range_preservation`` metric: the paper's 0.1 degree on
#: check-in data (measured in degrees, see :attr:`Dataset.degree_scale`), 0.1 region
#: units on a continuous region
RANGE_DELTA = 0.1
#: share of the distinct true locations taken as hotspots by ``hotspot_count_error``
HOTSPOT_SHARE = 0.2


def _range_query(true, pert, offsets, dataset, rng):
    from .query_metrics import range_query_error

    return range_query_error(true, pert, dataset.region.bounds, rng=rng)


def _hotspot_precision(true, pert, offsets, dataset, rng):
    from .query_metrics import hotspot_precision

    return hotspot_precision(true, pert, dataset.region.bounds)


def _hotspot_ndcg(true, pert, offsets, dataset, rng):
    from .query_metrics import hotspot_ndcg

    return hotspot_ndcg(true, pert, dataset.region.bounds)


def _range_preservation(true, pert, offsets, dataset, rng):
    from .query_metrics import range_preservation

    if dataset.degree_scale is None and dataset.normalise:
        raise ValueError(f"range_preservation measures δ = {RANGE_DELTA} degree, but data set "
                         f"{dataset.name!r} has no CRS to convert its units to degrees")
    return range_preservation(true, pert, offsets, radius=RANGE_DELTA, scale=dataset.degree_scale)


def _hotspot_count_error(true, pert, offsets, dataset, rng):
    from .query_metrics import hotspot_count_error

    return hotspot_count_error(true, pert, offsets, share=HOTSPOT_SHARE)


@dataclass(frozen=True)
class MetricSpec:
    """An extra per-run metric of :func:`run_grid`.

    ``function(true, perturbed, offsets, dataset, rng) -> float`` scores one run:
    the true and released coordinates ``(N, 2)``, the trajectory boundaries
    ``offsets (T + 1,)``, the :class:`Dataset` (its public region, POIs and units) and
    a generator that is the same for every method of a repetition (the random range
    queries).  ``needs_pois``: the metric matches locations exactly and is only
    meaningful on a discrete location space (check-in data).
    """

    name: str
    function: Callable[..., float]
    help: str
    higher_is_better: bool
    needs_pois: bool = False


#: extra per-run metrics by name (``run_grid(metrics=…)``, ``tracs evaluate --metrics``)
EXTRA_METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in [
        MetricSpec("range_query_error", _range_query,
                   "mean relative count error of 200 random rectangles (0 is perfect)", False),
        MetricSpec("hotspot_precision", _hotspot_precision,
                   "share of the 10 busiest true cells of a 20x20 grid recovered", True),
        MetricSpec("hotspot_ndcg", _hotspot_ndcg, "NDCG@10 of the busiest grid cells", True),
        MetricSpec("range_preservation", _range_preservation,
                   "the paper's range query: per trajectory, the share of points released within "
                   "0.1 degree of the true point (0.1 region units on a continuous region), "
                   "averaged over trajectories; higher is better", True),
        MetricSpec("hotspot_count_error", _hotspot_count_error,
                   "the paper's hotspot error: per trajectory, |#released - #true points on one of "
                   "the top 20 % most visited true locations|, averaged; lower is better", False,
                   needs_pois=True),
    ]
}


def parse_metrics(metrics) -> list[str]:
    """Validate extra metric names (a comma-separated string or a sequence, maybe empty); keep their order."""
    return _parse_names(metrics, EXTRA_METRICS, "metric")


def _errors(true, pert, offsets, normalize_by=None) -> np.ndarray:
    from .metrics import trajectory_errors

    return np.asarray(trajectory_errors(true, pert, offsets, normalize_by=normalize_by), dtype=np.float64)


def _run_method(perturber, coords, offsets, ctx, rounding, rng, keys=None):
    out = perturber.perturb_many(coords, offsets, rng=rng, **({} if keys is None else {"keys": keys}))
    if rounding:
        out = ctx.poi_space.round(out)[0]
    return np.asarray(out, dtype=np.float64)


def _warm_up(spec, ctx, coords, offsets, rounding) -> None:
    """Run a method once on one short trajectory so compile time is not timed."""
    length = int(min(offsets[1] - offsets[0], 3))
    _run_method(spec.build(ctx, 1.0), coords[:length], np.array([0, length]), ctx, rounding, 0)


def run_grid(dataset: Dataset, methods, epsilons, *, repetitions: int = 1, seed: int = 0,
             anchor="center", round_to_pois: bool | None = None, metrics: Sequence[str] = (),
             progress: bool = False) -> pd.DataFrame:
    """Run every (method, ε, repetition) cell and return the tidy results.

    Parameters
    ----------
    dataset : Dataset
    methods : str or sequence of str
        Names from :data:`METHODS`.
    epsilons : str or sequence of float
        Privacy parameters **per point**, each > 0.
    repetitions : int
        Independent runs per (method, ε); fresh random trajectories each time on a
        continuous region, fresh perturbation noise always.
    seed : int
        Root seed (see the module notes: cells are independent of grid order).
    anchor : "center", "corner" or (x, y)
        TraCS-D's public first reference (the paper's code uses the corner).
    round_to_pois : bool, optional
        Round the outputs of continuous methods to the nearest POI (post-processing).
        Default: whenever the data set has POIs.
    metrics : str or sequence of str
        Extra columns among :data:`EXTRA_METRICS` (comma-separated or a sequence):
        ``range_query_error``, ``hotspot_precision``, ``hotspot_ndcg`` (grid and
        rectangle forms, scored on the same random queries for every method) and the
        paper's appendix metrics ``range_preservation`` (per trajectory, the share of
        points released within :data:`RANGE_DELTA` = 0.1 of the true point, averaged
        over trajectories; on check-in data δ is 0.1 **degree**, measured by
        converting the metres along each axis with :attr:`Dataset.degree_scale`, on a
        continuous region 0.1 region units) and ``hotspot_count_error`` (hotspots:
        the top :data:`HOTSPOT_SHARE` = 20 % most visited distinct true locations of
        the repetition; per trajectory ``|#released − #true points on a hotspot|``,
        averaged; needs points of interest).  Each receives the trajectory offsets,
        so per-trajectory metrics average over trajectories, not points.
    progress : bool
        Show a progress bar on standard error.

    Returns
    -------
    pandas.DataFrame
        One row per cell, sorted by (method in the given order, ε, repetition), with
        columns ``dataset, method, label, epsilon, repetition, ae, ae_normalised,
        ae_traj_sd, units, n_points, n_trajectories, seconds, seconds_per_point`` and
        the extra metrics.  ``ae`` is the mean over trajectories of each
        trajectory's mean point error, in the data's units; ``ae_normalised`` the
        same in the paper's units.  ``seconds`` covers building the perturber,
        perturbing every trajectory and rounding.
    """
    from tqdm.auto import tqdm

    names = parse_methods(methods)
    eps_values = parse_epsilons(epsilons)
    repetitions = _check_count(repetitions, "repetitions")
    seed = _check_seed(seed)
    metrics = parse_metrics(metrics)
    has_pois = dataset.pois is not None
    needs = [m for m in metrics if EXTRA_METRICS[m].needs_pois]
    if needs and not has_pois:
        raise ValueError(f"metric {needs[0]!r} matches released points to locations exactly and needs "
                         f"points of interest, but data set {dataset.name!r} is a continuous region")
    if round_to_pois is None:
        round_to_pois = has_pois
    if (round_to_pois or any(METHODS[m].discrete for m in names)) and not has_pois:
        needs = [m for m in names if METHODS[m].discrete]
        what = f"method {needs[0]!r}" if needs else "rounding to POIs"
        raise ValueError(f"{what} needs points of interest, but data set {dataset.name!r} is a "
                         "continuous region; use check-in data (tky, chi, synthetic or a file)")
    ctx = MethodContext(region=dataset.region, pois=dataset.pois, anchor=anchor)
    offsets = np.asarray(dataset.offsets, dtype=np.int64)
    n_points, n_traj = int(offsets[-1]), len(offsets) - 1

    rows = []
    total = len(names) * len(eps_values) * repetitions
    with tqdm(total=total, desc=f"{dataset.name}", unit="run", disable=not progress,
              leave=False, dynamic_ncols=True) as bar:
        warmed = set()
        for rep in range(repetitions):
            coords = dataset.draw(_stream(seed, "data", rep))
            for name in names:
                spec = METHODS[name]
                rounding = bool(round_to_pois) and not spec.discrete
                if name not in warmed:
                    _warm_up(spec, ctx, coords, offsets, rounding)
                    warmed.add(name)
                for eps in eps_values:
                    bar.set_postfix_str(f"{name} ε={eps:g} rep={rep}", refresh=False)
                    rng = np.random.default_rng(cell_seed(seed, name, eps, rep))
                    start = time.perf_counter()
                    perturber = spec.build(ctx, eps)
                    out = _run_method(perturber, coords, offsets, ctx, rounding, rng, dataset.keys)
                    seconds = time.perf_counter() - start
                    errors = _errors(coords, out, offsets)
                    errors_paper = (_errors(coords, out, offsets, dataset.paper_scale)
                                    if dataset.normalise else errors)
                    row = {
                        "dataset": dataset.name, "method": name, "label": spec.label,
                        "epsilon": eps, "repetition": rep,
                        "ae": float(errors.mean()), "ae_normalised": float(errors_paper.mean()),
                        "ae_traj_sd": float(errors.std(ddof=1)) if n_traj > 1 else 0.0,
                        "units": dataset.units, "rounded": rounding,
                        "n_points": n_points, "n_trajectories": n_traj,
                        "seconds": seconds, "seconds_per_point": seconds / n_points,
                    }
                    for metric in metrics:
                        query_rng = np.random.default_rng(_stream(seed, "queries", rep))
                        row[metric] = EXTRA_METRICS[metric].function(coords, out, offsets, dataset, query_rng)
                    rows.append(row)
                    bar.update(1)
    table = pd.DataFrame(rows)
    order = {name: i for i, name in enumerate(names)}
    table = table.sort_values(by=["method", "epsilon", "repetition"],
                              key=lambda s: s.map(order) if s.name == "method" else s, kind="stable")
    return table.reset_index(drop=True)


# ----------------------------------------------------------------------------- summaries


def confidence_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of independent values.

    With a single value (or no spread) the interval collapses to the mean.
    """
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values)))
    return mean, mean - half, mean + half


def summarise(results: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (dataset, method, ε): mean AE and its confidence interval.

    The interval is a Student-t interval over the repetitions (which are
    independent).  With a single repetition it is taken over that run's trajectories
    instead (independent given the data), from ``ae_traj_sd`` — a narrower notion of
    uncertainty, stated in the ``ci_over`` column.
    """
    from scipy import stats

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    extra = [c for c in EXTRA_METRICS if c in results.columns]
    rows = []
    for (dataset, method, eps), group in results.groupby(["dataset", "method", "epsilon"], sort=False):
        if len(group) >= 2:
            mean, low, high = confidence_interval(group["ae"], confidence)
            over = "repetitions"
        else:
            mean = float(group["ae"].iloc[0])
            n = int(group["n_trajectories"].iloc[0])
            sd = float(group["ae_traj_sd"].iloc[0])
            half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)) if n > 1 else 0.0
            low, high = mean - half, mean + half
            over = "trajectories"
        row = {
            "dataset": dataset, "method": method, "label": group["label"].iloc[0], "epsilon": eps,
            "repetitions": len(group), "ae_mean": mean, "ae_ci_low": low, "ae_ci_high": high,
            "ae_mean_normalised": float(group["ae_normalised"].mean()),
            "seconds_per_point": float(group["seconds_per_point"].mean()),
            "units": group["units"].iloc[0], "ci_over": over,
        }
        for metric in extra:
            row[metric] = float(group[metric].mean())
        rows.append(row)
    return pd.DataFrame(rows)


#: keys of each object of ``tracs evaluate --format json``
JSON_KEYS = ("method", "epsilon", "ae_mean", "ae_ci_low", "ae_ci_high", "ae_mean_normalised",
             "seconds_per_point")


def summary_records(summary: pd.DataFrame) -> list[dict]:
    """The summary as plain JSON-ready dicts (keys :data:`JSON_KEYS` + extra metrics)."""
    keys = list(JSON_KEYS) + [c for c in EXTRA_METRICS if c in summary.columns]
    records = []
    for row in summary.to_dict("records"):
        record = {}
        for key in keys:
            value = row[key]
            record[key] = value if isinstance(value, str) else float(value)
        records.append(record)
    return records


def format_number(x: float, digits: int = 3) -> str:
    """``digits`` significant digits, but whole numbers with thousands separators from 10^digits up."""
    return f"{x:,.0f}" if abs(x) >= 10 ** digits else f"{x:.{digits}g}"


def markdown_table(summary: pd.DataFrame, *, value: str = "ae_mean", low: str | None = "ae_ci_low",
                   high: str | None = "ae_ci_high", digits: int = 3, label: str = "label") -> str:
    """A Markdown table: one row per ε, one column per method, ``mean ± half-width``.

    ``half-width`` is half the confidence interval (``(high − low)/2``); pass
    ``low=None`` to show the value alone.
    """
    if label not in summary.columns:
        label = "method"
    methods = list(dict.fromkeys(summary[label]))
    eps_values = sorted(set(summary["epsilon"]))
    lines = ["| ε | " + " | ".join(methods) + " |", "|---:|" + "---:|" * len(methods)]
    for eps in eps_values:
        cells = []
        for method in methods:
            row = summary[(summary[label] == method) & (summary["epsilon"] == eps)]
            if row.empty:
                cells.append("–")
                continue
            row = row.iloc[0]
            text = format_number(row[value], digits)
            if low and high:
                text += f" ± {format_number((row[high] - row[low]) / 2, max(digits - 1, 1))}"
            cells.append(text)
        lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- studies


def direction_study(epsilons, *, sectors: Sequence[int] = (3, 6, 12), samples: int = 100_000,
                    repetitions: int = 5, seed: int = 0) -> pd.DataFrame:
    """Direction-only study: the optimal circular mechanism vs k-RR over sectors.

    True directions are uniform on ``[0, 2π)``.  ``circular`` perturbs them with
    :class:`tracs.mechanisms.OptimalCircular`; ``krr-k`` reports the direction's
    sector among ``k`` equal sectors with k-RR and then a uniform angle inside the
    reported sector (the Strawman's direction step).  Errors are circular distances
    ``min(|a − b|, 2π − |a − b|)`` in radians.

    Returns
    -------
    pandas.DataFrame
        Columns ``method, epsilon, repetition, error`` (mean circular distance over
        ``samples`` directions) and ``exact`` (the closed-form expected error, for the
        circular mechanism and for k-RR sectors with uniform inputs).
    """
    from .mechanisms import KRR, Circle, OptimalCircular

    eps_values = parse_epsilons(epsilons)
    samples = _check_count(samples, "samples")
    repetitions = _check_count(repetitions, "repetitions")
    seed = _check_seed(seed)
    sectors = [_check_count(k, "sectors", 2) for k in sectors]
    period = 2 * math.pi
    circle = Circle(period)
    rows = []
    for eps in eps_values:
        circular = OptimalCircular(epsilon=eps, period=period)
        exact_circ = float(np.asarray(circular.expected_error(0.0)))
        for rep in range(repetitions):
            gen = np.random.default_rng(cell_seed(seed, "circular", eps, rep))
            phi = gen.uniform(0.0, period, samples)
            out = circular.sample(phi, rng=gen)
            rows.append({"method": "circular", "epsilon": eps, "repetition": rep,
                         "error": float(np.mean(circle.distance(phi, out))), "exact": exact_circ})
            for k in sectors:
                gen = np.random.default_rng(cell_seed(seed, f"krr-{k}", eps, rep))
                phi = gen.uniform(0.0, period, samples)
                width = period / k
                sector = np.minimum((phi // width).astype(np.int64), k - 1)
                reported = np.asarray(KRR(epsilon=eps, k=k).sample(sector, rng=gen), dtype=np.int64)
                out = (reported + gen.random(samples)) * width
                rows.append({"method": f"krr-{k}", "epsilon": eps, "repetition": rep,
                             "error": float(np.mean(circle.distance(phi, out))),
                             "exact": _krr_sector_error(eps, k)})
    return pd.DataFrame(rows)


def _krr_sector_error(epsilon: float, k: int) -> float:
    """Exact mean circular error of k-RR sectors + uniform angle, uniform true angles.

    Within the true sector both angles are uniform on an arc of width ``w = 2π/k``:
    mean distance ``w/3``.  For a sector ``j`` steps away the mean circular distance
    between two independent uniform points of the two arcs is computed by exact
    quadrature of the piecewise-linear distance (averaged over a fine midpoint grid).
    """
    period = 2 * math.pi
    w = period / k
    e = math.exp(epsilon)
    p_true = e / (e + k - 1)
    p_other = 1.0 / (e + k - 1)
    grid = (np.arange(400) + 0.5) / 400 * w  # midpoint rule: exact to ~1e-6 relative
    total = p_true * (w / 3.0)
    for j in range(1, k):
        d = np.abs(grid[:, None] - (grid[None, :] + j * w))
        d = np.minimum(d, period - d)
        total += p_other * float(d.mean())
    return total


def time_methods(dataset: Dataset, methods, epsilon: float = 4.0, *, repeat: int = 3, seed: int = 0,
                 anchor="center", round_to_pois: bool | None = None) -> pd.DataFrame:
    """Time per location of each method (the paper's Table 3), best of ``repeat`` runs.

    ``total_ms`` covers building the perturber, perturbing every trajectory and
    rounding to POIs; ``perturb_ms`` only the perturbation call (for TraCS without the
    rounding).  Both are milliseconds per location.  Timings on a shared machine are
    noisy: compare methods measured in the same run.
    """
    names = parse_methods(methods)
    epsilon = check_epsilon(epsilon)
    repeat = _check_count(repeat, "repeat")
    has_pois = dataset.pois is not None
    if round_to_pois is None:
        round_to_pois = has_pois
    ctx = MethodContext(region=dataset.region, pois=dataset.pois, anchor=anchor)
    coords = dataset.draw(_stream(_check_seed(seed), "data", 0))
    offsets = np.asarray(dataset.offsets, dtype=np.int64)
    n = int(offsets[-1])
    if round_to_pois or any(METHODS[m].discrete for m in names):
        ctx.poi_space  # noqa: B018 - build the shared KD-tree outside the timings
    rows = []
    for name in names:
        spec = METHODS[name]
        rounding = bool(round_to_pois) and not spec.discrete
        _warm_up(spec, ctx, coords, offsets, rounding)
        best_total = best_perturb = float("inf")
        for r in range(repeat):
            rng = np.random.default_rng(cell_seed(seed, name, epsilon, r))
            start = time.perf_counter()
            perturber = spec.build(ctx, epsilon)
            built = time.perf_counter()
            out = perturber.perturb_many(coords, offsets, rng=rng,
                                         **({} if dataset.keys is None else {"keys": dataset.keys}))
            perturbed = time.perf_counter()
            if rounding:
                ctx.poi_space.round(out)
            end = time.perf_counter()
            best_total = min(best_total, end - start)
            best_perturb = min(best_perturb, perturbed - built)
        rows.append({"method": name, "label": spec.label, "epsilon": epsilon, "n_points": n,
                     "total_ms": best_total / n * 1e3, "perturb_ms": best_perturb / n * 1e3})
    return pd.DataFrame(rows)
