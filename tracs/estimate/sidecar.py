"""The public parameters of a release, written next to it as JSON (the "sidecar").

A collector needs exactly what shaped the release, and nothing secret: the method,
ε (per point or per trajectory), the public region and the CRS it lives in, the
budget split, TraCS-D's anchor, the lattice where releases are lattice points,
and how rows form trajectories.  ``sources`` says where the region, the points of
interest and the anchor came from: ``"public"`` (given by the user, fixed in
advance) or ``"data"`` (computed from the check-ins, ``--region-from-data``: such a
release is not private, and every reader of it is told).  The seed is never written.  :func:`perturber_from_sidecar`
rebuilds the public perturber for :func:`tracs.estimate.grid_density`.

The sidecar of ``released.csv`` is ``released.csv.tracs.json`` (:func:`sidecar_path`: the
whole file name, so ``rel.csv`` and ``rel.parquet`` never share one); the name of older
releases, ``released.tracs.json`` (:func:`legacy_sidecar_path`), is still read.  A sidecar
written by ``tracs perturb`` also holds ``rows_sha256``, the digest of the release's rows
(:func:`tracs.io.parameters.rows_digest`), which every reader checks against the file
beside it.  Given the public POI space of a release (``tracs perturb --pois``: the discrete
baselines, ``--round-to-pois``), it also holds ``pois_sha256``, that space's digest
(:meth:`tracs.POISpace.digest`), and ``pois_count``, its number of distinct POIs, so that a
command given the POI file again checks that it is the release's.  These records
(:data:`RECORDS`) are the sidecar's own: a release does not embed them.  It is written to
a temporary name and renamed, so it is never half written.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import InputError, InputTypeError
from ..methods import BASELINE, PERTURBER, MethodContext, get
from ..region import ConvexRegion, Rectangle
from .estimators import FREQUENCIES, get_estimator

__all__ = ["sidecar_path", "legacy_sidecar_path", "sidecar_data", "write_sidecar", "write_sidecar_data",
           "read_sidecar", "parse_parameters", "perturber_from_sidecar", "data_derived"]

#: the parameters whose source a sidecar records, and the sources
SOURCE_FIELDS = ("region", "pois", "anchor")
SOURCES = ("public", "data")
#: what a sidecar records of the files beside the parameters (not embedded in a release)
POI_RECORDS = ("pois_sha256", "pois_count")
RECORDS = ("rows_sha256", *POI_RECORDS)

FORMAT = "tracs-release"
VERSION = 1
SUFFIX = ".tracs.json"

#: the largest region a sidecar may describe: a side (or the diameter) of at most the Earth's
#: equatorial circumference, in metres of the region's metric CRS
MAX_REGION_SIDE = 40_075_017.0
#: the most vertices of a convex region read from a sidecar (ray exits are computed per report and
#: vertex: 200,000 vertices would take 1.6 MB per report)
MAX_VERTICES = 4096


def sidecar_path(release) -> Path:
    """``released.csv`` -> ``released.csv.tracs.json`` (beside the release, after its whole name)."""
    path = Path(release)
    return path.with_name(path.name + SUFFIX)


def legacy_sidecar_path(release) -> Path:
    """The sidecar name of older releases: ``released.csv`` -> ``released.tracs.json``
    (shared by every release of one stem; read, never written)."""
    path = Path(release)
    return path.with_name(path.stem + SUFFIX)


def region_json(region) -> dict:
    if isinstance(region, Rectangle):
        return {"type": "rectangle", "bounds": [float(v) for v in region.bounds]}
    if isinstance(region, ConvexRegion):
        return {"type": "convex", "vertices": np.asarray(region.vertices, dtype=float).tolist()}
    raise InputTypeError(f"region must be a Rectangle or ConvexRegion, got {type(region).__name__}")


def _region_from(data) -> Rectangle | ConvexRegion:
    """The region of a sidecar, refused when it is not plausible (larger than the Earth, or a
    polygon of more than :data:`MAX_VERTICES` vertices)."""
    if not isinstance(data, dict) or data.get("type") not in ("rectangle", "convex"):
        raise InputError(f"sidecar region must be a rectangle or convex polygon, got {str(data)[:80]}")
    if data["type"] == "convex":
        vertices = data.get("vertices")
        count = len(vertices) if isinstance(vertices, list) else 0
        if count > MAX_VERTICES:
            raise InputError(f"the region has {count:,} vertices, more than the {MAX_VERTICES:,} a sidecar "
                             f"may hold: its ray exits alone would need {count * 8 / 1e6:,.1f} MB per report "
                             f"({count * 8 * 1000 / 1e9:,.1f} GB per 1,000 reports) on every EM pass")
    try:
        region = Rectangle(*data["bounds"]) if data["type"] == "rectangle" else ConvexRegion(data["vertices"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"the region is not valid: {' '.join(str(exc).split())[:200]}") from None
    lo, hi = np.min(region.vertices, axis=0), np.max(region.vertices, axis=0)
    side = float(np.max(hi - lo))
    if not np.isfinite(side) or side > MAX_REGION_SIDE:
        raise InputError(f"the region spans {side:,.0f} m, more than the Earth's circumference "
                         f"({MAX_REGION_SIDE:,.0f} m): not a region of this release")
    return region


def _field(perturber, name):
    """The JSON value of the public option ``name`` of ``perturber``."""
    if name == "anchor":
        anchor = perturber.anchor_point
        return [float(anchor[0]), float(anchor[1])]
    value = getattr(perturber, name)
    if isinstance(value, (str, bool)):
        return value
    return int(value) if isinstance(value, (int, np.integer)) else float(value)  # an int stays an int


def _perturber_fields(perturber, method) -> dict:
    """Public parameters of a perturber that shape its releases: the registry's sidecar fields
    of ``method`` and the lattice."""
    out = {name: _field(perturber, name) for name in method.sidecar}
    lattice = method.lattice_of(perturber)  # as the registry declares it: none for POIs
    if lattice is not None:
        out["lattice"] = json.loads(json.dumps(lattice, default=lambda v: np.asarray(v).tolist()))
    return out


def sidecar_data(*, method: str, epsilon: float, per_trajectory: bool, region, crs=None, perturber=None,
                 split_gap=None, round_to_pois: bool = False, sources=None) -> dict:
    """The public parameters of a release as the JSON object a sidecar holds (and a release
    embeds: :mod:`tracs.io.parameters`); the parameters are those of :func:`write_sidecar`."""
    sources = _check_sources(sources)
    entry = get(method)
    data = {"format": FORMAT, "version": VERSION, "method": str(method), "epsilon": float(epsilon),
            "per_trajectory": bool(per_trajectory), "region": region_json(region),
            "crs": None if crs is None else (crs if isinstance(crs, str) else crs.to_string()),
            "split_gap": split_gap, "round_to_pois": bool(round_to_pois)}
    if sources is not None:
        data["sources"] = sources
    if perturber is not None:
        data.update(_perturber_fields(perturber, entry))
    return data


def write_sidecar(release, *, method: str, epsilon: float, per_trajectory: bool, region, crs=None,
                  perturber=None, split_gap=None, round_to_pois: bool = False, sources=None,
                  digest: str | None = None, pois=None) -> Path:
    """Write the public parameters of ``release`` to :func:`sidecar_path` and return that path.

    Parameters
    ----------
    release : path-like
        The released file.
    method : str
        A registered method's name (as in ``tracs perturb --method``); its entry
        names the fields recorded (:mod:`tracs.methods`).
    epsilon : float
        The budget given (per point, or per trajectory with ``per_trajectory``).
    region : Rectangle or ConvexRegion
        The public region the points were perturbed in.
    crs : pyproj.CRS or str, optional
        CRS of the region's coordinates (the metric CRS of perturbation).
    perturber : optional
        The perturber used (its split, anchor and lattice are recorded).
    split_gap : str, optional
        How rows were grouped into trajectories (``None``: one per user).
    round_to_pois : bool
        Whether releases were rounded to points of interest.
    sources : dict, optional
        Where each of ``"region"``, ``"pois"``, ``"anchor"`` came from: ``"public"``
        or ``"data"`` (parameters not used are left out).
    digest : str, optional
        The digest of the release's rows (:func:`tracs.io.parameters.rows_digest`).
    pois : tracs.POISpace, optional
        The public POI space the release used: its digest and count are recorded
        (``pois_sha256``, ``pois_count``).
    """
    data = sidecar_data(method=method, epsilon=epsilon, per_trajectory=per_trajectory, region=region,
                        crs=crs, perturber=perturber, split_gap=split_gap, round_to_pois=round_to_pois,
                        sources=sources)
    return write_sidecar_data(release, data, digest=digest, pois=pois)


def write_sidecar_data(release, data: dict, *, digest: str | None = None, pois=None) -> Path:
    """Write ``data`` (:func:`sidecar_data`), with the rows' ``digest`` and the digest and count of
    the POI space ``pois`` (a :class:`tracs.POISpace`, optional), to :func:`sidecar_path` of
    ``release``: to a temporary name in its folder, then renamed (never half written)."""
    path = sidecar_path(release)
    if digest is not None:
        data = {**data, "rows_sha256": str(digest)}
    if pois is not None:
        data = {**data, "pois_sha256": pois.digest(), "pois_count": len(pois)}
    folder = path.parent if str(path.parent) else Path(".")
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.tracs-tmp-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2) + "\n")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(name, 0o666 & ~mask)  # as an ordinary new file (mkstemp makes it private)
        os.replace(name, path)
    except BaseException:
        if os.path.exists(name):
            os.unlink(name)
        raise
    return path


def _check_sources(sources):
    if sources is None:
        return None
    if not isinstance(sources, dict):
        raise InputTypeError(f"sources must be a dict, got {type(sources).__name__}")
    for name, source in sources.items():
        if name not in SOURCE_FIELDS:
            raise InputError(f"sources: unknown parameter {name!r}; one of {', '.join(SOURCE_FIELDS)}")
        if source not in SOURCES:
            raise InputError(f"sources[{name!r}] must be 'public' or 'data', got {source!r}")
    return {name: sources[name] for name in SOURCE_FIELDS if name in sources}


def data_derived(data: dict) -> list:
    """The parameters of a release (read with :func:`read_sidecar`) that were computed from
    the data (``sources`` says ``"data"``): a release shaped by them is not private."""
    sources = data.get("sources") or {}
    return [name for name in SOURCE_FIELDS if sources.get(name) == "data"]


def read_sidecar(path) -> dict:
    """Read a sidecar (give the sidecar or the release itself); the region comes back as a region.

    Given a release, its :func:`sidecar_path` is read, or else its :func:`legacy_sidecar_path`;
    ``data["sidecar"]`` is the path read.  Raises ``FileNotFoundError`` when there is none
    and ``ValueError`` when it is not a tracs sidecar or its region is not plausible.
    """
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        release = path
        path = sidecar_path(release)
        if not path.is_file() and legacy_sidecar_path(release).is_file():
            path = legacy_sidecar_path(release)
        if not path.is_file():
            raise FileNotFoundError(f"no sidecar {sidecar_path(release).name} next to {release.name}: it is "
                                    "written by 'tracs perturb' and holds the public parameters")
    if not path.is_file():
        raise FileNotFoundError(f"no sidecar {path.name}: it is written by 'tracs perturb' and holds the "
                                "public parameters")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path.name} is not valid JSON: {exc}") from exc
    data = parse_parameters(data, path.name)
    data["sidecar"] = path
    return data


def parse_parameters(data, name: str) -> dict:
    """Check the JSON object of a release's parameters (a sidecar's, or embedded in a release
    and named ``name`` in messages); the region comes back as a region."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{name} is not a tracs release sidecar")
    data = dict(data)
    for key in ("method", "epsilon", "per_trajectory", "region"):
        if key not in data:
            raise InputError(f"{name} lacks the field {key!r}")
    epsilon = data["epsilon"]
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not np.isfinite(epsilon) \
            or epsilon <= 0:
        raise InputError(f"{name}: epsilon must be a finite number > 0, got {epsilon!r}")
    try:
        data["region"] = _region_from(data["region"])
    except ValueError as exc:
        raise InputError(f"{name}: {exc}") from None
    if "sources" in data:
        try:
            data["sources"] = _check_sources(data["sources"])
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name}: {exc}") from None
    _check_pois_record(data, name)
    return data


def _check_pois_record(data: dict, name: str) -> None:
    """``pois_sha256`` (64 hex digits) and ``pois_count`` (an int >= 2), when recorded, go together."""
    digest, count = data.get("pois_sha256"), data.get("pois_count")
    if (digest is None) != (count is None):
        raise InputError(f"{name}: pois_sha256 and pois_count are recorded together, got only "
                         f"{'pois_sha256' if count is None else 'pois_count'}")
    if digest is None:
        return
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InputError(f"{name}: pois_sha256 must be 64 lowercase hex digits, got {str(digest)[:80]!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise InputError(f"{name}: pois_count must be an int >= 2 (the distinct POIs), got {count!r}")


def perturber_from_sidecar(data: dict, *, poi_space=None):
    """The public perturber described by a sidecar, rebuilt by its registry entry; given the
    public POI space of a discrete baseline's release, the baseline.

    Parameters
    ----------
    data : dict
        The release's parameters (:func:`read_sidecar`, :func:`parse_parameters`).
    poi_space : tracs.POISpace, optional
        The public points of interest of the release (a sidecar does not hold them): a
        baseline is rebuilt on them, as ``tracs perturb --pois`` built it.

    Raises ``ValueError`` for a method that is not a registered perturber, or a baseline
    without ``poi_space`` (:func:`tracs.estimate.frequencies` estimates the POI
    frequencies of those whose registry entry names that estimator).
    """
    method = get(data["method"])
    if method.kind != PERTURBER and not (method.kind == BASELINE and poi_space is not None):
        target = None if method.estimator is None else get_estimator(method.estimator).target
        hint = ("use tracs.estimate.frequencies for its POI reports" if target == FREQUENCIES
                else "it has no estimator")
        raise InputError(f"no density estimator for method {data['method']!r}; {hint}")
    region = data["region"]
    context = MethodContext(region=region, anchor=tuple(data.get("anchor", region.center)),
                            pois=None if poi_space is None else poi_space.points, _poi_space=poi_space)
    options = {name: tuple(data[name]) if name == "anchor" else data[name]
               for name in method.sidecar if name in data}
    return method.build(context, data["epsilon"], per_trajectory=data["per_trajectory"], **options)
