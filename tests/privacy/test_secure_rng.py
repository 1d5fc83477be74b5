"""``rng="secure"`` and ``tracs.random.Secure(seed)`` (ChaCha20) work for every shipped method.

For each mechanism, perturber and baseline of the audit catalogue (ε = 1):

* ``rng="secure"`` releases finite outputs of the right shape, on the declared
  lattice (mechanisms, TraCS-C, planar Laplace) or the public POI set
  (baselines); for direction–distance perturbers the indices of ``Secure(5)``
  draws are checked against both lattices and the points against the indices;
* ``Secure(seed)`` is reproducible, and another seed gives other draws (500 draws);
* the law under ``Secure(seed)`` equals the law under the default Philox key:
  chi-square test of homogeneity on 2 × 10,000 draws (2 × 5,000 for points) at a fixed input, over
  cells (recurring values and quantile bins) built from the pooled draws,
  cells with fewer than 10 draws in all merged away; seeds fixed, α = 1e-3.

Methods that do not take these ``rng`` values yet are expected failures
(strict: the mark must go once they do).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tracs.privacy.catalog import CATALOG
from tracs.privacy.events import build_cells
from tracs.privacy.lattice_check import IndexedRelease, PointSet, declared_lattice, is_indexed, off_lattice
from tracs.random import Secure

N = 10_000


def _draw_input(method):
    """A fixed input inside the method's domain (a point for perturbers and baselines)."""
    if hasattr(method, "input_domain"):
        dom = method.input_domain
        if hasattr(dom, "k"):
            return 1
        return 0.7 * float(dom.period) if hasattr(dom, "period") else 0.3 * float(dom.low) + 0.7 * float(dom.high)
    if hasattr(method, "poi_space"):
        return np.asarray(method.poi_space.points[3], dtype=float)
    xmin, ymin, xmax, ymax = method.region.bounds
    return np.array([0.3 * xmin + 0.7 * xmax, 0.6 * ymin + 0.4 * ymax])


def _draw(method, kind, n, rng):
    x = _draw_input(method)
    if kind == "1d":
        return method.sample(np.full(n, x), rng=rng)
    return method.perturb_many(np.tile(x, (n, 1)), np.arange(n + 1), rng=rng)


def _supports_secure(name) -> bool:
    target = CATALOG[name]
    try:
        _draw(target.build(1.0), target.kind, 4, "secure")
    except TypeError:
        return False
    return True


LDP = [name for name, target in CATALOG.items() if target.ldp]


@pytest.fixture
def name(request):
    """The method's name; a strict expected failure when it does not take these ``rng`` values yet.

    Probed when the test runs, not at collection: every pytest-xdist worker collects every
    module, and a probe there would compile each method's kernels in every worker at once.
    """
    if not _supports_secure(request.param):
        request.node.add_marker(pytest.mark.xfail(strict=True, reason="rng='secure' not accepted yet"))
    return request.param


@pytest.mark.parametrize("name", LDP, indirect=True)
def test_secure_rng_releases_on_the_public_lattice(name):
    target = CATALOG[name]
    method = target.build(1.0)
    out = _draw(method, target.kind, 2_000, "secure")
    assert out.shape == ((2_000,) if target.kind == "1d" else (2_000, 2))
    assert np.all(np.isfinite(out))
    lattice = declared_lattice(method)
    if lattice is None and hasattr(method, "poi_space"):
        lattice = PointSet(method.poi_space.points)
    if lattice is not None and is_indexed(lattice):
        # direction/distance releases: the indices of the same (reproducible) draws
        check = IndexedRelease([lattice.direction, lattice.distance])
        out = _draw(method, target.kind, 2_000, Secure(5))
        point = np.asarray(_draw_input(method), dtype=float)
        check.record(method.lattice_indices(np.tile(point, (2_000, 1)), np.arange(2_001), rng=Secure(5)))
        assert check.contains(out).all()
    elif lattice is not None:
        assert off_lattice(out, lattice)[0] == 0


@pytest.mark.parametrize("name", LDP, indirect=True)
def test_secure_seed_is_reproducible_and_has_the_right_law(name):
    target = CATALOG[name]
    method = target.build(1.0)
    small = _draw(method, target.kind, 500, Secure(11))
    assert np.array_equal(small, _draw(method, target.kind, 500, Secure(11)))
    assert not np.array_equal(small, _draw(method, target.kind, 500, Secure(12)))
    n = N if target.kind == "1d" else N // 2
    a = _draw(method, target.kind, n, Secure(11))
    b = _draw(method, target.kind, n, 11)
    cells = build_cells(np.concatenate([a, b]), bins=20)
    table = np.stack([np.bincount(cells.assign(v), minlength=cells.size) for v in (a, b)])
    table = table[:, table.sum(axis=0) >= 10]
    if table.shape[1] < 2:  # a single output value under both generators
        assert np.array_equal(np.unique(a), np.unique(b))
        return
    p_value = stats.chi2_contingency(table)[1]
    assert p_value > 1e-3, f"{name}: laws differ (chi-square p = {p_value:.2e})"


@pytest.mark.parametrize("rng, words, bits", [
    (None, 2, 32), (0, 2, 32), (2 ** 200, 2, 32), (np.random.default_rng(1), 2, 32),
    ("secure", 8, 32), (Secure(5), 8, 32),
])
def test_key_sizes_are_the_documented_ones(rng, words, bits):
    # docs/audit.md: Philox keys are 64 bits (two 32-bit words) whatever the seed's size,
    # ChaCha20 keys 256 bits (eight 32-bit words)
    from tracs.random import resolve_key

    key = resolve_key(rng).key
    assert len(key) == words and all(int(w) < 2 ** bits for w in key)
