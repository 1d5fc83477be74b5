"""``tracs denoise``: every released point replaced by the posterior mean (or a posterior POI) of its true point."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import CLIError, check_release_path, writable_file
from .estimate import add_engine_arguments

DESCRIPTION = """\
Replace every point of a file released by 'tracs perturb' with the posterior mean
of its true point: the density of the true points is estimated from the release
and its JSON sidecar (as 'tracs estimate' does, on --grid G × G cells) and is the
prior; the method's exact report likelihood gives the posterior of every point
(tracs.estimate.denoise).  This is post-processing: only the release and its
public parameters are read.  TraCS-C, TraCS-D (and its paper variant), Strawman,
planar Laplace and the discrete baselines' releases (a file, or a folder of Parquet parts written by 'tracs
perturb --engine dask').  With --trajectory
(TraCS-C, TraCS-D, Strawman) every point is the posterior mean given all the reports of its
trajectory (forward-backward smoothing; the model of the steps between consecutive
points is fitted from the release).  With --pois FILE (public points of interest,
a CSV with lat and lng columns: the true points are among them) the posterior is
over the POIs and every point becomes a POI: the POI nearest the posterior mean
(--rule mean, the default) or the posterior mode (--rule mode); with
--trajectory the prior of every point's POI is given the other reports of its
trajectory, mixed with the posteriors of the trajectory's other reports, as
trajectories come back to the same POIs (--revisit A: the weight of the prior
given the trajectory, in points, default 4; --revisit none: that prior alone).
A discrete baseline's release (EM, L-SRR, NGram, ATP, TP: its reports
are POIs) needs --pois, the POI file given to 'tracs perturb' (its POI space must have
the digest the sidecar records, pois_sha256; every released point must be one of its
POIs), and is denoised per point (with --trajectory, but not for NGram, under the same
revisit prior, the POI frequencies its base): the prior is the POI
frequencies estimated from the release, the method's exact law gives every report's
posterior over the POIs (tracs.estimate.baseline_posterior; --grid is not used),
with ε per trajectory at every report's per-point ε (the budget over its trajectory's
length, which must be the release's epsilon_point); a method the posterior does not take
yet is refused with its name.  The output
has the release's rows and columns in file order (ids and ε as the release writes
them), lat/lng replaced, and a column 'denoised' saying how every point was made
("posterior mean", "smoothed", "posterior mode at a POI", ...); no sidecar is
written, as the points are no longer the method's reports (estimate from the
release itself).  Its format follows the extension: .csv, .tsv or .parquet.
--workers N runs the prior's fit and the denoising on N threads (the output is the
same for every N).  With --engine dask the release (a
CSV, a Parquet file or a folder of Parquet parts) is read and checked in partitions
on a Dask cluster (as 'tracs estimate --engine dask'), the prior is fitted over the
partitions and every partition is denoised given it (tracs.dask.denoise): the output
is the local engine's, rows in file order (--scheduler ADDRESS: a running cluster;
default a local cluster of --workers processes).  A discrete baseline's release is
denoised by the local engine only.
"""

SUFFIXES = (".csv", ".tsv", ".parquet")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("denoise", help="replace released points by posterior means of the true points",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", metavar="RELEASED", help="file (or Parquet folder) written by 'tracs perturb' (TraCS-C, TraCS-D, Strawman, "
                        "planar Laplace; a discrete baseline's with --pois)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help=".csv, .tsv or .parquet")
    p.add_argument("--grid", type=int, default=64, metavar="G",
                   help="G × G cells of the estimated density, the prior (default 64; not used for a "
                        "discrete baseline's release, whose prior is its POI frequencies)")
    p.add_argument("--trajectory", action="store_true",
                   help="smooth every trajectory: posterior means given all its reports (TraCS-C, TraCS-D, "
                        "Strawman)")
    p.add_argument("--pois", default=None, metavar="FILE",
                   help="public points of interest (CSV with lat and lng columns) the true points are "
                        "among: the posterior is over them and every output point is one of them; required "
                        "for a discrete baseline's release (the POI file given to 'tracs perturb', checked "
                        "against the sidecar's pois_sha256)")
    p.add_argument("--rule", choices=("mode", "mean"), default=None,
                   help="with --pois: the POI nearest the posterior mean (default) or the posterior mode")
    p.add_argument("--revisit", type=_revisit, default=None, metavar="A",
                   help="with --pois and --trajectory: the weight, in points, of a POI's prior given the "
                        "trajectory against the posteriors of the trajectory's other reports (default 4), "
                        "or 'none' for that prior alone")
    add_engine_arguments(p, "threads of the prior's fit and of the denoising",
                         "the release is read, checked and denoised in its partitions, the prior fitted over them")


def _revisit(text: str):
    """``--revisit``: a finite number > 0, or ``none``."""
    if text.strip().lower() == "none":
        return "none"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'none', got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0 or 'none', got {text!r}")
    return value


def _revisit_weight(args):
    """The ``revisit=`` weight of ``--revisit``: the library's default when not given, None for ``none``."""
    from ..estimate.revisits import REVISIT

    if args.revisit is None:
        return REVISIT
    return None if args.revisit == "none" else args.revisit


def _revisit_text(args) -> str:
    """How the POI prior given the trajectory was mixed, for the summary line."""
    from .._text import given

    if not args.trajectory:
        return ""
    weight = _revisit_weight(args)
    return ", no revisits" if weight is None else f", revisit weight {given(weight)}"


def _check_method(release: Path, trajectory: bool) -> None:
    """A release whose method has no denoiser (or, with --trajectory, no smoother) is refused before any work."""
    from ..estimate.grid_density import check_perturber
    from ..estimate.sidecar import perturber_from_sidecar, read_sidecar

    try:
        data = read_sidecar(release)
        family = check_perturber(perturber_from_sidecar(data))
    except (OSError, ValueError, TypeError, KeyError):
        return  # the estimate names what is wrong with the sidecar
    if family not in ("axes", "directional", "grid"):
        raise CLIError(f"tracs denoise supports TraCS-C, TraCS-D, Strawman and planar Laplace releases and the "
                       f"discrete baselines' (with --pois); {release.name} was released by {data['method']}")
    if trajectory and family == "grid":
        raise CLIError(f"tracs denoise --trajectory supports TraCS-C, TraCS-D and Strawman releases; "
                       f"{release.name} was released by {data['method']} (denoise it per point)")


def _read_pois(path: Path, crs, region) -> np.ndarray:
    """The POIs of a CSV with lat and lng columns, in the release's CRS; every one inside its region."""
    from ._discrete import projected_pois

    pois = projected_pois(path, crs)
    outside = ~region.contains(pois)
    if outside.any():
        lines = ", ".join(str(int(i) + 2) for i in np.flatnonzero(outside)[:5])
        raise CLIError(f"{path.name}: {int(outside.sum())} POI(s) outside the release's region (lines {lines})")
    return pois


def _epsilon_as_written(frame, text: bool):
    """The release's ε columns as written: whole numbers stay whole (``222``, not ``222.0``); in a text
    file also beside other values (a budget per trajectory: ``5`` and ``1.6666666666666667``)."""
    for column in ("epsilon_point", "epsilon_trajectory"):
        if column in frame.columns and frame[column].dtype.kind == "f":
            values = frame[column].to_numpy()
            whole = np.isfinite(values) & (values == np.round(values))
            if whole.all():
                frame[column] = values.astype(np.int64)
            elif text and whole.any():
                mixed = values.astype(object)
                mixed[whole] = values[whole].astype(np.int64).astype(object)
                frame[column] = mixed
    return frame


def _write(frame, output: Path) -> None:
    """The denoised rows in file order, ε as written, in the output's format."""
    frame = _epsilon_as_written(frame.sort_index(), output.suffix.lower() != ".parquet")  # back to file order
    if output.suffix.lower() == ".parquet":
        frame.to_parquet(output, index=False)
    else:
        frame.to_csv(output, index=False, sep="\t" if output.suffix.lower() == ".tsv" else ",")


def _to_wgs84(points: np.ndarray, crs) -> tuple[np.ndarray, np.ndarray]:
    """``(lat, lng)`` of points in metres of ``crs``."""
    from ..geo import transform_xy

    lng, lat = transform_xy(points[:, 0], points[:, 1], crs, 4326)
    return lat, lng


def _denoise_discrete(args, release: Path, output: Path, entry) -> int:
    """A discrete baseline's release: every report replaced by its posterior POI
    (:func:`tracs.estimate.baseline_posterior`) over the POIs of --pois."""
    from ..estimate.denoising import how_denoised
    from . import _discrete
    from .estimate import discrete_reports

    if args.engine == "dask":
        raise CLIError(f"tracs denoise --engine dask supports TraCS-C, TraCS-D, Strawman and planar Laplace "
                       f"releases; {release.name} was released by {entry.name} ({entry.label}), a discrete "
                       "baseline (leave out --engine dask)")
    if args.trajectory and entry.name == "ngram":
        raise CLIError(f"tracs denoise --trajectory: {release.name} was released by {entry.name} ({entry.label}), "
                       "whose posterior given the trajectory (the revisit prior) is not built: its reports are "
                       "denoised per point only (leave out --trajectory)")
    if args.pois is None:
        raise _discrete.missing_pois(entry, release, "denoise", "the posterior of every report")
    data, frame, offsets, space, baseline, indices = discrete_reports(release, Path(args.pois), "denoise")
    rule = args.rule or "mean"
    revisit = _revisit_weight(args) if args.trajectory else None
    picked = _discrete.posterior(indices, offsets, baseline, entry, release, rule, revisit=revisit)
    lat, lng = _to_wgs84(space.points[picked], data["crs"])
    _write(frame.assign(lat=lat, lng=lng, denoised=how_denoised(args.trajectory, args.pois, rule)), output)
    from .._text import whole

    print(f"{data['method']} at {_discrete.budget(data)}: {whole(len(indices))} points denoised onto "
          f"{whole(len(space))} POIs ({rule} of the posterior{_revisit_text(args)}, the POI frequencies of the "
          f"release the prior) -> {output}")
    return 0


def _denoise_dask(args, release: Path):
    """``(prior, parameters, reports, pois, rows)``: the release read, checked and denoised in Dask partitions
    (:func:`tracs.dask.denoise`), the prior fitted over them as the local engine fits it; ``rows`` holds
    ``lat`` and ``lng`` of every row in file order."""
    import pandas as pd

    from ..dask import denoise, estimate, with_row_numbers
    from ..estimate.sidecar import read_sidecar
    from ._release_checks import check_partitions
    from ._dask_reading import clipped_reports, dask_client, dask_reports, round_trip_floats
    from .estimate import check_grid, public_model

    check_grid(args.grid)
    data = read_sidecar(release)
    _, perturber = public_model(release, data, "denoise")
    pois = None if args.pois is None else _read_pois(Path(args.pois), data["crs"], perturber.region)
    crs = data["crs"]

    def to_wgs84(part):  # the client receives the points only: ``denoised`` is the same on every row
        lat, lng = _to_wgs84(part[["__x", "__y"]].to_numpy(float), crs)
        return pd.DataFrame({"lat": lat, "lng": lng}, index=part.index)

    meta = pd.DataFrame({"lat": pd.Series(dtype=float), "lng": pd.Series(dtype=float)})
    with dask_client(args.workers, args.scheduler), round_trip_floats():
        frame = with_row_numbers(dask_reports(release, data, perturber))  # index: the row's position in the file
        time = "datetime" if "datetime" in frame.columns else None
        frame, shuffle, n = check_partitions(frame, data, perturber, release, time=time, clip=False,
                                             command="denoise")
        frame = clipped_reports(frame, perturber.region)
        columns = {"user": "__user", "time": time, "x": "__x", "y": "__y", "shuffle": shuffle}
        est = estimate(frame, perturber, grid=(args.grid, args.grid), smoothing="auto", trajectory="__tid", **columns)
        done = denoise(frame, perturber, prior=est, trajectory=args.trajectory, pois=pois, rule=args.rule or "mean",
                       trajectory_column="__tid", revisit=_revisit_weight(args), **columns)
        rows = done.map_partitions(to_wgs84, meta=meta).compute().sort_index()
    return est, data, n, pois, rows


def run(args) -> int:
    from ..estimate.denoising import denoise, how_denoised
    from ..estimate.sidecar import perturber_from_sidecar
    from ._discrete import release_entry
    from .estimate import _read_frame, _release_points, estimate_release

    release = Path(args.release)
    check_release_path(release)
    output = writable_file(args.output)
    if output.suffix.lower() not in SUFFIXES:
        raise CLIError(f"cannot tell the output format of {output.name}: use {', '.join(SUFFIXES)}")
    if output.exists() and output.resolve() == release.resolve():
        raise CLIError("the output would overwrite the release: give another file")
    if args.scheduler is not None and args.engine != "dask":
        raise CLIError("--scheduler goes with --engine dask")
    if args.rule is not None and args.pois is None:
        raise CLIError("--rule goes with --pois (the denoised point is a POI)")
    if args.revisit is not None and (args.pois is None or not args.trajectory):
        raise CLIError("--revisit goes with --pois and --trajectory (the prior of a POI given the trajectory)")
    if args.pois is not None and not Path(args.pois).is_file():
        raise CLIError(f"no such POI file: {args.pois}")
    entry = release_entry(release)
    if entry is not None and entry.discrete:
        return _denoise_discrete(args, release, output, entry)
    _check_method(release, args.trajectory)
    rule = args.rule or "mean"
    how = how_denoised(args.trajectory, args.pois, rule)
    if args.engine == "dask":
        est, data, n, pois, done = _denoise_dask(args, release)
        frame = _read_frame(release)
        frame = frame.set_axis(np.arange(len(frame))).assign(lat=done["lat"].to_numpy(),
                                                             lng=done["lng"].to_numpy(), denoised=how)
    else:
        est, data, n = estimate_release(release, args.grid, command="denoise", workers=args.workers)
        perturber = perturber_from_sidecar(data)
        pois = None if args.pois is None else _read_pois(Path(args.pois), data["crs"], perturber.region)
        points, offsets, frame = _release_points(_read_frame(release), data["crs"])
        den = denoise(perturber.region.clip(points), perturber, est, offsets=offsets, trajectory=args.trajectory,
                      pois=pois, rule=rule, workers=args.workers, revisit=_revisit_weight(args))
        lat, lng = _to_wgs84(den, data["crs"])
        frame = frame.assign(lat=lat, lng=lng, denoised=how)
    _write(frame, output)
    from .._text import given, whole

    print(f"{data['method']} at ε = {given(data['epsilon'])}: {whole(n)} points "
          f"{'smoothed per trajectory' if args.trajectory else 'denoised'}"
          f"{'' if pois is None else f' onto {whole(len(pois))} POIs ({rule} of the posterior{_revisit_text(args)})'} "
          f"({args.grid}×{args.grid} prior, {whole(est.iterations)} EM passes) -> {output}")
    return 0
