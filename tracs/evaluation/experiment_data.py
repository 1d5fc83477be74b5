"""Data sets of an evaluation: trajectories, the public region, POIs and units."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .._text import counted
from ..io import read_checkins as read_file
from ..public import CITY_BOXES, into_region, read_pois
from ..query_metrics import metres_per_degree
from ..region import Rectangle
from ..trajectory_batch import Batch
import data_loaders
from ..errors import InputError, InputTypeError


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
    pois_label : str
        What :attr:`pois` are, for the output (``"the data's 7,798 distinct venues"``).
    round_by_default : bool
        Whether outputs of continuous methods are rounded to :attr:`pois` unless asked
        otherwise: for venues (a venue column) or a POI file, not for the points of a
        trace (every GPS point would be a "venue").
    left_out : int
        Rows read but outside the public region, left out.
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
    pois_label: str = ""
    round_by_default: bool = True
    left_out: int = 0

    @property
    def n_points(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_trajectories(self) -> int:
        return len(self.offsets) - 1

    def batch(self, coords=None) -> Batch:
        """The trajectories at ``coords`` (default: the fixed data; or one repetition's
        :meth:`draw`) as a :class:`tracs.Batch`: :attr:`offsets`, and each row keyed by its
        trajectory's :attr:`keys` (no keys when there are none)."""
        coords = self.coords if coords is None else coords
        offsets = np.asarray(self.offsets, dtype=np.int64)
        keys = None if self.keys is None else np.repeat(np.asarray(self.keys), np.diff(offsets))
        return Batch(coords, offsets, keys=keys)

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
        raise InputTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def continuous_dataset(name: str = "unit-square", *, trajectories: int = 100, points: int = 100) -> Dataset:
    """The paper's continuous setting: random trajectories of uniform points.

    ``name`` is ``"unit-square"`` (``[0, 1)²``) or ``"2x10"`` (``[0, 2) × [0, 10)``);
    each repetition draws ``trajectories`` trajectories of ``points`` independent
    uniform points (the paper's setting uses 100 points per trajectory).
    """
    if name not in REGIONS:
        raise InputError(f"unknown continuous region {name!r}; choose from {', '.join(REGIONS)}")
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
                    region=None, pois=None, pois_file: str | None = None, left_out: int = 0) -> Dataset:
    """A :class:`Dataset` from a :class:`tracs.Trajectories` or a :class:`tracs.Batch` (in metres).

    The region is ``region`` when given — a public region fixed in advance, such as
    the box of a shipped city (:data:`tracs.public.CITY_BOXES`); otherwise the
    bounding rectangle of the data (``trajectories.region()``), which depends on every
    user's points and is therefore **not** private: acceptable for measuring utility
    on a data set whose extent is published, never for releasing data.  The discrete
    location space is the data's distinct points of interest (the paper's setting,
    again a measurement convention, not a private release).  ``max_trajectories``
    perturbs the first trajectories only (for quick runs); the region and the POIs
    stay those of the whole data set.  ``pois`` (an ``(m, 2)`` array in the
    trajectories' CRS, e.g. a public POI file named ``pois_file``) replaces the data's
    venues.  Data without a venue column (GPS traces) are not rounded by default
    (:attr:`Dataset.round_by_default`): their "venues" would be every point.  A batch is
    read as the trajectories of its GeoDataFrame view (its keys as ``uid``).
    """
    if isinstance(trajectories, Batch):
        from ..trajectories import Trajectories  # geopandas: only for a batch

        trajectories = Trajectories(trajectories.to_geodataframe(), trajectories.offsets,
                                    report=trajectories.attrs.get("report"))
    # the location space and the region are those of the whole data set, even when only
    # the first trajectories are perturbed
    if len(trajectories.coords) == 0:
        raise InputError(f"{name}: no points left to perturb")
    venues = "poi_id" in trajectories.frame.columns
    given = pois is not None
    pois = np.asarray(trajectories.pois().coords if pois is None else pois, dtype=np.float64)
    if given:
        label = f"the {counted(len(pois), 'POI')} of {pois_file or 'the POI file'}"
    else:
        label = f"the data's {counted(len(pois), 'distinct venue' if venues else 'distinct point')}"
    region = trajectories.region() if region is None else region
    scale = None if trajectories.crs is None else degree_scale(trajectories)
    if max_trajectories is not None:
        max_trajectories = _check_count(max_trajectories, "max_trajectories")
        if max_trajectories < len(trajectories):
            trajectories = trajectories.select(np.arange(max_trajectories))
    coords = np.asarray(trajectories.coords, dtype=np.float64)
    coords = into_region(coords, region)[0]
    pois = into_region(pois, region)[0]  # and the POIs, as the points
    offsets = np.asarray(trajectories.offsets, dtype=np.int64)
    keys = None
    if "uid" in trajectories.frame.columns and len(offsets) > 1:
        keys = np.asarray([str(k) for k in trajectories.frame["uid"].to_numpy()[offsets[:-1]]], dtype=object)
    return Dataset(name=name, region=region, offsets=offsets, coords=coords, units="m",
                   pois=pois, normalise=True, trajectories=trajectories, degree_scale=scale, keys=keys,
                   pois_label=label, round_by_default=given or venues, left_out=left_out)


def degree_scale(trajectories) -> tuple[float, float]:
    """Data units per degree (east, north) of a :class:`tracs.Trajectories`, for distances in degrees.

    Projected coordinates (metres): :func:`tracs.query_metrics.metres_per_degree` at
    the latitude of the centre of the data's WGS84 bounding box (a local, per-axis
    conversion: accurate to a fraction of a percent over a city-sized area).
    Geographic coordinates: ``(1, 1)``.  Raises ``ValueError`` when the CRS is unknown.
    """
    import pyproj

    if trajectories.crs is None:
        raise InputError("the trajectories have no CRS: cannot measure distances in degrees")
    crs = pyproj.CRS.from_user_input(trajectories.crs)
    if crs.is_geographic:
        return 1.0, 1.0
    coords = np.asarray(trajectories.coords, dtype=np.float64)
    to_wgs84 = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    _, lat = to_wgs84.transform(coords[:, 0], coords[:, 1])
    return metres_per_degree((np.min(lat) + np.max(lat)) / 2.0)


def data_path(name: str) -> Path:
    """Path of a named real data file (``tky``, ``nyc``, ``chi``): ``TRACS_DATA_DIR``, then the
    checkout's ``shared/datasets``, then the user cache folder (``data_loaders.data_dirs``)."""
    from data_loaders.datasets import dataset_path

    return dataset_path(name)


def read_checkins(source, *, name: str | None = None, fmt: str = "auto", **options):
    """Read check-ins with the matching loader.

    ``name`` among :data:`DATA_FILES` reads that sample from ``TRACS_DATA_DIR``.
    Otherwise ``source`` is a path read by :func:`tracs.io.read_checkins` as ``fmt``
    (``"auto"``, ``"checkins"``, ``"foursquare"`` or ``"gowalla"``; any supported
    file format) with ``options`` (column names, ``time_format``, ``dayfirst``, ...).
    """
    if name in DATA_FILES:
        return (data_loaders.load_gowalla if name == "chi" else data_loaders.load_foursquare)(data_path(name))
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    return read_file(path, input_format=fmt, **options)


def load_dataset(name: str, *, trajectories: int = 100, points: int = 100, seed: int = 0,
                 max_trajectories: int | None = None, split_gap=None, min_points: int = 1,
                 synthetic_users: int = 50, fmt: str = "auto", read_options=None, box=None,
                 pois=None, on_read=None) -> Dataset:
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
    read_options : dict, optional
        Column names and time options for a file given by path (see
        :func:`tracs.io.read_checkins`); a trajectory column splits trajectories.
    box : tracs.public.LonLatBox, optional
        The public region of check-in data (default: the preset of a named data
        set, else the data's own bounding box, which is not private).
    pois : str or Path, optional
        A public POI file (:func:`tracs.public.read_pois`, inside ``box``) instead of
        the data's venues; needs ``box``.
    on_read : callable, optional
        ``on_read(checkins, box) -> checkins``, called on the check-ins read from a
        path or given a ``box`` (``box``: the region, ``None`` for the data's own bounds): the command
        line reports what the loader dropped there, and drops, clips or refuses the
        rows outside ``box``; default: keep every row read.
    """
    if name in REGIONS:
        if box is not None or pois is not None:
            raise InputError(f"{name} is a continuous region of the paper, fixed in advance: "
                             "a region box or a POI file applies to check-in data only")
        return continuous_dataset(name, trajectories=trajectories, points=points)
    if pois is not None and box is None:
        raise InputError("a POI file needs a public region box to lie in")
    if name == "synthetic":
        checkins = data_loaders.synthetic_checkins(users=synthetic_users, seed=seed)
    else:
        checkins = read_checkins(name, name=name, fmt=fmt, **(read_options or {}))
    if len(checkins) == 0:
        raise InputError(f"{name}: the file holds no check-ins")
    # the shipped cities are perturbed over their fixed public boxes (tracs.public.CITY_BOXES),
    # projected to the UTM zone of the box's centre; other files over their own bounding box
    # (published extent of a research data set: a measurement convention, not a private release)
    given = box is not None
    if box is None:
        box = CITY_BOXES.get(name) if name in DATA_FILES else None
    n_read = len(checkins)
    if on_read is not None and (given or (name not in DATA_FILES and name != "synthetic")):
        checkins = on_read(checkins, box)
    elif box is not None:  # a named sample over its preset: the rows outside the public region are left out
        inside = box.contains(checkins.geometry.x.to_numpy(), checkins.geometry.y.to_numpy())
        checkins = checkins[inside].reset_index(drop=True) if not inside.all() else checkins
    crs = "utm" if box is None else box.metric_crs()
    trajs = data_loaders.to_trajectories(checkins, split_gap=split_gap, min_points=min_points, crs=crs,
                                         by=checkins.attrs.get("trajectory_column"))
    label = name if (name in DATA_FILES or name == "synthetic") else Path(name).stem
    poi_coords = None
    if pois is not None:
        poi_coords = read_pois(pois, box, trajs.crs).points
    return checkin_dataset(trajs, name=label, max_trajectories=max_trajectories,
                           region=None if box is None else box.to_region(trajs.crs), pois=poi_coords,
                           pois_file=None if pois is None else Path(pois).name, left_out=n_read - len(checkins))


# ----------------------------------------------------------------------------- seeds
