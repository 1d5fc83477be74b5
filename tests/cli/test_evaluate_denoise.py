"""``tracs evaluate --denoise``: the AE of the denoised release next to the raw one."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tracs import evaluation
from tracs.estimate import baseline_posterior, frequencies
from tracs.estimate.revisits import REVISIT
from tracs.evaluation.denoised import BASELINE_PASSES
from tracs.evaluation.runner import _errors, _run_method, _stream, cell_seed
from tracs.methods import MethodContext


def test_denoised_columns_on_check_ins(cli, checkins_csv, tmp_path):
    # 60 check-ins at 25 venues, ε = 4, 2 repetitions: TraCS's, N-gram's and L-SRR's columns are venues'
    # errors (mode and mean rule), L-SRR with threshold groups' are n/a (not ε-LDP: no law to denoise
    # with); the raw AE is that of a run without --denoise, bit for bit
    args = ("evaluate", "--dataset", checkins_csv, "--methods", "ngram,lsrr-thresholds,lsrr,tracs-d,tracs-c",
            "--epsilons", "4",
            "--repetitions", "2", "--no-figure", "--no-progress")
    result = cli(*args, "--output-dir", tmp_path / "d", "--denoise", "point")
    assert result.returncode == 0, result.stderr
    assert "AE denoised" in result.stdout and "AE denoised (mean)" in result.stdout and "n/a" in result.stdout
    runs = pd.read_csv(tmp_path / "d" / "results.csv")
    denoised = runs["method"] != "lsrr-thresholds"
    assert runs.loc[denoised, ["ae_denoised", "ae_denoised_mean"]].notna().all().all()
    assert runs.loc[~denoised, ["ae_denoised", "ae_denoised_mean"]].isna().all().all()
    assert cli(*args, "--output-dir", tmp_path / "r").returncode == 0
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "r" / "results.csv")["ae"], runs["ae"])
    summary = pd.read_csv(tmp_path / "d" / "summary.csv")
    assert {"ae_denoised", "ae_denoised_ci_low", "ae_denoised_mean_ci_high"} <= set(summary.columns)
    result = cli(*args, "--format", "json", "--denoise", "point")
    records = {r["method"]: r for r in json.loads(result.stdout)}
    assert records["lsrr-thresholds"]["ae_denoised"] is None and records["tracs-c"]["ae_denoised"] > 0
    assert records["lsrr"]["ae_denoised"] > 0 and records["ngram"]["ae_denoised"] > 0


@pytest.mark.parametrize("how", ["point", "trajectory"])
def test_denoised_baselines_match_the_posterior_of_their_release(how):
    # the synthetic city (20 users, seed 0), EM, L-SRR, N-gram and ATP at ε = 2: the evaluation's denoised
    # columns are the AE of tracs.estimate.baseline_posterior on the same release (mode and mean rule; the
    # prior: the POI frequencies after at most BASELINE_PASSES EM passes, ATP's under its surrogate; given
    # the trajectory, the revisit prior of its default weight for all but N-gram), to the bit
    data = evaluation.load_dataset("synthetic", synthetic_users=20, seed=0)
    runs = evaluation.run_grid(data, ["em", "lsrr", "ngram", "atp"], [2.0], repetitions=1, denoise=how)
    ctx = MethodContext(region=data.region, pois=data.pois)
    coords, off = data.draw(_stream(0, "data", 0)), np.asarray(data.offsets)
    for row in runs.itertuples():
        pert = evaluation.METHODS[row.method].build(ctx, 2.0)
        raw = _run_method(evaluation.METHODS[row.method], pert, data.batch(coords), ctx, False,
                          np.random.default_rng(cell_seed(0, row.method, 2.0, 0)))
        revisit = REVISIT if how == "trajectory" and row.method != "ngram" else None
        if row.method != "atp":
            prior = frequencies(raw, pert, offsets=off, iterations=BASELINE_PASSES).probabilities
            mode, mean = baseline_posterior(raw, pert, offsets=off, prior=prior, rule=("mode", "mean"),
                                            revisit=revisit)
        else:
            mode, mean = baseline_posterior(raw, pert, offsets=off, rule=("mode", "mean"), iterations=BASELINE_PASSES,
                                            revisit=revisit)
        points = ctx.poi_space.points
        assert row.ae_denoised == _errors(coords, points[mode], off).mean()
        assert row.ae_denoised_mean == _errors(coords, points[mean], off).mean()


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
