"""Figures of the current run, the previous run's figures, and their ratio.

Every table row printed by :func:`benchmarks._timing.print_table` (and every
figure a section records itself) lands in :data:`RESULTS` under a stable key
``"<section> / <row>"``.  ``previous.json`` beside this file holds, per CPU model,
the figures of the last run written with ``--write-docs``; each printed figure is
followed by its ratio to the previous figure on the same CPU model, so a slowdown
shows in the same run (figures are not compared across CPU models).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import platform
from pathlib import Path

PREVIOUS_PATH = Path(__file__).with_name("previous.json")

#: key -> {"value": float, "unit": str}
RESULTS: dict[str, dict] = {}


def _runs() -> dict:
    """CPU model -> ``{"machine": ..., "figures": ...}`` of the last documented run on that model.

    An older file held one run (``{"machine", "figures"}``); it is read as the run of its CPU model.
    """
    try:
        stored = json.loads(PREVIOUS_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if "runs" in stored:
        return stored["runs"]
    if "figures" in stored:
        return {stored.get("machine", {}).get("cpu", "unknown"): stored}
    return {}


def previous() -> dict:
    """The figures of the last documented run on this CPU model (``{}`` when there are none)."""
    return _runs().get(cpu_model(), {}).get("figures", {})


def other_cpus() -> list[str]:
    """The CPU models of documented runs other than this one."""
    return [cpu for cpu in _runs() if cpu != cpu_model()]


def comparable() -> bool:
    """Whether this run's figures can be divided by previous ones: a documented run on the same CPU model.

    The exact lattice samplers run about 40 % slower on an Intel Xeon than on an AMD
    EPYC while numpy's samplers run alike, so a ratio across CPU models would read
    as a regression (or a gain) that is none.  ``previous.json`` keeps the last run
    of each model.
    """
    return cpu_model() in _runs()


def record(key: str, value: float, unit: str) -> str:
    """Store a figure of this run; return its ratio to the previous one as text.

    ``-`` when there is no previous figure, ``other CPU`` when the previous run was
    on another CPU model (:func:`comparable`).
    """
    RESULTS[key] = {"value": float(value), "unit": unit}
    if not comparable():
        return "other CPU" if _runs() else "-"
    before = previous().get(key)
    if not before or not before.get("value"):
        return "-"
    return f"{value / before['value']:.2f}x"


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` knows."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def machine() -> dict:
    """Where and when this run happened."""
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def save(path: Path | None = None) -> None:
    """Store this run's figures as the previous run on this CPU model (the next run on it compares with them).

    Figures of sections that did not run keep their previous values; the runs of
    other CPU models are kept as they are.
    """
    path = PREVIOUS_PATH if path is None else path
    runs = _runs()
    figures = {**previous(), **RESULTS}
    runs[cpu_model()] = {"machine": machine(), "figures": figures}
    path.write_text(json.dumps({"runs": runs}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
