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

numba checks a cached kernel against its own source file only; :func:`key_on_sources`
(called at the end of every module with cached kernels) adds the contents of every
tracs module the kernel's module imports from, directly or not, so editing a helper
in one module makes every kernel that inlines it compile afresh.

It runs when ``tracs`` is imported (it imports nothing heavy: numba reads the
variable when it is first imported; if numba is already loaded its setting is
updated too).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

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


# -- cached kernels keyed on every source they compile in ---------------------------------------
#: a top-level ``from X import a, (b, c)`` or ``import X, Y`` (column 0: imports inside functions
#: run after the kernels' globals are frozen and cannot reach compiled code)
_IMPORT = re.compile(r"(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))")


def _import_statements(text: str):
    """``(source, names, plain)`` of every import statement starting a line of ``text``."""
    text = "\n" + text
    for head in ("\nfrom ", "\nimport "):  # str.find is ten times faster than a multi-line regex scan
        at = text.find(head)
        while at >= 0:
            found = _IMPORT.match(text, at + 1)
            if found:
                yield found.groups()
            at = text.find(head, at + 1)


_TAG = "tracs-sources"
_state_sources: dict = {"files": {}, "imports": {}, "closures": {}}


def _imports(module: str) -> set:
    """The tracs modules that ``module``'s source imports from at its top level (it is imported already).

    ``from package import name`` depends on the submodule ``package.name`` when the
    name is bound to that module, else on ``package``.
    """
    found = _state_sources["imports"].get(module)
    if found is not None:
        return found
    found, loaded = set(), sys.modules.get(module)
    path = getattr(loaded, "__file__", None)
    if path is None:
        return found
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):  # no readable source (numba could not cache its kernels either)
        text = ""
    namespace = vars(loaded)
    package = module if os.path.basename(path) == "__init__.py" else module.rpartition(".")[0]
    for source, names, plain in _import_statements(text):
        if not source:  # import X, Y as Z
            found.update(word for item in plain.split("#")[0].split(",")
                         for word in item.split()[:1] if word == "tracs" or word.startswith("tracs."))
            continue
        dots = len(source) - len(source.lstrip("."))
        if dots:
            parts = package.split(".")
            source = ".".join(parts[:len(parts) - dots + 1] + ([source[dots:]] if source[dots:] else []))
        if source != "tracs" and not source.startswith("tracs."):
            continue
        for item in re.sub(r"#[^\n]*", "", names).strip("()").split(","):
            words = item.split()
            value = namespace.get(words[-1]) if words else None
            found.add(value.__name__ if isinstance(value, ModuleType) else source)
    _state_sources["imports"][module] = found
    return found


def sources_of(module: str) -> list:
    """``module`` and every tracs module it imports from, directly or through another: sorted names.

    A compiled kernel can hold code and constants of any of them (helpers inlined by
    LLVM, numba functions it calls, values frozen when it was compiled).
    """
    closure = _state_sources["closures"].get(module)
    if closure is None:
        closure, todo = {module}, [module]
        while todo:
            for dependency in _imports(todo.pop()):
                if dependency not in closure:
                    closure.add(dependency)
                    todo.append(dependency)
        closure = _state_sources["closures"][module] = sorted(closure)
    return closure


def sources_digest(module: str) -> str:
    """SHA-256 of the contents of :func:`sources_of` ``module`` (a file's digest is read once per process)."""
    digest = hashlib.sha256()
    for name in sources_of(module):
        file_digest = _state_sources["files"].get(name)
        if file_digest is None:
            path = getattr(sys.modules.get(name), "__file__", None)
            try:
                with open(path, "rb") as f:
                    file_digest = hashlib.sha256(f.read()).hexdigest()
            except (OSError, TypeError):  # no source file
                file_digest = None
            _state_sources["files"][name] = file_digest = file_digest or "-"
        digest.update(f"{name} {file_digest}\n".encode())
    return digest.hexdigest()


def key_on_sources(namespace: dict) -> int:
    """Key the cached kernels of a module on the contents of every tracs source they compile in.

    numba checks a cached kernel against its own source file only (a hash of
    its contents), but a kernel also holds the compiled code of the helpers and kernels
    it calls in other modules, and their constants: editing one of those would
    leave the cached kernel stale.  Called at the end of each module with
    ``cache=True`` kernels, as ``key_on_sources(globals())``, this adds the
    digest of :func:`sources_of` the module (contents, not times) to the source
    stamp numba checks for each of the module's kernels: when any of those files
    changes, numba finds the cached kernels obsolete, compiles them afresh and
    overwrites them.  Contents, not times: installing gives the files new times
    and the kernels compiled at install must survive it.  Editing this module
    (imported by every one of them) compiles every kernel afresh.

    Returns the number of kernels keyed.
    """
    module, keyed = namespace["__name__"], 0
    stamp = None
    for value in list(namespace.values()):
        attributes = getattr(value, "__dict__", None) or {}  # a numba dispatcher's: py_func, _cache, ...
        if "_cache" not in attributes or getattr(attributes.get("py_func"), "__module__", None) != module:
            continue
        cache_file = getattr(attributes["_cache"], "_cache_file", None)
        if cache_file is None:  # no cache=True
            continue
        if stamp is None:
            stamp = (_TAG, sources_digest(module))
        if not (isinstance(cache_file._source_stamp, tuple) and cache_file._source_stamp[-1:] == (stamp,)):
            cache_file._source_stamp = (cache_file._source_stamp, stamp)
        keyed += 1
    return keyed


# -- the line announcing a compilation ---------------------------------------------------------
#: family of kernels (``tracs.warmup.FAMILIES``) -> (its name in the compile line, CPU seconds it takes
#: to compile, the kernels it holds as prefixes of ``module.function``; the longest matching prefix
#: wins).  Seconds: CPU time of ``tracs warmup --family NAME`` alone in a new process with an empty cache,
#: on a shared 2-core Intel Xeon at a load average of about 5 (the default path's families: 2 to 3;
#: estimators and other: estimates with the default path's kernels cached, which they reuse); an idle
#: machine is faster.
KERNEL_FAMILIES = {
    "tracs-d": ("TraCS-D", 9.0, ("tracs.perturbers._kernels.sequential_kernel",
                                  "tracs.perturbers._kernels._draw_parts", "tracs.perturbers._angles")),
    "tracs-c": ("TraCS-C", 8.0, ("tracs.perturbers._kernels",)),
    "planar-laplace": ("planar Laplace", 9.0, ("tracs.perturbers._planar_kernel",)),
    "optimal": ("optimal mechanism", 5.0, ("tracs.mechanisms.band",)),
    "streams": ("keyed stream", 4.0, ("tracs.random", "tracs.engine", "tracs.mechanisms.lattice_kernels",
                                      "tracs.io.digest")),
    "time-parser": ("time parser", 2.0, ("tracs.io.time_kernel",)),
    "classical": ("classical mechanism", 11.0, ("tracs.mechanisms",)),
    "staircase": ("staircase", 7.0, ("tracs.mechanisms._staircase",)),
    "bounded": ("bounded Laplace and II-PTT", 15.0, ("tracs.mechanisms._cdf_kernels",)),
    "baselines": ("discrete baseline", 7.0, ("tracs.baselines", "tracs.poi_space", "tracs.perturbers.keyed_draws")),
    "estimators": ("estimator", 4.0, ("tracs.estimate",)),
    "polylines": ("Porto polyline parser", 2.0, ("tracs.io.polyline_kernel",)),
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
