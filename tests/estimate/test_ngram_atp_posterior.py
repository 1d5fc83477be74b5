"""Denoising N-gram's releases (exact law, tracs.estimate.ngram_law) and ATP's (a surrogate law,
tracs.estimate.surrogate_law) with tracs.estimate.baseline_posterior and tracs.estimate.frequencies."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines import ATP, ExponentialMechanism, NGram
from tracs.errors import InputError, InputTypeError, MemoryLimitError
from tracs.estimate import expectation_maximisation as fitting
from tracs.estimate import frequencies, ngram_law
from tracs.estimate.discrete_posterior import baseline_posterior
from tracs.estimate.surrogate_law import EPSILONS, folds, surrogate_fit
from tracs.poi_space import POISpace

#: the tolerance of the compiled law against the enumeration with NGram.probabilities
TOL = 1e-10


def _space(n=30, seed=5):
    return POISpace(np.random.default_rng(seed).uniform(0, 1000, (n, 2)))


def _release(baseline, seed=7, lengths=(1, 12, 3, 20, 1, 8)):
    """Trajectories of the given lengths (one-point ones too), true points mostly at the first 5 POIs."""
    rng = np.random.default_rng(seed)
    m = len(baseline.poi_space)
    n = int(sum(lengths))
    truth = np.where(rng.random(n) < 0.8, rng.integers(0, 5, n), rng.integers(0, m, n))
    off = np.concatenate([[0], np.cumsum(lengths)])
    return truth, off, baseline.perturb_many(baseline.poi_space.points[truth], off, rng=seed + 1)


def _brute_rows(baseline, reported, off):
    """``L[r, x] = P(y_r | x, previous_r)`` by NGram.probabilities, one true POI and report at a time."""
    m = len(baseline.poi_space)
    first = set(off[:-1].tolist())
    rows = np.empty((len(reported), m))
    for r, y in enumerate(reported):
        previous = None if r in first else int(reported[r - 1])
        rows[r] = [baseline.probabilities(x, previous)[y] for x in range(m)]
    return rows


def _ngrams():
    space = _space()
    # θ = D/4 (default), a wide θ and a θ of 60 m: most candidate sets hold their centre alone
    return [NGram(space, 2.0), NGram(space, 3.0, theta=700.0), NGram(space, 4.0, theta=60.0)]


@pytest.mark.parametrize("case", range(3))
def test_ngram_law_is_the_enumeration_with_probabilities(case):
    # 6 trajectories (two of one point), 45 reports on 30 POIs: one EM pass (log-likelihood and back) at a
    # random θ, the posterior mode and mean, and the frequencies fitted in 12 passes equal those of the
    # enumerated rows within 1e-10
    baseline = _ngrams()[case]
    _, off, reports = _release(baseline)
    reported = baseline.poi_space.round(reports)[1]
    brute = _brute_rows(baseline, reported, off)
    law = ngram_law.NGramLaw(reported, off, baseline)
    theta = np.random.default_rng(9).random(30)
    theta /= theta.sum()
    want = fitting.DenseBlock(brute).predict_and_back(theta)
    got = law.predict_and_back(theta)
    np.testing.assert_allclose(got[0], want[0], rtol=TOL)
    np.testing.assert_allclose(got[1], want[1], rtol=TOL, atol=TOL * np.abs(want[1]).max())
    w = brute * theta
    mode, mean = law.posterior(theta)
    np.testing.assert_array_equal(mode, np.argmax(w, axis=1))
    points = baseline.poi_space.points
    np.testing.assert_allclose(mean, (w @ points) / w.sum(axis=1)[:, None], rtol=TOL, atol=TOL * 1000)
    fit = frequencies(reports, baseline, offsets=off, iterations=12)  # EM's later passes amplify the last bits
    dense = fitting.run_em([fitting.DenseBlock(brute)], np.ones(30, dtype=bool), max_iterations=12)
    assert fit.iterations == dense.iterations
    np.testing.assert_allclose(fit.probabilities, dense.theta, rtol=0, atol=TOL)


@pytest.mark.parametrize("case", range(3))
def test_ngram_posterior_is_brute_force_enumeration(case):
    # the denoised POIs of baseline_posterior (a random prior, seed 9) are the enumeration's mode and the POI
    # nearest its mean; with the default prior, those of the fitted frequencies
    baseline = _ngrams()[case]
    _, off, reports = _release(baseline)
    reported = baseline.poi_space.round(reports)[1]
    points = baseline.poi_space.points
    prior = np.random.default_rng(9).random(30)
    w = _brute_rows(baseline, reported, off) * (prior / prior.sum())
    mode, mean = baseline_posterior(reports, baseline, offsets=off, prior=prior, rule=("mode", "mean"))
    np.testing.assert_array_equal(mode, np.argmax(w, axis=1))
    centre = (w @ points) / w.sum(axis=1)[:, None]
    np.testing.assert_array_equal(mean, np.argmin(((centre[:, None] - points[None]) ** 2).sum(axis=2), axis=1))
    fitted = frequencies(reports, baseline, offsets=off, iterations=5).probabilities
    np.testing.assert_array_equal(baseline_posterior(reported, baseline, offsets=off, iterations=5),
                                  baseline_posterior(reported, baseline, offsets=off, prior=fitted))


def test_normaliser_blocks_stay_within_their_bound(monkeypatch):
    # BLOCK = 64 entries on 30 POIs: every block of the kernel and of the indicators holds at most
    # max(BLOCK, m) entries, the normalisers equal those of one block (within 1e-12), and a budget one byte
    # below normaliser_bytes is refused while the bound itself is accepted
    baseline = NGram(_space(), 2.0, theta=400.0)
    _, off, reports = _release(baseline)
    reported = baseline.poi_space.round(reports)[1]
    whole = ngram_law.NGramLaw(reported, off, baseline).inverse_z
    sizes = []
    for name in ("_kernel_rows", "_candidates"):
        original = getattr(ngram_law, name)
        monkeypatch.setattr(ngram_law, name, lambda *a, f=original: sizes.append(f(*a).size) or f(*a))
    monkeypatch.setattr(ngram_law, "BLOCK", 64)
    law = ngram_law.NGramLaw(reported, off, baseline)
    assert len(sizes) > 4 and max(sizes) <= 64
    np.testing.assert_allclose(law.inverse_z, whole, rtol=1e-12)
    need = ngram_law.normaliser_bytes(30, law.inverse_z.shape[0])
    assert need == 9 * law.inverse_z.size + 40 * 64
    ngram_law.NGramLaw(reported, off, baseline, memory=need)
    with pytest.raises(MemoryLimitError, match=r"N-gram's normalisers \(\d+ previous releases × 30 POIs\)"):
        ngram_law.NGramLaw(reported, off, baseline, memory=need - 1)
    with pytest.raises(MemoryLimitError, match="above the budget"):
        baseline_posterior(reports, baseline, offsets=off, memory=need - 1)


def test_atp_surrogate_epsilon_is_deterministic_and_in_its_grid():
    # ATP at ε = 2 (seed 8): the chosen ε̃ is the same on a second call, one of EPSILONS (0.25 … 32), the best
    # held-out marginal likelihood among them, and the posterior uses it
    baseline = ATP(_space(), 2.0)
    _, off, reports = _release(baseline)
    reported = baseline.poi_space.round(reports)[1]
    fit = surrogate_fit(reported, baseline.poi_space, off)
    again = surrogate_fit(reported, baseline.poi_space, off)
    assert fit.epsilon == again.epsilon and fit.logliks == again.logliks
    assert fit.epsilon in EPSILONS and min(EPSILONS) == 0.25 and max(EPSILONS) == 32.0
    assert set(fit.logliks) == set(EPSILONS) and fit.logliks[fit.epsilon] == max(fit.logliks.values())
    np.testing.assert_array_equal(
        baseline_posterior(reports, baseline, offsets=off, rule="mean"),
        baseline_posterior(reports, baseline, offsets=off, rule="mean", surrogate_epsilon=fit.epsilon))


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_atp_posterior_at_a_given_epsilon_is_the_exponential_mechanisms(eps):
    # the surrogate at ε̃ is the exponential mechanism over all POIs at ε̃: the same denoised POIs, with the
    # frequencies fitted from the release (5 passes) and with a given prior
    baseline = ATP(_space(), 2.0)
    _, off, reports = _release(baseline)
    em = ExponentialMechanism(baseline.poi_space, eps)
    prior = np.random.default_rng(3).random(30)
    for options in ({"iterations": 5}, {"prior": prior}):
        np.testing.assert_array_equal(
            baseline_posterior(reports, baseline, offsets=off, rule=("mode", "mean"), surrogate_epsilon=eps,
                               **options),
            baseline_posterior(reports, em, offsets=off, rule=("mode", "mean"), **options))


def _bad_cases():
    space = _space()
    ngram, atp = NGram(space, 2.0, theta=200.0), ATP(space, 2.0)
    outside = np.array([0, int(np.argmax(space.distances_from(0)))])
    return [
        (ngram, np.array([0, 1, 2]), {}, InputError,
         "N-gram needs offsets: each report's candidates follow the previous report"),
        (NGram(space, epsilon_per_trajectory=4.0, theta=200.0), outside, {"offsets": [0, 2]}, InputError,
         r"report 1 lies farther than theta \(200 m\) from the previous report of its trajectory"),
        (ngram, np.array([0, 1, 2]), {"offsets": [0, 3], "prior": np.ones(29)}, InputError,
         r"prior must have one weight per POI \(30\), got shape \(29,\)"),
        (atp, np.array([0, 1, 2]), {"prior": np.ones((30, 1))}, InputError,
         r"prior must have one weight per POI \(30\), got shape \(30, 1\)"),
        (ngram, outside, {"offsets": [0, 2]}, InputError,
         r"report 1 lies farther than theta \(200 m\) from the previous report of its trajectory"),
        (ngram, np.array([0.0, 1.0]), {"offsets": [0, 2]}, InputTypeError, "reports must be POI indices"),
        (ngram, np.array([0, 1]), {"offsets": [0, 2], "memory": "1kB"}, MemoryLimitError,
         "N-gram's normalisers .* above the budget"),
        (ngram, np.array([0, 1]), {"offsets": [0, 2], "memory": -1}, InputError, "memory must be a positive size"),
        (ExponentialMechanism(space, 2.0), np.array([0, 1]), {"surrogate_epsilon": 2.0}, InputError,
         "surrogate_epsilon is ATP's and TP's"),
        (atp, np.array([0, 1]), {"surrogate_epsilon": -1.0}, InputError,
         "surrogate_epsilon must be a positive number, got -1.0"),
        (atp, np.array([0, 1]), {"surrogate_epsilon": 500.0}, InputError, "too large for a faithful"),
    ]


@pytest.mark.parametrize("baseline, reports, options, exc, message", _bad_cases())
def test_bad_inputs(baseline, reports, options, exc, message):
    with pytest.raises(exc, match=message):
        baseline_posterior(reports, baseline, **options)


def test_frequencies_of_ngram_refuse_missing_offsets_and_a_small_budget():
    baseline = NGram(_space(), 2.0, theta=200.0)
    with pytest.raises(InputError, match="N-gram needs offsets"):
        frequencies(np.array([0, 1]), baseline)
    with pytest.raises(MemoryLimitError, match="N-gram's normalisers"):
        frequencies(np.array([0, 0]), baseline, offsets=[0, 2], memory=100)


def test_surrogate_folds_are_trajectories_or_reports():
    np.testing.assert_array_equal(folds(6, [0, 2, 3, 6]), [0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(folds(4, [0, 4]), [0, 1, 0, 1])  # one trajectory: report numbers
    np.testing.assert_array_equal(folds(1, [0, 1]), [0])


def test_surrogate_under_a_given_prior_scores_every_report():
    # a given prior is kept at every ε̃; the score is the in-sample marginal likelihood under it
    baseline = ATP(_space(), 2.0)
    _, off, reports = _release(baseline)
    reported = baseline.poi_space.round(reports)[1]
    prior = np.full(30, 1 / 30)
    fit = surrogate_fit(reported, baseline.poi_space, off, prior=prior)
    for eps, score in fit.logliks.items():
        law = ExponentialMechanism(baseline.poi_space, eps).probabilities(np.arange(30))  # [x, y]
        assert score == pytest.approx(np.log(prior @ law[:, reported]).sum(), rel=1e-12)
