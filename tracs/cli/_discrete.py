"""A discrete baseline's release on the command line (``tracs denoise``, ``synthesize``, ``estimate``).

EM, L-SRR, N-gram, ATP and TP release points of interest.  The POI space is public
but not in the release's parameters: the commands read it from ``--pois FILE`` (the
file given to ``tracs perturb``), projected and moved onto the region as ``tracs
perturb`` moved it, check that it is the space the release used (its digest,
:meth:`tracs.POISpace.digest`, against the sidecar's ``pois_sha256``: :func:`check_pois`),
rebuild the baseline on it by its registry entry
(:func:`tracs.estimate.sidecar.perturber_from_sidecar`), check that every released
point is one of the POIs and call the library's estimators on the POI indices:
:func:`tracs.estimate.baseline_posterior` (every report's posterior POI) and
:func:`tracs.estimate.frequencies` (the POI frequencies).  A method the library
cannot estimate from yet is refused with its name, by the library's own check.

A release made with a budget per trajectory is estimated as the library does: every
report at its trajectory's per-point ε (the budget over the trajectory's length, from the
release's trajectories), which must be the release's own ``epsilon_point`` column
(:func:`check_point_epsilons`: a trajectory cut or joined after the release is refused).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._text import given, significant, whole
from ..errors import InputError, InputTypeError
from ..methods import get
from ._common import CLIError

#: a released point is a POI when it lies within this share of the POI space's diameter of one (the
#: WGS84 round trip of the written coordinates moves a point by about 1e-9 m)
MATCH = 1e-6


def release_entry(release: Path):
    """The registry entry of the method that released ``release`` (from its embedded parameters
    or its sidecar), or None when they cannot be read (the command's reading names why)."""
    from ..estimate.sidecar import read_sidecar
    from ..io.parameters import embedded_parameters

    try:
        data = embedded_parameters(release) or read_sidecar(release)
        return get(data["method"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def missing_pois(entry, release: Path, command: str, what: str) -> CLIError:
    """The refusal of a discrete release given without ``--pois``."""
    return CLIError(f"{release.name} was released by {entry.name} ({entry.label}), a discrete baseline: its "
                    f"reports are points of interest, and {what} needs the public POI space: give "
                    f"--pois FILE (the POI file given to 'tracs perturb')")


def poi_lonlat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(lng, lat)`` of the POIs of a CSV, read as ``tracs perturb --pois`` reads it
    (:func:`tracs.public.read_poi_lonlat`)."""
    from ..public import read_poi_lonlat

    try:
        return read_poi_lonlat(path)
    except (FileNotFoundError, InputError) as exc:
        raise CLIError(str(exc)) from None


def projected_pois(path: Path, crs) -> np.ndarray:
    """The POIs of ``path`` in metres of ``crs``."""
    from ..geo import transform_xy

    lng, lat = poi_lonlat(path)
    return np.column_stack(transform_xy(lng, lat, 4326, crs))


def poi_space(path: Path, data: dict, command: str, release: Path):
    """The release's public POI space: the POIs of ``path`` in the release's CRS, moved onto its
    region as ``tracs perturb --pois`` moves them (a note says how many moved, and how far), checked
    to be the POI space of ``release`` (:func:`check_pois`)."""
    from ..poi_space import POISpace
    from ..public import into_region

    region = data["region"]
    pois, moved, most = into_region(projected_pois(path, data["crs"]), region)
    if moved:
        print(f"tracs {command}: note: {whole(moved)} POI(s) of {path.name} outside the release's region moved onto "
              f"its edge, by at most {significant(most)} m (as 'tracs perturb' moves the POIs of its box)",
              file=sys.stderr)
    try:
        space = POISpace(pois, region=region)
    except ValueError as exc:
        raise CLIError(f"{path.name}: {exc}") from None
    check_pois(space, path, data, release, command)
    return space


def check_pois(space, path: Path, data: dict, release: Path, command: str) -> None:
    """Refuse the POI space of ``path`` when it is not the one ``release`` used: its digest
    (:meth:`tracs.POISpace.digest`) differs from the sidecar's ``pois_sha256``; a sidecar that
    records none (an older release) gets a note that the POIs could not be checked."""
    recorded = data.get("pois_sha256")
    if recorded is None:
        print(f"tracs {command}: note: no digest of the POIs is recorded for {release.name} (a release of an "
              f"older tracs, or one without its sidecar): the POI set of {path.name} cannot be checked to be "
              "the one it was released with", file=sys.stderr)
        return
    if space.digest() == recorded:
        return
    used, given = int(data["pois_count"]), len(space)
    how = ("as many, but one or more moved or in another order" if used == given
           else f"{whole(abs(given - used))} {'more' if given > used else 'fewer'}")
    raise CLIError(f"{path.name} is not the POI set of {release.name}: the release used {whole(used)} POIs, "
                   f"{path.name} holds {whole(given)} distinct POIs ({how}; pois_sha256 differs): give the "
                   "POI file the release was made with")


def on_pois(release: Path, pois: Path, data: dict, points: np.ndarray, rows: np.ndarray, command: str):
    """``(space, baseline, indices)`` of a discrete release: the POI space of the file ``pois``
    (:func:`poi_space`), the baseline rebuilt from the release's parameters on it, and the POI index of
    every released point (``points`` in metres, ``rows`` their positions in the file: :func:`report_indices`)."""
    from ..estimate.sidecar import perturber_from_sidecar

    space = poi_space(pois, data, command, release)
    baseline = perturber_from_sidecar(data, poi_space=space)
    return space, baseline, report_indices(points, space, rows, release)


def budget(data: dict) -> str:
    """The release's budget in words: ``ε = 2``, or ``ε = 20 per trajectory``."""
    return f"ε = {given(data['epsilon'])}" + (" per trajectory" if data.get("per_trajectory") else "")


def check_point_epsilons(baseline, offsets, frame, release: Path) -> None:
    """Refuse a release made with a budget per trajectory whose ``epsilon_point`` column (``frame``: its
    rows in trajectory order) is not every report's per-point ε from its trajectory's length, as the
    estimators take it (the rows of a trajectory cut or joined after the release)."""
    if baseline.epsilon is not None or "epsilon_point" not in frame.columns:
        return
    lengths = np.diff(offsets)
    want = np.repeat(baseline.epsilon_per_point(lengths), lengths)
    try:
        written = np.asarray(frame["epsilon_point"].to_numpy(), dtype=np.float64)
    except ValueError:  # not numbers: the release's reading names its columns
        return
    bad = ~np.isclose(written, want, rtol=1e-9, atol=0)
    if bad.any():
        raise CLIError(f"{whole(int(bad.sum()))} of the {whole(len(want))} points of {release.name} have an "
                       f"epsilon_point other than the budget per trajectory over their trajectory's length "
                       f"({_where(frame.index.to_numpy()[bad], release)}): its trajectories are not those it "
                       "was released with")


def report_indices(points: np.ndarray, space, rows: np.ndarray, release: Path) -> np.ndarray:
    """The POI index of every released point (``rows``: their positions in the file); a point that is
    not one of the POIs is refused, with the count and the first lines."""
    _, idx = space.round(points)
    miss = np.hypot(*(space.points[idx] - points).T) > MATCH * space.diameter
    if miss.any():
        raise CLIError(f"{whole(int(miss.sum()))} of the {whole(len(points))} released points of {release.name} "
                       f"are not among the POIs given with --pois ({_where(np.asarray(rows)[miss], release)}): "
                       "give the POI file the release was made with")
    return np.asarray(idx, dtype=np.intp)


def estimated(call, entry, release: Path, what: str):
    """``call()`` of a library estimator; a method it does not take (or a release it cannot use) is
    refused with the method's name."""
    try:
        return call()
    except InputTypeError as exc:
        raise CLIError(f"no {what} for {entry.label} ({entry.name}) releases: {exc}") from None
    except InputError as exc:
        raise CLIError(f"no {what} for the {entry.label} ({entry.name}) release {release.name}: {exc}") from None


def posterior(indices, offsets, baseline, entry, release: Path, rule: str, revisit=None) -> np.ndarray:
    """The POI index of every report's posterior ``rule`` (``"mode"`` or ``"mean"``); with ``revisit``, given
    the other reports of its trajectory (the revisit prior)."""
    from ..estimate import baseline_posterior

    return estimated(lambda: baseline_posterior(indices, baseline, offsets=offsets, rule=rule, revisit=revisit),
                     entry, release, "posterior")


def _where(positions, release: Path) -> str:
    """The rows at ``positions`` (0-based, in the file) of ``release``: line numbers of a text file (after
    its header), row numbers otherwise (:func:`_lines`)."""
    text = release.suffix.lower() in (".csv", ".tsv", ".txt")
    return f"{'lines' if text else 'rows'} {_lines(np.sort(positions), 2 if text else 1)}"


def _lines(positions, first: int) -> str:
    """The first five of ``positions`` (0-based) as numbers from ``first``, and how many more."""
    shown = ", ".join(str(int(i) + first) for i in positions[:5])
    return shown + (f", … ({whole(len(positions) - 5)} more)" if len(positions) > 5 else "")
