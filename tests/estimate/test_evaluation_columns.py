"""Estimated-vs-raw columns of the evaluation grid."""

from __future__ import annotations

import numpy as np

from tracs.evaluation import EXTRA_METRICS, continuous_dataset, load_dataset, run_grid

COLUMNS = ["range_query_raw", "range_query_estimated", "hotspots_raw", "hotspots_estimated"]


def test_estimated_columns_beat_raw():
    # the synthetic city (40 users, seed 0, clustered check-ins), ε = 8: the estimate answers
    # the same boxes better than the raw reports
    data = load_dataset("synthetic", synthetic_users=40, seed=0)
    table = run_grid(data, ["tracs-c", "tracs-d"], [8.0], seed=0, metrics=COLUMNS, round_to_pois=False)
    assert set(COLUMNS) <= set(table.columns)
    assert np.all(table.range_query_estimated < table.range_query_raw)
    assert table[COLUMNS].notna().all().all()
    assert EXTRA_METRICS["range_query_estimated"].needs_perturber


def test_estimated_columns_nan_without_estimator(tmp_path):
    from tracs.evaluation.estimated import range_query_estimated

    data = continuous_dataset("unit-square", trajectories=2, points=10)
    pts = np.random.default_rng(0).random((20, 2))
    value = range_query_estimated(pts, pts, np.array([0, 10, 20]), data, np.random.default_rng(1),
                                  perturber=None)
    assert np.isnan(value)
