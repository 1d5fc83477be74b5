"""The public parameters of a release, written next to it as JSON (the "sidecar").

A collector needs exactly what shaped the release, and nothing secret: the method,
ε (per point or per trajectory), the public region and the CRS it lives in, the
budget split, TraCS-D's anchor, the lattice where releases are lattice points,
and how rows form trajectories.  ``sources`` says where the region, the points of
interest and the anchor came from: ``"public"`` (given by the user, fixed in
advance) or ``"data"`` (computed from the check-ins, ``--region-from-data``: such a
release is not private, and every reader of it is told).  The seed is never written.  :func:`perturber_from_sidecar`
rebuilds the public perturber for :func:`tracs.estimate.density`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..methods import PERTURBER, MethodContext, get
from ..region import ConvexRegion, Rectangle

__all__ = ["sidecar_path", "write_sidecar", "read_sidecar", "perturber_from_sidecar", "data_derived"]

#: the parameters whose source a sidecar records, and the sources
SOURCE_FIELDS = ("region", "pois", "anchor")
SOURCES = ("public", "data")

FORMAT = "tracs-release"
VERSION = 1


def sidecar_path(release) -> Path:
    """``released.csv`` -> ``released.tracs.json`` (beside the release)."""
    path = Path(release)
    return path.with_name(path.stem + ".tracs.json")


def _region_json(region) -> dict:
    if isinstance(region, Rectangle):
        return {"type": "rectangle", "bounds": [float(v) for v in region.bounds]}
    if isinstance(region, ConvexRegion):
        return {"type": "convex", "vertices": np.asarray(region.vertices, dtype=float).tolist()}
    raise TypeError(f"region must be a Rectangle or ConvexRegion, got {type(region).__name__}")


def _region_from(data) -> Rectangle | ConvexRegion:
    if not isinstance(data, dict) or data.get("type") not in ("rectangle", "convex"):
        raise ValueError(f"sidecar region must be a rectangle or convex polygon, got {data!r}")
    if data["type"] == "rectangle":
        return Rectangle(*data["bounds"])
    return ConvexRegion(data["vertices"])


def _field(perturber, name):
    """The JSON value of the public option ``name`` of ``perturber``."""
    if name == "anchor":
        anchor = perturber.anchor_point
        return [float(anchor[0]), float(anchor[1])]
    value = getattr(perturber, name)
    if isinstance(value, str):
        return value
    return int(value) if name == "sectors" else float(value)


def _perturber_fields(perturber, method) -> dict:
    """Public parameters of a perturber that shape its releases: the registry's sidecar fields
    of ``method`` and the lattice."""
    out = {name: _field(perturber, name) for name in method.sidecar}
    lattice = getattr(perturber, "lattice", None)
    if lattice is not None:
        out["lattice"] = json.loads(json.dumps(lattice, default=lambda v: np.asarray(v).tolist()))
    return out


def write_sidecar(release, *, method: str, epsilon: float, per_trajectory: bool, region, crs=None,
                  perturber=None, split_gap=None, round_to_pois: bool = False, sources=None) -> Path:
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
    """
    sources = _check_sources(sources)
    entry = get(method)
    data = {"format": FORMAT, "version": VERSION, "method": str(method), "epsilon": float(epsilon),
            "per_trajectory": bool(per_trajectory), "region": _region_json(region),
            "crs": None if crs is None else (crs if isinstance(crs, str) else crs.to_string()),
            "split_gap": split_gap, "round_to_pois": bool(round_to_pois)}
    if sources is not None:
        data["sources"] = sources
    if perturber is not None:
        data.update(_perturber_fields(perturber, entry))
    path = sidecar_path(release)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _check_sources(sources):
    if sources is None:
        return None
    if not isinstance(sources, dict):
        raise TypeError(f"sources must be a dict, got {type(sources).__name__}")
    for name, source in sources.items():
        if name not in SOURCE_FIELDS:
            raise ValueError(f"sources: unknown parameter {name!r}; one of {', '.join(SOURCE_FIELDS)}")
        if source not in SOURCES:
            raise ValueError(f"sources[{name!r}] must be 'public' or 'data', got {source!r}")
    return {name: sources[name] for name in SOURCE_FIELDS if name in sources}


def data_derived(data: dict) -> list:
    """The parameters of a release (read with :func:`read_sidecar`) that were computed from
    the data (``sources`` says ``"data"``): a release shaped by them is not private."""
    sources = data.get("sources") or {}
    return [name for name in SOURCE_FIELDS if sources.get(name) == "data"]


def read_sidecar(path) -> dict:
    """Read a sidecar (give the sidecar or the release itself); the region comes back as a region.

    Raises ``FileNotFoundError`` when there is none and ``ValueError`` when it is
    not a tracs sidecar.
    """
    path = Path(path)
    if not path.name.endswith(".tracs.json"):
        path = sidecar_path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no sidecar {path.name} next to the release: it is written by "
                                "'tracs perturb' and holds the public parameters")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path.name} is not a tracs release sidecar")
    for key in ("method", "epsilon", "per_trajectory", "region"):
        if key not in data:
            raise ValueError(f"{path.name} lacks the field {key!r}")
    data["region"] = _region_from(data["region"])
    if "sources" in data:
        try:
            data["sources"] = _check_sources(data["sources"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path.name}: {exc}") from None
    return data


def perturber_from_sidecar(data: dict):
    """The public perturber described by a sidecar, rebuilt by its registry entry.

    Raises ``ValueError`` for a method that is not a registered perturber (the
    discrete baselines: :func:`tracs.estimate.frequencies` for those whose registry
    entry names that estimator).
    """
    method = get(data["method"])
    if method.kind != PERTURBER:
        hint = ("use tracs.estimate.frequencies for its POI reports" if method.estimator == "frequencies"
                else "it has no estimator")
        raise ValueError(f"no density estimator for method {data['method']!r}; {hint}")
    region = data["region"]
    context = MethodContext(region=region, anchor=tuple(data.get("anchor", region.center)))
    options = {name: tuple(data[name]) if name == "anchor" else data[name]
               for name in method.sidecar if name in data}
    return method.build(context, data["epsilon"], per_trajectory=data["per_trajectory"], **options)
