"""The checks of a release's reports by ``tracs estimate``: in one process, and partition by partition.

:func:`checked_reports`: the reports of a release read in one process must lie in the
region and on the method's public lattice (:mod:`tracs.estimate.reports`).
:func:`check_partitions` (``--engine dask``): the checks of one process
(:func:`tracs.io.parameters.release_parameters` and :func:`checked_reports`) mapped
over the partitions: each partition returns its counts — rows, rows whose ε column differs from the parameters' ε (and up to
three of their values), reports outside the region, reports off the method's lattice —
and the BLAKE2b digests of its rows (:mod:`tracs.io.digest`: 32 bytes a row travel to
the client).  The client adds the counts and combines the digests into the digest of the
whole release (the combination does not depend on the partitioning), then refuses as in
one process.  A direction–distance lattice (TraCS-D, the Strawman) is checked about each
report's reference, the previous report of its trajectory: a trajectory spanning
partitions is first brought into one (as the estimate itself does).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._text import whole
from ._common import CLIError

_COUNTS = ("rows", "epsilon", "outside", "off")


def checked_reports(points, offsets, perturber, data, release: Path, *, clip: bool, command: str):
    """The reports inside the region and on the method's public lattice, clipped into the
    region (the WGS84 round trip's last-digit error); others refused, with their count,
    unless ``clip`` (then a note of the count)."""
    from ..estimate.reports import off_lattice, outside_region

    outside = outside_region(perturber, points)
    points = perturber.region.clip(points)
    off = off_lattice(perturber, points, offsets)
    refuse_off_reports(len(points), int(outside.sum()), 0 if off is None else int((off & ~outside).sum()), data,
                       release, clip=clip, command=command)
    return points


def refuse_off_reports(n: int, outside: int, off: int, data, release: Path, *, clip: bool, command: str) -> None:
    """Refuse a release of ``n`` reports of which ``outside`` lie outside the region and ``off``
    (others) off the method's lattice, naming the counts, unless ``clip`` (then a note)."""
    problems = []
    if outside:
        problems.append(f"{whole(outside)} of {whole(n)} reports are outside the region")
    if off:
        problems.append(f"{whole(off)} of {whole(n)} reports are off the lattice of {data['method']}")
    where = data["sidecar"].name if "sidecar" in data else f"the parameters embedded in {release.name}"
    if problems and not clip:
        raise CLIError(f"{'; '.join(problems)} of {where}: {release.name} is not a release of these parameters "
                       "(another method or region, or a changed file); --clip-reports estimates anyway, "
                       "with those reports clipped into the region")
    if problems:
        print(f"tracs {command}: note: --clip-reports: {'; '.join(problems)}: clipped into the region and "
              "estimated anyway", file=sys.stderr)


def check_partitions(frame, data: dict, perturber, release, *, time, clip: bool, command: str):
    """Check the partitions of ``frame`` (released rows with ``__x`` / ``__y`` in the region's CRS,
    not clipped, and ``__trajectory``) against the parameters ``data``.

    Returns
    -------
    tuple
        ``(frame, shuffle, rows)``: the frame to estimate from (its trajectories in one
        partition each when the lattice needs references), the ``shuffle`` argument of
        :func:`tracs.dask.estimate`, and the number of reports.

    Raises
    ------
    tracs.io.parameters.ReleaseParametersError
        The digest or the ε column disagrees with the parameters.
    tracs.cli._common.CLIError
        Reports off the lattice or outside the region, without ``clip``.
    """
    import dask
    import pandas as pd

    from ..dask import needs_shuffle
    from ..io.digest import DIGEST_COLUMNS, combine
    from ..io.parameters import digest_error, epsilon_column, epsilon_error

    shuffle = "auto"
    if hasattr(getattr(perturber, "lattice", None), "points_about"):
        if needs_shuffle(frame, "__trajectory"):
            frame = frame.shuffle(on="__trajectory")
        shuffle = False
    column = epsilon_column(data)
    meta = pd.DataFrame({**{name: pd.Series(dtype=np.int64) for name in _COUNTS}, "seen": pd.Series(dtype=object)})
    counts = frame.map_partitions(_counts, perturber, column, float(data["epsilon"]), time, meta=meta)
    recorded = data.get("rows_sha256")
    hashes = None if recorded is None else frame.map_partitions(
        _hashes, meta=pd.DataFrame({f"h{i}": pd.Series(dtype=np.uint64) for i in range(4)}))
    counts, hashes = dask.compute(counts, hashes)
    total = {name: int(counts[name].sum()) for name in _COUNTS}
    where = data["sidecar"].name if "sidecar" in data else f"the parameters embedded in {release.name}"
    if recorded is None:
        print(f"tracs {command}: note: {where} records no digest of the rows (a release of an older "
              f"tracs): it cannot be checked to belong to {release.name}", file=sys.stderr)
    else:
        names = [name for name in DIGEST_COLUMNS if name in frame.columns]
        if combine(names, hashes.to_numpy(np.uint64)) != recorded:
            raise digest_error(where, release.name)
    if total["epsilon"]:
        seen = sorted({v for values in counts["seen"] for v in values})
        raise epsilon_error(where, data, total["epsilon"], total["rows"], release.name, seen)
    refuse_off_reports(total["rows"], total["outside"], total["off"], data, release, clip=clip, command=command)
    return frame, shuffle, total["rows"]


def _counts(part, perturber, column: str, epsilon: float, time):
    """One partition's counts (:data:`_COUNTS`) and up to three ε values that differ."""
    import pandas as pd

    from ..dask.estimation import partition_trajectories
    from ..estimate.reports import off_lattice, outside_region
    from ..io.parameters import epsilon_mismatches

    bad, seen = epsilon_mismatches(part[column], {"epsilon": epsilon}) if column in part.columns else (0, [])
    points, offsets, _ = partition_trajectories(part, "__trajectory", None, time, "__x", "__y")
    outside = outside_region(perturber, points)
    off = off_lattice(perturber, perturber.region.clip(points), offsets) if len(points) else None
    return pd.DataFrame({"rows": [len(part)], "epsilon": [bad], "outside": [int(outside.sum())],
                         "off": [0 if off is None else int((off & ~outside).sum())], "seen": [seen]})


def _hashes(part):
    """The BLAKE2b digests of one partition's rows (:func:`tracs.io.digest.row_hashes`)."""
    import pandas as pd

    from ..io.digest import frame_columns, row_hashes

    words = row_hashes(frame_columns(part)) if len(part) else np.zeros((0, 4), np.uint64)
    return pd.DataFrame(words, columns=[f"h{i}" for i in range(4)])
