"""Denoising the exponential mechanism's and L-SRR's releases (tracs.estimate.discrete_posterior; N-gram's
and ATP's: test_ngram_atp_posterior)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, ExponentialMechanism, NGram
from tracs.errors import InputError, InputTypeError
from tracs.estimate import poi_frequencies as module
from tracs.estimate import frequencies
from tracs.estimate.discrete_posterior import baseline_posterior
from tracs.poi_space import POISpace


def _space(n=30, seed=5):
    return POISpace(np.random.default_rng(seed).uniform(0, 1000, (n, 2)))


def _baselines(space):
    return {"em": ExponentialMechanism(space, 3.0), "lsrr": LSRR(space, 1.5), "ngram": NGram(space, 2.0, theta=200.0),
            "atp": ATP(space, 2.0)}


def _release(baseline, seed=7, n=120):
    """Reports of true points drawn mostly from the first 5 POIs (a clustered population)."""
    rng = np.random.default_rng(seed)
    m = len(baseline.poi_space)
    truth = np.where(rng.random(n) < 0.8, rng.integers(0, 5, n), rng.integers(0, m, n))
    off = np.array([0, n // 2, n])
    return truth, off, baseline.perturb_many(baseline.poi_space.points[truth], off, rng=seed + 1)


def _brute(baseline, prior, reported):
    """Posterior mode and mean of every report by enumerating the true POIs one at a time."""
    points = baseline.poi_space.points
    modes, means = [], []
    for y in reported:
        w = np.array([prior[x] * baseline.probabilities(x)[y] for x in range(len(points))])
        modes.append(int(np.argmax(w)))
        means.append(w @ points / w.sum())
    nearest = np.argmin(((np.array(means)[:, None, :] - points[None]) ** 2).sum(axis=2), axis=1)
    return np.array(modes), nearest


def _case(name):
    """``(baseline, offsets, reports, reported indices, prior)``: ``name`` on 30 POIs (seed 5), its release
    of two trajectories (seed 7) and a random prior (seed 9, not normalised)."""
    baseline = _baselines(_space())[name]
    _, off, reports = _release(baseline)
    return baseline, off, reports, baseline.poi_space.round(reports)[1], np.random.default_rng(9).random(30)


@pytest.mark.parametrize("name", ["em", "lsrr"])
@pytest.mark.parametrize("block", [module.BLOCK, 7])
def test_posterior_is_brute_force_enumeration(name, block, monkeypatch):
    # 30 POIs (seed 5), a random prior (seed 9): mode and mean rule equal the enumeration over the true
    # POIs, in one block and in blocks of a single true POI (BLOCK = 7 entries)
    monkeypatch.setattr(module, "BLOCK", block)
    baseline, off, reports, reported, prior = _case(name)
    mode, mean = baseline_posterior(reports, baseline, offsets=off, prior=prior, rule=("mode", "mean"))
    want_mode, want_mean = _brute(baseline, prior / prior.sum(), reported)
    np.testing.assert_array_equal(mode, want_mode)
    np.testing.assert_array_equal(mean, want_mean)


@pytest.mark.parametrize("name", ["em", "lsrr"])
@pytest.mark.parametrize("entries", [1 << 22, 64])
def test_revisits_follow_the_formula_per_trajectory(name, entries, monkeypatch):
    # 30 POIs (seed 5), a random prior (seed 9), two trajectories of 60 reports: with revisit=3 every
    # report's posterior is π_i·L_i with π_i the revisit prior of its own trajectory (the formula of
    # tracs.estimate.revisits applied to the baseline's law rows), in one chunk and in chunks of one
    # trajectory (64 entries); redrawing the second trajectory leaves the first one's POIs unchanged
    from tracs.estimate import discrete_posterior
    from tracs.estimate.revisits import revisit_priors

    monkeypatch.setattr(discrete_posterior, "REVISIT_ENTRIES", entries)
    baseline, off, reports, reported, prior = _case(name)
    prior /= prior.sum()
    lik = np.array([[baseline.probabilities(x)[y] for x in range(30)] for y in reported])
    w = revisit_priors(lik, np.tile(prior, (len(lik), 1)), off, 3.0) * lik
    points = baseline.poi_space.points
    means = w @ points / w.sum(axis=1)[:, None]
    nearest = np.argmin(((means[:, None, :] - points[None]) ** 2).sum(axis=2), axis=1)
    mode, mean = baseline_posterior(reports, baseline, offsets=off, prior=prior, rule=("mode", "mean"), revisit=3.0)
    np.testing.assert_array_equal(mode, np.argmax(w, axis=1))
    np.testing.assert_array_equal(mean, nearest)
    _, _, others = _release(baseline, seed=17)
    changed = np.vstack([reports[:off[1]], others[off[1]:]])
    again = baseline_posterior(changed, baseline, offsets=off, prior=prior, revisit=3.0)
    np.testing.assert_array_equal(again[:off[1]], mean[:off[1]])
    # an empty last trajectory changes nothing
    padded = baseline_posterior(reports, baseline, offsets=np.r_[off, off[-1]], prior=prior, revisit=3.0)
    np.testing.assert_array_equal(padded, mean)


@pytest.mark.parametrize("name", ["em", "lsrr"])
def test_uniform_prior_gives_the_likelihood_normalised(name):
    # with a uniform prior the posterior of report y is P(y | ·) normalised: its mode is the likeliest
    # true POI (lowest index among ties) and the mean rule the POI nearest Σ_x P(y|x)·x / Σ_x P(y|x)
    baseline = _baselines(_space())[name]
    points = baseline.poi_space.points
    reported = np.arange(30)
    likelihood = baseline.probabilities(np.arange(30))[:, reported]  # [x, y]
    posterior = likelihood / likelihood.sum(axis=0)
    mode, mean = baseline_posterior(reported, baseline, prior=np.ones(30), rule=("mode", "mean"))
    np.testing.assert_array_equal(mode, np.argmax(posterior, axis=0))
    centre = posterior.T @ points
    np.testing.assert_array_equal(mean, np.argmin(((centre[:, None] - points[None]) ** 2).sum(axis=2), axis=1))


@pytest.mark.parametrize("name", ["em", "lsrr", "ngram", "atp"])
def test_point_mass_prior_returns_its_poi(name):
    baseline = _baselines(_space())[name]
    _, off, reports = _release(baseline)
    prior = np.zeros(30)
    prior[11] = 2.0
    for rule in ("mode", "mean"):
        np.testing.assert_array_equal(baseline_posterior(reports, baseline, offsets=off, prior=prior, rule=rule),
                                      np.full(len(reports), 11))


@pytest.mark.parametrize("name", ["em", "lsrr"])
def test_default_prior_is_the_estimated_frequencies_and_the_mean_rule_helps(name):
    # seed 7: 600 reports, 80 % of the true points at 5 POIs; the default prior is frequencies(...) and the
    # mean rule's POIs are closer to the truth than the reports (mean distance; measured 0.88 of the raw
    # error for EM at ε = 3, 0.94 for L-SRR at ε = 1.5)
    baseline = _baselines(_space())[name]
    truth, off, reports = _release(baseline, n=600)
    prior = frequencies(reports, baseline, offsets=off).probabilities
    default = baseline_posterior(reports, baseline, offsets=off, rule="mean")
    np.testing.assert_array_equal(default, baseline_posterior(reports, baseline, offsets=off, prior=prior,
                                                              rule="mean"))
    few = frequencies(reports, baseline, offsets=off, iterations=3).probabilities
    np.testing.assert_array_equal(baseline_posterior(reports, baseline, offsets=off, rule="mean", iterations=3),
                                  baseline_posterior(reports, baseline, offsets=off, prior=few, rule="mean"))
    points = baseline.poi_space.points
    raw = np.linalg.norm(reports - points[truth], axis=1).mean()
    assert np.linalg.norm(points[default] - points[truth], axis=1).mean() < 0.97 * raw


@pytest.mark.parametrize("grouping", ["fixed", "thresholds"])
def test_lsrr_probabilities_of_many_inputs_are_the_rows_of_each(grouping):
    # the vectorised law (the sampler's groups) equals the per-input law row by row, and every row sums to 1
    space = _space(40, seed=3)
    baseline = LSRR(space, 2.0, grouping=grouping)
    many = baseline.probabilities(np.arange(40))
    np.testing.assert_array_equal(many, np.array([baseline.probabilities(x) for x in range(40)]))
    np.testing.assert_allclose(many.sum(axis=1), 1.0, rtol=1e-12)


def _bad_cases():
    space = _space()
    lsrr = LSRR(space, 1.5)
    return [
        (NGram(space, 1.0), {}, InputError, "N-gram needs offsets: each report's candidates follow the previous"),
        (LSRR(space, 1.5, grouping="thresholds"), {}, InputTypeError, "baseline must be a registered baseline"),
        (LSRR(space, epsilon_per_trajectory=4.0), {}, InputError,
         "a baseline built with a budget per trajectory needs offsets"),
        (lsrr, {"prior": np.ones(29)}, InputError, r"prior must have one weight per POI \(30\), got shape \(29,\)"),
        (lsrr, {"prior": -np.ones(30)}, InputError, "prior must be finite, non-negative and not all zero"),
        (lsrr, {"prior": np.zeros(30)}, InputError, "prior must be finite, non-negative and not all zero"),
        (lsrr, {"rule": "median"}, InputError, "rule must be one of 'mode', 'mean' or a tuple of them"),
        (lsrr, {"rule": ()}, InputError, "rule must be one of 'mode', 'mean' or a tuple of them"),
        (lsrr, {"revisit": 4.0}, InputError, "revisit needs offsets \\(the trajectories\\) and a baseline of one "
                                             "law per report: EM, L-SRR, ATP or TP"),
        (NGram(space, 1.0), {"revisit": 4.0, "offsets": np.array([0, 3])}, InputError,
         "revisit needs offsets .* EM, L-SRR, ATP or TP, not N-gram"),
        (lsrr, {"revisit": 0.0, "offsets": np.array([0, 3])}, InputError,
         "revisit must be a finite number > 0 or None, got 0.0"),
        (lsrr, {"revisit": "4", "offsets": np.array([0, 3])}, InputTypeError,
         "revisit must be a number or None, got str"),
    ]


@pytest.mark.parametrize("baseline, options, exc, message", _bad_cases())
def test_bad_inputs(baseline, options, exc, message):
    with pytest.raises(exc, match=message):
        baseline_posterior(np.array([0, 1, 2]), baseline, **options)
