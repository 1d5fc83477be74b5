"""``tracs synthesize``: synthetic trajectories from a release, by a mobility model fitted to its reports."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import CLIError, _int_at_least, check_release_path, positive_int, seed_int, writable_file

DESCRIPTION = """\
Fit a mobility model (start cell, cell-to-cell transitions, lengths) on a G × G grid
over the public region to every report of a file released by 'tracs perturb', with
its JSON sidecar, and write N synthetic trajectories sampled from it, in any format
'tracs perturb' writes (columns uid, trajectory, datetime, lat, lng; one synthetic
user per trajectory; no times; --geometry lines: one LineString per trajectory).  The reports are
deconvolved by EM with their exact likelihood (TraCS-D and Strawman: each report's given the
previous one); --binned bins them as they are, keeping their noise in the model.  A
discrete baseline's release (EM, L-SRR, NGram, ATP, TP: its reports are POIs) is always
binned: without --pois its released POIs as they are (a note says so: deconvolving them
needs the POI space); with --pois FILE (the public POIs given to 'tracs perturb', refused
when its POI space is not the one whose digest the sidecar records, pois_sha256) every
report is first replaced by the POI nearest its posterior mean (tracs.estimate.baseline_posterior,
the release's POI frequencies the prior, as 'tracs denoise --pois' does, with ε per
trajectory at every report's per-point ε) and the model is
fitted on these denoised POIs, a plug-in of the posterior for the true points.  Reading
the release is post-processing: no privacy is spent.  The model depends on all
users' reports; the output depends on the seed only through --seed.
"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("synthesize", help="synthetic trajectories from a release",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", metavar="RELEASED", help="file written by 'tracs perturb' (any format it writes)")
    p.add_argument("-n", type=positive_int, required=True, metavar="N", help="number of synthetic trajectories")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                   help="output file; its extension names the format (as for 'tracs perturb')")
    p.add_argument("--grid", type=_int_at_least(2, "an integer >= 2"), default=16, metavar="G",
                   help="G × G cells (default 16, at most 24)")
    p.add_argument("--seed", type=seed_int, default=None, metavar="S",
                   help="seed of the sampling (default: fresh entropy)")
    p.add_argument("--binned", action="store_true",
                   help="bin the reports as they are instead of deconvolving them (fast; noisier)")
    p.add_argument("--pois", default=None, metavar="FILE",
                   help="a discrete baseline's release: its public POIs (CSV with lat and lng columns, the file "
                        "given to 'tracs perturb', checked against the sidecar's pois_sha256); the model is "
                        "fitted on every report's denoised POI (the POI nearest its posterior mean)")
    p.add_argument("--geometry", choices=("points", "lines"), default="points",
                   help="points (default): one row per point; lines: one LineString per trajectory "
                        "(.geojson, .parquet, .gpkg)")


def run(args) -> int:
    import pandas as pd

    from ..estimate.sidecar import perturber_from_sidecar
    from ..estimate.synthesize import fit_mobility_model, synthesize
    from ..io.batch_files import read_batch, write_released
    from ..methods import get
    from .estimate import _read_frame, _release_points, release_parameters, warn_data_derived
    from .perturb import _output_format

    release = Path(args.release)
    check_release_path(release)
    output = writable_file(args.output)
    if output.resolve() == release.resolve():
        raise CLIError("the output would overwrite the release")
    fmt = _output_format(output, args.geometry)
    frame = _read_frame(release)
    data = release_parameters(release, frame, "synthesize")  # refused when they disagree with its rows
    warn_data_derived("synthesize", data)
    entry = get(data["method"])
    if data.get("round_to_pois") and not entry.discrete:
        raise CLIError("the release was rounded to points of interest: its references are not public")
    if data.get("crs") is None:
        raise CLIError("the sidecar names no CRS for its region")
    if entry.discrete:
        model, how = _discrete_model(args, release, frame, data, entry)
    else:
        if args.pois is not None:
            raise CLIError(f"--pois goes with a discrete baseline's release; {release.name} was released by "
                           f"{entry.name} ({entry.label}), whose reports are not POIs")
        perturber = perturber_from_sidecar(data)
        points, offsets, _ = _release_points(frame, data["crs"])
        points = perturber.region.clip(points)  # undo the WGS84 round trip's last-digit error
        model = fit_mobility_model(points, perturber, offsets=offsets, grid=args.grid, crs=data["crs"],
                                   binned=args.binned)
        how = model.method
    synthetic = synthesize(model, args.n, rng=args.seed)
    total = len(synthetic.coords)
    lengths = np.diff(synthetic.offsets)
    rows = read_batch(synthetic.lonlat(), synthetic.offsets,
                      pd.Series(np.repeat(np.arange(args.n, dtype=np.int64), lengths)),
                      np.full(total, np.datetime64("NaT"), dtype="datetime64[ns]"), np.arange(total, dtype=np.int64))
    write_released(rows, rows.coords, None, None, output, fmt, geometry=args.geometry, budget=False)
    from .._text import given, whole

    print(f"{data['method']} at ε = {given(data['epsilon'])}: {whole(len(frame))} reports, "
          f"{args.grid}×{args.grid} grid ({how}) -> {whole(args.n)} trajectories, "
          f"{whole(total)} points -> {output}")
    return 0


def _discrete_model(args, release: Path, frame, data: dict, entry):
    """The binned model of a discrete baseline's release: its released POIs as they are, or (--pois) every
    report's denoised POI (the POI nearest its posterior mean, as ``tracs denoise --pois`` writes it);
    and how it was fitted."""
    import sys

    from ..estimate.synthesize import binned_mobility_model
    from . import _discrete
    from .estimate import _release_points, reports_on_pois

    if args.pois is None:
        points, offsets, _ = _release_points(frame, data["crs"])
        print(f"tracs synthesize: note: {release.name} was released by {entry.name} ({entry.label}), a discrete "
              "baseline: its released POIs are binned as they are (as --binned; their noise stays in the model), "
              "as deconvolving them needs the POI space: give --pois FILE to fit the model on every report's "
              "denoised POI", file=sys.stderr)
        points, how = data["region"].clip(points), "binned"
    else:
        _, offsets, space, baseline, indices = reports_on_pois(release, Path(args.pois), frame, data, "synthesize")
        denoised = _discrete.posterior(indices, offsets, baseline, entry, release, "mean")
        points, how = space.points[denoised], "binned denoised POIs (nearest the posterior means)"
    model = binned_mobility_model(points, data["region"], offsets=offsets, grid=args.grid, crs=data["crs"])
    return model, how
