"""``tracs perturb`` on plain arrays: read with Arrow, release through :mod:`tracs.release`, write with Arrow.

The rows never become a GeoDataFrame: user ids, times and source lines stay
NumPy / Arrow arrays (:mod:`tracs.io.batch_files`), coordinates are projected to the
local UTM zone by pyproj on ``--workers`` threads (:func:`tracs.geo.transform_xy`),
trajectories are released by :func:`tracs.release.release_points` (chunks of whole
users through the engine, a progress bar), and the released rows are written back in
the input's order in batches, with the sidecar of :mod:`tracs.release.record`.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .._text import counted, given, significant


def warm_up(method):
    """Load (or compile) the method's kernels in a background thread; join it before perturbing.

    Loading compiled kernels costs a few tenths of a second per process (more when
    they were never compiled); reading the file releases the interpreter lock, so
    the two overlap.  A failure here is ignored: the real call reports it.
    """
    import threading

    def work():
        try:
            method.warm(0)
        except Exception:  # noqa: BLE001 - only a head start
            pass

    thread = threading.Thread(target=work, name="tracs-warm-up", daemon=True)
    if method.warm is not None and not method.discrete:
        thread.start()
    return thread


def released_columns(args) -> dict:
    """The optional released columns asked for: ``--keep-lines``, ``--no-budget-columns``."""
    return dict(keep_lines=bool(getattr(args, "keep_lines", False)),
                budget=not getattr(args, "no_budget_columns", False))


def report_error(args) -> bool:
    """Whether the run prints the average error (``--report-error``): a figure of the true
    points, never printed unless asked."""
    return bool(getattr(args, "report_error", False))


def release_parameters(args, model, crs, public) -> dict:
    """The public parameters of the release ``args`` asks for (:func:`tracs.release.perturb_parameters`):
    the sidecar's data, in process and on Dask."""
    from ..release import perturb_parameters

    return perturb_parameters(args.method, args.epsilon, model, public.region, crs,
                              per_trajectory=args.per_trajectory, split_gap=args.split_gap,
                              round_to_pois=getattr(args, "round_to_pois", False),
                              anchor_given=isinstance(getattr(args, "anchor", None), tuple),
                              from_data=public.from_data, pois_used=public.pois is not None)


def random_argument(args):
    """The ``rng`` of a run: the seed (Philox), or ChaCha20 with ``--secure-rng`` (keyed by the seed or the OS)."""
    if getattr(args, "secure_rng", False):
        from ..random import Secure

        return "secure" if args.seed is None else Secure(args.seed)
    return args.seed


def run(args, method, output: Path, fmt) -> int:
    """Perturb ``args.input`` with the registered ``method`` and write ``output``; print the summary line.

    The release path: the registry builds the method once from the public
    parameters and the budget (per point, or per trajectory: the method splits it),
    and :func:`tracs.release.release_points` releases chunks of whole users through
    :func:`tracs.engine.perturb_many` on ``--workers`` threads.
    """
    from ..engine import average_error, resolve_workers
    from ..io.batch_files import metric_crs, read_points, released_digest, to_metric, to_wgs84, write_released
    from ..methods import MethodContext
    from ..region import Rectangle
    from ..release import release_points, write_perturb_sidecar
    from . import _columns, _output, _public, _startup
    from ._common import CLIError

    source = Path(args.input)
    warm = warm_up(method) if not args.per_trajectory else None
    points = read_points(source, split_gap=args.split_gap, **_columns.read_options(args))
    # the public parameters (tracs.cli._public): rows outside the region, the region's projection
    quiet = getattr(args, "quiet", False)
    try:
        points, handled = _public.points_in_region(points, args)
    except CLIError:  # rows outside the region: first what was dropped before, so the counts add up
        _output.report_drops("perturb", points.attrs["report"], strict=False, others=points.attrs["others"])
        raise
    _output.report_drops("perturb", points.attrs["report"], strict=args.strict,
                         extra=[("clipped" if args.clip else "dropped", handled)], others=points.attrs["others"])
    crs = _public.metric_crs(args, lambda: metric_crs(points))
    threads = resolve_workers(args.workers)
    metres = to_metric(points, crs, workers=threads)
    coords, offsets = metres.coords, metres.offsets
    if len(coords) == 0:
        raise CLIError(f"{source}: no points left to perturb")
    needs_pois = method.discrete or args.round_to_pois
    public = _public.public_parameters(args, crs, lambda pad: Rectangle.bounding(coords, pad=pad),
                                       lambda: np.unique(coords, axis=0), pois_needed=needs_pois)
    if public.box is not None:  # the points of the box outside its inscribed rectangle: onto it
        from ..public import into_region

        coords, moved, most = into_region(coords, public.region)
        if moved:
            print(f"tracs perturb: note: {counted(moved, 'row')} inside the box but outside the region (the "
                  f"rectangle inscribed in the projected box) moved onto its edge, by at most "
                  f"{significant(most)} m", file=sys.stderr)
    ctx = MethodContext(region=public.region, anchor=args.anchor, _poi_space=public.pois,
                        pois=None if public.pois is None else public.pois.points)
    model = method.build(ctx, args.epsilon, per_trajectory=args.per_trajectory)
    if warm is not None and warm.is_alive():
        warm.join()
    _startup.resume()  # imports done, kernels loaded: collect normally from here (tracs.cli._startup)
    # two bars of the points' count: perturbing, then writing (one bar of twice the points misled)
    with _columns.progress_bar(len(coords), quiet=quiet, desc="perturb") as bar:
        done = release_points(model, metres.with_coords(coords),
                              rng=random_argument(args), seed=args.seed, workers=args.workers,
                              round_to=ctx.poi_space if args.round_to_pois and not method.discrete else None,
                              progress=bar.update)
    eps_point, eps_traj, lengths = done.epsilon_point, done.epsilon_trajectory, np.diff(offsets)
    # a figure computed from the true points: only when asked (--report-error; not private)
    ae = average_error(coords, done.coords, offsets, workers=args.workers) if report_error(args) else None
    lonlat = to_wgs84(done.coords, crs, workers=threads)
    del done  # the released metres: only their WGS84 copy is written
    parameters = release_parameters(args, model, crs, public)
    # the digest of the rows, from the columns the writer is given (equal to the file's read back),
    # on a thread while the file is written (the hashing kernel releases the interpreter lock)
    with ThreadPoolExecutor(1) as pool, \
            _columns.progress_bar(len(coords), quiet=quiet, desc=f"write {output.name}") as bar:
        digest = pool.submit(released_digest, points, lonlat, fmt, getattr(args, "geometry", "points"))
        # a temporary file beside the output, renamed into place: never half a file; the sidecar
        # (with the digest of the rows written) is renamed into place first
        _output.write_atomically(output, lambda path: write_released(
            points, lonlat, eps_point, eps_traj, path, fmt, progress=bar.update,
            geometry=getattr(args, "geometry", "points"), parameters=json.dumps(parameters),
            **released_columns(args)),
            before_rename=lambda tmp: write_perturb_sidecar(output, data=parameters, digest=digest.result()),
            command="perturb")

    budget = (f"ε = {given(args.epsilon)} per trajectory ({significant(eps_point.min())}–"
              f"{significant(eps_point.max())} per point)" if args.per_trajectory else
              f"ε = {given(args.epsilon)} per point ({given(eps_traj.min())}–{given(eps_traj.max())} per trajectory)")
    rounded = ", rounded to POIs" if args.round_to_pois and not method.discrete else ""
    error = "" if ae is None else f", AE = {significant(ae)} m (not private)"
    print(f"{method.label}{rounded}: {counted(len(coords), 'point')} in {counted(len(lengths), 'trajectory')}, {budget}"
          f"{error} -> {output} ({fmt.name})")
    return 0
