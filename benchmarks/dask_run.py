"""The documented Dask scaling run: ``python -m benchmarks.dask_run [--points 1e8]``.

Not part of ``python -m benchmarks`` or CI: it writes ``--points`` synthetic
points (default 10^8: 10^6 users with one 100-point trajectory each, uniform in a
20 km × 10 km box) as a directory of Parquet files, one per chunk of
``--points / --partitions`` rows (each chunk is generated, written and freed, so
memory stays bounded), then perturbs the directory with TraCS-D through
:func:`tracs.dask.perturb` and writes the result as Parquet, on a
``distributed.LocalCluster`` of each worker count in ``--workers`` (one thread per
worker).  It records wall time, each worker's peak RSS and this process's peak
RSS in ``benchmarks/dask_run.json``, which ``--write-docs`` puts in
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

OUTPUT = Path(__file__).with_name("dask_run.json")


def write_points(folder: Path, points: int, partitions: int, length: int = 100) -> int:
    """Write the synthetic points in ``partitions`` Parquet files; return the number of users."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    per = points // partitions
    for i in range(partitions):
        rng = np.random.default_rng([7, i])
        first = i * per
        index = np.arange(first, first + per, dtype=np.int64)
        frame = pd.DataFrame({"uid": index // length, "t": index % length,
                              "x": rng.uniform(0, 20_000, per), "y": rng.uniform(0, 10_000, per)})
        frame.to_parquet(folder / f"part.{i:05d}.parquet", index=False)
    return points // length


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux


def run_once(source: Path, target: Path, workers: int) -> dict:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from tracs import dask as tdask
    from tracs.perturbers import TraCSD
    from tracs.region import Rectangle

    perturber = TraCSD(Rectangle(0.0, 0.0, 20_000.0, 10_000.0), 4.0)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=f"{20 // workers}GB") as cluster, Client(cluster) as client:
        start = time.perf_counter()
        ddf = dd.read_parquet(source)
        out = tdask.perturb(ddf, perturber, seed=1, time="t", x="x", y="y")
        out.to_parquet(target, write_index=False)
        seconds = time.perf_counter() - start
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
    shutil.rmtree(target, ignore_errors=True)
    return {"workers": workers, "seconds": seconds, "worker_memory_gb": max(peaks.values()),
            "rss_gb": _peak_rss_gb(), "load_average_after": os.getloadavg()[0]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_run", description=__doc__)
    parser.add_argument("--points", type=float, default=1e8)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--folder", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--no-record", action="store_true", help="do not write benchmarks/dask_run.json")
    args = parser.parse_args(argv)
    from benchmarks._record import machine

    points = int(args.points)
    scratch = Path(args.folder or tempfile.mkdtemp(prefix="tracs-dask-run-"))
    try:
        start = time.perf_counter()
        users = write_points(scratch / "points", points, args.partitions)
        print(f"wrote {points:,} points of {users:,} users in {args.partitions} files "
              f"in {time.perf_counter() - start:.1f} s")
        runs = []
        for workers in (int(w) for w in args.workers.split(",")):
            result = run_once(scratch / "points", scratch / "released", workers)
            runs.append(result)
            print(f"{workers} worker(s): {result['seconds']:.1f} s, {points / result['seconds'] / 1e6:.2f} M "
                  f"points/s, peak worker RSS {result['worker_memory_gb']:.2f} GB, "
                  f"this process {result['rss_gb']:.2f} GB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    info = machine()
    record = {"date": info["date"], "machine": f"{info['cpu']}, {info['cores']} logical cores",
              "points": points, "users": users, "partitions": args.partitions, "runs": runs,
              "command": "python -m benchmarks.dask_run " + " ".join(argv or [])}
    if not args.no_record:
        OUTPUT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
