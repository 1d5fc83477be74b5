"""Every module and file the documentation names exists: stale names fail the suite.

README.md and docs/*.md name modules by dotted path (``tracs.estimate.grid_density``,
``data_loaders.trajectory_sets``; attribute paths like ``tracs.estimate.grid_density``
included) and files by path (``tracs/io/formats.py``, ``data_loaders/…py``,
``benchmarks/…py``, ``tests/…py``, ``examples/…py``).  A dotted
path resolves by importing its longest importable module prefix and reading the
rest as attributes; a file path must be a file of the repository.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

DOTTED = re.compile(r"(?<![\w./-])((?:tracs|data_loaders)(?:\.[A-Za-z_]\w*)+)")
FILES = re.compile(r"(?<![\w./-])((?:tracs|data_loaders|benchmarks|tests|examples)/[\w/]*\w\.py)\b")


def _references(pattern):
    found = {}
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in pattern.finditer(line):
                found.setdefault(match.group(1), f"{page.relative_to(ROOT)}:{number}")
    return sorted(found.items())


#: names of entry-point groups (tracs._plugins.GROUPS), not modules: ``tracs.formats``, ...
GROUPS = ("tracs.methods", "tracs.formats", "tracs.estimators")
DOTTED_REFS = [(ref, where) for ref, where in _references(DOTTED) if ref not in GROUPS[1:]]
FILE_REFS = _references(FILES)


def test_the_groups_are_those_read():
    from tracs._plugins import GROUPS as READ

    assert READ == GROUPS


def resolve(dotted: str):
    """The object ``dotted`` names: its longest importable module prefix, then attributes.

    Raises ``LookupError`` naming the first part that does not exist.
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name) and exc.name.startswith(parts[0]):
                continue  # this prefix is not a module: try a shorter one
            raise  # a missing dependency, not a stale name
        for attribute in parts[cut:]:
            try:  # a package's lazy names import their module on first use
                obj = getattr(obj, attribute)
            except (AttributeError, ModuleNotFoundError):
                raise LookupError(f"{name} has no attribute {attribute!r}") from None
            name = f"{name}.{attribute}"
        return obj
    raise LookupError(f"no module {parts[0]!r}")


def test_pages_name_modules_and_files():
    # the scan finds what the pages are known to name, so an empty scan cannot pass silently
    names = {ref for ref, _ in DOTTED_REFS}
    assert {"tracs.methods", "tracs.io.formats", "tracs.estimate"} <= names
    assert "tracs/io/formats.py" in {ref for ref, _ in FILE_REFS}


@pytest.mark.parametrize("dotted, where", DOTTED_REFS, ids=[ref for ref, _ in DOTTED_REFS])
def test_dotted_reference_exists(dotted, where):
    try:
        resolve(dotted)
    except LookupError as exc:
        pytest.fail(f"{where} names {dotted}, which does not exist: {exc}")


@pytest.mark.parametrize("path, where", FILE_REFS, ids=[ref for ref, _ in FILE_REFS])
def test_file_reference_exists(path, where):
    assert (ROOT / path).is_file(), f"{where} names {path}, which is not a file of the repository"


@pytest.mark.parametrize("dotted, message", [
    ("tracs.discrete", "tracs has no attribute 'discrete'"),                       # a renamed module
    ("tracs.estimate.no_such_name", "tracs.estimate has no attribute 'no_such_name'"),
    ("tracs.evaluation.methods", "tracs.evaluation has no attribute 'methods'"),
])
def test_resolve_rejects_stale_names(dotted, message):
    with pytest.raises(LookupError, match=re.escape(message)):
        resolve(dotted)


def test_resolve_reads_attribute_paths():
    from tracs.estimate.grid_density import density

    assert resolve("tracs.estimate.grid_density.density") is density
    assert resolve("tracs.io.formats.FORMATS") is importlib.import_module("tracs.io.formats").FORMATS


def _layer_rows():
    """``(layer, module)`` of every module in the first column of docs/architecture.md's layer table."""
    rows = []
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            for name in re.findall(r"`((?:tracs|data_loaders)[\w.]*)`", cells[1]):
                rows.append((int(cells[0]), name))
    return rows


def test_layer_table_is_the_enforced_one():
    """The layer table of docs/architecture.md is tests/test_layers.py's LAYERS, with the same numbers."""
    from test_layers import LAYERS

    documented = _layer_rows()
    assert len(documented) >= 20
    wrong = [(name, layer, LAYERS.get(name)) for layer, name in documented if LAYERS.get(name) != layer]
    assert wrong == [], "documented layer differs from LAYERS (name, documented, enforced)"
    missing = sorted(set(LAYERS) - {name for _, name in documented})
    assert missing == [], f"modules of LAYERS the architecture page omits: {missing}"


def test_quoted_format_lists_are_the_table():
    """A page quoting the refusal's list of formats quotes the format table's (tracs.io.formats)."""
    from tracs.io.formats import supported

    quoted = []
    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        quoted += [(page.name, m) for m in re.findall(r'"supported formats: ([^"]+)"', text)]
    assert quoted, "README.md quotes the list of supported formats"
    assert [(name, m) for name, m in quoted if m != supported()] == []


def _code_text(page: Path) -> list[tuple[int, str]]:
    """``(line number, code)`` of the page's fenced blocks and inline code spans."""
    code, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            code.append((number, line))
        else:
            code += [(number, span) for span in re.findall(r"`([^`]+)`", line)]
    return code


def _commands():
    """``(command, where)`` of every ``tracs SUBCOMMAND`` and ``python -m benchmarks SECTION`` in code."""
    found = set()
    for page in PAGES:
        for number, code in _code_text(page):
            where = f"{page.relative_to(ROOT)}:{number}"
            for sub in re.findall(r"(?:^|[;&|(/])\s*(?:\$\s*)?tracs ([a-z][a-z-]*)", code):
                found.add((f"tracs {sub}", where))
            for section in re.findall(r"python -m benchmarks ([a-z][a-z-]*)", code):
                found.add((f"benchmarks {section}", where))
    return sorted(found)


def test_commands_named_in_code_exist():
    """Every ``tracs SUBCOMMAND`` and ``python -m benchmarks SECTION`` a page shows in code exists."""
    import argparse

    from benchmarks.__main__ import ALIASES, SECTIONS
    from tracs.cli import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    commands = _commands()
    assert any(name == "tracs perturb" for name, _ in commands) and any(
        name.startswith("benchmarks ") for name, _ in commands)
    unknown = [(name, where) for name, where in commands
               if (name.startswith("tracs ") and name[6:] not in subcommands)
               or (name.startswith("benchmarks ") and name[11:] not in {*SECTIONS, *ALIASES})]
    assert unknown == [], "commands the pages show that do not exist"
