"""``tracs denoise``: every released point replaced by the posterior mean of its true point."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import CLIError, writable_file

DESCRIPTION = """\
Replace every point of a file released by 'tracs perturb' with the posterior mean
of its true point: the density of the true points is estimated from the release
and its JSON sidecar (as 'tracs estimate' does, on --grid G × G cells) and is the
prior; the method's exact report likelihood gives the posterior of every point
(tracs.estimate.denoise).  This is post-processing: only the release and its
public parameters are read.  TraCS-C, TraCS-D and Strawman releases.  With
--trajectory every point is the posterior mean given all the reports of its
trajectory (forward-backward smoothing; the model of the steps between consecutive
points is fitted from the release).  The output has the release's
rows and columns in file order, lat/lng replaced, and a column 'denoised' saying
how every point was made ("posterior mean" or "smoothed"); no sidecar is written, as the points
are no longer the method's reports (estimate from the release itself).  Its
format follows the extension: .csv, .tsv or .parquet.
"""

#: the value of the output's ``denoised`` column (per point, per trajectory)
DENOISED = "posterior mean"
SMOOTHED = "smoothed"
SUFFIXES = (".csv", ".tsv", ".parquet")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("denoise", help="replace released points by posterior means of the true points",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", metavar="RELEASED", help="file written by 'tracs perturb' (TraCS-C, TraCS-D or Strawman)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help=".csv, .tsv or .parquet")
    p.add_argument("--grid", type=int, default=64, metavar="G",
                   help="G × G cells of the estimated density, the prior (default 64)")
    p.add_argument("--trajectory", action="store_true",
                   help="smooth every trajectory: posterior means given all its reports")


def _check_method(release: Path) -> None:
    """A release whose sidecar names a method other than TraCS-C is refused before any work."""
    from ..estimate.grid_density import check_perturber
    from ..estimate.sidecar import perturber_from_sidecar, read_sidecar

    try:
        data = read_sidecar(release)
        family = check_perturber(perturber_from_sidecar(data))
    except (OSError, ValueError, TypeError, KeyError):
        return  # the estimate names what is wrong with the sidecar
    if family not in ("axes", "directional"):
        raise CLIError(f"tracs denoise supports TraCS-C, TraCS-D and Strawman releases; {release.name} "
                       f"was released by {data['method']}")


def run(args) -> int:
    import pyproj

    from ..estimate.denoise import denoise
    from ..estimate.sidecar import perturber_from_sidecar
    from .estimate import _read_frame, _release_points, estimate_release

    release = Path(args.release)
    if not release.is_file():
        raise CLIError(f"no such file: {release}")
    output = writable_file(args.output)
    if output.suffix.lower() not in SUFFIXES:
        raise CLIError(f"cannot tell the output format of {output.name}: use {', '.join(SUFFIXES)}")
    if output.exists() and output.resolve() == release.resolve():
        raise CLIError("the output would overwrite the release: give another file")
    _check_method(release)
    est, data, n = estimate_release(release, args.grid, command="denoise")
    perturber = perturber_from_sidecar(data)
    points, offsets, frame = _release_points(_read_frame(release), data["crs"])
    den = denoise(perturber.region.clip(points), perturber, est, offsets=offsets, trajectory=args.trajectory)
    lng, lat = pyproj.Transformer.from_crs(data["crs"], 4326, always_xy=True).transform(den[:, 0], den[:, 1])
    how = SMOOTHED if args.trajectory else DENOISED
    frame = frame.assign(lat=lat, lng=lng, denoised=how).sort_index()  # back to file order
    if output.suffix.lower() == ".parquet":
        frame.to_parquet(output, index=False)
    else:
        frame.to_csv(output, index=False, sep="\t" if output.suffix.lower() == ".tsv" else ",")
    from .._text import given, whole

    print(f"{data['method']} at ε = {given(data['epsilon'])}: {whole(n)} points "
          f"{'smoothed per trajectory' if args.trajectory else 'denoised'} "
          f"({args.grid}×{args.grid} prior, {whole(est.iterations)} EM passes) -> {output}")
    return 0
