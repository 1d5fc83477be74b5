"""Figures of the current run, the previous run's figures, and their ratio.

Every table row printed by :func:`benchmarks._timing.print_table` (and every
figure a section records itself) lands in :data:`RESULTS` under a stable key
``"<section> / <row>"``.  ``previous.json`` beside this file holds the figures of
the last run written to the docs (``python -m benchmarks --write-docs``); each
printed figure is followed by its ratio to that previous figure, so a slowdown
shows in the same run.
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


def _previous_run() -> dict:
    try:
        return json.loads(PREVIOUS_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def previous() -> dict:
    """The figures of the last documented run (``{}`` when there are none)."""
    return _previous_run().get("figures", {})


def previous_cpu() -> str | None:
    """The CPU model of the last documented run (None when unknown)."""
    return _previous_run().get("machine", {}).get("cpu")


def comparable() -> bool:
    """Whether this run's figures can be divided by the previous run's: the same CPU model.

    The exact lattice samplers run about 40 % slower on an Intel Xeon than on an AMD
    EPYC while numpy's samplers run alike, so a ratio across CPU models would read
    as a regression (or a gain) that is none.
    """
    return previous_cpu() == cpu_model()


def record(key: str, value: float, unit: str) -> str:
    """Store a figure of this run; return its ratio to the previous one as text.

    ``-`` when there is no previous figure, ``other CPU`` when the previous run was
    on another CPU model (:func:`comparable`).
    """
    RESULTS[key] = {"value": float(value), "unit": unit}
    before = previous().get(key)
    if not before or not before.get("value"):
        return "-"
    if not comparable():
        return "other CPU"
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


def save(path: Path | None = None, extra: dict | None = None) -> None:
    """Write this run's figures (they become the 'previous' figures of the next run)."""
    path = PREVIOUS_PATH if path is None else path
    merged = previous()
    merged.update(RESULTS)
    payload = {"machine": machine(), "figures": merged, **(extra or {})}
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
