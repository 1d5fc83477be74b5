"""The public area of a release: the region, its projection and POI set; rows outside the region.

Everything that shapes a release besides the user's own records and the seed is given
(a region box, a POI file) or derived from what is given (the UTM zone of the region's
centre).  ``region_from_data`` keeps the data-derived region and POI set as an
explicit, warned opt-in: it is not private.  Messages name each parameter as
``flags`` says (:data:`API_FLAGS`, or the command's option names), and every note
goes to ``say`` (:func:`tracs.release.notes.printer`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._text import counted
from ..errors import InputError
from ..io.batch_files import row_labels
from ..public import CITY_BOXES, LonLatBox, parse_box, read_pois

__all__ = ["API_FLAGS", "Public", "as_box", "check_public", "check_projection", "check_split_gap",
           "outside_rows", "points_in_region", "keep_rows", "dropped_before", "public_parameters", "metric_crs"]

#: how messages name the parameters of :func:`tracs.release.release_file` (the command gives its options)
API_FLAGS = {"region": "region=", "region_from_data": "region_from_data=True", "pad": "pad=", "pois": "pois=",
             "clip": "outside='clip'", "drop": "outside='drop'", "strict": "strict=True",
             "round_to_pois": "round_to_pois=True", "split_gap": "split_gap="}
#: the message when no region is given
NO_REGION = (
    "give the public region: {region} MINLON,MINLAT,MAXLON,MAXLAT (degrees) or a preset ({presets}), "
    "e.g. {region} {example}.  The region shapes every release, so it must not come from the "
    "data: a region taken from the file's bounding box depends on every user's points (with one "
    "user, releases stay inside that user's own box).  {region_from_data} keeps that behaviour "
    "anyway (not private)")
#: the warning of a region taken from the data
FROM_DATA_WARNING = (
    "warning: {region_from_data}: the region{the_pois} and the projection are computed from the "
    "input file, so every release depends on all users' points; this is NOT private (use "
    "{region} and {pois} for a private release)")
#: a file wider than this (degrees of longitude or latitude) is warned about
WIDE_DEGREES = 20.0
_SHOW = 5


def _named(flags) -> dict:
    return {**API_FLAGS, **(flags or {})}


@dataclass
class Public:
    """The resolved public parameters: region (metres), its CRS, the POI space or None, the
    lon/lat box they came from (None with ``from_data``)."""

    region: object
    crs: object
    pois: object
    box: object
    from_data: bool


def as_box(region):
    """A region given as a :class:`tracs.public.LonLatBox`, a preset name, ``"MINLON,MINLAT,MAXLON,MAXLAT"``
    or a polygon file (:func:`tracs.public.parse_box`); None stays None."""
    if region is None or isinstance(region, LonLatBox):
        return region
    return parse_box(str(region))


def check_public(box, *, region_from_data: bool = False, pad: float = 0.0, pois=None, split_gap=None,
                 method: str = "", discrete: bool = False, round_to_pois: bool = False, flags=None,
                 say=None) -> None:
    """Refuse contradictory or missing public parameters before any data is read.

    ``box`` is the region (:func:`as_box`) or None; ``say`` gets the note saying how a
    region given as a polygon file was read.
    """
    f = _named(flags)
    if box is None and not region_from_data:
        raise InputError(NO_REGION.format(presets=", ".join(CITY_BOXES), example="tky", **f))
    if box is not None and region_from_data:
        raise InputError(f"give either {f['region']} or {f['region_from_data']}, not both")
    if box is not None and getattr(box, "path", None) is not None and say is not None:
        # tracs.public.read_region_file refuses files of points or lines: a region file is never the data
        say(f"note: {f['region']} {box} is {box.source}")
    check_projection(box)
    if pad:
        if not region_from_data:
            raise InputError(f"{f['pad']} applies to {f['region_from_data']} only (a {f['region']} box is "
                             "used as given)")
        if not np.isfinite(pad) or pad < 0:
            raise InputError(f"{f['pad']} must be a finite number of metres >= 0, got {pad:g}")
    if region_from_data and pois is not None:
        raise InputError(f"{f['pois']} goes with {f['region']} (a POI file needs a public region); "
                         f"{f['region_from_data']} takes the POIs from the data")
    needs_pois = discrete or round_to_pois
    if needs_pois and box is not None and pois is None:
        what = f"method {method!r}" if discrete else f["round_to_pois"]
        raise InputError(f"{what} needs the public points of interest: {f['pois']} FILE (a CSV with lat and "
                         "lng columns).  They must not come from the check-ins: a venue visited by "
                         "one user would become public")
    if pois is not None and not needs_pois:
        raise InputError(f"{f['pois']} is used by the discrete methods and {f['round_to_pois'].split('=')[0]} "
                         f"only, not by {method!r} without {f['round_to_pois'].split('=')[0]}")
    check_split_gap(split_gap, flags)


def check_projection(box) -> None:
    """Refuse, before any data is read, a region its projection cannot hold (too wide)."""
    if box is not None:
        try:
            box.to_region()
        except ValueError as exc:
            raise InputError(str(exc)) from None


def check_split_gap(text, flags=None) -> None:
    """The time gap that splits a user's rows into trajectories: a positive time span."""
    if text is None:
        return
    name = _named(flags)["split_gap"]
    try:
        gap = pd.Timedelta(text)
    except (TypeError, ValueError):
        raise InputError(f"{name} {text!r} is not a time span: give e.g. 3h, 90min or 1d") from None
    if pd.isna(gap) or gap <= pd.Timedelta(0):
        raise InputError(f"{name} must be a positive time span such as 3h, got {text!r}")


def outside_rows(lon, lat, box, labels, *, outside=None, before: str = "", flags=None, say=None):
    """Apply the region to WGS84 points given as arrays: what to keep, and where.

    Parameters
    ----------
    lon, lat : numpy.ndarray
        Degrees, one per row.
    box : tracs.public.LonLatBox or None
        The public region (None: taken from the data, nothing lies outside).
    labels : callable
        ``labels(rows) -> list of str``: how to name rows (``"line 7"``) in messages.
    outside : {None, "clip", "drop"}
        Rows outside the region: an error naming them (None), moved to the region's
        edge, or left out.
    before : str
        What happened to the file's other rows (``"4 of the file's 8 dropped for bad
        values, listed above"``), so that the counts of the messages add up.

    Returns
    -------
    keep : numpy.ndarray of bool or None
        Rows to keep (``None``: all); only ``"drop"`` leaves rows out.
    lon, lat : numpy.ndarray
        The coordinates to perturb (``"clip"`` moves rows outside to the box's edge).
    handled : list of str
        Labels of the rows clipped or dropped (reported by
        :func:`tracs.release.notes.report_read`).
    """
    _warn_wide(lon, lat, box, say, _named(flags)["region"])
    if box is None:
        return None, lon, lat, []
    out = ~box.contains(lon, lat)
    if not out.any():
        return None, lon, lat, []
    f = _named(flags)
    handled = labels(np.flatnonzero(out))
    count = int(out.sum())
    listed = ", ".join(handled[:_SHOW]) + (", ..." if count > _SHOW else "")
    rows = counted(len(lon), "row") if not before else f"the {counted(len(lon), 'row')} left ({before})"
    if outside is None:
        raise InputError(f"{count:,} of {rows} lie outside the region {box} ({listed}); "
                         f"pass {f['clip']} to move them to the region's edge or {f['drop']} to leave them out, "
                         "or give a region that holds them")
    if outside == "drop":
        if count == len(lon):
            raise InputError(f"all {rows} lie outside the region {box}: nothing left to perturb")
        return ~out, lon, lat, handled
    new_lon, new_lat = box.clip(lon, lat)
    return None, new_lon, new_lat, handled


def points_in_region(points, box, *, outside=None, flags=None, say=None):
    """:func:`outside_rows` on the batch read by :func:`tracs.io.batch_files.read_points`.

    Returns the points to perturb (rows outside dropped or clipped as asked; a
    trajectory left empty by ``"drop"`` disappears, with a note to ``say``) and the
    labels of the rows handled.
    """
    keep, lon, lat, handled = outside_rows(points.coords[:, 0], points.coords[:, 1], box,
                                           lambda rows: row_labels(points, rows), outside=outside,
                                           before=dropped_before(points.attrs["report"]), flags=flags, say=say)
    if not handled:
        return points, handled
    if keep is None:
        return points.with_coords(np.column_stack([lon, lat])), handled
    kept, emptied = keep_rows(points, keep)
    if emptied and say is not None:
        say(f"note: {counted(emptied, 'trajectory')} had every row outside the region: not released")
    return kept, handled


def keep_rows(points, keep):
    """``(points, emptied)``: the rows of ``points`` where ``keep`` is true (a trajectory left
    empty disappears; ``emptied`` counts them), as ``outside="drop"`` leaves them."""
    kept = points.take_rows(keep)
    return kept, len(points) - len(kept)


def dropped_before(report) -> str:
    """How many of the file's rows the reader dropped (for the message about rows outside)."""
    if report is None or not report.n_dropped:
        return ""
    return f"{report.n_dropped:,} of the file's {report.rows_read:,} dropped for bad values, listed above"


def _warn_wide(lon, lat, box=None, say=None, flag: str = "region=") -> None:
    """Warn when the rows span more than :data:`WIDE_DEGREES` (two continents, say); a span of
    longitude counts at the widest parallel of the rows (near a pole, 300° may be a few km).

    With a region the rows outside the box are still reported one by one
    (:func:`outside_rows`); this line says why there are so many.
    """
    finite = np.isfinite(lon) & np.isfinite(lat)
    if say is None or not finite.any():
        return
    lon, lat = lon[finite], lat[finite]
    # degrees of longitude shrink towards the poles: measure them at the widest parallel of the rows
    one_side = np.all(lat >= 0) or np.all(lat <= 0)
    widest = np.cos(np.radians(np.min(np.abs(lat)))) if one_side else 1.0
    if np.ptp(lon) * widest <= WIDE_DEGREES and np.ptp(lat) <= WIDE_DEGREES:
        return
    which = (f"the one region given with {flag} ({box}) and its projection are used for all rows, "
             "so the rows of the other area lie outside it (listed below)" if box is not None else
             "one region and one projection are used for all rows")
    say(f"warning: the file spans {np.ptp(lon):.0f}° of longitude and {np.ptp(lat):.0f}° of latitude: it "
        f"seems to span two continents; {which}; split the file by area and give each part its own region "
        "for useful releases")


def public_parameters(box, crs, data_region, data_pois, *, pois=None, pad: float = 0.0,
                      pois_needed: bool, flags=None, say=None) -> Public:
    """The region (metres, in ``crs``) and POI space of a release.

    With a ``box``: its rectangle and the ``pois`` file, nothing from the data.
    Without (``region_from_data``, warned to ``say``): ``data_region(pad)`` and, when
    needed, the POI space of ``data_pois()`` — callables, so that nothing is taken from
    the data unless the user asked for it.
    """
    if box is not None:
        region = box.to_region(crs)
        return Public(region, crs, read_pois(pois, box, crs) if pois is not None else None, box, False)
    f = _named(flags)
    if say is not None:
        say(FROM_DATA_WARNING.format(the_pois=", the POIs" if pois_needed else "", **f))
    try:
        region = data_region(pad or 0.0)
    except ValueError as exc:
        raise InputError(f"{f['region_from_data']}: {exc}; a single point or a line of points spans no "
                         f"area: pass {f['pad']} METRES, or better {f['region']}") from None
    space = None
    if pois_needed:
        from ..poi_space import POISpace  # scipy's KD-tree: only for POIs taken from the data

        space = POISpace(data_pois(), region=region)
    return Public(region, crs, space, None, True)


def metric_crs(box, data_crs):
    """The projection: the UTM zone of the region's centre, or ``data_crs()`` (region from the data)."""
    return box.metric_crs() if box is not None else data_crs()
