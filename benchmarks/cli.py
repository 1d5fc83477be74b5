"""Command-line benchmark: ``tracs perturb`` on a generated Foursquare-like file against a
plain pyarrow read + write of the same file, measured in the same run.

For ``n`` rows (10^6; 10^5 with ``--quick``) the section writes a Foursquare
TSMC2014-style CSV (eight columns, rows in time order, users interleaved) and the
same table as Parquet into a temporary folder, then runs, each in its own
process:

* ``plain CSV``: ``pyarrow.csv.read_csv`` + ``pyarrow.csv.write_csv`` of the file;
* ``tracs perturb -m tracs-c`` CSV -> CSV;
* ``plain Parquet``: ``pyarrow.parquet.read_table`` + ``write_table``;
* ``tracs perturb -m tracs-c`` Parquet -> Parquet (``--input-format foursquare``);
* the first call of a TraCS-C kernel in a fresh process with an empty numba cache
  folder (kernels never compiled) and again with that folder filled (every later
  run);
* the same first call right after installing: ``pip wheel`` builds a clean copy of
  the package in an isolated build environment, as ``pip install`` does (its
  build step compiles the kernels, ``build_kernels.py``), ``pip install --target``
  unpacks the wheel into a new folder (new paths and file times) and a fresh
  process calls the kernel with numba's default cache location, counting the
  kernels it compiles;
* ``tracs perturb`` of the first 10^4 rows with an empty cache folder and again
  with it filled: the difference is what compiling costs a user on the first run
  (the command loads kernels in a background thread while it reads the file).

Wall-clock seconds and peak resident memory (``getrusage(RUSAGE_CHILDREN)`` of a
launcher that runs only that command) are printed with the ratios; each plain
read + write and its ``tracs perturb`` run in turn three times (once with
``--quick``) and the fastest run of each is kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_CSV_RATIO = 4.0
TARGET_PARQUET_RATIO = 2.5
TARGET_RSS_MB = 500.0
TARGET_COMPILE_S = 0.3

_LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
seconds = time.perf_counter() - start
if done.returncode:
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
print(seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

_PLAIN_CSV = ("import sys, pyarrow.csv as c; "
              "c.write_csv(c.read_csv(sys.argv[1]), sys.argv[2])")
_PLAIN_PARQUET = ("import sys, pyarrow.parquet as q; "
                  "q.write_table(q.read_table(sys.argv[1]), sys.argv[2])")
_FIRST_CALL = """
import time, numpy as np
from numba.core import event
from tracs.perturbers import TraCSC
from tracs.region import Rectangle
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__module__)
event.register("numba:compile", Count())
p = TraCSC(Rectangle(0, 0, 1000, 1000), epsilon=2.0)
xy = np.array([[1.0, 2.0], [3.0, 4.0]])
start = time.perf_counter()
p.perturb_many(xy, np.array([0, 2]), rng=0)
print(sum(m.startswith("tracs") for m in compiled), time.perf_counter() - start)
"""


def foursquare_table(n: int, *, users: int = 1000, venues: int = 60000, seed: int = 0):
    """A Foursquare TSMC2014-like Arrow table of ``n`` check-ins in time order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    start = np.datetime64("2012-04-03T00:00:00", "s").astype(np.int64)
    seconds = np.sort(rng.integers(start, start + 300 * 86400, n))
    venue = rng.integers(0, venues, n)
    lat = 35.5 + 0.4 * rng.random(venues)
    lng = 139.5 + 0.5 * rng.random(venues)
    venue_ids = pa.array([f"{v:024x}" for v in range(venues)])
    names = pa.array(["Train Station", "Bar", "Ramen / Noodle House", "Office", "Home (private)"])
    return pa.table({
        "User ID": rng.integers(1, users + 1, n),
        "Venue ID": venue_ids.take(pa.array(venue)),
        "Venue Category": pa.array(np.full(n, "4bf58dd8d48988d129951735")),
        "Venue Name": names.take(pa.array(venue % 5)),
        "Latitude": lat[venue], "Longitude": lng[venue], "Timezone": np.full(n, 540),
        "UTC Time": pc.strftime(pa.array(seconds, pa.timestamp("s")), format="%a %b %d %H:%M:%S +0000 %Y"),
    })


def measure(command, env=None) -> tuple[float, float]:
    """Seconds and peak resident MB of ``command`` run alone under a launcher."""
    full_env = {**os.environ, **(env or {})}
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *map(str, command)], capture_output=True,
                         text=True, env=full_env, check=False)
    if out.returncode:
        raise RuntimeError(f"{command[:4]} failed: {out.stderr.strip()[-500:]}")
    seconds, kilobytes = out.stdout.split()
    return float(seconds), float(kilobytes) / 1024.0


def best_of_alternating(first, second, *, repeat: int = 3):
    """:func:`measure` of two ``(command, env)`` in turn, ``repeat`` times: the fastest run of each
    (its seconds and the peak memory of that run).  Other work on a shared machine only ever
    slows a run down, and taking turns exposes both to the same conditions."""
    runs = ([], [])
    for _ in range(repeat):
        for k, (command, env) in enumerate((first, second)):
            runs[k].append(measure(command, env))
    return min(runs[0]), min(runs[1])


def _first_call(cache_dir: Path, env: dict) -> float:
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True,
                         env={**os.environ, **env, "NUMBA_CACHE_DIR": str(cache_dir)}, check=True)
    return float(out.stdout.split()[-1])


def _first_call_counted(env: dict) -> tuple[int, float]:
    """(tracs kernels compiled, seconds) of the first TraCS-C call in a new process."""
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True, env=env, check=True)
    count, seconds = out.stdout.split()[-2:]
    return int(count), float(seconds)


def _first_call_after_install(folder: Path) -> tuple[float, int, float]:
    """(seconds to build and install the package, kernels compiled by the first TraCS-C call
    after it, seconds of that call) in ``folder``."""
    repo = Path(__file__).resolve().parents[1]
    wheels, target = folder / "wheels", folder / "site"
    env = {key: value for key, value in os.environ.items() if key not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(folder / "user-cache")  # a read-only fallback would land here, not in ~/.cache
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    source = folder / "source"  # a clean copy: no build/ folder whose kernels a rebuild would reuse
    shutil.copytree(repo, source, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "__pycache__", "*.egg-info", ".venv", ".ci-venv", ".pytest_cache", "_artifacts"))
    start = time.perf_counter()
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)],
                   env=env, check=True, capture_output=True)
    wheel = next(wheels.glob("tracs-*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], env=env, check=True,
                   capture_output=True)
    install = time.perf_counter() - start
    return (install, *_first_call_counted({**env, "PYTHONPATH": str(target)}))


def run(quick: bool = False) -> None:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    n = 100_000 if quick else 1_000_000
    repo = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    tracs = [sys.executable, "-m", "tracs.cli", "perturb"]
    print(f"\n## tracs perturb on a generated Foursquare-like file ({n:,} rows)")
    with tempfile.TemporaryDirectory(prefix="tracs-cli-bench-") as folder:
        folder = Path(folder)
        table = foursquare_table(n)
        source_csv, source_pq = folder / "checkins.csv", folder / "checkins.parquet"
        pcsv.write_csv(table, source_csv)
        pq.write_table(table, source_pq)
        del table
        measure(tracs + [source_csv, "-o", folder / "warm.csv", "-m", "tracs-c", "-e", "4", "-q",
                         "--region", "tky"], env)
        rows = []
        plain_csv, perturb_csv = best_of_alternating(
            ([sys.executable, "-c", _PLAIN_CSV, source_csv, folder / "plain.csv"], None),
            (tracs + [source_csv, "-o", folder / "released.csv", "-m", "tracs-c", "-e", "4", "--seed", "1", "-q",
                      "--region", "tky"], env), repeat=1 if quick else 3)
        plain_pq, perturb_pq = best_of_alternating(
            ([sys.executable, "-c", _PLAIN_PARQUET, source_pq, folder / "plain.parquet"], None),
            (tracs + [source_pq, "-o", folder / "released.parquet", "-m", "tracs-c", "-e", "4", "--seed", "1",
                      "-q", "--input-format", "foursquare", "--region", "tky"], env), repeat=1 if quick else 3)
        rows.append(("plain pyarrow CSV read + write", *plain_csv, ""))
        rows.append(("tracs perturb -m tracs-c CSV", *perturb_csv,
                     f"{perturb_csv[0] / plain_csv[0]:.1f}x plain (target <= {TARGET_CSV_RATIO:g}x)"))
        rows.append(("plain pyarrow Parquet read + write", *plain_pq, ""))
        rows.append(("tracs perturb -m tracs-c Parquet", *perturb_pq,
                     f"{perturb_pq[0] / plain_pq[0]:.1f}x plain (target <= {TARGET_PARQUET_RATIO:g}x)"))
        cold = _first_call(folder / "numba-cache", env)
        warm = _first_call(folder / "numba-cache", env)
        small = folder / "small.csv"
        pcsv.write_csv(pq.read_table(source_pq).slice(0, 10_000), small)
        small_cmd = tracs + [small, "-o", folder / "small-out.csv", "-m", "tracs-c", "-e", "4", "-q",
                             "--region", "tky"]
        fresh = measure(small_cmd, {**env, "NUMBA_CACHE_DIR": str(folder / "numba-cli")})[0]
        cached = measure(small_cmd, {**env, "NUMBA_CACHE_DIR": str(folder / "numba-cli")})[0]
        install, compiled, installed = _first_call_after_install(folder / "install")
    print(f"{'run':<36} {'seconds':>8} {'rows/s':>12} {'peak MB':>8}  notes")
    for name, seconds, mb, note in rows:
        flag = f" (target <= {TARGET_RSS_MB:g} MB)" if name.startswith("tracs") else ""
        print(f"{name:<36} {seconds:8.2f} {n / seconds:12,.0f} {mb:8.0f}  {note}{flag}")
    print(f"first TraCS-C kernel call in a new process: {installed:.2f} s right after installing, "
          f"{compiled} kernels compiled in it (wheel built and installed in {install:.0f} s, kernels "
          f"compiled by its build step; target <= {TARGET_COMPILE_S:g} s of compiling), "
          f"{cold:.2f} s with an empty numba cache, {warm:.2f} s once cached")
    print(f"tracs perturb on 10,000 rows: {fresh:.2f} s with an empty numba cache, {cached:.2f} s cached: "
          f"the first run costs {fresh - cached:+.2f} s")
