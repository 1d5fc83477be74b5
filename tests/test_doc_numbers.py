"""Every table of the documentation follows the number rule of tracs._text: counts whole with
thousands separators, measured values to 3 significant digits (2 after ±, no exponent form, no
trailing zeros), parameters and figures quoted from papers as written."""

import re
from pathlib import Path

import pytest

from tracs._text import plus_minus, significant, whole

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.joinpath("docs").glob("*.md"), *ROOT.joinpath("docs", "figures").glob("*.md"),
                ROOT / "README.md"])
NUM = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:e[+-]?\d+)?"
CELL = re.compile(rf"^({NUM})(\s?(?:×|%|M/s|/s|points/s|MB|GB|M|s|ms|VIOLATION))?$")
PM = re.compile(rf"^({NUM}) ± ({NUM})$")
#: columns of parameters (written as given), besides the first column of every table
PARAMETERS = {"ε", "claimed ε", "confidence", "grid", "workers", "stated ε"}
QUOTED = re.compile(r"paper", re.I)  # figures quoted from a paper keep the paper's digits


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def by_rule(cell: str) -> str:
    """The cell as the rule writes its value (unchanged when it is no number)."""
    m = PM.match(cell)
    if m and re.search(r"\d", m.group(1)):
        if re.fullmatch(r"-?[\d,]+", m.group(1)) and re.fullmatch(r"-?[\d,]+", m.group(2)):
            return f"{whole(_number(m.group(1)))} ± {whole(_number(m.group(2)))}"
        return plus_minus(_number(m.group(1)), _number(m.group(2)))
    if " / " in cell:
        return " / ".join(by_rule(part) for part in cell.split(" / "))
    m = CELL.match(cell)
    if not (m and re.search(r"\d", m.group(1))):
        return cell
    if (m.group(2) or "").strip() == "points/s" and _number(m.group(1)) >= 1e4:
        return f"{significant(_number(m.group(1)) / 1e6)} M points/s"
    text = m.group(1)
    return (whole(_number(text)) if re.fullmatch(r"-?[\d,]+", text) else significant(_number(text))) + (m.group(2) or "")


def _cells(line: str) -> list:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_cells(text: str):
    """``(header, cell)`` of every cell the rule applies to, in every Markdown table of ``text``."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.match(r"^\|[\s:\-|]+$", lines[i + 1]):
            header = _cells(lines[i])
            free = {k for k, h in enumerate(header) if k == 0 or h in PARAMETERS or QUOTED.search(h)}
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = _cells(lines[i])
                if not QUOTED.search(cells[0]):
                    for k, cell in enumerate(cells):
                        if k not in free:
                            yield (header[k] if k < len(header) else ""), cell
                i += 1
        else:
            i += 1


@pytest.mark.parametrize("cell, ok", [
    ("29,114", True), ("29114", False), ("0.403", True), ("0.4025", False), ("0.500", False), ("2.6", True),
    ("1.645e+07 points/s", False), ("16.4 M points/s", True), ("0.453 ± 0.0014", True),
    ("0.453 ± 0.00141", False), ("9,825 ± 103", True), ("1.0× / 1.0×", False), ("1× / 1×", True),
    ("0.696 VIOLATION", True), ("1.337 VIOLATION", False), ("ok", True), ("64×64", True),
])
def test_rule(cell, ok):
    assert (by_rule(cell) == cell) is ok


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_tables_follow_the_rule(page):
    wrong = [(header, cell, by_rule(cell)) for header, cell in table_cells(page.read_text(encoding="utf-8"))
             if by_rule(cell) != cell]
    assert not wrong, f"{page.name}: cells not written by the rule (column, cell, by the rule): {wrong[:8]}"
