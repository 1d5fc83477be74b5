"""Set-up costs: installing, the first call of each method in a new process, the test suite.

* ``pip install -e .`` and ``pip install .`` of a fresh ``git clone`` of this
  checkout into a new virtual environment (the pip cache warm, as a second install
  on a machine is): wall and CPU seconds, pip's child processes and the build
  step's background compile included (it runs detached from pip and reports its
  CPU seconds through ``TRACS_BUILD_CPU_REPORT``).
* Per method, a new interpreter times its first call on 1,000 points (loading the
  cached kernels, or compiling them when the cache is empty) and a second, warm call;
  it also counts the kernels it had to compile (0 after an install: the default path
  is compiled at install time).
* ``python -m pytest -n auto -q`` (the README's test command) in this checkout.

``--quick`` keeps the first-call figures only.  Lower is better for every figure
here (seconds); the load average is printed with each, since other processes on a
shared machine lengthen wall times.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._record import record

ROOT = Path(__file__).resolve().parents[1]

#: method -> code making one call on ``xy`` (1,000 points) and ``offsets`` (10 trajectories)
METHODS = {
    "TraCS-D": "tracs.TraCSD(region, epsilon=4.0).perturb_many(xy, offsets, rng=1)",
    "TraCS-C": "tracs.TraCSC(region, epsilon=4.0).perturb_many(xy, offsets, rng=1)",
    "planar Laplace": "tracs.PlanarLaplace(region, epsilon=4.0).perturb_many(xy, offsets, rng=1)",
    "Strawman": "tracs.Strawman(region, epsilon=4.0).perturb_many(xy, offsets, rng=1)",
    "OptimalClassical": "tracs.mechanisms.OptimalClassical(epsilon=1.0).sample(xy[:, 0] / 1000, rng=1)",
    "OptimalCircular": "tracs.mechanisms.OptimalCircular(epsilon=1.0).sample(xy[:, 0] / 200, rng=1)",
    "Staircase": "tracs.mechanisms.Staircase(epsilon=1.0).sample(xy[:, 0] / 1000, rng=1)",
    "Laplace": "tracs.mechanisms.Laplace(epsilon=1.0).sample(xy[:, 0] / 1000, rng=1)",
}

_PROBE = """
import json, time
t0 = time.perf_counter()
import numpy as np, tracs
from numba.core import event
compiled = []
class L(event.Listener):
    def on_start(self, ev): compiled.append(1)
    def on_end(self, ev): pass
event.register("numba:compile", L())
rng = np.random.default_rng(0)
region = tracs.Rectangle(0, 0, 1000, 1000)
xy = rng.uniform(0, 1000, (1000, 2)); offsets = np.arange(0, 1001, 100)
t1 = time.perf_counter(); {call}; t2 = time.perf_counter(); {call}; t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first": t2 - t1, "warm": t3 - t2, "compiled": len(compiled)}}))
"""


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"


def first_calls(python: str = sys.executable, cwd: Path = ROOT) -> dict:
    """``method -> {"import", "first", "warm", "compiled"}`` from a new interpreter per method."""
    out = {}
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    for name, call in METHODS.items():
        done = subprocess.run([python, "-c", _PROBE.format(call=call)], capture_output=True, text=True, env=env,
                              cwd=str(cwd), timeout=1800, check=False)
        if done.returncode:
            raise RuntimeError(f"first call of {name} failed: {done.stderr[-1500:]}")
        out[name] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def timed(command: list, cwd=None, env=None) -> tuple[float, float, str]:
    """``(wall s, CPU s of the command and its children, output)`` of a command."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {(done.stdout + done.stderr)[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout + done.stderr


def install_seconds(editable: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of ``pip install -e .`` (``pip install .``) of a fresh clone into a new venv.

    The CPU includes the build step's background compile, which runs detached from
    pip (so pip's children do not include it) and reports its CPU seconds to a file.
    """
    with tempfile.TemporaryDirectory(prefix="tracs-install-") as tmp:
        clone, venv, report = Path(tmp) / "tracs", Path(tmp) / "venv", Path(tmp) / "compile-cpu"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
        env["TRACS_BUILD_CPU_REPORT"] = str(report)
        target = ["-e", "."] if editable else ["."]
        wall, cpu, _ = timed([str(venv / "bin" / "pip"), "install", "-q", *target], cwd=clone, env=env)
        if report.is_file():
            cpu += sum(float(line) for line in report.read_text().split())
    return wall, cpu


def suite_seconds() -> tuple[float, float, str]:
    """Wall and CPU seconds of the README's test command in this checkout, and its summary line."""
    wall, cpu, output = timed([sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider"],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    summary = next((line for line in reversed(output.splitlines()) if re.search(r"\d+ passed", line)), "")
    return wall, cpu, summary.strip("= ")


def run(quick: bool = False) -> None:
    print("\n## set-up: first call of each method in a new process, install, test suite (seconds)")
    print(f"load average {_load()} at the start")
    print(f"{'method':<18} {'import':>8} {'first call':>11} {'warm call':>10} {'compiled':>9} {'vs prev':>9}")
    for name, t in first_calls().items():
        prev = record(f"set-up / first call / {name}", t["first"], "s")
        record(f"set-up / warm call / {name}", t["warm"], "s")
        print(f"{name:<18} {t['import']:8.2f} {t['first']:11.2f} {t['warm']:10.3f} {t['compiled']:9d} {prev:>9}")
    if quick:
        print("(--quick: install and test-suite times skipped)")
        return
    if shutil.which("git") is None:
        print("install: not measured (git not found)")
    else:
        for command, editable in (("pip install -e .", True), ("pip install .", False)):
            wall, cpu = install_seconds(editable)
            prev = record(f"set-up / {command} (wall)", wall, "s")
            record(f"set-up / {command} (CPU)", cpu, "s")
            print(f"{command} (fresh clone, new venv): {wall:.0f} s wall, {cpu:.0f} s CPU "
                  f"(children and the background compile included), load average {_load()}; vs prev {prev}")
    wall, cpu, summary = suite_seconds()
    prev = record("set-up / test suite (wall)", wall, "s")
    record("set-up / test suite (CPU)", cpu, "s")
    print(f"python -m pytest -n auto: {wall:.0f} s wall, {cpu:.0f} s CPU, load average {_load()} ({summary}); "
          f"vs prev {prev}")
