"""The evaluation grid: seeds, reproducibility, order independence, intervals, figures."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tracs import evaluation as ev
from tracs.evaluation.runner import _krr_sector_error

TIMING = ["seconds", "seconds_per_point"]


@pytest.fixture(scope="module")
def small():
    # 20 random trajectories of 10 points on [0, 2) x [0, 10): fast and non-trivial
    return ev.continuous_dataset("2x10", trajectories=20, points=10)


def test_continuous_dataset_draws_inside_the_region(small):
    coords = small.draw(np.random.SeedSequence(0))
    assert coords.shape == (200, 2)
    assert np.all(coords >= 0) and np.all(coords[:, 0] < 2) and np.all(coords[:, 1] < 10)
    np.testing.assert_array_equal(small.offsets, np.arange(0, 201, 10))
    assert small.paper_scale is None  # the region's own units are the paper's


def test_same_seed_same_table(small):
    a = ev.run_grid(small, "tracs-d,tracs-c", [2, 8], repetitions=2, seed=7)
    b = ev.run_grid(small, "tracs-d,tracs-c", [2, 8], repetitions=2, seed=7)
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING))
    assert len(a) == 2 * 2 * 2
    c = ev.run_grid(small, "tracs-d,tracs-c", [2, 8], repetitions=2, seed=8)
    assert not np.allclose(a["ae"], c["ae"])


def test_cells_do_not_depend_on_grid_order_or_content(small):
    full = ev.run_grid(small, ["tracs-c", "tracs-d", "strawman"], [8, 2, 4], repetitions=2, seed=3)
    part = ev.run_grid(small, ["tracs-d"], [4], repetitions=2, seed=3)
    cell = full[(full.method == "tracs-d") & (full.epsilon == 4)].reset_index(drop=True)
    pd.testing.assert_frame_equal(cell.drop(columns=TIMING), part.drop(columns=TIMING))
    # rows come back in the given method order, ε ascending
    assert list(full.method.unique()) == ["tracs-c", "tracs-d", "strawman"]
    assert list(full[full.method == "tracs-c"].epsilon) == [2, 2, 4, 4, 8, 8]


def test_errors_fall_with_epsilon(small):
    table = ev.run_grid(small, ["tracs-d", "tracs-c"], [1, 10], repetitions=2, seed=0)
    means = table.groupby(["method", "epsilon"]).ae.mean()
    for method in ("tracs-d", "tracs-c"):
        assert means[(method, 10.0)] < means[(method, 1.0)]


def test_summary_interval_over_repetitions(small):
    table = ev.run_grid(small, "tracs-c", [4], repetitions=5, seed=1)
    row = ev.summarise(table).iloc[0]
    values = table.ae.to_numpy()
    half = stats.t.ppf(0.975, 4) * values.std(ddof=1) / np.sqrt(5)
    assert row.ae_mean == pytest.approx(values.mean())
    assert row.ae_ci_low == pytest.approx(values.mean() - half)
    assert row.ae_ci_high == pytest.approx(values.mean() + half)
    assert row.ci_over == "repetitions" and row.repetitions == 5


def test_single_repetition_interval_over_trajectories(small):
    table = ev.run_grid(small, "tracs-c", [4], repetitions=1, seed=1)
    row = ev.summarise(table).iloc[0]
    assert row.ci_over == "trajectories"
    assert row.ae_ci_low < row.ae_mean < row.ae_ci_high


def test_summary_records_are_json_ready(small):
    import json

    table = ev.run_grid(small, "tracs-d,tracs-c", [2, 4], repetitions=2, seed=0)
    records = ev.summary_records(ev.summarise(table))
    assert len(records) == 4
    for record in records:
        assert tuple(record) == ev.JSON_KEYS
        assert record["ae_ci_low"] <= record["ae_mean"] <= record["ae_ci_high"]
    json.dumps(records, allow_nan=False)


def test_confidence_interval_degenerate():
    assert ev.confidence_interval([3.0]) == (3.0, 3.0, 3.0)


def test_extra_metrics_columns(small):
    table = ev.run_grid(small, "tracs-c", [8], seed=0, metrics=["range_query_error", "hotspot_ndcg"])
    assert 0 <= table.range_query_error.iloc[0] and 0 <= table.hotspot_ndcg.iloc[0] <= 1


@pytest.mark.parametrize("kwargs, error", [
    (dict(methods="tracs-x", epsilons=[1]), ValueError),
    (dict(methods="tracs-d", epsilons=[0]), ValueError),
    (dict(methods="tracs-d", epsilons="1,abc"), ValueError),
    (dict(methods="tracs-d,tracs-d", epsilons=[1]), ValueError),
    (dict(methods="em", epsilons=[1]), ValueError),  # needs POIs
    (dict(methods="tracs-d", epsilons=[1], repetitions=0), ValueError),
    (dict(methods="tracs-d", epsilons=[1], seed=-1), ValueError),
    (dict(methods="tracs-d", epsilons=[1], metrics=["nope"]), ValueError),
])
def test_bad_grids(small, kwargs, error):
    with pytest.raises(error):
        ev.run_grid(small, **kwargs)


def test_direction_study_matches_closed_form():
    table = ev.direction_study([1, 4, 8], samples=20_000, repetitions=2, seed=0)
    assert set(table.method) == {"circular", "krr-3", "krr-6", "krr-12"}
    means = table.groupby(["method", "epsilon"])[["error", "exact"]].mean()
    # mean of 40,000 circular distances (sd < 1 rad): standard error < 0.005; allow 0.03
    np.testing.assert_allclose(means.error, means.exact, atol=0.03)
    # the circular mechanism beats every sector scheme at large ε
    at8 = means.xs(8.0, level="epsilon").error
    assert at8["circular"] < at8.drop("circular").min()


def test_krr_sector_error_limits():
    # ε → ∞: the true sector, uniform inside it: mean |U − V| over an arc of width w is w/3
    assert _krr_sector_error(200.0, 6) == pytest.approx(2 * np.pi / 6 / 3)
    # ε → 0: output uniform on the circle, independent of the input: mean distance π/2
    assert _krr_sector_error(1e-9, 6) == pytest.approx(np.pi / 2, rel=1e-4)


def test_figure_is_written(tmp_path, small):
    from tracs.plots import error_vs_epsilon, save_figure

    summary = ev.summarise(ev.run_grid(small, "tracs-d,tracs-c", [2, 4], repetitions=2, seed=0))
    path = save_figure(error_vs_epsilon(summary, title="test"), tmp_path / "f.png")
    assert path.stat().st_size > 5_000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluation_does_not_import_matplotlib():
    code = "import sys, tracs.evaluation, tracs.cli; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
