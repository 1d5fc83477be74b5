"""POI frequencies and posteriors of the discrete baselines built with a budget per trajectory
(tracs.estimate.epsilon_groups; tracs.estimate.frequencies and baseline_posterior): every report's law
is the baseline's law at its trajectory's per-point ε, checked against an enumeration of the true POIs
with the baselines' own ``probabilities`` at each report's ε."""

from __future__ import annotations


import numpy as np
import pytest

from tracs.baselines import ATP, LSRR, ExponentialMechanism, NGram
from tracs.errors import InputError, MemoryLimitError
from tracs.estimate import baseline_posterior, frequencies
from tracs.estimate import expectation_maximisation as fitting
from tracs.estimate.epsilon_groups import epsilon_groups
from tracs.estimate.ngram_law import previous_releases
from tracs.estimate.poi_frequencies import channel_bytes
from tracs.poi_space import POISpace

#: trajectories of four lengths (four per-point ε: 6/2, 6/3, 6/5, 6/7)
OFFSETS = np.cumsum([0, 2, 3, 5, 3, 7, 2, 5])
BUDGET = 6.0


def _space(n=12, seed=2):
    return POISpace(np.random.default_rng(seed).uniform(0, 1000, (n, 2)))


def _baseline(name, space, **budget):
    budget = budget or {"epsilon_per_trajectory": BUDGET}
    return {"em": lambda: ExponentialMechanism(space, **budget), "lsrr": lambda: LSRR(space, **budget),
            "ngram": lambda: NGram(space, theta=450.0, **budget)}[name]()


def _release(baseline, offsets=OFFSETS, seed=3):
    rng = np.random.default_rng(seed)
    m = len(baseline.poi_space)
    truth = np.where(rng.random(offsets[-1]) < 0.7, rng.integers(0, 3, offsets[-1]), rng.integers(0, m, offsets[-1]))
    reports = baseline.perturb_many(baseline.poi_space.points[truth], offsets, rng=seed + 1)
    return baseline.poi_space.round(reports)[1]


def _likelihoods(baseline, idx, offsets):
    """``L[r, x] = P(report r | x)`` enumerated one report and one true POI at a time, at the report's ε
    (its trajectory's budget over its length), N-gram given the previous report."""
    lengths = np.diff(offsets)
    eps = np.repeat(BUDGET / lengths, lengths)
    prev = previous_releases(idx, offsets)
    m = len(baseline.poi_space)
    out = np.empty((len(idx), m))
    for r, y in enumerate(idx):
        for x in range(m):
            if isinstance(baseline, NGram):
                law = baseline.probabilities(x, None if prev[r] < 0 else int(prev[r]), epsilon=float(eps[r]))
            else:
                law = baseline.probabilities(x, epsilon=float(eps[r]))
            out[r, x] = law[y]
    return out


def _posterior(lik, prior, points):
    w = lik * prior
    mean = w @ points / w.sum(axis=1)[:, None]
    return np.argmax(w, axis=1), np.argmin(((mean[:, None] - points[None]) ** 2).sum(axis=2), axis=1)


def test_groups_are_whole_trajectories_by_their_epsilon():
    groups = epsilon_groups(ExponentialMechanism(_space(), epsilon_per_trajectory=BUDGET), OFFSETS)
    assert [g.epsilon for g in groups] == [6 / 7, 6 / 5, 2.0, 3.0]
    np.testing.assert_array_equal(groups[0].rows, np.arange(OFFSETS[4], OFFSETS[5]))
    np.testing.assert_array_equal(groups[2].rows, np.r_[2:5, 10:13])
    np.testing.assert_array_equal(groups[2].offsets, [0, 3, 6])
    np.testing.assert_array_equal(np.sort(np.concatenate([g.rows for g in groups])), np.arange(OFFSETS[-1]))


@pytest.mark.parametrize("name", ["em", "lsrr", "ngram"])
def test_frequencies_equal_the_enumerated_likelihood_fit(name):
    # 12 POIs (seed 2), 27 reports in 7 trajectories of 4 lengths: the fit over one block per ε equals EM
    # over the enumerated likelihood of every report (same stopping rule), within 1e-10
    baseline = _baseline(name, _space())
    idx = _release(baseline)
    fit = frequencies(idx, baseline, offsets=OFFSETS)
    lik = _likelihoods(baseline, idx, OFFSETS)
    want = fitting.run_em([fitting.DenseBlock(lik)], np.ones(12, dtype=bool), tol=fitting.DEFAULT_TOL)
    np.testing.assert_allclose(fit.probabilities, want.theta, rtol=0, atol=1e-10)
    assert fit.converged


@pytest.mark.parametrize("name", ["em", "lsrr", "ngram"])
def test_posterior_equals_the_enumeration_at_each_reports_epsilon(name):
    # a random prior (seed 9), and the default prior (the frequencies of the same reports)
    baseline = _baseline(name, _space())
    idx = _release(baseline)
    points = baseline.poi_space.points
    lik = _likelihoods(baseline, idx, OFFSETS)
    given = np.random.default_rng(9).random(12)
    fitted = frequencies(idx, baseline, offsets=OFFSETS).probabilities
    for prior, options in ((given / given.sum(), {"prior": given}), (fitted, {})):
        mode, mean = baseline_posterior(idx, baseline, offsets=OFFSETS, rule=("mode", "mean"), **options)
        want_mode, want_mean = _posterior(lik, prior, points)
        np.testing.assert_array_equal(mode, want_mode)
        np.testing.assert_array_equal(mean, want_mean)


@pytest.mark.parametrize("name", ["em", "lsrr", "ngram"])
def test_one_length_equals_the_per_point_baseline_at_its_epsilon(name):
    # every trajectory of 4 points at 8 per trajectory: each point at 2.0, as the per-point baseline
    offsets = np.arange(0, 28, 4)
    space = _space()
    per_trajectory, per_point = _baseline(name, space, epsilon_per_trajectory=8.0), _baseline(name, space, epsilon=2.0)
    idx = _release(per_point, offsets)
    np.testing.assert_array_equal(frequencies(idx, per_trajectory, offsets=offsets).probabilities,
                                  frequencies(idx, per_point, offsets=offsets).probabilities)
    np.testing.assert_array_equal(baseline_posterior(idx, per_trajectory, offsets=offsets, rule=("mode", "mean")),
                                  baseline_posterior(idx, per_point, offsets=offsets, rule=("mode", "mean")))


def test_atp_per_trajectory_is_denoised_under_the_same_surrogate():
    # ATP's surrogate does not depend on its budget: a per-trajectory ATP gives the per-point one's POIs
    space = _space()
    idx = np.random.default_rng(4).integers(0, 12, OFFSETS[-1])
    for options in ({}, {"surrogate_epsilon": 2.0}):
        np.testing.assert_array_equal(
            baseline_posterior(idx, ATP(space, epsilon_per_trajectory=BUDGET), offsets=OFFSETS, **options),
            baseline_posterior(idx, ATP(space, 2.0), offsets=OFFSETS, **options))


#: the frequencies (to 15 digits) and the posterior modes and mean rules of per-point releases, computed by
#: the code before baselines built per trajectory were estimated (docs/results.md depends on them)
PER_POINT = {
    "em": ([0.383136772588742, 4.75713899730915e-06, 0.175393566775684, 0, 9.85584974606804e-06,
                  0.441402034140161, 4.99706443164844e-09, 0, 5.30085096043179e-05],
             [0, 0, 5, 0, 0, 5, 5, 0, 5, 5, 0, 0, 5, 5, 5, 5, 0, 0, 0, 5, 5, 5, 0, 5, 0, 5, 5, 5, 5,
                           5, 5, 0, 5, 5, 5, 5, 5, 0, 5, 5],
             [0, 0, 5, 0, 0, 5, 0, 0, 5, 0, 0, 0, 5, 5, 5, 5, 0, 0, 0, 5, 5, 5, 0, 5, 0, 5, 5, 0, 5,
                           0, 0, 0, 5, 5, 5, 5, 5, 0, 5, 0]),
    "lsrr": ([0.0572846047806728, 0.3319895862061, 0.0357578625924575, 0.23806620551656,
                  0.285566736631808, 0.0155771297435941, 3.89222099776169e-10, 0.0357578625924575,
                  1.15471271585022e-08],
             [4, 1, 1, 1, 4, 4, 1, 3, 4, 4, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 4, 4, 1, 4, 4, 3, 1, 1, 1,
                           3, 1, 3, 3, 1, 3, 3, 1, 1, 1, 1],
             [8, 6, 5, 1, 8, 6, 6, 5, 8, 6, 5, 6, 5, 6, 5, 6, 1, 6, 5, 1, 6, 8, 1, 8, 6, 3, 1, 1, 6,
                           5, 6, 5, 3, 6, 5, 3, 5, 6, 6, 6]),
    "ngram": ([0.147832520049366, 2.64332168993528e-05, 0.409106843662464, 0.123613150457949, 0,
                  2.5310889505764e-07, 0.317476541955196, 2.9947512649842e-06, 0.00194126279796518],
             [2, 6, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 6, 2, 6, 2, 2, 2, 6, 2, 6, 6, 6, 2, 6, 2, 2, 2, 6,
                           2, 2, 2, 6, 6, 2, 2, 6, 2, 2, 6],
             [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 7, 5,
                           7, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]),
}


@pytest.mark.parametrize("name", sorted(PER_POINT))
def test_per_point_results_are_unchanged(name):
    space = POISpace(np.random.default_rng(11).uniform(0, 1000, (9, 2)))
    baseline = {"em": ExponentialMechanism(space, 2.5), "lsrr": LSRR(space, 1.5),
                "ngram": NGram(space, 2.0, theta=500.0)}[name]
    off = np.array([0, 7, 20, 40])
    truth = np.random.default_rng(4).integers(0, 9, 40)
    idx = space.round(baseline.perturb_many(space.points[truth], off, rng=5))[1]
    fit = frequencies(idx, baseline, offsets=off)
    mode, mean = baseline_posterior(idx, baseline, offsets=off, rule=("mode", "mean"))
    probabilities, modes, means = PER_POINT[name]
    np.testing.assert_allclose(fit.probabilities, probabilities, rtol=1e-9, atol=1e-13)
    assert mode.tolist() == modes and mean.tolist() == means


@pytest.mark.parametrize("function", [frequencies, baseline_posterior])
def test_the_memory_bound_is_the_rows_of_the_distinct_report_epsilon_pairs(function):
    # EM over 12 POIs: the rows of the distinct (reported POI, ε) pairs (the posterior weights them in
    # place) and one block fit a budget of exactly channel_bytes; one byte less is refused
    baseline = _baseline("em", _space())
    idx = _release(baseline)
    pairs = sum(np.unique(idx[g.rows]).size for g in epsilon_groups(baseline, OFFSETS))
    need = channel_bytes(12, pairs)
    function(idx, baseline, offsets=OFFSETS, memory=need)
    with pytest.raises(MemoryLimitError, match=f"the law's rows \\({pairs} pairs"):
        function(idx, baseline, offsets=OFFSETS, memory=need - 1)


def _bad_cases():
    space = _space()
    em, lsrr, ngram = (_baseline(name, space) for name in ("em", "lsrr", "ngram"))
    need = "a baseline built with a budget per trajectory needs offsets: each report's per-point epsilon"
    return [
        (em, {}, InputError, need),
        (lsrr, {}, InputError, need),
        (ngram, {}, InputError, need),
        (em, {"offsets": [0, 3], "memory": "1kB"}, MemoryLimitError,
         r"the law's rows \(3 pairs of a reported POI and a per-point epsilon × 12 POIs\) needs at least .* above "
         r"the budget memory=1e-06 GB"),
        (lsrr, {"offsets": [0, 1, 3], "memory": 1000}, MemoryLimitError, r"the law's rows \(3 pairs"),
        (ngram, {"offsets": [0, 1, 3], "memory": "1kB"}, MemoryLimitError,
         r"N-gram's normalisers \(3 pairs of a previous release and a per-point epsilon × 12 POIs\)"),
        (em, {"offsets": [0, 3], "memory": -1}, InputError, "memory must be a positive size"),
    ]


@pytest.mark.parametrize("function", [frequencies, baseline_posterior])
@pytest.mark.parametrize("baseline, options, exc, message", _bad_cases())
def test_bad_inputs(function, baseline, options, exc, message):
    with pytest.raises(exc, match=message):
        function(np.array([0, 1, 2]), baseline, **options)
