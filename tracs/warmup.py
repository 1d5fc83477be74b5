"""Compile tracs' numba kernels ahead of their first call: ``tracs warmup`` and the install step.

tracs' kernels are compiled with ``cache=True``: the first call in a process that
finds no cached copy compiles them, every later process loads them from disk (a
fraction of a second).  The kernels come in *families* (:data:`FAMILIES`), each
warmed by a first call on tiny inputs through the public objects, so each kernel
is compiled for the argument types real calls use.

* The families of the default path (:data:`INSTALLED`: TraCS-D and the Strawman,
  TraCS-C, planar Laplace, the optimal mechanisms, the keyed streams and the
  loaders' time parser) are compiled when the package is installed from the
  source tree: ``build_kernels.py`` runs ``python -m tracs.warmup --install``,
  which compiles them in parallel processes, one per core, and prints a line per
  family.
* The others compile on their first use, announced by one line on stderr
  (:mod:`tracs._numba_cache`); ``tracs warmup --all`` compiles them ahead.

Where the kernels go is decided by :mod:`tracs._numba_cache`: beside the modules
when the package folder can be written, else the per-user folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from ._numba_cache import KERNEL_FAMILIES, compile_notices
from .errors import InputError

__all__ = ["FAMILIES", "INSTALLED", "compile_all", "add_parser", "run", "main"]


def _trajectories():
    xy = np.array([[10.0, 20.0], [300.0, 400.0], [500.0, 600.0], [700.0, 100.0]])
    return xy, np.array([0, 2, 4])


def methods_of(family: str) -> list:
    """The registered methods (:mod:`tracs.methods`) whose warm-up hook belongs to ``family``: those
    whose entry names it, and for ``"other"`` those naming none, in the registry's order."""
    from .methods import view

    return [method for method in view().values() if method.warm is not None
            and (method.family or "other") == family]


def _family(name: str, own=None):
    """A family's first calls: ``own(rng)`` if given, then the warm-up hook of each registered
    method of the family."""
    def task(rng) -> None:
        if own is not None:
            own(rng)
        for method in methods_of(name):
            method.warm(rng)

    return task


def _streams(rng) -> None:
    from .engine.stream_keys import fast_stream_ids
    from .mechanisms.lattice_kernels import first_words, resolve_ties
    from .random import keyed_uniforms, resolve_streams

    _, offsets = _trajectories()
    for width in (1, 3):
        keyed_uniforms(resolve_streams(rng, n=2), offsets, width)
    # string and integer user keys; a repeated key takes the numbering of repeats
    for keys in (["a", "b"], np.array([7, 9]), ["a", "a"]):
        resolve_streams(rng, keys, 2)
        fast_stream_ids(keys, 2)
    # a draw exactly on a threshold (rare in real data) is settled by extra words
    ks = resolve_streams(rng, None, 1)
    resolve_ties(ks.kind, ks.key, np.uint64(ks.streams[0]), np.zeros(1, dtype=np.uint64), np.array([0.5]),
                 np.zeros(1, dtype=np.bool_), 1, np.empty(1, dtype=np.bool_))
    # the first words of a 1-D sample drawn by generic inversion (mechanisms without a kernel of their own)
    first_words(ks.kind, ks.key, np.uint64(ks.streams[0]), 1, 0, np.empty(1, dtype=np.uint64), np.empty(1))
    # the digest of a release's rows (BLAKE2b per row), written by every 'tracs perturb'
    from .io.digest import columns_digest

    columns_digest({"uid": np.array([7]), "trajectory": np.array([0]), "lat": np.array([1.0]), "lng": np.array([2.0])})


def _time_parser(rng) -> None:
    from .io.time_kernel import parse_fixed_buffers

    text = b"Tue Apr 03 18:00:09 +0000 2012"
    parse_fixed_buffers(np.array([0, len(text)], dtype=np.int64).tobytes(), text, np.ones(1, dtype=np.bool_))


def _polylines(rng) -> None:
    import pyarrow as pa

    from .io.polyline_kernel import parse_polylines

    parse_polylines(pa.array(["[[-8.61,41.14],[-8.62,41.15]]", "[]", None]))


def _estimators(rng) -> None:
    from .estimate import density, distribution
    from .estimate.denoising import denoise
    from .estimate.synthesize import fit_mobility_model, synthesize
    from .mechanisms import Laplace, OptimalClassical
    from .perturbers import PlanarLaplace, TraCSC, TraCSD
    from .region import Rectangle

    xy, offsets = _trajectories()
    region = Rectangle(0.0, 0.0, 1000.0, 1000.0)
    for perturber in (TraCSC(region, 2.0), TraCSD(region, 2.0)):
        reports = perturber.perturb_many(xy, offsets, rng=0)
        for subpoints in (1, 2):
            est = density(reports, perturber, offsets=offsets, grid=4, iterations=2, subpoints=subpoints)
        denoise(reports, perturber, est, offsets=offsets)
        denoise(reports, perturber, est, offsets=offsets, trajectory=True)  # the fitted transition
        denoise(reports, perturber, est, offsets=offsets, pois=xy[:5], iterations=1)  # the posterior over POIs, a refined prior
    synthesize(fit_mobility_model(reports, perturber, offsets=offsets, grid=2), 3, rng=rng)
    planar = PlanarLaplace(region, 0.5)  # reports inside, clamped onto edges and onto corners
    clamped = np.array([[500.0, 500.0], [0.0, 250.0], [1000.0, 500.0], [0.0, 0.0], [1000.0, 1000.0]])
    denoise(clamped, planar, density(clamped, planar, grid=4, iterations=2))
    for mech in (OptimalClassical(epsilon=1.0), Laplace(epsilon=1.0)):
        distribution(mech.sample(np.array([0.1, 0.5, 0.9]), rng=0), mech, bins=4, bootstrap=0)


#: the families' own first calls (other than methods' warm-up hooks)
_OWN = {"streams": _streams, "time-parser": _time_parser, "estimators": _estimators, "polylines": _polylines}

#: family -> function(rng) making the first calls of its kernels with that generator, for every
#: family of the one table :data:`tracs._numba_cache.KERNEL_FAMILIES` (its name in the compile line,
#: seconds, kernels): the family's own first calls, then the warm-up hooks of the registered methods
#: whose entry names the family (``Method.family``; ``"other"``: those naming none)
FAMILIES = {name: _family(name, _OWN.get(name)) for name in KERNEL_FAMILIES}
#: the families compiled when the package is installed: everything the default path calls
INSTALLED = ("tracs-d", "tracs-c", "planar-laplace", "optimal", "streams", "time-parser")


def compile_family(name: str, secure: bool = False) -> tuple[float, float]:
    """Compile (or load) the kernels of one family; return the wall and CPU seconds it took."""
    start, cpu = time.perf_counter(), time.process_time()
    with compile_notices(False):
        for rng in (0, "secure") if secure else (0,):
            FAMILIES[name](rng)
    return time.perf_counter() - start, time.process_time() - cpu


def compile_all(families=None, *, secure: bool = False, jobs: int = 1, verbose: bool = False,
                kernels: list | None = None, say=None) -> dict[str, float]:
    """Compile (or load from numba's cache) the kernels of ``families``.

    Parameters
    ----------
    families : sequence of str, optional
        Names of :data:`FAMILIES`; every family when None.
    secure : bool
        Also compile the kernels' ChaCha20 versions (``rng="secure"``,
        ``--secure-rng``): numba specialises each kernel on the generator's key
        type, so they are separate kernels, about as many seconds again.
    jobs : int
        Processes compiling at once (one family each at a time, the longest
        first).  With more than one, a last pass in this process loads every
        kernel and compiles any whose cache entry a concurrent write lost.
    verbose : bool
        Print a line per family as it finishes (through ``say``).
    kernels : list, optional
        If given (``jobs=1`` only), one ``(seconds, "module.function", signature)``
        is appended for every compilation numba makes (nested ones included, so the
        seconds of a kernel contain those of the callees it compiles); kernels
        loaded from the cache are not compiled and do not appear.
    say : callable, optional
        Where progress lines go (default: ``print``).

    Returns
    -------
    dict
        Wall seconds per family (with ``jobs > 1``, in its worker process).
    """
    names = list(FAMILIES) if families is None else list(families)
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise InputError(f"unknown kernel families {unknown}; choose from {', '.join(FAMILIES)}")
    say = say or (lambda line: print(line, flush=True))
    names.sort(key=lambda name: -KERNEL_FAMILIES[name][1])
    seconds = {}
    if jobs > 1 and len(names) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=min(jobs, len(names)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(compile_family, name, secure): name for name in names}
            for done, future in enumerate(as_completed(futures), 1):
                name = futures[future]
                seconds[name], cpu = future.result()
                if verbose:
                    say(f"[{done}/{len(names)}] {name:<15} {seconds[name]:6.1f} s ({cpu:.1f} s CPU)")
        start = time.perf_counter()
        for name in names:  # loads what the workers wrote; compiles what a concurrent index write lost
            compile_family(name, secure)
        if verbose:
            say(f"checked every kernel in {time.perf_counter() - start:.1f} s")
        return seconds
    listener = _CompileTimes(kernels) if kernels is not None else None
    if listener is not None:
        from numba.core import event

        event.register("numba:compile", listener)
    try:
        for done, name in enumerate(names, 1):
            seconds[name], cpu = compile_family(name, secure)
            if verbose:
                say(f"[{done}/{len(names)}] {name:<15} {seconds[name]:6.1f} s ({cpu:.1f} s CPU)")
    finally:
        if listener is not None:
            event.unregister("numba:compile", listener)
    return seconds


def _CompileTimes(out: list):
    """A numba event listener appending the wall seconds of each compilation to ``out``."""
    from numba.core import event

    class CompileTimes(event.Listener):
        def __init__(self):
            self.started = {}

        @staticmethod
        def _key(ev):
            return id(ev.data["dispatcher"]), str(ev.data["args"])

        def on_start(self, ev) -> None:
            self.started[self._key(ev)] = time.perf_counter()

        def on_end(self, ev) -> None:
            func = ev.data["dispatcher"].py_func
            spent = time.perf_counter() - self.started.pop(self._key(ev), time.perf_counter())
            out.append((spent, f"{func.__module__}.{func.__qualname__}", str(ev.data["args"])))

    return CompileTimes()


# -- the command ------------------------------------------------------------------------------
def _arguments(p) -> None:
    p.add_argument("--all", action="store_true",
                   help="every kernel family (default: those of the default path, which installing from "
                        "the source tree compiles already)")
    p.add_argument("--family", action="append", choices=list(FAMILIES), metavar="NAME",
                   help=f"only this family (repeatable): {', '.join(FAMILIES)}")
    p.add_argument("--secure", action="store_true",
                   help="also compile the ChaCha20 versions used by --secure-rng / rng='secure' "
                        "(as long again)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes compiling at once (0: one per core; default 1)")
    p.add_argument("--timings", action="store_true",
                   help="list the seconds of every compilation (nested ones included), slowest first; "
                        "with a warm cache there are none (implies --jobs 1)")


def add_parser(subparsers) -> None:
    """Add the ``warmup`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "warmup", help="compile the numba kernels now, so a first call needs no compiling",
        description="Compile tracs' numba kernels on tiny inputs (seconds to minutes the first time; "
                    "a second when they are already cached).  Installing from the source tree compiles "
                    "the default path's families already; --all adds the others, which otherwise "
                    "compile on their first use.")
    _arguments(p)


def run(args) -> int:
    """Run ``tracs warmup`` with parsed ``args``."""
    import tracs

    quiet = getattr(args, "quiet", False)
    families = args.family or (list(FAMILIES) if args.all else list(INSTALLED))
    jobs = 1 if args.timings else ((os.cpu_count() or 1) if args.jobs == 0 else max(1, args.jobs))
    start = time.perf_counter()
    kernels = [] if args.timings else None
    compile_all(families, secure=args.secure, jobs=jobs, verbose=not quiet, kernels=kernels)
    for seconds, name, signature in sorted(kernels or [], reverse=True):
        if not name.startswith("numba."):  # numba's own overloads compile in hundredths of a second
            print(f"{seconds:7.2f} s  {name}  {signature[:100]}")
    if not quiet:
        where = os.environ.get("NUMBA_CACHE_DIR") or f"beside the modules in {tracs.__path__[0]}"
        print(f"kernels ready in {time.perf_counter() - start:.1f} s (numba cache: {where})")
    return 0


def main(argv=None) -> int:
    """``python -m tracs.warmup``; ``--install`` is the install step's run (``build_kernels.py``)."""
    parser = argparse.ArgumentParser(prog="python -m tracs.warmup", description=__doc__.split("\n\n")[0])
    _arguments(parser)
    parser.add_argument("--install", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    if not args.install:
        return run(args)
    # the install step: the default path's families, one process per core, a line per family
    jobs = os.cpu_count() or 1
    start = time.perf_counter()
    print(f"tracs: compiling the kernels of the default path in {jobs} processes "
          f"(about {sum(KERNEL_FAMILIES[name][1] for name in INSTALLED) / min(jobs, 4):.0f} s; the others compile "
          "on first use, `tracs warmup --all` compiles them all)", flush=True)
    compile_all(INSTALLED, jobs=jobs, verbose=True, say=lambda line: print(f"tracs: {line}", flush=True))
    print(f"tracs: kernels compiled in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
