"""The public parameters of a collection: what every device releases with, published by the collector.

A collection publishes, before any report is made, exactly what shapes a release
and nothing secret: the fields of a release sidecar (:mod:`tracs.estimate.sidecar`:
method, ε per point, the public region in metres and its CRS, the budget split,
TraCS-D's anchor, the lattice), the region as a longitude/latitude box, the budget
caps (per trajectory, per day, lifetime), the digest of the points of interest when
the method needs them, and the protocol version.  ``GET /v1/parameters`` serves
:meth:`Parameters.to_json`; a device builds itself from :meth:`Parameters.from_json`
and refuses, naming it, anything it cannot honour (:meth:`Parameters.perturber`).
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TracsError
from ..estimate.sidecar import perturber_from_sidecar, write_sidecar
from ..methods import GRID, PERTURBER, POLAR, MethodContext, get, view
from ..public import LonLatBox
from ..region import Rectangle

__all__ = ["PROTOCOL_VERSION", "Parameters", "ParameterError", "CAPS"]

#: the version of the report protocol this code speaks
PROTOCOL_VERSION = 1
#: the lattices of the releases a device makes and the collector checks (``tracs.collect.checks``)
COLLECTED_LATTICES = (GRID, POLAR)
#: the budget caps, in the order they are checked
CAPS = ("trajectory", "day", "lifetime")


class ParameterError(TracsError, ValueError):
    """Parameters a device or collector cannot honour (the message names what)."""


def _cap(value, name: str):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"the {name} cap must be a finite ε > 0 or null, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Parameters:
    """Public parameters of one collection.

    Attributes
    ----------
    release : dict
        The release sidecar's fields (JSON values), as :func:`tracs.estimate.sidecar.write_sidecar`
        writes them for a release of ``method`` at ``epsilon`` per point.
    box : tuple of float
        The region as ``(min_lon, min_lat, max_lon, max_lat)`` (degrees).
    caps : dict
        ε allowed per trajectory, per UTC day and over a device's lifetime (``None``: no cap).
    pois : str or None
        SHA-256 of the points of interest, for methods that need them.
    protocol : int
        The report protocol's version.
    """

    release: dict
    box: tuple
    caps: dict = field(default_factory=lambda: dict.fromkeys(CAPS))
    pois: str | None = None
    protocol: int = PROTOCOL_VERSION

    # -- building ---------------------------------------------------------------------
    @classmethod
    def build(cls, method: str, epsilon: float, box, *, anchor="center", caps=None) -> "Parameters":
        """The parameters of a collection of ``method`` at ``epsilon`` per point over ``box``
        (a :class:`tracs.public.LonLatBox`), TraCS-D's ``anchor`` as in ``tracs perturb``."""
        entry = get(method)
        if method not in supported_methods():
            raise ParameterError(f"method {method!r} cannot be collected point by point: choose one of "
                                 f"{', '.join(supported_methods())}")
        crs = box.metric_crs()
        region = box.to_region(crs)
        model = entry.build(MethodContext(region=region, anchor=anchor), epsilon)
        sources = {"region": "public"}
        if getattr(model, "anchor_point", None) is not None:
            sources["anchor"] = "public"
        with tempfile.TemporaryDirectory() as folder:  # the sidecar writer's own fields, read back
            path = write_sidecar(Path(folder) / "release.csv", method=method, epsilon=epsilon,
                                 per_trajectory=False, region=region, crs=crs, perturber=model,
                                 sources=sources)
            release = json.loads(path.read_text(encoding="utf-8"))
        caps = {name: _cap((caps or {}).get(name), name) for name in CAPS}
        params = cls(release=release, box=tuple(float(v) for v in box.bounds), caps=caps)
        params.perturber()  # a device can honour them
        return params

    # -- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"protocol": self.protocol, "release": self.release, "box": list(self.box),
                "caps": dict(self.caps), "pois": self.pois}

    def to_json(self) -> str:
        """The canonical JSON text (keys sorted): what ``GET /v1/parameters`` serves."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def digest(self) -> str:
        """SHA-256 of :meth:`to_json`: names these parameters in every batch of reports."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, text) -> "Parameters":
        """Parameters from :meth:`to_json` (text, bytes or the decoded dict).

        Raises :class:`ParameterError` naming the first thing this device cannot honour:
        another protocol version, a missing field, a method it does not know, a cap
        that is not an ε.
        """
        data = json.loads(text) if isinstance(text, (str, bytes)) else text
        if not isinstance(data, dict):
            raise ParameterError("the parameters must be a JSON object")
        protocol = data.get("protocol")
        if protocol != PROTOCOL_VERSION:
            raise ParameterError(f"protocol version {protocol!r} is not supported (this device speaks "
                                 f"version {PROTOCOL_VERSION})")
        for name in ("release", "box", "caps"):
            if name not in data:
                raise ParameterError(f"the parameters lack the field {name!r}")
        release = data["release"]
        if not isinstance(release, dict):
            raise ParameterError("the parameters' release fields must be a JSON object")
        for name in ("method", "epsilon", "region", "crs"):
            if name not in release:
                raise ParameterError(f"the parameters' release fields lack {name!r}")
        method = release["method"]
        if method not in supported_methods():
            raise ParameterError(f"unknown method {method!r}: this device releases with "
                                 f"{', '.join(supported_methods())}")
        if release.get("per_trajectory"):
            raise ParameterError("a budget per trajectory is not supported: devices report as they go, "
                                 "so ε is per point (bound a trajectory with the trajectory cap)")
        caps = data["caps"] if isinstance(data["caps"], dict) else {}
        unknown = sorted(set(caps) - set(CAPS))
        if unknown:
            raise ParameterError(f"unknown budget cap(s) {', '.join(map(repr, unknown))}; known: {', '.join(CAPS)}")
        box = data["box"]
        if not (isinstance(box, list) and len(box) == 4):
            raise ParameterError(f"the box must be [min_lon, min_lat, max_lon, max_lat], got {box!r}")
        params = cls(release=release, box=tuple(float(v) for v in box),
                     caps={name: _cap(caps.get(name), name) for name in CAPS}, pois=data.get("pois"),
                     protocol=protocol)
        params.perturber()
        return params

    # -- what a device needs ------------------------------------------------------------
    @property
    def method(self) -> str:
        return self.release["method"]

    @property
    def epsilon(self) -> float:
        """ε spent on every released point."""
        return float(self.release["epsilon"])

    def lonlat_box(self):
        """The region as a :class:`tracs.public.LonLatBox`."""
        return LonLatBox(*self.box)

    @property
    def crs(self) -> str:
        return self.release["crs"]

    def region(self):
        """The public region in metres (:class:`tracs.Rectangle`)."""
        region = self.release.get("region") or {}
        if region.get("type") != "rectangle":
            raise ParameterError(f"the region must be a rectangle, got {region.get('type')!r}")
        return Rectangle(*region["bounds"])

    def cap_points(self) -> dict:
        """How many points each cap allows (``None``: no cap): ``floor(cap / ε)``, with a margin of
        ``1e-9`` for caps written as a multiple of ε."""
        eps = self.epsilon
        return {name: None if cap is None else int(math.floor(cap / eps * (1 + 1e-9)))
                for name, cap in self.caps.items()}

    def perturber(self):
        """The perturber these parameters describe, rebuilt by the registry
        (:func:`tracs.estimate.sidecar.perturber_from_sidecar`); its lattice must be the published one."""
        cached = self.__dict__.get("_perturber")
        if cached is not None:
            return cached
        data = dict(self.release, region=self.region())
        try:
            model = perturber_from_sidecar(data)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"the parameters describe no perturber this device can build: {exc}") from None
        lattice = json.loads(json.dumps(get(self.method).lattice_of(model),
                                        default=lambda v: __import__("numpy").asarray(v).tolist()))
        if "lattice" in self.release and lattice != self.release["lattice"]:
            raise ParameterError("the published lattice is not the one this device releases on")
        object.__setattr__(self, "_perturber", model)
        return model


def supported_methods() -> tuple[str, ...]:
    """The registered perturbers a device can release one fix at a time and the collector can check,
    as their registry entries say: ε-LDP, released point by point at a stream position
    (:attr:`tracs.methods.Method.pointwise`) from the keyed streams, on a lattice of coordinates
    or of ``(direction, distance)`` pairs (:attr:`~tracs.methods.Method.lattice` in
    :data:`COLLECTED_LATTICES`, the lattices :func:`tracs.collect.checks.check_reports` checks)."""
    return tuple(name for name, entry in view(PERTURBER).items()
                 if entry.ldp and entry.pointwise and entry.keyed and entry.lattice in COLLECTED_LATTICES)
