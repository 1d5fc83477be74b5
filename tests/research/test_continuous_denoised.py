"""The denoised tables of the continuous spaces on docs/results.md (``examples/_sections.py``,
``examples/_tracs_figures.py``): raw and denoised AE of the same releases side by side, their ratio,
and ``n/a`` for the methods not denoised."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import _cells  # noqa: E402
import _sections  # noqa: E402
import _tracs_figures  # noqa: E402
from _tables import Config  # noqa: E402

SMALL = ("region", "unit-square", 10, 50)


def _tables(section):
    return {t.block: t for t in section.tables}


def test_the_continuous_section_has_a_denoised_table_per_region():
    tables = _tables(_sections.continuous(Config(quick=True)))
    for region in ("unit-square", "2x10"):
        table = tables[f"continuous-{region}-denoised"]
        labels = [c.label for c in table.columns]
        assert labels == ["TraCS-D raw", "denoised", "ratio", "TraCS-C raw", "denoised", "ratio",
                          "Strawman raw", "denoised", "ratio", "T-Laplace denoised"]
        assert list(table.rows) == [1.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        unit = table.columns[0].unit(2.0)
        assert unit[0] == "denoised-continuous" and unit[2] == "tracs-d" and unit[-1] == "point"
        # raw, denoised and ratio of a method come from one unit: the same releases
        assert {c.unit(2.0) for c in table.columns[:3]} == {unit}


def test_figure7_denoises_chi_with_one_fixed_rule_per_method():
    table = _tables(_tracs_figures.figure7(Config(quick=True)))["tracs-fig7-chi-denoised"]
    rules = {c.unit(4.0)[2]: c.unit(4.0)[-1] for c in table.columns if c.unit(4.0) is not None}
    assert rules == _tracs_figures.FIG7_DENOISE
    assert all(c.unit(4.0)[6] == "degrees" for c in table.columns if c.unit(4.0) is not None)


def test_a_table_prints_raw_denoised_ratio_and_na():
    table = _tables(_sections.continuous(Config(quick=True)))["continuous-unit-square-denoised"]
    cell = {"raw": {"mean": 0.4, "half": 0.01}, "denoised": {"mean": 0.3, "half": 0.02}, "ratio": 0.75}
    results = {u: cell for u in table.units()}
    first = table.render(results).splitlines()[2]
    assert first == "| 1 | " + " | ".join(["0.4 ± 0.01", "0.3 ± 0.02", "0.75"] * 3 + ["n/a"]) + " |"
    # two decimals without trailing zeros (the number rule of tests/test_doc_numbers.py)
    ratio = table.columns[2]
    assert [ratio.text({"ratio": v}, 1.0) for v in (0.8999, 0.804, 1.0, 1.013)] == ["0.9", "0.8", "1", "1.01"]


@pytest.mark.parametrize("method", ["tracs-c", "strawman"])
def test_the_posterior_mean_is_below_the_raw_error(method):
    """Seed 0, 500 uniform points of the unit square, ε = 2: the posterior mean under the fitted prior
    lowers the AE (on the page's 1,000-point cells by about 10 % for TraCS-C, 20 % for the Strawman);
    tolerance: at most 0.97 of the raw AE."""
    unit = ("denoised-continuous", SMALL, method, 2.0, 1, "corner", "metres", "point")
    result = _cells.run_unit(unit, 0)
    assert result["raw"]["runs"] == pytest.approx(_cells.run_unit(("grid", SMALL, method, 2.0, 1, "corner", None,
                                                                    (), "metres"), 0)["runs"])
    assert result["ratio"] == pytest.approx(result["denoised"]["mean"] / result["raw"]["mean"])
    assert result["ratio"] <= 0.97
