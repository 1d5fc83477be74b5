"""The release read on Dask by ``tracs estimate`` and ``tracs denoise`` with ``--engine dask``: its partitions
(:func:`dask_reports`: a CSV, a Parquet file or a folder of Parquet parts, reports in metres, ids as keys that
order trajectories as the local engine does), the reports clipped into the region, the cluster's client."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from ._common import CLIError

#: the ε columns read as floats in every partition (whole numbers in one block, fractions in another)
EPSILON_DTYPES = {"epsilon_point": "float64", "epsilon_trajectory": "float64"}


def ordering_ids(values):
    """Ids for ordering: integers as they are, anything else as its text."""
    import pandas as pd

    values = values.reset_index(drop=True)
    return values if pd.api.types.is_integer_dtype(values.dtype) else values.astype(str)


@contextlib.contextmanager
def round_trip_floats():
    """Silence pandas' warning on ``float_precision="round_trip"`` (deprecated, but its default is not
    exact) while partitions are read, in this process."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*float_precision", category=FutureWarning)
        warnings.filterwarnings("ignore", message=".*float_precision", category=DeprecationWarning)
        yield


def dask_reports(release: Path, data, perturber):
    """A release CSV (or a Parquet file or folder of Parquet parts) read in Dask partitions, with the reports in
    metres of the parameters' CRS (``__x``, ``__y``, not clipped) and ``__trajectory``, one value per
    (uid, trajectory) pair."""
    import dask.dataframe as dd
    import pyproj

    if release.is_dir() or release.suffix.lower() == ".parquet":
        frame = dd.read_parquet(release)
    else:
        with round_trip_floats():
            frame = dd.read_csv(release, dtype={"uid": str, "trajectory": str, **EPSILON_DTYPES},
                                keep_default_na=False,
                                na_values={c: [""] for c in ("lat", "lng", "datetime")},
                                float_precision="round_trip")
    missing = [c for c in ("lat", "lng", "trajectory") if c not in frame.columns]
    if missing:
        raise CLIError(f"{release.name} lacks the column(s) {', '.join(missing)}: not a tracs release")
    crs = data["crs"]
    ids = [c for c in ("uid", "trajectory") if c in frame.columns]
    by_value = frame[ids].map_partitions(_ids_by_value, meta={c: bool for c in ids}).compute().all()

    def to_metric(part):
        transform = pyproj.Transformer.from_crs(4326, crs, always_xy=True)
        x, y = transform.transform(part["lng"].to_numpy(float), part["lat"].to_numpy(float))
        out = part.assign(__x=x, __y=y)
        # a trajectory is one (uid, trajectory) pair: trajectory ids are numbered within each user
        key = part["trajectory"].astype(str)
        out["__trajectory"] = part["uid"].astype(str) + "\x1f" + key if "uid" in part.columns else key
        # the ids as the local engine orders them (:func:`_release_points`)
        out["__user"] = _order_key(part["uid"], by_value["uid"]) if "uid" in part.columns else 0
        out["__tid"] = _order_key(part["trajectory"], by_value["trajectory"])
        return out

    return frame.map_partitions(to_metric, meta=to_metric(frame._meta))


def _ids_by_value(part):
    """One row: whether each id column of a partition is ordered by value by :func:`_release_points`
    (integers, or text ids that are all integers in their usual form) rather than as text."""
    import pandas as pd

    from ..io.checkins import canonical_integers

    return pd.DataFrame({c: [len(part) == 0 or pd.api.types.is_integer_dtype(part[c].dtype)
                             or canonical_integers(ordering_ids(part[c])) is not None] for c in part.columns})


def _order_key(ids, by_value: bool):
    """A partition's ids as keys that sort like :func:`tracs.io.checkins.user_order_keys` of the whole column
    (``by_value``: of every partition, :func:`_ids_by_value`)."""
    import pandas as pd

    from ..io.checkins import canonical_integers

    text = ordering_ids(ids)
    if not by_value:
        return text.to_numpy(dtype=object)
    return text.to_numpy(np.int64) if pd.api.types.is_integer_dtype(text.dtype) else canonical_integers(text)


def clipped_reports(frame, region):
    """``frame`` (of :func:`dask_reports`) with its reports clipped into ``region`` (the WGS84 round trip)."""
    def clipped(part):
        xy = region.clip(part[["__x", "__y"]].to_numpy(float))
        return part.assign(__x=xy[:, 0], __y=xy[:, 1])

    return frame.map_partitions(clipped, meta=frame._meta)


@contextlib.contextmanager
def dask_client(workers: int, scheduler):
    """A client of ``scheduler``, or of a local cluster of ``workers`` processes (closed on leaving);
    a CLIError when the dask extra is missing."""
    import os

    try:
        import dask.dataframe  # noqa: F401  (the partitions' reader)
        import distributed
    except ImportError:
        raise CLIError("--engine dask needs the dask extra: pip install 'tracs[dask]'") from None
    client = (distributed.Client(scheduler) if scheduler else
              distributed.Client(distributed.LocalCluster(n_workers=workers or os.cpu_count() or 1,
                                                          threads_per_worker=1, dashboard_address=None)))
    try:
        yield client
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and not scheduler:
            cluster.close()
