"""Where numba keeps tracs' compiled kernels, so they are compiled once per install.

numba's ``cache=True`` writes compiled kernels into ``__pycache__`` beside each
module.  When the package folder cannot be written (a read-only or system-wide
site-packages, a container image) :func:`configure` points numba at a per-user
folder instead — ``$XDG_CACHE_HOME/tracs/numba-<version>`` (``~/.cache/...``;
``%LOCALAPPDATA%`` on Windows) — before any kernel is compiled, unless the user
chose one with ``NUMBA_CACHE_DIR``.  The version in the folder name keeps the
kernels of two installed versions apart.  Disabling bytecode files
(``PYTHONDONTWRITEBYTECODE=1``) does not disable numba's cache.

Kernels compiled when the package was installed (``build_kernels.py``) sit in the
package's ``__pycache__`` folders.  When the package folder is read-only,
:func:`seed_user_cache` copies them once into the per-user folder, at the place
numba looks for them there (numba never writes into the package folder then);
kernels compiled later are added to the per-user folder.

It runs when ``tracs`` is imported (it imports nothing heavy: numba reads the
variable when it is first imported; if numba is already loaded its setting is
updated too).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

ENV = "NUMBA_CACHE_DIR"


def user_cache_dir(version: str) -> Path:
    """The per-user folder for compiled kernels of tracs ``version``."""
    if sys.platform.startswith("win"):
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tracs" / f"numba-{version}"


def _writable(folder: Path) -> bool:
    cache = folder / "__pycache__"
    target = cache if cache.is_dir() else folder
    return os.access(target, os.W_OK | os.X_OK)


def configure(package_dir, version: str) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to the user folder when ``package_dir`` is not writable.

    Returns the folder chosen, or None when numba's default (beside the modules)
    or the user's own setting is kept.
    """
    if os.environ.get(ENV):
        return None
    if _writable(Path(package_dir)):
        return None
    folder = str(user_cache_dir(version))
    os.environ[ENV] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = folder
    seed_user_cache(package_dir, folder)
    return folder


def numba_subfolder(module_dir) -> str:
    """The folder under ``NUMBA_CACHE_DIR`` where numba keeps the kernels of modules in ``module_dir``.

    numba's rule (``_CacheLocator.get_suitable_cache_subpath``): the folder's
    name, ``_``, and the SHA-1 of its absolute path.
    """
    path = os.path.abspath(module_dir)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def seed_user_cache(package_dir, folder) -> int:
    """Copy the kernels compiled at install time from ``package_dir`` into the cache ``folder``.

    Done once per package folder (a marker file in ``folder`` records it); files
    already in ``folder`` are kept.  Returns the number of files copied.  Errors
    are ignored: the kernels are then compiled on their first call.
    """
    try:
        package_dir = os.path.abspath(package_dir)
        marker = Path(folder) / f"seeded-{hashlib.sha1(package_dir.encode()).hexdigest()[:16]}"
        if marker.exists():
            return 0
        copied = 0
        for module_dir, subdirs, _ in os.walk(package_dir):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"]
            source = Path(module_dir) / "__pycache__"
            kernels = [*source.glob("*.nbi"), *source.glob("*.nbc")] if source.is_dir() else []
            if not kernels:
                continue
            target = Path(folder) / numba_subfolder(module_dir)
            target.mkdir(parents=True, exist_ok=True)
            for path in kernels:
                if not (target / path.name).exists():
                    shutil.copyfile(path, target / path.name)
                    copied += 1
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(package_dir)
        return copied
    except OSError:
        return 0


def drop_stale_cache(cache_dir: Path, dependencies, prefix: str) -> bool:
    """Delete cached numba kernels ``prefix.*.nbi|nbc`` in ``cache_dir`` if a dependency changed.

    A digest of the dependencies' (paths) contents, and of :mod:`tracs._jit` (how
    the helpers they inline are compiled), is recorded in
    ``cache_dir/prefix.deps``; when it differs from the recorded one the cached
    kernels are deleted (numba then compiles afresh) and the record is renewed.
    Contents, not modification times: installing copies the files with new times,
    and the kernels compiled at install time must survive that.
    Returns whether anything was deleted.  File-system errors are ignored: at
    worst numba keeps its own caching behaviour.
    """
    try:
        if isinstance(dependencies, (str, Path)):
            dependencies = [dependencies]
        digest = hashlib.sha256()
        for dependency in [*dependencies, Path(__file__).with_name("_jit.py")]:
            digest.update(Path(dependency).read_bytes())
        stamp = digest.hexdigest()
        record = cache_dir / f"{prefix}.deps"
        if record.is_file() and record.read_text() == stamp:
            return False
        stale = [*cache_dir.glob(f"{prefix}.*.nbi"), *cache_dir.glob(f"{prefix}.*.nbc")]
        for path in stale:
            path.unlink(missing_ok=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        record.write_text(stamp)
        return bool(stale)
    except OSError:
        return False


# -- the line announcing a compilation ---------------------------------------------------------
#: family of kernels (``tracs.warmup.FAMILIES``) -> (its name in the compile line, CPU seconds it takes
#: to compile, the kernels it holds as prefixes of ``module.function``; the longest matching prefix
#: wins).  Seconds: CPU time of ``tracs warmup --family NAME`` alone in a new process with an empty cache,
#: on a shared 2-core Intel Xeon at a load average of about 5 (estimators and other: estimates with the
#: default path's kernels cached, which they reuse); an idle machine is faster.
KERNEL_FAMILIES = {
    "tracs-d": ("TraCS-D", 13.0, ("tracs.perturbers._kernels.sequential_kernel",
                                  "tracs.perturbers._kernels._draw_parts", "tracs.perturbers._angles")),
    "tracs-c": ("TraCS-C", 11.0, ("tracs.perturbers._kernels",)),
    "planar-laplace": ("planar Laplace", 12.0, ("tracs.perturbers._planar_kernel",)),
    "optimal": ("optimal mechanism", 5.0, ("tracs.mechanisms._band",)),
    "streams": ("keyed stream", 10.0, ("tracs.random", "tracs.engine", "tracs.mechanisms._lattice_kernels")),
    "time-parser": ("time parser", 2.0, ("tracs.io._time_kernel",)),
    "classical": ("classical mechanism", 11.0, ("tracs.mechanisms",)),
    "staircase": ("staircase", 7.0, ("tracs.mechanisms._staircase",)),
    "bounded": ("bounded Laplace and II-PTT", 15.0, ("tracs.mechanisms._cdf_kernels",)),
    "baselines": ("discrete baseline", 7.0, ("tracs.baselines", "tracs.poi_space", "tracs.perturbers._keyed")),
    "estimators": ("estimator", 4.0, ("tracs.estimate",)),
    "polylines": ("Porto polyline parser", 2.0, ("tracs.io._polyline_kernel",)),
    "other": ("other", 3.0, ()),
}
NOTICE_ENV = "TRACS_COMPILE_NOTICE"
_announced: set = set()
_state = {"registered": False, "depth": 0, "on": True}


def family_of(kernel: str) -> str | None:
    """The family (a key of :data:`KERNEL_FAMILIES`) of the kernel ``module.function``, or None."""
    best, found = "", None
    for family, (_, _, prefixes) in KERNEL_FAMILIES.items():
        for prefix in prefixes:
            if (kernel == prefix or kernel.startswith(prefix + ".")) and len(prefix) > len(best):
                best, found = prefix, family
    return found


def announce_compiles() -> None:
    """From now on, the first compilation of each family in this process prints one line on stderr.

    ``tracs: compiling the staircase kernels once, about 7 s (later runs load them)``:
    numba reports a compilation only when no cached copy exists, so the line
    appears once per install (kernels of the default path are compiled at install
    time and never announce themselves).  ``TRACS_COMPILE_NOTICE=0`` silences it.
    Called by the modules that define kernels; registering twice does nothing.
    """
    if _state["registered"]:
        return
    _state["registered"] = True
    from numba.core import event

    class _Notice(event.Listener):
        def on_start(self, ev) -> None:
            _state["depth"] += 1
            if _state["depth"] > 1 or not _state["on"]:
                return
            if os.environ.get(NOTICE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
                return
            func = ev.data["dispatcher"].py_func
            family = family_of(f"{func.__module__}.{func.__qualname__}")
            if family is None or family in _announced:
                return
            _announced.add(family)
            label, seconds, _ = KERNEL_FAMILIES[family]
            print(f"tracs: compiling the {label} kernels once, about {seconds:.0f} s (later runs load them; "
                  "`tracs warmup --all` compiles every kernel ahead)", file=sys.stderr, flush=True)

        def on_end(self, ev) -> None:
            _state["depth"] -= 1

    event.register("numba:compile", _Notice())


class compile_notices:
    """``with compile_notices(False):`` no compile line inside (the warm-up prints its own)."""

    def __init__(self, on: bool):
        self.on, self.before = on, None

    def __enter__(self):
        self.before, _state["on"] = _state["on"], self.on
        return self

    def __exit__(self, *exc) -> None:
        _state["on"] = self.before
