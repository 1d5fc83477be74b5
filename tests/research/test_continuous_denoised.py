"""The denoised tables of the continuous spaces on docs/results.md (``examples/_sections.py``,
``examples/_tracs_figures.py``): raw and denoised AE of the same releases side by side, their ratio,
``n/a`` for planar Laplace unless ``--denoise-laplace``, and more repetitions for chosen ε."""

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


LABELS = ["TraCS-D raw", "denoised", "ratio", "TraCS-C raw", "denoised", "ratio", "Strawman raw", "denoised", "ratio",
          "T-Laplace raw", "denoised", "ratio"]


@pytest.mark.parametrize("laplace", [False, True])
def test_the_continuous_section_has_a_denoised_table_per_region(laplace):
    tables = _tables(_sections.continuous(Config(quick=True, denoise_laplace=laplace)))
    for region in ("unit-square", "2x10"):
        table = tables[f"continuous-{region}-denoised"]
        assert [c.label for c in table.columns] == LABELS  # the same shape with and without planar Laplace
        assert list(table.rows) == [1.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        unit = table.columns[0].unit(2.0)
        assert unit[0] == "denoised-continuous" and unit[2] == "tracs-d" and unit[-1] == "point"
        assert unit[4] == 2  # repetitions (quick): a spread, not one run
        # raw, denoised and ratio of a method come from one unit: the same releases
        assert {c.unit(2.0) for c in table.columns[:3]} == {unit}
        laplace_units = {c.unit(2.0) for c in table.columns[9:]}
        if laplace:
            assert laplace_units == {unit[:2] + ("planar-laplace",) + unit[3:]}
        else:
            assert laplace_units == {None}
            assert all(u[2] != "planar-laplace" for u in table.units())


def test_the_full_denoised_tables_have_three_repetitions():
    section = _sections.continuous(Config())
    figure = _tracs_figures.figure7(Config())
    units = [u for s in (section, figure) for u in s.units() if u[0] == "denoised-continuous"]
    assert units and {u[4] for u in units} == {3}
    assert {u[1][1] for u in units} == {"unit-square", "2x10", "tky", "chi"}


@pytest.mark.parametrize("laplace", [False, True])
def test_figure7_denoises_tky_and_chi_with_one_fixed_rule_per_method(laplace):
    tables = _tables(_tracs_figures.figure7(Config(quick=True, denoise_laplace=laplace)))
    for name in ("tky", "chi"):
        table = tables[f"tracs-fig7-{name}-denoised"]
        assert [c.label for c in table.columns] == LABELS
        rules = {c.unit(4.0)[2]: c.unit(4.0)[-1] for c in table.columns if c.unit(4.0) is not None}
        expected = dict(_tracs_figures.FIG7_DENOISE)
        if not laplace:
            del expected["planar-laplace"]
        assert rules == expected
        assert all(c.unit(4.0)[6] == "degrees" and c.unit(4.0)[1][1] == name
                   for c in table.columns if c.unit(4.0) is not None)


def test_a_table_prints_raw_denoised_ratio_and_na():
    table = _tables(_sections.continuous(Config(quick=True)))["continuous-unit-square-denoised"]
    cell = {"raw": {"mean": 0.4, "half": 0.01}, "denoised": {"mean": 0.3, "half": 0.02}, "ratio": 0.75}
    results = {u: cell for u in table.units()}
    lines = table.render(results).splitlines()
    assert lines[2] == "| 1 | " + " | ".join(["0.4 ± 0.01", "0.3 ± 0.02", "0.75"] * 3 + ["n/a"] * 3) + " |"
    assert len(lines) == 8  # no note: every row has the table's repetitions
    # two decimals without trailing zeros (the number rule of tests/test_doc_numbers.py)
    ratio = table.columns[2]
    assert [ratio.text({"ratio": v}, 1.0) for v in (0.8999, 0.804, 1.0, 1.013)] == ["0.9", "0.8", "1", "1.01"]


@pytest.mark.parametrize("chosen, expected", [
    ((((None, 2.0), 10),), {("unit-square", 2.0): 10, ("2x10", 2.0): 10, ("chi", 2.0): 10, ("tky", 2.0): 10}),
    (((("chi", 2.0), 10),), {("chi", 2.0): 10}),
    (((("chi", 2.0), 10), ((None, 4.0), 5)), {("chi", 2.0): 10, **{(n, 4.0): 5 for n in
                                                                    ("unit-square", "2x10", "chi", "tky")}}),
])
def test_more_repetitions_for_chosen_eps_only(chosen, expected):
    cfg = Config(repetitions_at=chosen)
    tables = {**_tables(_sections.continuous(cfg)), **_tables(_tracs_figures.figure7(cfg))}
    for block, name in (("continuous-unit-square-denoised", "unit-square"), ("continuous-2x10-denoised", "2x10"),
                        ("tracs-fig7-tky-denoised", "tky"), ("tracs-fig7-chi-denoised", "chi")):
        table = tables[block]
        for eps in table.rows:
            assert {u[4] for u in table.units() if u[3] == eps} == {expected.get((name, eps), 3)}, (block, eps)
        note = table.render({u: {"raw": {"mean": 1.0, "half": 0.1}, "denoised": {"mean": 0.5, "half": 0.1},
                                 "ratio": 0.5} for u in table.units()}).split("\n\n")
        more = {e: n for (where, e), n in expected.items() if where == name}
        if more:
            assert note[1] == "; ".join(f"ε = {e:g}: {n} repetitions" for e, n in sorted(more.items())) + \
                " (the other rows: 3)."
        else:
            assert len(note) == 1


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


@pytest.mark.slow
def test_planar_laplace_runs_through_the_same_unit():
    """The plumbing of ``--denoise-laplace`` on 20 points, 2 repetitions (seed 0): raw, denoised and ratio
    of planar Laplace's releases, the raw ones those of the raw table's cell."""
    tiny = ("region", "unit-square", 2, 10)
    result = _cells.run_unit(("denoised-continuous", tiny, "planar-laplace", 2.0, 2, "corner", "metres", "point"), 0)
    raw = _cells.run_unit(("grid", tiny, "planar-laplace", 2.0, 2, "corner", None, (), "metres"), 0)
    assert result["raw"]["runs"] == pytest.approx(raw["runs"])
    assert len(result["denoised"]["runs"]) == 2 and result["denoised"]["half"] > 0
    assert result["ratio"] == pytest.approx(result["denoised"]["mean"] / result["raw"]["mean"])
