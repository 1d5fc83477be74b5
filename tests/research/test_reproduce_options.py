"""Options of ``examples/reproduce_results.py`` for the denoised tables: ``--denoise-laplace``,
``--repetitions-at`` (more repetitions for chosen ε, with the interval that decides the discrete
table's headline cell), and the order in which ``--jobs`` starts the units."""

from __future__ import annotations

import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import _cells  # noqa: E402
import _sections  # noqa: E402
import reproduce_results  # noqa: E402
from _tables import Config, difference_interval  # noqa: E402


@pytest.mark.parametrize("text, expected", [
    ("", ()),
    ("2=10", (((None, 2.0), 10),)),
    ("chi:2=10", ((("chi", 2.0), 10),)),
    (" chi:2=10 , 4=5", ((("chi", 2.0), 10), ((None, 4.0), 5))),
    ("2=5,2=10", (((None, 2.0), 10),)),  # the last one of an ε counts
    ("unit-square:1=3", ((("unit-square", 1.0), 3),)),
])
def test_repetitions_at_is_parsed(text, expected):
    assert reproduce_results.parse_repetitions_at(text) == expected


@pytest.mark.parametrize("text, item", [
    ("2", "2"), ("2=1", "2=1"), ("2=x", "2=x"), ("x=3", "x=3"), ("0=3", "0=3"), ("-1=3", "-1=3"),
    ("nyc:2=10", "nyc:2=10"), ("2=10,chi:4", "chi:4"),
])
def test_bad_repetitions_at_is_refused_naming_the_item(text, item):
    with pytest.raises(ValueError, match=re.escape(f"--repetitions-at: {item!r} is not [DATA:]EPS=N")):
        reproduce_results.parse_repetitions_at(text)


def test_the_command_refuses_bad_repetitions_at(capsys):
    with pytest.raises(SystemExit):
        reproduce_results.main(["--only", "denoised", "--repetitions-at", "2=1", "--dry-run"])
    assert "--repetitions-at: '2=1' is not [DATA:]EPS=N" in capsys.readouterr().err


def test_config_repetitions_prefers_the_data_set_then_every_data_set():
    cfg = Config(repetitions_at=((("chi", 2.0), 10), ((None, 2.0), 5), ((None, 4.0), 7)))
    assert [cfg.repetitions(3, n, e) for n, e in (("chi", 2), ("tky", 2.0), ("chi", 4.0), ("chi", 6.0))] == \
        [10, 5, 7, 3]


@pytest.mark.parametrize("a, b", [
    ([10.0, 12, 11, 13], [9.0, 9.5, 10, 9.2, 9.9]),
    ([10053.0, 9700, 10400], [10355.0, 10250, 10460]),
    ([1.0, 2, 3], [5.0, 5.5]),
])
def test_difference_interval_is_welchs(a, b):
    diff, low, high = difference_interval(a, b)
    expected = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert diff == pytest.approx(np.mean(a) - np.mean(b))
    assert (low, high) == pytest.approx((expected.low, expected.high), rel=1e-12)


def test_difference_interval_without_spread_is_the_difference():
    assert difference_interval([2.0, 2.0], [1.0]) == (1.0, 1.0, 1.0)


def _denoised_tables(cfg):
    return {t.block: t for t in _sections.denoised(cfg).tables}


def test_more_repetitions_for_one_eps_of_one_data_set_in_the_discrete_denoised_tables():
    tables = _denoised_tables(Config(repetitions_at=((("chi", 2.0), 10),)))
    for block, name in (("denoised-tky", "tky"), ("denoised-chi", "chi")):
        for eps in _sections.DENOISE_EPS:
            reps = {u[4] for u in tables[block].units()
                    if u[3] == eps and u[0] in ("grid", "denoised")}
            assert reps == {10 if (name, eps) == ("chi", 2.0) else 3}, (block, eps)
    # the rule of every cell is unchanged: TraCS-C per report, the others given the trajectory
    units = tables["denoised-chi"].units()
    assert {u[5] for u in units if u[0] == "denoised" and u[2] == "tracs-c"} == {"point"}
    assert {u[5] for u in units if u[0] == "denoised" and u[2] != "tracs-c"} == {"trajectory"}
    assert {u[2] for u in units if u[0] == "denoised"} == {"atp", "ngram", "em", "lsrr", "tracs-d", "tracs-c"}


def _fake(units, gen):
    """Results of the denoised table's units: L-SRR raw near 10,355 m, TraCS-D's rule near 10,053 m."""
    results = {}
    for u in units:
        if u[0] == "grid":  # ATP, NGram: far above
            runs = list(14000 + 100 * gen.standard_normal(u[4]))
            results[u] = {"mean": float(np.mean(runs)), "half": 100.0, "runs": runs}
        else:
            raw = list((10355 if u[2] == "lsrr" else 13000) + 200 * gen.standard_normal(u[4]))
            mean = list(10053 + 700 * gen.standard_normal(u[4]))
            results[u] = {k: {"mean": float(np.mean(v)), "half": 1.0, "runs": v}
                          for k, v in (("raw", raw), ("mean", mean), ("mode", mean))}
    return results


def test_the_decided_row_states_the_difference_and_its_interval():
    cfg = Config(repetitions_at=((("chi", 2.0), 10),))
    table = _denoised_tables(cfg)["denoised-chi"]
    results = _fake(table.units(), np.random.default_rng(0))
    body, note = table.render(results).split("\n\n")
    target = next(u for u in table.units() if u[0] == "denoised" and u[2] == "tracs-d" and u[3] == 2.0)
    lsrr = next(u for u in table.units() if u[0] == "denoised" and u[2] == "lsrr" and u[3] == 2.0)
    assert target[4] == lsrr[4] == 10
    diff, low, high = difference_interval(results[target]["mean"]["runs"], results[lsrr]["raw"]["runs"])
    assert note == (f"ε = 2, 10 repetitions (the other rows: 3): TraCS-D denoised "
                    f"{results[target]['mean']['mean']:,.0f} m, raw L-SRR {results[lsrr]['raw']['mean']:,.0f} m; "
                    f"difference {diff:+,.0f} m, 95 % interval {low:+,.0f} to {high:+,.0f} m (Welch): "
                    f"{'below' if high < 0 else 'above' if low > 0 else 'not decided'} at 95 %.")
    assert len(body.splitlines()) == 8
    # without the option: no note
    plain = _denoised_tables(Config())["denoised-chi"]
    assert "\n\n" not in plain.render(_fake(plain.units(), np.random.default_rng(0)))


@pytest.mark.parametrize("target, text", [(10353.0, "0 %"), (10357.0, "0 %"), (9838.0, "-5 %"), (10873.0, "+5 %")])
def test_the_gap_columns_give_a_sign_only_to_a_gap(target, text):
    # TraCS-D's rule at `target` against the best baseline, 10,355 m (L-SRR raw; every denoised baseline above it)
    table = _denoised_tables(Config())["denoised-chi"]
    results = {}
    for u in table.units():
        level = target if u[2] == "tracs-d" else 10355.0 if u[2] == "lsrr" else 14000.0
        cell = {"mean": level, "half": 1.0, "runs": [level] * u[4]}
        results[u] = {"raw": cell if u[2] != "tracs-d" else {**cell, "mean": 15000.0}, "mean": cell, "mode": cell}
    for u in table.units():
        if u[2] == "lsrr":
            results[u]["mean"] = results[u]["mode"] = {"mean": 11000.0, "half": 1.0, "runs": [11000.0] * u[4]}
    first = table.render(results).splitlines()[2]
    assert first.split("|")[-3:-1] == [f" {text} ", f" {text} "]


def test_the_costliest_units_start_first():
    units = [("direction", 2.0, 100, 3),
             ("grid", ("region", "unit-square", 100, 100), "tracs-d", 2.0, 20, "corner", None, (), "metres"),
             ("denoised-continuous", ("region", "unit-square", 10, 100), "tracs-c", 2.0, 3, "corner", "metres",
              "point"),
             ("denoised-continuous", ("region", "2x10", 10, 100), "tracs-d", 2.0, 3, "corner", "metres", "point")]
    ranked = sorted(units, key=lambda u: _cells.cost(u, 0), reverse=True)
    assert ranked == [units[3], units[2], units[1], units[0]]


@pytest.mark.parametrize("unit, text", [
    (("denoised-continuous", ("checkins", "chi", 0, 100), "tracs-d", 2.0, 3, "corner", "degrees", "point"),
     "chi tracs-d ε=2 denoised (point) ×3"),
    (("denoised", ("checkins", "tky", 0, None), "lsrr", 1.0, 10, "point"), "tky lsrr ε=1 denoised (point) ×10"),
    (("grid", ("region", "2x10", 100, 100), "strawman", 4.0, 20, "center", None, (), "metres"), "2x10 strawman ε=4"),
])
def test_progress_names_a_unit(unit, text):
    assert _cells.describe(unit) == text


def _blas_threads() -> set:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}


def test_a_worker_runs_blas_on_one_thread():
    with ProcessPoolExecutor(max_workers=1, initializer=_cells.worker_blas) as pool:
        assert pool.submit(_blas_threads).result() == {1}
