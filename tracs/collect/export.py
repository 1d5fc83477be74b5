"""The stored reports as a release, and the density estimated from them.

:func:`write_export` writes the reports with the release tables and writers of ``tracs
perturb`` (:func:`tracs.io.batch_files.released_table`: the columns ``uid``, ``trajectory``,
``datetime``, ``lat``, ``lng``, ``epsilon_point``, ``epsilon_trajectory``), streamed in
chunks of whole trajectories for the formats written in batches (CSV, Parquet), and the
sidecar of its public parameters (:func:`tracs.estimate.sidecar.write_sidecar`), so
``tracs estimate`` reads it like any release (``tracs serve`` answers an estimate of a
method whose density is not kept from counts with that command on the export:
:func:`tracs.cli.serve.estimate_csv`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ..estimate.sidecar import write_sidecar
from ..io.formats import output_format
from ..io.batch_files import (read_batch, released_digest, released_row_hashes, released_table, to_wgs84,
                              write_released)
from ..io.digest import SpilledRowHashes
from ..io.write import bounds

__all__ = ["write_export"]


def _points(devices: list, c: dict, crs):
    """The stored reports as the command line's batch (:func:`tracs.io.batch_files.read_batch`: one
    trajectory per ``(device, trajectory)``, in index order) and their WGS84 positions."""
    import pandas as pd

    n = len(devices)
    uid = pd.Series(devices, dtype=object)
    new = np.r_[True, (uid.to_numpy()[1:] != uid.to_numpy()[:-1]) | (c["trajectory"][1:] != c["trajectory"][:-1])] \
        if n else np.zeros(0, bool)
    offsets = np.r_[np.flatnonzero(new), n].astype(np.int64)
    points = read_batch(np.zeros((n, 2)), offsets, uid, c["time"].astype("datetime64[ns]"),
                        np.arange(n, dtype=np.int64), traj=pd.Series(c["trajectory"]))
    lonlat = to_wgs84(np.column_stack([c["x"], c["y"]]), crs) if n else np.zeros((0, 2))
    return points, lonlat


def _tables(store, crs, fmt, rows: SpilledRowHashes):
    """The release's tables, one per chunk of whole trajectories (:meth:`Store.report_chunks`),
    each chunk's row digests added to ``rows``, and the WGS84 ``(min, max)`` of every
    released point (a first pass over the chunks)."""
    low, high = np.full(2, np.inf), np.full(2, -np.inf)
    for devices, c in store.report_chunks():
        b = bounds(_points(devices, c, crs)[1])
        low, high = np.minimum(low, b[0]), np.maximum(high, b[1])

    def tables():
        for devices, c in store.report_chunks():
            points, lonlat = _points(devices, c, crs)
            rows.add(*released_row_hashes(points, lonlat, fmt))
            lengths = np.diff(points.offsets)
            eps_point = c["epsilon"]
            eps_traj = np.repeat(np.add.reduceat(eps_point, points.offsets[:-1]), lengths)
            yield released_table(points, lonlat, eps_point, eps_traj, text_times=fmt.text_times)

    return tables(), (low.tolist(), high.tolist())


def write_export(store, parameters, path) -> Path:
    """Write every stored report to ``path`` (its extension names the format) and its sidecar,
    streaming the reports in chunks of whole trajectories (never all in memory).

    The sidecar records the digest of the rows (``rows_sha256``, as ``tracs perturb``
    writes it), so ``tracs estimate`` and the other commands check that the file is the
    one it describes; the row digests of a streamed export wait on disk in the folder of
    ``path`` (:class:`tracs.io.digest.SpilledRowHashes`), not in memory.
    """
    path = Path(path)
    fmt = output_format(path)
    if store.count() == 0 or not fmt.batch_rows:  # an empty release, or a format written from one table
        devices, c = store.reports()
        points, lonlat = _points(devices, c, parameters.crs)
        eps_point = c["epsilon"]
        eps_traj = np.repeat(np.add.reduceat(eps_point, points.offsets[:-1]) if len(eps_point) else eps_point,
                             np.diff(points.offsets))
        write_released(points, lonlat, eps_point, eps_traj, path)
        digest = released_digest(points, lonlat, fmt)
    else:
        with tempfile.TemporaryDirectory(prefix=".tracs-rows-", dir=path.parent) as folder, \
                SpilledRowHashes(folder) as rows:
            tables, bbox = _tables(store, parameters.crs, fmt, rows)
            fmt.writer()(tables, path, bbox=bbox)
            digest = rows.hexdigest()
    model = parameters.perturber()
    sources = {"region": "public", **({"anchor": "public"} if getattr(model, "anchor_point", None) else {})}
    write_sidecar(path, method=parameters.method, epsilon=parameters.epsilon, per_trajectory=False,
                  region=model.region, crs=parameters.crs, perturber=model, sources=sources, digest=digest)
    return path
