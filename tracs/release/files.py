"""A file released: read, release through the engine, write with its sidecar — ``tracs perturb`` as one call.

:func:`release_file` is the whole of ``tracs perturb`` on one machine; the command
only parses its options into this call's parameters and prints the summary.  The
rows never become a GeoDataFrame: user ids (kept exactly as written), times and
source lines stay NumPy / Arrow arrays (:func:`tracs.io.batch_files.read_points`),
coordinates are projected to the local UTM zone on ``workers`` threads, whole users
are released in chunks through the engine (:func:`tracs.release.release_points`),
and the released rows are written back in the input's order by the format's writer
into a temporary file renamed into place, after the sidecar
(:func:`tracs.release.write_perturb_sidecar`) with the digest of the rows.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._progress import progress_bar
from .._text import counted, significant
from ..engine import average_error, resolve_workers
from ..errors import InputError
from ..io.formats import Format, output_format
from ..io.batch_files import metric_crs, read_points, released_digest, to_metric, to_wgs84, write_released
from ..methods import Method, MethodContext, get
from ..public import into_region
from ..random import Secure
from ..region import Rectangle
from . import area
from .notes import printer, report_read
from .paths import check_input, check_not_input, check_pois_not_input, writable_file, write_atomically
from .record import perturb_parameters, sidecar_pois, write_perturb_sidecar
from .steps import release_points

__all__ = ["release_file", "FileRelease", "releasing_method", "random_argument", "read_arguments", "warm_up"]

#: how rows outside the region may be handled (None: refused, naming them)
OUTSIDE = (None, "clip", "drop")
#: the reading parameters of :func:`release_file` and the column roles of ``columns``
ROLES = ("user", "time", "lat", "lon", "traj")


@dataclass(frozen=True)
class FileRelease:
    """What :func:`release_file` wrote: the numbers of its summary line, nothing of the true points
    but ``average_error`` (only when asked; not private).

    Attributes
    ----------
    method : tracs.methods.Method
        The registered method released with.
    output, sidecar : pathlib.Path
        The release and its sidecar (``OUTPUT.tracs.json``).
    format : tracs.io.formats.Format
        The output's format.
    points, trajectories : int
        Released rows and trajectories.
    epsilon : float
        The budget as given (per point, or per trajectory with ``per_trajectory``).
    per_trajectory, rounded : bool
        Whether ``epsilon`` was a trajectory's budget; whether releases were rounded to POIs.
    epsilon_point, epsilon_trajectory : tuple of float
        The least and greatest ε spent by a point and by a trajectory.
    average_error : float or None
        The average error in metres (``report_error=True`` only: computed from the true points).
    parameters : dict
        The public parameters written in the sidecar (and in the file where it holds metadata).
    digest : str
        The digest of the released rows, as in the sidecar.
    """

    method: Method
    output: Path
    sidecar: Path
    format: Format
    points: int
    trajectories: int
    epsilon: float
    per_trajectory: bool
    rounded: bool
    epsilon_point: tuple
    epsilon_trajectory: tuple
    average_error: float | None
    parameters: dict
    digest: str


def releasing_method(method) -> Method:
    """The registered method to release data with: a name or a :class:`~tracs.methods.Method`, refused
    when it is not ε-LDP (kept only to reproduce a published experiment)."""
    entry = method if isinstance(method, Method) else get(method)
    if not entry.ldp:
        raise InputError(f"method {entry.name!r} is not ε-LDP (its group sizes depend on the true location) "
                         "and is kept only to reproduce the paper's experiments with 'tracs evaluate'; "
                         "it is never used to release data: use 'lsrr' instead")
    return entry


def random_argument(seed=None, secure_rng: bool = False):
    """The ``rng`` of a release: the seed (Philox), or ChaCha20 with ``secure_rng`` (keyed by the seed or the OS)."""
    if secure_rng:
        return "secure" if seed is None else Secure(seed)
    return seed


def warm_up(method: Method) -> threading.Thread:
    """Load (or compile) the method's kernels in a background thread; join it before releasing.

    Loading compiled kernels costs a few tenths of a second per process (more when
    they were never compiled); reading the file releases the interpreter lock, so
    the two overlap.  A failure here is ignored: the real call reports it.
    """
    def work():
        try:
            method.warm(0)
        except Exception:  # noqa: BLE001 - only a head start
            pass

    thread = threading.Thread(target=work, name="tracs-warm-up", daemon=True)
    if method.warm is not None and not method.discrete:
        thread.start()
    return thread


def read_arguments(columns, options: dict, flags) -> dict:
    """The keyword arguments of :func:`tracs.io.batch_files.read_points`: ``columns`` (role -> column name),
    the reading ``options`` and ``flags``, refusing a role that is not one of :data:`ROLES`."""
    columns = dict(columns or {})
    unknown = sorted(set(columns) - set(ROLES))
    if unknown:
        raise InputError(f"columns names the roles {', '.join(ROLES)}, got {', '.join(map(repr, unknown))}")
    return dict({role: columns.get(role) for role in ROLES}, flags=flags, **options)


def release_file(source, output, *, method, epsilon: float, region=None, region_from_data: bool = False,
                 pad: float = 0.0, pois=None, outside=None, per_trajectory: bool = False,
                 round_to_pois: bool = False, anchor="center", split_gap=None, seed=None, secure_rng: bool = False,
                 workers=None, geometry: str = "points", keep_lines: bool = False, budget_columns: bool = True,
                 report_error: bool = False, strict: bool = False, columns=None, input_format: str = "auto",
                 time_format=None, dayfirst: bool = False, id_type: str = "text", tz: str = "UTC",
                 ambiguous: str = "earlier", no_time: bool = False, quiet: bool = False, say=None,
                 flags=None, on_ready=None) -> FileRelease:
    """Release every point of a file and write the released file with its sidecar.

    Each point is ε-LDP over the public ``region`` (with ``per_trajectory``, each
    trajectory is ε-LDP in total: its n points get ε/n each).  A user's released rows
    depend only on that user's rows, the public parameters (region, POI file,
    method, ε, anchor, split gap) and the seed, bit for bit: each user draws from a
    stream keyed by the user id, kept exactly as written (``007`` and ``7`` are two
    users), and the release is the same for any ``workers``.  No row is dropped,
    moved or left out, and no input column goes unwritten, without a line to ``say``
    naming it.  The output (any format of :func:`tracs.io.formats.output_format`) is
    written into a temporary file renamed into place, after its sidecar
    ``OUTPUT.tracs.json``; an error leaves no output.  ``tracs perturb`` is this call.

    Parameters
    ----------
    source, output : str or pathlib.Path
        The file (or data set folder) to read; the file to write (never the input).
    method : str or tracs.methods.Method
        A registered ε-LDP method (:func:`releasing_method`).
    epsilon : float
        The budget per point (per trajectory with ``per_trajectory``), > 0.
    region : tracs.public.LonLatBox or str, optional
        The public region: a box, a preset name, ``"MINLON,MINLAT,MAXLON,MAXLAT"`` or a
        polygon file.  Required unless ``region_from_data``.
    region_from_data : bool
        Take the region, projection and (discrete methods) POIs from the file: NOT
        private, warned; ``pad`` metres are added around the data's box.
    pois : str or pathlib.Path, optional
        The public points of interest (CSV with lat and lng) of the discrete methods and
        ``round_to_pois``; never the input itself.
    outside : {None, "clip", "drop"}
        Rows outside the region: refused (naming them), moved to its edge, or left out.
    per_trajectory, round_to_pois, anchor, split_gap
        The budget of a whole trajectory; rounding to the nearest POI (post-processing);
        TraCS-D's public first reference (``"center"``, ``"corner"`` or ``(x, y)`` metres);
        a time gap (``"3h"``) that starts a new trajectory.
    seed, secure_rng
        The seed (default: fresh OS entropy); ChaCha20 instead of Philox.
    workers : int, optional
        Threads (default: every core); the release is the same for any number.
    geometry : {"points", "lines"}
        One released row per input row, or one line per trajectory.
    keep_lines, budget_columns
        Also write each row's line in the input; write the ε spent per point and trajectory.
    report_error : bool
        Compute the average error from the true points (not private).
    strict : bool
        Refuse a file where any row was dropped or changed.
    columns : dict, optional
        Column names by role (``user``, ``time``, ``lat``, ``lon``, ``traj``); others are
        found by name.
    input_format, time_format, dayfirst, id_type, tz, ambiguous, no_time
        How to read the file (:func:`tracs.io.checkin_files.read_columns`).
    quiet : bool
        No progress bars (there are none either off a terminal).
    say : callable, optional
        Gets every note, warning and drop report as one line (default: printed on
        standard error after ``tracs:``).
    flags : dict, optional
        How messages name the parameters (default :data:`tracs.release.area.API_FLAGS`
        and :data:`tracs.io.columns.API_FLAGS`); the command gives its option names.
    on_ready : callable, optional
        Called once the file is read and the kernels are loaded, before the release.

    Returns
    -------
    FileRelease

    Raises
    ------
    tracs.errors.InputError
        A bad parameter, a missing or unreadable input, an output that is an input or
        has no writer, rows outside the region (without ``outside``), no rows left.
    """
    say = printer() if say is None else say
    method = releasing_method(method)
    if outside not in OUTSIDE:
        raise InputError(f"outside must be None, 'clip' or 'drop', got {outside!r}")
    if geometry not in ("points", "lines"):
        raise InputError(f"geometry must be 'points' or 'lines', got {geometry!r}")
    box = area.as_box(region)
    named = {**area.API_FLAGS, **(flags or {})}
    source, output = Path(source), Path(output)
    check_pois_not_input(pois, source, named["pois"])
    check_input(source, input_format or "auto")
    output = writable_file(output)
    check_not_input(output, source, pois)
    fmt = output_format(output, geometry=geometry)
    area.check_public(box, region_from_data=region_from_data, pad=pad, pois=pois, split_gap=split_gap,
                      method=method.name, discrete=method.discrete, round_to_pois=round_to_pois, flags=flags, say=say)
    reading = read_arguments(columns, dict(time_format=time_format, dayfirst=bool(dayfirst),
                                           id_type=id_type or "text", tz=tz or "UTC", ambiguous=ambiguous or "earlier",
                                           no_time=bool(no_time), input_format=input_format or "auto"), flags)

    warm = warm_up(method) if not per_trajectory else None
    points = read_points(source, split_gap=split_gap, **reading)
    try:  # rows outside the region
        points, handled = area.points_in_region(points, box, outside=outside, flags=flags, say=say)
    except InputError:  # first what was dropped before, so the counts add up
        report_read(points.attrs["report"], say=say, others=points.attrs["others"])
        raise
    report_read(points.attrs["report"], say=say, strict=strict,
                extra=[({"clip": "clipped"}.get(outside, "dropped"), handled)],
                others=points.attrs["others"], strict_flag=named["strict"])
    crs = area.metric_crs(box, lambda: metric_crs(points))
    threads = resolve_workers(workers)
    metres = to_metric(points, crs, workers=threads)
    coords, offsets = metres.coords, metres.offsets
    if len(coords) == 0:
        raise InputError(f"{source}: no points left to perturb")
    rounding = round_to_pois and not method.discrete
    public = area.public_parameters(box, crs, lambda margin: Rectangle.bounding(coords, pad=margin),
                                    lambda: np.unique(coords, axis=0), pois=pois, pad=pad,
                                    pois_needed=method.discrete or round_to_pois, flags=flags, say=say)
    if public.box is not None:  # the points of the box outside its inscribed rectangle: onto it
        coords, moved, most = into_region(coords, public.region)
        if moved:
            say(f"note: {counted(moved, 'row')} inside the box but outside the region (the rectangle inscribed "
                f"in the projected box) moved onto its edge, by at most {significant(most)} m")
    ctx = MethodContext(region=public.region, anchor=anchor, _poi_space=public.pois,
                        pois=None if public.pois is None else public.pois.points)
    model = method.build(ctx, epsilon, per_trajectory=per_trajectory)
    if warm is not None and warm.is_alive():
        warm.join()
    if on_ready is not None:
        on_ready()
    # two bars of the points' count: releasing, then writing (one bar of twice the points misled)
    with progress_bar(len(coords), desc="perturb", unit="pt", unit_scale=True, enabled=not quiet) as bar:
        done = release_points(model, metres.with_coords(coords),
                              rng=random_argument(seed, secure_rng), seed=seed, workers=workers,
                              round_to=ctx.poi_space if rounding else None, progress=bar.update)
    eps_point, eps_traj = done.epsilon_point, done.epsilon_trajectory
    # a figure computed from the true points: only when asked (not private)
    ae = average_error(coords, done.coords, offsets, workers=workers) if report_error else None
    lonlat = to_wgs84(done.coords, crs, workers=threads)
    del done  # the released metres: only their WGS84 copy is written
    parameters = perturb_parameters(method.name, epsilon, model, public.region, crs, per_trajectory=per_trajectory,
                                    split_gap=split_gap, round_to_pois=round_to_pois,
                                    anchor_given=isinstance(anchor, tuple), from_data=public.from_data,
                                    pois_used=public.pois is not None)
    written = {}
    # the digest of the rows, from the columns the writer is given (equal to the file's read back),
    # on a thread while the file is written (the hashing kernel releases the interpreter lock)
    with ThreadPoolExecutor(1) as pool, \
            progress_bar(len(coords), desc=f"write {output.name}", unit="pt", unit_scale=True,
                         enabled=not quiet) as bar:
        digest = pool.submit(released_digest, points, lonlat, fmt, geometry)

        def sidecar(_):  # in place before the release is renamed into place
            written["digest"] = digest.result()
            written["sidecar"] = write_perturb_sidecar(output, data=parameters, digest=written["digest"],
                                                       pois=sidecar_pois(public))

        write_atomically(output, lambda path: write_released(
            points, lonlat, eps_point, eps_traj, path, fmt, progress=bar.update, geometry=geometry,
            parameters=json.dumps(parameters), keep_lines=bool(keep_lines), budget=bool(budget_columns)),
            before_rename=sidecar, say=say, clean=True)
    return FileRelease(method=method, output=output, sidecar=written["sidecar"], format=fmt, points=len(coords),
                       trajectories=len(offsets) - 1, epsilon=epsilon, per_trajectory=bool(per_trajectory),
                       rounded=bool(rounding), epsilon_point=(eps_point.min(), eps_point.max()),
                       epsilon_trajectory=(eps_traj.min(), eps_traj.max()), average_error=ae,
                       parameters=parameters, digest=written["digest"])
