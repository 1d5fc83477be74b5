"""The package's layering: lower layers never import higher ones (docs/architecture.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# module prefix -> layer number; the longest matching prefix wins
LAYERS = {
    "tracs._validation": 0,
    "tracs._numba_cache": 0,
    "tracs._jit": 0,
    "tracs.random": 0,
    "tracs._text": 0,
    "tracs._progress": 0,
    "tracs._lazy": 0,
    "tracs._plugins": 0,
    "tracs.errors": 0,
    "tracs.mechanisms": 1,
    "tracs.region": 2,
    "tracs.metrics": 2,
    "tracs.engine": 2,
    "tracs.releaser": 2,
    "tracs.perturbers": 3,
    "tracs.poi_space": 4,
    "tracs.baselines": 4,
    "tracs.methods": 4,
    "tracs.geo": 5,
    "tracs.trajectories": 5,
    "tracs.gdf": 5,
    "tracs.adapters": 5,
    "tracs.estimate": 5,
    "tracs.privacy": 5,
    "tracs.public": 5,
    "tracs.io": 6,
    "data_loaders": 7,
    "tracs.maps": 7,
    "tracs.plots": 7,
    "tracs.charts": 7,
    "tracs.query_metrics": 7,
    "tracs.release": 7,
    "tracs.evaluation": 8,
    "tracs.dask": 8,
    "tracs.collect": 8,
    "tracs.collect.export": 9,
    "tracs.collect.server": 9,
    "tracs.cli": 9,
    "tracs.warmup": 9,
}
#: package roots: lazy loaders of every layer's public names, in no layer themselves
ROOTS = {"tracs"}
# heavy optional libraries and the lowest layer allowed to import them
HEAVY = {"folium": 7, "matplotlib": 7, "geopandas": 5, "pandas": 5, "pyproj": 5, "dask": 8,
         "distributed": 8, "dask_geopandas": 8}


def layer_of(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(path: Path, module: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    for alias in node.names:
                        yield f"{target}.{alias.name}"
                    continue
                yield target
            elif node.module:
                yield node.module


SOURCES = sorted(
    p for p in [*ROOT.joinpath("tracs").rglob("*.py"), *ROOT.joinpath("data_loaders").rglob("*.py")]
    if "__pycache__" not in p.parts
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_upward_imports(path):
    module = module_name(path)
    own = layer_of(module)
    if module in ROOTS:  # the package roots import their submodules lazily, by name
        return
    assert own is not None, f"{module} has no layer: add it to LAYERS (and to docs/architecture.md)"
    for target in imported_modules(path, module):
        other = layer_of(target)
        if other is not None:
            assert other <= own, f"{module} (layer {own}) imports {target} (layer {other})"
        top = target.split(".")[0]
        if top in HEAVY:
            assert own >= HEAVY[top], f"{module} (layer {own}) imports {top}"


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


def _import_graph(prefix: str) -> dict[str, set[str]]:
    """Module -> modules of the same package it imports (at the top or inside functions)."""
    modules = {module_name(p): p for p in SOURCES}

    def owner(target):
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    return {m: {owner(t) for t in imported_modules(p, m)} & {k for k in modules if k.startswith(prefix)} - {m}
            for m, p in modules.items() if m.startswith(prefix)}


@pytest.mark.parametrize("package", ["tracs.cli."])
def test_no_import_circles(package):
    """No module reaches itself through imports (a circle makes load order matter)."""
    graph = _import_graph(package)
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            assert module != start, f"{start} imports itself through {sorted(seen)}"
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])


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
