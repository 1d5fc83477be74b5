"""docs/results.md against the command that writes it (``examples/reproduce_results.py``).

The page states its seed and run size in its generated header.  These tests read the
generated tables back and recompute a sample of cheap cells from that seed: a cell
printed as ``a ± b`` must be recomputed within ``b`` (plus half a unit of the last
printed digit); any other cell exactly as printed.  With the same code the cells are
recomputed bit for bit; a change of a sampler that keeps its distribution moves them
within the stated ``±``, and the page must then be regenerated for the exact cells.
"""

from __future__ import annotations

import re
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PAGE = ROOT / "docs" / "results.md"
sys.path.insert(0, str(EXAMPLES))

import _cells  # noqa: E402
import _page  # noqa: E402
import reproduce_results  # noqa: E402
from _tables import Config  # noqa: E402

#: cells recomputed per table (chosen among its cheap cells by a generator seeded with the table's name)
PER_TABLE = 1
CHEAP_METHODS = {"tracs-d", "tracs-c", "strawman", "planar-laplace"}


def settings(text: str) -> Config:
    match = re.search(r"<!-- settings: seed=(\d+) mode=(full|quick) -->", text)
    assert match, "the page's generated header states no seed and mode"
    return Config(seed=int(match[1]), quick=match[2] == "quick")


def cheap(unit: tuple) -> bool:
    kind = unit[0]
    if kind in ("grid", "total"):
        return unit[2] in CHEAP_METHODS
    if kind == "loss":
        return unit[1] == "chi"  # 1,000 venues: exact loss in well under a second
    return kind in ("direction", "data", "lengths")


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tables(page):
    return [t for s in reproduce_results.sections(settings(page)) for t in s.tables]


def test_every_table_has_its_block_and_shape(page, tables):
    found = _page.blocks(page)
    assert "header" in found and "settings:" in found["header"]
    for table in tables:
        assert table.block in found, f"no generated block {table.block!r} on the page"
        header, rows = _page.parse_table(found[table.block])
        assert header == [table.corner] + [c.label for c in table.columns], table.block
        assert [r[0] for r in rows] == [table.row_text(r) for r in table.rows], table.block
        assert all(len(r) == len(header) for r in rows), table.block


def sample(table) -> list[tuple[int, int]]:
    cells = [(i, j) for i, row in enumerate(table.rows) for j, column in enumerate(table.columns)
             if (unit := column.unit(row)) is not None and unit[0] not in _cells.NOT_REPRODUCIBLE and cheap(unit)]
    if not cells:
        return []
    gen = np.random.default_rng(zlib.crc32(table.block.encode()))
    picked = gen.choice(len(cells), size=min(PER_TABLE, len(cells)), replace=False)
    return [cells[k] for k in sorted(picked)]


def agrees(printed: str, recomputed: str) -> bool:
    """Within the printed ± (and the printed digits), or exactly as printed when no ± is stated."""
    try:
        value, half, decimals = _page.parse_cell(printed)
    except ValueError:
        return printed == recomputed
    if half is None:
        return printed == recomputed
    new, _, _ = _page.parse_cell(recomputed)
    return abs(new - value) <= half + 0.5 * 10.0 ** -decimals


@pytest.mark.data
def test_a_sample_of_cells_is_recomputed_from_the_stated_seed(page, tables, tky_path, chi_path):
    cfg = settings(page)
    found = _page.blocks(page)
    checked, wrong = 0, []
    for table in tables:
        _, rows = _page.parse_table(found[table.block])
        for i, j in sample(table):
            row, column = table.rows[i], table.columns[j]
            unit = column.unit(row)
            recomputed = column.text(_cells.run_unit(unit, cfg.seed), row)
            printed = rows[i][j + 1]
            checked += 1
            if not agrees(printed, recomputed):
                wrong.append(f"{table.block} row {table.row_text(row)} column {column.label!r}: page {printed!r}, "
                             f"recomputed {recomputed!r}")
    assert checked >= 15, f"only {checked} cells sampled"
    assert not wrong, "cells differ from the page (regenerate it with examples/reproduce_results.py):\n" + \
        "\n".join(wrong)


def test_a_quick_run_rewrites_only_its_blocks(tmp_path, page):
    copy = tmp_path / "results.md"
    shutil.copy(PAGE, copy)
    bodies = reproduce_results.main(["--quick", "--only", "fig5", "--page", str(copy), "--no-files"])
    assert set(bodies) == {"tracs-fig5"}
    after = copy.read_text(encoding="utf-8")
    before_blocks, after_blocks = _page.blocks(page), _page.blocks(after)
    assert after_blocks["tracs-fig5"].strip() == bodies["tracs-fig5"].strip()
    assert {k: v for k, v in after_blocks.items() if k != "tracs-fig5"} == \
        {k: v for k, v in before_blocks.items() if k != "tracs-fig5"}
    outside = _page._BLOCK.sub("", after)
    assert outside == _page._BLOCK.sub("", page)
    header, rows = _page.parse_table(bodies["tracs-fig5"])
    assert header[:4] == ["ε", "TraCS-D", "TraCS-C", "Strawman"] and len(rows) == 5


@pytest.mark.parametrize("text, expected", [
    ("0.453 ± 0.0014", (0.453, 0.0014, 3)),
    ("9,825 ± 103", (9825.0, 103.0, 0)),
    ("9,330 ± 35 (0.237)", (9330.0, 35.0, 0)),
    ("0.0788", (0.0788, None, 4)),
    ("1.2e-05 ± 3e-06", (1.2e-05, 3e-06, 0)),
])
def test_cells_are_parsed(text, expected):
    assert _page.parse_cell(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, bodies, error, fragment", [
    ("no markers\n", {"x": "1"}, KeyError, "no markers for the generated block(s) x"),
    ("<!-- BEGIN GENERATED: a -->\n1\n<!-- END GENERATED: a -->\n<!-- BEGIN GENERATED: a -->\n"
     "2\n<!-- END GENERATED: a -->\n", {"a": "3"}, ValueError, "appears twice"),
])
def test_bad_pages_are_refused(text, bodies, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)):
        _page.replace_blocks(text, bodies)


@pytest.mark.parametrize("text, fragment", [("refused", "not a number"), ("–", "not a number")])
def test_non_numbers_are_refused(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        _page.parse_cell(text)


def test_replacing_a_block_keeps_the_rest():
    text = "a\n<!-- BEGIN GENERATED: t -->\nold\n<!-- END GENERATED: t -->\nb\n"
    assert _page.replace_blocks(text, {"t": "new"}) == \
        "a\n<!-- BEGIN GENERATED: t -->\nnew\n<!-- END GENERATED: t -->\nb\n"
