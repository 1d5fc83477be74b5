"""k-RR's two-pass kernel: the branch-free pass and the exact scalar path give the same reports."""

import numpy as np
import pytest

from tracs.mechanisms import KRR
from tracs.perturbers.keyed_draws import words_at
from tracs.random import resolve_streams


def _reference(x, mech, seed):
    """Reports read from words 0 and 1 directly; ``None`` where the draw needs more words."""
    ks = resolve_streams(seed, None, 1)
    n = len(x)
    stream = np.full(n, ks.streams[0], dtype=np.uint64)
    index = np.arange(n, dtype=np.uint64)
    w0 = words_at(ks.kind, ks.key, stream, index, np.zeros(n, dtype=np.int64))
    w1 = words_at(ks.kind, ks.key, stream, index, np.ones(n, dtype=np.int64))
    first = (w0 >> np.uint64(11)).astype(np.float64)
    scaled = mech.lie_probability * 2.0 ** 53
    lies = first < np.floor(scaled)
    m = np.uint64(mech.k - 1)
    prod = (w1 & np.uint64(0xFFFFFFFF)) * m
    other = (prod >> np.uint64(32)).astype(np.int64)
    other = other + (other >= x)
    decided = (first != np.floor(scaled)) & ((prod & np.uint64(0xFFFFFFFF)) >= m)
    return np.where(lies, other, x), decided


@pytest.mark.parametrize("epsilon, k", [(0.5, 2), (1.0, 6), (4.0, 50), (20.0, 3)])
def test_kernel_equals_the_reading_of_its_words(epsilon, k):
    mech = KRR(epsilon=epsilon, k=k)
    x = np.random.default_rng(4).integers(0, k, 200_000)
    got = mech.sample(x, rng=17)
    want, decided = _reference(x, mech, 17)
    assert decided.mean() > 0.99
    assert np.array_equal(got[decided], want[decided])
    assert np.all((got >= 0) & (got < k))


def test_empirical_law_matches_the_pmf():
    """Seed 5, 300,000 draws at x = 2, k = 6, ε = 1: every frequency within 5 standard errors."""
    mech = KRR(epsilon=1.0, k=6)
    n = 300_000
    counts = np.bincount(mech.sample(np.full(n, 2), rng=5), minlength=6) / n
    p = mech.lattice_pmf(2)
    assert np.all(np.abs(counts - p) <= 5 * np.sqrt(p * (1 - p) / n))
