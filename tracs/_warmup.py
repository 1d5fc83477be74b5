"""Compile every cached kernel of tracs once, so later processes load them from disk.

tracs' numba kernels are compiled with ``cache=True``: the first call in a
process that finds no cached copy compiles them (tens of seconds for the TraCS
kernels), every later process loads them (a fraction of a second).
:func:`compile_all` makes that first call on tiny inputs through the public
objects, so each kernel is compiled for the argument types real calls use
(array layouts, integer widths, literal word offsets).  The package's build
hook (``build_kernels.py`` at the top of the source tree) runs it when the
package is installed, and ``python -m tracs.warmup`` / ``tracs warmup`` run it
by hand.

Where the kernels go is decided by :mod:`tracs._numba_cache`: beside the
modules when the package folder can be written, else the per-user folder.
"""

from __future__ import annotations

import time

import numpy as np
from numba.core import event

__all__ = ["compile_all", "TASKS"]


def _region():
    from .region import Rectangle

    return Rectangle(0.0, 0.0, 1000.0, 1000.0)


def _trajectories():
    xy = np.array([[10.0, 20.0], [300.0, 400.0], [500.0, 600.0], [700.0, 100.0]])
    return xy, np.array([0, 2, 4])


def _registered(kind):
    """A warm-up task: the warm hook of every registered method of ``kind`` (:mod:`tracs.methods`)."""
    def task(rng) -> None:
        from .methods import view

        for method in view(kind).values():
            if method.warm is not None:
                method.warm(rng)

    return task


def _estimators(rng) -> None:
    from .estimate import density, distribution
    from .mechanisms import Laplace, OptimalClassical
    from .perturbers import TraCSC, TraCSD

    xy, offsets = _trajectories()
    region = _region()
    for perturber in (TraCSC(region, 2.0), TraCSD(region, 2.0)):
        reports = perturber.perturb_many(xy, offsets, rng=0)
        for subpoints in (1, 2):
            density(reports, perturber, offsets=offsets, grid=4, iterations=2, subpoints=subpoints)
    for mech in (OptimalClassical(epsilon=1.0), Laplace(epsilon=1.0)):
        distribution(mech.sample(np.array([0.1, 0.5, 0.9]), rng=0), mech, bins=4, bootstrap=0)


def _streams(rng) -> None:
    from .mechanisms._lattice_kernels import resolve_ties
    from .random import keyed_uniforms, resolve_streams

    _, offsets = _trajectories()
    for width in (1, 3):
        keyed_uniforms(resolve_streams(rng, n=2), offsets, width)
    # a draw exactly on a threshold (rare in real data) is settled by extra words
    ks = resolve_streams(rng, None, 1)
    resolve_ties(ks.kind, ks.key, np.uint64(ks.streams[0]), np.zeros(1, dtype=np.uint64), np.array([0.5]),
                 np.zeros(1, dtype=np.bool_), 1, np.empty(1, dtype=np.bool_))


#: name -> function(rng) that makes the first calls of one family of kernels with that generator
TASKS = {"perturbers": _registered("perturber"), "mechanisms": _registered("mechanism"),
         "baselines": _registered("baseline"),
         "estimators": _estimators, "streams": _streams}


def compile_all(*, secure: bool = False, verbose: bool = False, kernels: list | None = None) -> dict[str, float]:
    """Compile (or load from numba's cache) every cached kernel of tracs.

    Parameters
    ----------
    secure : bool
        Also compile the kernels' ChaCha20 versions (``rng="secure"``,
        ``--secure-rng``): numba specialises each kernel on the generator's key
        type, so they are separate kernels, about as many seconds again.  The
        Philox versions (a seed, the default) are always compiled.
    verbose : bool
        Print each family's seconds as it finishes.
    kernels : list, optional
        If given, one ``(seconds, "module.function", signature)`` is appended for
        every compilation numba makes (nested ones included, so the seconds of a
        kernel contain those of the callees it compiles); kernels loaded from the
        cache are not compiled and do not appear.

    Returns
    -------
    dict
        Seconds spent per family of kernels (:data:`TASKS`), summed over generators.
    """
    listener = _CompileTimes(kernels) if kernels is not None else None
    if listener is not None:
        event.register("numba:compile", listener)
    seconds = {}
    try:
        for name, task in TASKS.items():
            start = time.perf_counter()
            for rng in (0, "secure") if secure else (0,):
                task(rng)
            seconds[name] = time.perf_counter() - start
            if verbose:
                print(f"{name:<12} {seconds[name]:7.2f} s", flush=True)
    finally:
        if listener is not None:
            event.unregister("numba:compile", listener)
    return seconds


class _CompileTimes(event.Listener):
    """numba event listener: wall seconds of each compilation, appended to ``out``."""

    def __init__(self, out: list):
        self.out, self.started = out, {}

    @staticmethod
    def _key(ev):
        return id(ev.data["dispatcher"]), str(ev.data["args"])

    def on_start(self, ev) -> None:
        self.started[self._key(ev)] = time.perf_counter()

    def on_end(self, ev) -> None:
        func = ev.data["dispatcher"].py_func
        seconds = time.perf_counter() - self.started.pop(self._key(ev), time.perf_counter())
        self.out.append((seconds, f"{func.__module__}.{func.__qualname__}", str(ev.data["args"])))
