"""The package's layering: lower layers never import higher ones, no import circles (docs/architecture.md).

The layers and the other import contracts are import-linter's (``[tool.importlinter]`` in
pyproject.toml, ``lint-imports``); this file runs it and checks what it cannot express."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the contracts of ``[tool.importlinter]`` in pyproject.toml (layers, independence, no circles, heavy
#: libraries), checked by import-linter on every import, those inside functions included
PYPROJECT = ROOT / "pyproject.toml"
CONTRACTS = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
#: module -> layer number of the layers contract (listed from the top; the bottom layer is 0), the
#: numbers of docs/architecture.md's table
LAYERS = {name.strip(): number
          for number, layer in enumerate(reversed(next(c for c in CONTRACTS if c["id"] == "layers")["layers"]))
          for name in re.split(r"[|:]", layer)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


SOURCES = sorted(
    p for p in [*ROOT.joinpath("tracs").rglob("*.py"), *ROOT.joinpath("data_loaders").rglob("*.py")]
    if "__pycache__" not in p.parts
)


def test_import_contracts_hold():
    """``lint-imports``: no upward import, no import circle, no import between independent packages,
    no heavy library below its layer (the contracts in pyproject.toml)."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    out = subprocess.run([sys.executable, "-c", code, "--no-logo", "--no-cache"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_every_module_has_a_layer():
    """Each module and package of ``tracs`` is in a layer of the layers contract."""
    named = set(LAYERS)
    children = {f"tracs.{p.stem}" for p in ROOT.joinpath("tracs").glob("*.py")
                if p.stem not in ("__init__", "__main__")}
    children |= {f"tracs.{p.parent.name}" for p in ROOT.joinpath("tracs").glob("*/__init__.py")}
    assert len(children) > 25, "the walk no longer finds the package's modules"
    assert children <= named, f"modules of no layer: add them to pyproject.toml and docs/architecture.md: " \
                              f"{sorted(children - named)}"


def test_import_tracs_is_light():
    code = (
        "import sys, tracs, tracs.mechanisms; "
        "heavy = [m for m in ('folium', 'matplotlib', 'geopandas', 'data_loaders', 'sklearn', 'dask', "
        "'distributed') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import tracs pulled in: {out.stdout.strip()}"


def _imported_names(path: Path, module: str):
    """``(module, name)`` of every ``from module import name`` of a file (absolute targets)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            for alias in node.names:
                yield base, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None


@pytest.mark.parametrize("path", [p for p in SOURCES if module_name(p).startswith("data_loaders")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_data_loaders_build_on_tracs_io_through_public_names(path):
    """One direction between the readers and the named data sets: ``tracs.io`` never imports
    ``data_loaders`` (the layers above), and ``data_loaders`` uses only public modules and
    names of ``tracs.io`` (no ``tracs.io._x`` module, no ``_name``)."""
    for target, name in _imported_names(path, module_name(path)):
        if not (target == "tracs.io" or target.startswith("tracs.io.")):
            continue
        private = [part for part in target.split(".") if part.startswith("_")]
        assert not private, f"{module_name(path)} imports the private module {target}"
        assert name is None or not name.startswith("_"), f"{module_name(path)} imports {target}.{name}"


def test_lazy_exports_of_data_loaders_are_public():
    """The names ``data_loaders`` re-exports from ``tracs.io`` come from its public modules."""
    import data_loaders

    for name, module in data_loaders._EXPORTS.items():
        if "." in module:
            assert module.startswith("tracs.io.") and not any(p.startswith("_") for p in module.split(".")), \
                (name, module)
            assert not name.startswith("_")


def test_module_names_are_not_reused_across_rooms():
    """Two modules of one name in different rooms would be two different things under one name.

    Allowed: ``_base.py`` (each room's base classes) and the modules of ``tracs.cli``, each named
    after the command it implements."""
    seen: dict[str, list[str]] = {}
    for path in sorted([*ROOT.glob("tracs/**/*.py"), *ROOT.glob("data_loaders/**/*.py")]):
        if path.name in ("__init__.py", "__main__.py", "_base.py") or path.parent.name == "cli":
            continue
        seen.setdefault(path.stem, []).append(path.relative_to(ROOT).as_posix())
    reused = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert len(seen) > 100, "the walk no longer finds the package's modules"
    assert not reused, f"module names used in more than one room: {reused}"


#: most imports of a private module or name from outside the package that owns it (see
#: :func:`private_crossings`); a name used across packages is public (no leading underscore)
MAX_PRIVATE_CROSSINGS = 10


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _owner(target: str, name: str | None, modules: set) -> str | None:
    """The package that owns ``target`` (a module) or ``target.name``, if either is private: the parent
    of the first private part of a module's name, else the package of a module's private name."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    if name is not None and _private(name):
        return target if ROOT.joinpath(*parts, "__init__.py").exists() else ".".join(parts[:-1])
    return None


def private_crossings() -> list[str]:
    """``importer -> module.name`` of every import (at the top or inside a function) of a private
    module or name by a module outside the package that owns it."""
    modules = {module_name(p) for p in SOURCES}
    found = []
    for path in SOURCES:
        module = module_name(path)
        for target, name in _imported_names(path, module):
            if name is not None and f"{target}.{name}" in modules:  # from package import module
                target, name = f"{target}.{name}", None
            owner = _owner(target, name, modules)
            if owner is not None and module != owner and not module.startswith(owner + "."):
                found.append(f"{module} -> {target}" + (f".{name}" if name else ""))
    return found


def test_few_private_names_cross_packages():
    """A private module or name imported from another package is an unstated public name: at most
    :data:`MAX_PRIVATE_CROSSINGS` of them (each listed when there are more)."""
    found = private_crossings()
    assert len(found) <= MAX_PRIVATE_CROSSINGS, \
        f"{len(found)} imports of private names across packages (at most {MAX_PRIVATE_CROSSINGS}): " \
        "make the name public or move the code where it is used:\n" + "\n".join(found)


#: libraries a module may import inside a function: heavy (they take tenths of a second to load, or
#: more), optional (extras) or both; a module keeps the light start of what imports it by deferring them
DEFERRED = ("pandas", "pyarrow", "geopandas", "shapely", "pyproj", "scipy", "sklearn", "numba", "matplotlib",
            "folium", "dask", "distributed", "dask_geopandas", "movingpandas", "skmob", "starlette", "uvicorn",
            "httpx", "psycopg", "gpxpy", "selenium", "threadpoolctl",
            "importlib")  # importlib.metadata: the entry points, read on first use only (the light start)
#: modules that import inside functions by design: the command line loads a command's modules only when
#: the command runs (its light start: tests/cli/test_light_start.py), the registry of methods a
#: method's classes when it is built, the warm-up a family's kernels when it warms them
LAZY_IMPORTERS = ("tracs.cli", "tracs.methods._shipped", "tracs.warmup")


def _module_imports(path: Path, module: str):
    """``(node, targets, inside a function)`` of every import of a file (targets: absolute modules;
    ``from package import module`` names the module)."""
    modules = {module_name(p) for p in SOURCES}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield node, [a.name for a in node.names], id(node) in inside
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            yield node, [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names], \
                id(node) in inside


def _heavy_at_import() -> dict[str, set]:
    """Module -> the libraries of :data:`DEFERRED` importing it loads (its imports at the top and its
    packages', followed through the package's modules)."""
    paths = {module_name(p): p for p in SOURCES}
    top = {m: {t for _, targets, inner in _module_imports(p, m) if not inner for t in targets}
           for m, p in paths.items()}

    def owner(target):
        while target and target not in paths:
            target = target.rpartition(".")[0]
        return target

    loads = {m: {".".join(m.split(".")[:i]) for i in range(1, m.count(".") + 1)} |
                {owner(t) for t in top[m] if owner(t)} for m in paths}
    heavy = {}
    for module in paths:  # every module importing it runs: its packages, their imports, theirs, ...
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(loads.get(m, ()))
        heavy[module] = {t.split(".")[0] for m in seen for t in top.get(m, ()) if t.split(".")[0] in DEFERRED}
    return heavy, owner


def function_level_imports() -> list[str]:
    """``importer -> module`` of every import inside a function that is not deferred: not of a library
    of :data:`DEFERRED`, not by :data:`LAZY_IMPORTERS`, not of a module of the package that loads a
    library of :data:`DEFERRED` its importer does not load."""
    heavy, owner = _heavy_at_import()
    found = []
    for path in SOURCES:
        module = module_name(path)
        if module.startswith(LAZY_IMPORTERS):
            continue
        for _, targets, inner in _module_imports(path, module):
            for target in targets if inner else ():
                if target.split(".")[0] in DEFERRED:
                    continue
                if owner(target) and heavy[owner(target)] - heavy[module]:
                    continue
                found.append(f"{module} -> {target}")
    return found


def test_imports_are_at_the_top():
    """An import inside a function only defers what is heavy (:data:`DEFERRED`, or a module that
    loads it); every other import is at the module's top, where the layers and circles are seen."""
    found = function_level_imports()
    assert found == [], "imports inside functions that belong at the top of their module " \
                        "(or a library missing from DEFERRED):\n" + "\n".join(found)
