"""Write ``docs/api.md``, the API reference, from the public names' docstrings.

Every public package and module of tracs lists its names in ``__all__``; this script
walks them (the root ``tracs`` and the modules of :data:`MODULES`) and writes, for each
name, its signature and the first paragraph of its docstring, in the order of
``__all__``.  Run it after changing a public name or docstring::

    python docs/make_api.py          # rewrite docs/api.md
    python docs/make_api.py --check  # exit 1 if docs/api.md is not current

``tests/test_doc_api.py`` runs the check.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

PAGE = Path(__file__).with_name("api.md")

#: the public modules, in the order of the page (the root ``tracs`` comes first)
MODULES = ("region", "public", "perturbers", "baselines", "mechanisms", "methods", "random", "engine", "io",
           "trajectory_batch", "trajectories", "gdf", "adapters", "dask", "estimate", "collect", "privacy", "metrics",
           "query_metrics", "evaluation", "maps", "plots", "geo", "errors")

HEADER = """# API reference

Generated from the docstrings by `python docs/make_api.py`; `tests/test_doc_api.py`
fails when this page and the code differ.  One section per public module: the
names of its `__all__`, each with its signature and the first paragraph of its
docstring (the full text: `help(name)`).  The map of the packages and the rules
between them: [architecture.md](architecture.md).
"""


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line ('' when there is none)."""
    if not doc:
        return ""
    paragraph = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def signature(obj) -> str:
    """``(parameters)`` of a callable, with object addresses removed; '' when it has none."""
    if not callable(obj):
        return ""
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def kind(obj) -> str:
    """``class``, ``function``, ``module`` or ``data``."""
    if inspect.isclass(obj):
        return "class"
    if inspect.ismodule(obj):
        return "module"
    if callable(obj):
        return "function"
    return "data"


def section(dotted: str) -> list[str]:
    """The page's lines for one module."""
    module = importlib.import_module(dotted)
    lines = [f"## `{dotted}`", "", first_paragraph(module.__doc__), ""]
    for name in module.__all__:
        obj = getattr(module, name)
        what = kind(obj)
        if what == "module":
            lines += [f"- `{dotted}.{name}`: module, {first_paragraph(obj.__doc__)}"]
            continue
        title = f"`{dotted}.{name}{signature(obj)}`" if what != "data" else f"`{dotted}.{name}`"
        summary = first_paragraph(getattr(obj, "__doc__", None)) if what != "data" else ""
        lines += [f"- {title} ({what})" + (f": {summary}" if summary else "")]
    return lines + [""]


def page() -> str:
    """The whole page."""
    lines = [HEADER]
    for dotted in ("tracs", *(f"tracs.{name}" for name in MODULES)):
        lines += section(dotted)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is not current")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.name} is not current: run python docs/make_api.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
