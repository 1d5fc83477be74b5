"""``tracs evaluate --denoise``: the AE of the denoised release next to the raw one."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tracs import evaluation


def test_denoised_columns_on_check_ins(cli, checkins_csv, tmp_path):
    # 60 check-ins at 25 venues, ε = 4, 2 repetitions: TraCS columns are venues' errors (mode and
    # mean rule), L-SRR's are n/a (its release is not denoised); the raw AE is that of a run without
    # --denoise, bit for bit
    args = ("evaluate", "--dataset", checkins_csv, "--methods", "lsrr,tracs-d,tracs-c", "--epsilons", "4",
            "--repetitions", "2", "--no-figure", "--no-progress")
    result = cli(*args, "--output-dir", tmp_path / "d", "--denoise", "point")
    assert result.returncode == 0, result.stderr
    assert "AE denoised" in result.stdout and "AE denoised (mean)" in result.stdout and "n/a" in result.stdout
    runs = pd.read_csv(tmp_path / "d" / "results.csv")
    tracs = runs["method"] != "lsrr"
    assert runs.loc[tracs, ["ae_denoised", "ae_denoised_mean"]].notna().all().all()
    assert runs.loc[~tracs, ["ae_denoised", "ae_denoised_mean"]].isna().all().all()
    assert cli(*args, "--output-dir", tmp_path / "r").returncode == 0
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "r" / "results.csv")["ae"], runs["ae"])
    summary = pd.read_csv(tmp_path / "d" / "summary.csv")
    assert {"ae_denoised", "ae_denoised_ci_low", "ae_denoised_mean_ci_high"} <= set(summary.columns)
    result = cli(*args, "--format", "json", "--denoise", "point")
    records = {r["method"]: r for r in json.loads(result.stdout)}
    assert records["lsrr"]["ae_denoised"] is None and records["tracs-c"]["ae_denoised"] > 0


def test_denoised_posterior_means_on_a_continuous_region():
    # unit square, 20 trajectories of 20 uniform points, TraCS-C at ε = 2 (seed 0): the posterior mean
    # is closer to the true points than the reports (measured: 0.87 of the raw AE), no mean rule
    dataset = evaluation.load_dataset("unit-square", trajectories=20, points=20)
    runs = evaluation.run_grid(dataset, ["tracs-c"], [2.0], repetitions=1, denoise="point")
    assert runs["ae_denoised"].iloc[0] < 0.95 * runs["ae"].iloc[0]
    assert np.isnan(runs["ae_denoised_mean"].iloc[0])


@pytest.mark.parametrize("denoise, exc, fragment", [
    ("points", ValueError, "denoise must be one of 'point', 'trajectory' or None, got 'points'"),
    (True, ValueError, "denoise must be one of 'point', 'trajectory' or None, got True"),
])
def test_run_grid_refuses_bad_denoise(denoise, exc, fragment):
    dataset = evaluation.load_dataset("unit-square", trajectories=2, points=2)
    with pytest.raises(exc, match=fragment):
        evaluation.run_grid(dataset, ["tracs-c"], [2.0], denoise=denoise)


def test_evaluate_refuses_a_bad_denoise_option(cli, tmp_path):
    result = cli("evaluate", "--output-dir", tmp_path, "--denoise", "points")
    assert result.returncode != 0
    assert "argument --denoise: invalid choice: 'points' (choose from" in result.stderr
