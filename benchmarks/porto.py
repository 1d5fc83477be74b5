"""Streaming read of a Porto-shaped taxi file: points per second and peak memory.

Writes, in a temporary folder, a file in the layout of the ECML/PKDD 2015
``train.csv`` (quoted fields, one trip per line, ``POLYLINE`` of 1–95 points,
0.3 % empty trips) holding at least 10^7 points (10^5 with ``--quick``), then
reads it in a fresh Python process per reader, so that the peak resident memory
(``VmHWM`` of ``/proc/self/status``; ``ru_maxrss`` elsewhere) is that reader's alone.
A file twice as large is read the same way: equal peaks show the memory does not
grow with the file (it is set by the block and the CSV reader's read-ahead of a few
blocks, reached within the first blocks).  Readers:

* ``read_porto_blocks``: the format table's block reader (the points' columns of each block, with its notes);
* ``iter_porto``: the loaders' GeoDataFrame of every block (checks, order, report);
* ``import only``: the same process doing nothing but the imports (the baseline).

The full file (1.7 M trips, about 83 M points, 1.9 GB) is read the same way: the
memory of a streaming read is bounded by its block (``chunk_bytes``, 8 MB of text
by default), not by the file.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._record import record

POINTS = 10_000_000
QUICK_POINTS = 100_000
_CHILD = r"""
import resource, sys, time
import data_loaders
from tracs.io.porto import read_porto_blocks
path, mode = sys.argv[1], sys.argv[2]
start = time.perf_counter()
points = 0
if mode == "columns":
    for raw in read_porto_blocks(path):
        points += len(raw.lines)
elif mode == "frames":
    for frame in data_loaders.iter_porto(path):
        points += len(frame)
seconds = time.perf_counter() - start
try:  # the high-water mark of this process's own memory (ru_maxrss may include the parent's at fork)
    with open("/proc/self/status") as fh:
        peak = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(points, seconds, peak)
"""


def write_porto_like(path: Path, points: int, *, seed: int = 0, batch_trips: int = 50_000) -> tuple[int, int]:
    """A file in the Porto layout with at least ``points`` points; returns (trips, points)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 96, points // 40 + 1000)  # more than enough trips: cut below
    lengths[rng.random(len(lengths)) < 0.003] = 0
    lengths = lengths[:int(np.searchsorted(np.cumsum(lengths), points)) + 1]
    names = ["TRIP_ID", "CALL_TYPE", "ORIGIN_CALL", "ORIGIN_STAND", "TAXI_ID", "TIMESTAMP", "DAY_TYPE",
             "MISSING_DATA", "POLYLINE"]
    options = pcsv.WriteOptions(quoting_style="all_valid")
    with pcsv.CSVWriter(path, pa.schema([(n, pa.string()) for n in names]), write_options=options) as writer:
        for first in range(0, len(lengths), batch_trips):
            n = lengths[first:first + batch_trips]
            k = np.arange(first, first + len(n))
            total = int(n.sum())
            lon = pa.array(np.round(-8.7 + 0.2 * rng.random(total), 6)).cast(pa.string())
            lat = pa.array(np.round(41.1 + 0.1 * rng.random(total), 6)).cast(pa.string())
            pairs = pc.binary_join_element_wise("[", lon, ",", lat, "]", "")
            offsets = pa.array(np.r_[0, np.cumsum(n)].astype(np.int32))
            inner = pc.binary_join(pa.ListArray.from_arrays(offsets, pairs), ",")
            polyline = pc.binary_join_element_wise("[", inner, "]", "")
            start = 1372636800 + 180 * k
            taxi = 20000001 + k % 448
            columns = {
                "TRIP_ID": pa.array((start * 10**9 + 620000000 + taxi).astype(str)),
                "CALL_TYPE": pa.array(np.full(len(n), "C")), "ORIGIN_CALL": pa.array(np.full(len(n), "")),
                "ORIGIN_STAND": pa.array(np.full(len(n), "")), "TAXI_ID": pa.array(taxi.astype(str)),
                "TIMESTAMP": pa.array(start.astype(str)), "DAY_TYPE": pa.array(np.full(len(n), "A")),
                "MISSING_DATA": pa.array(np.full(len(n), "False")), "POLYLINE": polyline}
            writer.write_table(pa.table({c: columns[c].cast(pa.string()) for c in names}))
    return len(lengths), int(lengths.sum())


def _child(path: Path, mode: str):
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode], capture_output=True, text=True,
                         check=True)
    points, seconds, rss = out.stdout.split()
    return int(points), float(seconds), int(rss)


def run(quick: bool = False) -> None:
    target = QUICK_POINTS if quick else POINTS
    with tempfile.TemporaryDirectory() as tmp:
        print(f"\n## porto streaming read (files of {target:,} and {2 * target:,} points, Porto layout)")
        print(f"{'reader':<22} {'points':>12} {'MB':>6} {'seconds':>9} {'points/s':>12} {'peak RSS':>10} {'vs prev':>8}")
        for size in (target, 2 * target):
            path = Path(tmp) / f"train-{size}.csv"
            start = time.perf_counter()
            trips, points = write_porto_like(path, size)
            megabytes = path.stat().st_size / 1e6
            print(f"  (wrote {trips:,} trips, {points:,} points, {megabytes:,.0f} MB in "
                  f"{time.perf_counter() - start:.0f} s)")
            _, _, base = _child(path, "none")
            print(f"{'import only':<22} {'-':>12} {'-':>6} {'-':>9} {'-':>12} {base / 1e6:>7,.0f} MB {'':>8}")
            for mode, name in (("columns", "read_porto_blocks"), ("frames", "iter_porto")):
                n, seconds, rss = _child(path, mode)
                if n != points:
                    raise AssertionError(f"{name} read {n:,} points of {points:,}")
                prev = "-"
                if size == target:
                    prev = record(f"porto streaming read / {name}", n / seconds, "points/s")
                    record(f"porto streaming read / {name} peak RSS", rss, "bytes")
                print(f"{name:<22} {n:>12,} {megabytes:>6,.0f} {seconds:>9.1f} {n / seconds:>12,.0f} "
                      f"{rss / 1e6:>7,.0f} MB {prev:>8}")
            path.unlink()


if __name__ == "__main__":
    run("--quick" in sys.argv)
