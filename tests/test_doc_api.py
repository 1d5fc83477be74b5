"""docs/api.md is generated from the docstrings and stays current (``python docs/make_api.py``)."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

MAKER = Path(__file__).resolve().parents[1] / "docs" / "make_api.py"


@pytest.fixture(scope="module")
def maker():
    return runpy.run_path(str(MAKER))


def _names(text: str) -> list[str]:
    return re.findall(r"^- `([\w.]+)", text, flags=re.M)


def test_api_page_is_current(maker):
    text = maker["page"]()
    current = maker["PAGE"].read_text(encoding="utf-8")
    if sys.version_info[:2] == (3, 11):  # signatures print differently on other versions
        assert current == text, "docs/api.md is not current: run python docs/make_api.py"
    else:
        assert _names(current) == _names(text)


def test_api_page_lists_every_public_name(maker):
    import importlib

    names = set(_names(maker["PAGE"].read_text(encoding="utf-8")))
    for dotted in ("tracs", *(f"tracs.{m}" for m in maker["MODULES"])):
        module = importlib.import_module(dotted)
        missing = {f"{dotted}.{name}" for name in module.__all__} - names
        assert not missing, f"not in docs/api.md: {sorted(missing)}"


@pytest.mark.parametrize("doc, expected", [
    (None, ""),
    ("One line.", "One line."),
    ("First line\n    goes on.\n\n    Second paragraph.", "First line goes on."),
])
def test_first_paragraph(maker, doc, expected):
    assert maker["first_paragraph"](doc) == expected


def test_check_mode_reports_a_stale_page(maker, tmp_path, monkeypatch, capsys):
    stale = tmp_path / "api.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setitem(maker["main"].__globals__, "PAGE", stale)
    assert maker["main"](["--check"]) == 1
    assert "not current" in capsys.readouterr().err
