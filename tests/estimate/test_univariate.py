"""1-D estimation: exact transition matrices, EM distributions, means with a rate."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import mechanisms as M
from tracs.estimate import distribution, mean
from tracs.estimate.transition import input_edges, output_edges, transition_matrix

INTERVAL = [
    M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0),
    M.OptimalUnbiased(epsilon=2.0, low=0.0, high=1.0),
    M.PiecewiseMechanism(epsilon=1.0, low=0.0, high=1.0),
    M.SquareWave(epsilon=2.0, low=0.0, high=1.0),
    M.PTT(epsilon=1.0, low=0.0, high=1.0),
    M.Laplace(epsilon=1.0, low=0.0, high=1.0),
    M.Staircase(epsilon=1.0, low=0.0, high=1.0),
    M.Duchi(epsilon=1.0, low=0.0, high=1.0),
    M.Truncated(M.Laplace(epsilon=1.0, low=0.0, high=1.0)),
    M.Compressed(M.SquareWave(epsilon=1.0, low=0.0, high=1.0)),
    M.BoundedLaplace(epsilon=1.0, low=0.0, high=1.0),
]
CIRCULAR = [M.OptimalCircular(epsilon=2.0), M.Purkayastha(epsilon=2.0)]


@pytest.mark.parametrize("mech", INTERVAL + CIRCULAR, ids=lambda m: type(m).__name__)
def test_transition_columns_sum_to_one(mech):
    rng = np.random.default_rng(0)
    reports = mech.sample(rng.random(500) * 0.999 * (2 * np.pi if mech in CIRCULAR else 1.0), rng=1)
    a = transition_matrix(mech, input_edges(mech, 16), output_edges(mech, reports, 64))
    assert np.all(a >= 0)
    np.testing.assert_allclose(a.sum(axis=0), 1.0, rtol=0, atol=1e-12)


def _w1(p, q, width):
    return float(np.abs(np.cumsum(p - q)).sum() * width)


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_em_beats_raw_histogram_in_wasserstein(eps):
    # seed 0 for the data, 1 for the mechanism; the EM estimate must be closer
    rng = np.random.default_rng(0)
    x = rng.beta(2.0, 5.0, size=20000)
    mech = M.OptimalClassical(epsilon=eps, low=0.0, high=1.0)
    y = mech.sample(x, rng=1)
    est = distribution(y, mech, bins=32, bootstrap=0)
    truth = np.histogram(x, bins=est.edges)[0] / len(x)
    raw = np.histogram(y, bins=est.edges)[0] / len(y)
    assert est.converged
    np.testing.assert_allclose(est.probabilities.sum(), 1.0, atol=1e-12)
    assert _w1(est.probabilities, truth, 1 / 32) < 0.7 * _w1(raw, truth, 1 / 32)


def test_distribution_reports_standard_errors_and_is_deterministic():
    mech = M.SquareWave(epsilon=2.0, low=0.0, high=1.0)
    y = mech.sample(np.full(3000, 0.3), rng=2)
    a = distribution(y, mech, bins=16, bootstrap=5)
    b = distribution(y, mech, bins=16, bootstrap=5)
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    np.testing.assert_array_equal(a.standard_errors, b.standard_errors)
    assert np.all(a.standard_errors >= 0) and a.standard_errors.max() > 0


def test_krr_frequencies():
    mech = M.KRR(epsilon=2.0, k=4)
    x = np.repeat(np.arange(4), [4000, 3000, 2000, 1000])
    est = distribution(mech.sample(x, rng=3), mech, bootstrap=0)
    np.testing.assert_allclose(est.probabilities, [0.4, 0.3, 0.2, 0.1], atol=0.03)


@pytest.mark.parametrize("mech, method", [
    (M.PiecewiseMechanism(epsilon=1.0, low=0.0, high=1.0), "unbiased"),
    (M.SquareWave(epsilon=1.0, low=0.0, high=1.0), "unbiased"),
    (M.OptimalUnbiased(epsilon=1.0, low=0.0, high=1.0), "unbiased"),
    (M.Duchi(epsilon=1.0, low=0.0, high=1.0), "unbiased"),
])
def test_mean_error_falls_as_one_over_root_n(mech, method):
    # 30 repetitions per n (seeded); the fitted log-log slope of the RMSE must be −½ ± 0.15
    rng = np.random.default_rng(4)
    ns = np.array([250, 1000, 4000, 16000])
    rmse = []
    for n in ns:
        errs = []
        for rep in range(30):
            x = rng.beta(2.0, 5.0, size=n)
            est = mean(mech.sample(x, rng=rng), mech)
            assert est.method == method
            errs.append(est.value - 2.0 / 7.0)
        rmse.append(np.sqrt(np.mean(np.square(errs))))
    slope = np.polyfit(np.log(ns), np.log(rmse), 1)[0]
    assert -0.65 < slope < -0.35


def test_mean_standard_error_matches_spread():
    mech = M.PiecewiseMechanism(epsilon=1.0, low=0.0, high=1.0)
    est = mean(mech.sample(np.full(20000, 0.4), rng=5), mech)
    assert abs(est.value - 0.4) < 4 * est.standard_error
    assert 0.002 < est.standard_error < 0.05


@pytest.mark.parametrize("mech", CIRCULAR, ids=lambda m: type(m).__name__)
def test_circular_mean(mech):
    rng = np.random.default_rng(6)
    x = np.mod(rng.vonmises(1.0, 4.0, size=20000), 2 * np.pi)
    est = mean(mech.sample(x, rng=7), mech)
    assert est.method == "circular"
    assert abs(est.value - 1.0) < max(4 * est.standard_error, 0.01)


def test_em_mean_for_biased_mechanism():
    mech = M.OptimalClassical(epsilon=2.0, low=0.0, high=1.0)
    x = np.random.default_rng(8).beta(2.0, 5.0, size=20000)
    est = mean(mech.sample(x, rng=9), mech, bins=64)
    assert est.method == "em"
    assert abs(est.value - x.mean()) < 0.02 and est.standard_error > 0


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda: distribution([], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0)), ValueError, "empty"),
    (lambda: distribution([0.5, np.nan], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0)), ValueError, "NaN"),
    (lambda: distribution([2.0], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0)), ValueError, "outside"),
    (lambda: distribution([0.5], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0), bins=1), ValueError, ">= 2"),
    (lambda: distribution([0.5], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0), bins=2.5), TypeError, "int"),
    (lambda: distribution([0.5], "laplace"), TypeError, "mechanism"),
    (lambda: mean([1, 2], M.KRR(epsilon=1.0, k=3)), TypeError, "no mean"),
    (lambda: distribution([0.5], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0), smoothing="x"),
     ValueError, "smoothing"),
    (lambda: distribution([0.5], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0), edge_decay=-0.5),
     ValueError, "edge_decay must be a finite number >= 0, got -0.5"),
    (lambda: distribution([0.5], M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0), edge_decay="flat"),
     TypeError, "edge_decay must be a number >= 0, got str"),
])
def test_bad_inputs(call, exc, fragment):
    with pytest.raises(exc, match=fragment):
        call()


_COARSE = 2.0 ** -7
LATTICE = [
    M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.OptimalUnbiased(epsilon=2.0, low=0.0, high=1.0, resolution=_COARSE),
    M.PiecewiseMechanism(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.SquareWave(epsilon=2.0, low=0.0, high=1.0, resolution=_COARSE),
    M.PTT(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.Laplace(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.Staircase(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.Truncated(M.Laplace(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE)),
    M.Compressed(M.SquareWave(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE)),
    M.BoundedLaplace(epsilon=1.0, low=0.0, high=1.0, resolution=_COARSE),
    M.OptimalCircular(epsilon=2.0, resolution=_COARSE),
    M.Purkayastha(epsilon=2.0, resolution=_COARSE),
]


@pytest.mark.parametrize("mech", LATTICE, ids=lambda m: type(m).__name__)
def test_transition_is_the_lattice_law(mech):
    # on a coarse lattice (2^-7 of the domain) every column is the mean of exact
    # lattice rows (public lattice_row) summed over the bins, to 1e-12
    from tracs.estimate.transition import binned_rows, input_nodes

    per = getattr(mech.input_domain, "period", 1.0)
    reports = mech.sample(np.random.default_rng(0).random(300) * 0.999 * per, rng=1)
    ins, outs = input_edges(mech, 8), output_edges(mech, reports, 20)
    k = input_nodes(mech, ins, 4)
    bins = np.clip(np.searchsorted(outs, mech.lattice.points(), side="left") - 1, 0, len(outs) - 2)
    expected = np.zeros((len(outs) - 1, k.size))
    for c, kk in enumerate(k.ravel()):
        np.add.at(expected[:, c], bins, mech.lattice_row(int(kk)))
    expected = expected.reshape(len(outs) - 1, *k.shape).mean(axis=2)
    np.testing.assert_allclose(binned_rows(mech, k.ravel(), outs).reshape(expected.shape[0], *k.shape)
                               .mean(axis=2), expected, rtol=0, atol=1e-12)
    a = transition_matrix(mech, ins, outs, nodes=4)
    np.testing.assert_allclose(a, expected / expected.sum(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    # every released value falls strictly inside one bin
    pts = mech.lattice.points()
    assert not np.any(np.isin(pts, outs[1:-1]))


def test_distribution_workers_bit_identical():
    mech = M.OptimalClassical(epsilon=2.0, low=0.0, high=1.0)
    y = mech.sample(np.random.default_rng(3).beta(2.0, 5.0, 4000), rng=4)
    one = distribution(y, mech, bins=16, bootstrap=6, workers=1)
    three = distribution(y, mech, bins=16, bootstrap=6, workers=3)
    np.testing.assert_array_equal(one.probabilities, three.probabilities)
    np.testing.assert_array_equal(one.standard_errors, three.standard_errors)
    with pytest.raises(ValueError, match="workers"):
        distribution(y, mech, bins=16, workers=0)


def test_edge_decay_moves_mass_only_inside_the_clamped_zones():
    # OptimalClassical at ε = 1 on 32 bins: the band clamps over the outer cells, whose columns
    # coincide.  edge_decay keeps every zone's total and every resolved cell bit for bit,
    # puts the most mass next to the resolved cells, and changes nothing where no column repeats
    mech = M.OptimalClassical(epsilon=1.0, low=0.0, high=1.0)
    rng = np.random.default_rng(4)
    rep = mech.sample(rng.beta(2, 5, 20000), rng=5)
    flat = distribution(rep, mech, bins=32, bootstrap=3)
    decayed = distribution(rep, mech, bins=32, bootstrap=3, edge_decay=4.0)
    from tracs.estimate.edge_zones import zone_labels

    labels = zone_labels(transition_matrix(mech, input_edges(mech, 32), output_edges(mech, rep, 128)))
    zone = labels == labels[-1]
    assert 1 < zone.sum() < 16
    resolved = np.bincount(labels)[labels] == 1
    np.testing.assert_array_equal(decayed.probabilities[resolved], flat.probabilities[resolved])
    assert decayed.probabilities[zone].sum() == pytest.approx(flat.probabilities[zone].sum(), rel=1e-12)
    assert np.all(np.diff(decayed.probabilities[zone]) < 0)
    np.testing.assert_allclose(flat.probabilities[zone], flat.probabilities[zone][0], rtol=1e-9)
    pm = M.PiecewiseMechanism(epsilon=1.0, low=0.0, high=1.0)
    rep = pm.sample(rng.beta(2, 5, 5000), rng=6)
    np.testing.assert_array_equal(distribution(rep, pm, bins=16, bootstrap=0).probabilities,
                                  distribution(rep, pm, bins=16, bootstrap=0, edge_decay=4.0).probabilities)
