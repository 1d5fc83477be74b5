"""CPU-time accounting of the engine's serial steps, for measuring how a batch scales.

Every batch function of :mod:`tracs.engine` runs its parallel work through
:func:`tracs.engine._pool.map_ordered` and marks the few steps that run on the
calling thread alone (shape checks, the grouping of user keys, the final mean
over trajectories) with :func:`serial_step`.  Inside :func:`account` the CPU time
of each named serial step (of the thread running it) and of every parallel task
is added up, so that a 1-worker run splits into its parallel part, its named
serial steps and the rest (Python glue between them: the whole CPU time minus the
other two).  Outside :func:`account` the marks cost one global lookup.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from contextlib import contextmanager

__all__ = ["account", "serial_step", "timed_task", "PARALLEL"]

#: the key under which :func:`account` adds up the CPU time of the parallel tasks
PARALLEL = "parallel"

_LOCK = threading.Lock()
_RECORD: dict[str, float] | None = None


def _add(name: str, seconds: float) -> None:
    with _LOCK:
        if _RECORD is not None:
            _RECORD[name] += seconds


@contextmanager
def account():
    """Record CPU seconds per serial step (and :data:`PARALLEL`) into the dict yielded.

    Not re-entrant: one accounting at a time (a nested call raises ``RuntimeError``).
    """
    global _RECORD
    with _LOCK:
        if _RECORD is not None:
            raise RuntimeError("an engine accounting is already running")
        _RECORD = defaultdict(float)
        record = _RECORD
    try:
        yield record
    finally:
        with _LOCK:
            _RECORD = None


@contextmanager
def serial_step(name: str):
    """Mark a step that runs on the calling thread alone (no-op outside :func:`account`)."""
    if _RECORD is None:
        yield
        return
    start = time.thread_time()
    try:
        yield
    finally:
        _add(name, time.thread_time() - start)


def timed_task(fn):
    """``fn`` itself, or, inside :func:`account`, ``fn`` adding its CPU time to :data:`PARALLEL`."""
    if _RECORD is None:
        return fn

    def run(item):
        start = time.thread_time()
        try:
            return fn(item)
        finally:
            _add(PARALLEL, time.thread_time() - start)

    return run
