"""Cached kernels follow every tracs source they compile in (``tracs._numba_cache.key_on_sources``).

numba checks a cached kernel against its own file only; a kernel also holds the
code of the helpers it inlines from other modules.  These tests edit a helper in
a copy of the package and watch numba's compile events: the kernels that inline
it compile again and run the new code, the others load from the cache.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tracs
import tracs._numba_cache as cache

PACKAGE = Path(tracs.__path__[0])

#: a helper module, a kernel module inlining its helper, and a module with its own kernel only
_PROBES = {
    "_probe_helpers.py": ("from ._jit import helper\n"
                          "from ._numba_cache import key_on_sources\n\n\n"
                          "@helper\n"
                          "def shift(x):\n"
                          "    return x + 1\n\n\n"
                          "key_on_sources(globals())\n"),
    "_probe_kernels.py": ("from numba import njit\n\n"
                          "from ._numba_cache import key_on_sources\n"
                          "from ._probe_helpers import shift\n\n\n"
                          "@njit(cache=True)\n"
                          "def shifted(x):\n"
                          "    return 2 * shift(x)\n\n\n"
                          "key_on_sources(globals())\n"),
    "_probe_alone.py": ("from numba import njit\n\n"
                        "from ._numba_cache import key_on_sources\n\n\n"
                        "@njit(cache=True)\n"
                        "def alone(x):\n"
                        "    return x - 1\n\n\n"
                        "key_on_sources(globals())\n"),
}

_RUN = """
import json
from numba.core import event
with event.install_recorder("numba:compile") as recorder:
    from tracs._probe_kernels import shifted
    from tracs._probe_alone import alone
    results = {"shifted": shifted(1), "alone": alone(1)}
compiled = {ev.data["dispatcher"].py_func.__qualname__ for _, ev in recorder.buffer if ev.is_start}
print(json.dumps({**results, "compiled": sorted(compiled)}))
"""


def _copy_package(tmp_path: Path) -> Path:
    target = tmp_path / "site" / "tracs"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name, text in _PROBES.items():
        (target / name).write_text(text)
    return target


def _run(site: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop(cache.ENV, None)  # numba's default: __pycache__ beside the copied modules
    done = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, env=env, cwd=site,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_editing_a_helper_recompiles_the_kernels_that_inline_it_and_no_other(tmp_path):
    package = _copy_package(tmp_path)
    first = _run(package.parent)
    assert first == {"shifted": 4, "alone": 0, "compiled": ["alone", "shift", "shifted"]}
    assert _run(package.parent) == {"shifted": 4, "alone": 0, "compiled": []}  # all loaded from the cache

    # same size, and the file's old modification time: only the contents tell the change
    helpers = package / "_probe_helpers.py"
    stat = helpers.stat()
    helpers.write_text(helpers.read_text().replace("x + 1", "x + 5"))
    os.utime(helpers, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = _run(package.parent)
    assert after == {"shifted": 12, "alone": 0, "compiled": ["shift", "shifted"]}
    assert _run(package.parent) == {"shifted": 12, "alone": 0, "compiled": []}

    # a dependency with a new modification time and the same contents (a copy made at install) changes nothing
    os.utime(helpers, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**10))
    assert _run(package.parent)["compiled"] == []


def test_a_kernel_module_depends_on_every_module_it_inlines_from():
    import tracs.baselines  # noqa: F401  (loads every kernel module of the default path and the baselines)
    import tracs.perturbers  # noqa: F401

    expected = {
        "tracs.perturbers._kernels": {"tracs.mechanisms.band", "tracs.mechanisms.lattice_kernels",
                                      "tracs.perturbers._angles", "tracs.random.kernels", "tracs._jit"},
        "tracs.perturbers.keyed_draws": {"tracs.random.kernels", "tracs._jit"},
        "tracs.perturbers._planar_kernel": {"tracs.mechanisms.geometric", "tracs.mechanisms.vector_log",
                                            "tracs.mechanisms.lattice_kernels", "tracs.random.kernels"},
        "tracs.mechanisms.geometric": {"tracs.mechanisms.lattice_kernels", "tracs.random.kernels"},
        "tracs.mechanisms._staircase": {"tracs.mechanisms.band", "tracs.mechanisms.geometric",
                                        "tracs.random.kernels"},
        "tracs.baselines._exponential_kernels": {"tracs.random.kernels"},
    }
    for module, dependencies in expected.items():
        sources = set(cache.sources_of(module))
        assert module in sources and sorted(dependencies - sources) == [], module


def _module_level_imports(module: str) -> set:
    """tracs modules a module imports at module level (any statement outside a function or class), by ``ast``."""
    loaded = sys.modules[module]
    tree = ast.parse(Path(loaded.__file__).read_text(encoding="utf-8"))
    package = module if loaded.__file__.endswith("__init__.py") else module.rpartition(".")[0]
    found, todo = set(), list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue  # annotations only
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "tracs")
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            source = (".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                      if node.level else node.module)
            if source.split(".")[0] == "tracs":
                for alias in node.names:
                    value = getattr(loaded, alias.asname or alias.name, None)
                    found.add(value.__name__ if isinstance(value, type(sys)) else source)
        todo.extend(ast.iter_child_nodes(node) if not isinstance(node, (ast.Import, ast.ImportFrom)) else ())
    return found


def _all_modules():
    """Every tracs module that imports here (the optional libraries of the others are missing)."""
    modules, missing = [], []
    for info in pkgutil.walk_packages(tracs.__path__, "tracs."):
        if info.name.endswith(".__main__"):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as error:
            missing.append((info.name, str(error)))
    return modules, missing


def test_the_fast_import_scan_finds_every_module_level_import():
    """:func:`sources_of` reads imports with a fast scan of lines; a full parse finds none it misses."""
    modules, _ = _all_modules()
    kernel_modules = [m.__name__ for m in modules if "key_on_sources" in vars(m) and m.__name__ != "tracs._numba_cache"]
    assert len(kernel_modules) >= 20
    for module in kernel_modules:
        for dependency in [module, *cache.sources_of(module)]:
            if dependency in sys.modules:
                missed = _module_level_imports(dependency) - cache._imports(dependency)
                assert missed == set(), (dependency, missed)


_EVERY_MODULE = """
import importlib, json, pkgutil, sys
import tracs
from numba.core.dispatcher import Dispatcher
missing = []
for info in pkgutil.walk_packages(tracs.__path__, "tracs."):
    if info.name.endswith(".__main__"):
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as error:
        missing.append(info.name)
import gc
kernels = {}
for value in gc.get_objects():
    if isinstance(value, Dispatcher) and value.py_func.__module__.startswith("tracs."):
        file = getattr(value._cache, "_cache_file", None)
        if file is None:
            continue  # not cache=True
        name = value.py_func.__module__ + "." + value.py_func.__qualname__
        stamp = file._source_stamp
        kernels[name] = {"keyed": isinstance(stamp, tuple) and isinstance(stamp[-1], tuple)
                                  and stamp[-1][0] == "tracs-sources",
                         "loaded": len(value.overloads)}
print(json.dumps({"kernels": kernels, "missing": missing}))
"""


def test_every_cached_kernel_is_keyed_on_its_sources(tmp_path):
    """No ``cache=True`` kernel escapes: every one in the package, after importing every module in a new
    interpreter, carries the digest of its sources, and none is compiled or loaded before it is keyed."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent), cache.ENV: str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", _EVERY_MODULE], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    kernels = found["kernels"]
    assert len(kernels) >= 100
    assert sorted(name for name, k in kernels.items() if not k["keyed"]) == []
    assert sorted(name for name, k in kernels.items() if k["loaded"]) == []
    # every source file defining a cached kernel or helper hands it to key_on_sources
    unkeyed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name != "_jit.py" and re.search(r"^\s*@(?:numba\.)?(?:njit|jit)\([^)]*cache=True|^\s*@helper\b", text,
                                                re.MULTILINE):
            if "\nkey_on_sources(globals())" not in text:
                unkeyed.append(str(path.relative_to(PACKAGE)))
    assert unkeyed == []
    assert not any(name.startswith(("tracs.mechanisms", "tracs.perturbers", "tracs.random", "tracs.engine",
                                    "tracs.baselines", "tracs.estimate", "tracs.io"))
                   for name in found["missing"]), found["missing"]


@pytest.mark.parametrize("text, expected", [
    ("from .band import (a,\n    b)  # c\n", {"tracs.mechanisms.band"}),
    ("from . import band, geometric as g\n", {"tracs.mechanisms.band", "tracs.mechanisms.geometric"}),
    ("from ..random.kernels import draw_u64  # a comment, with a comma\n", {"tracs.random.kernels"}),
    ("import tracs.random.kernels as rk, numpy\n", {"tracs.random.kernels"}),
    ("def f():\n    from .band import a\n", set()),  # inside a function: runs after the kernel's globals are set
    ("import numpy as np\nfrom numba import njit\n", set()),
])
def test_import_scan_cases(monkeypatch, tmp_path, text, expected):
    import tracs.mechanisms.band as band
    import tracs.mechanisms.geometric as geometric
    import tracs.random.kernels as rk

    module = type(sys)("tracs.mechanisms._probe")
    module.__file__ = str(tmp_path / "_probe.py")
    (tmp_path / "_probe.py").write_text(text)
    module.band, module.g, module.rk = band, geometric, rk
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(cache, "_state_sources", {"files": {}, "imports": {}, "closures": {}})
    assert cache._imports(module.__name__) == expected
