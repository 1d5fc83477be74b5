"""Every registered perturber (tracs.methods) round-trips through a release sidecar and is either
estimated by tracs.estimate.grid_density or refused by it, by name: a perturber added to the registry
without these is a failure here, not a silent gap."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import Rectangle
from tracs.estimate import density, read_sidecar, write_sidecar
from tracs.estimate.sidecar import perturber_from_sidecar
from tracs.methods import PERTURBER, MethodContext, get, view

REGION = Rectangle(0.0, 0.0, 10.0, 5.0)
POINTS = np.array([[1.0, 1.0], [2.0, 3.5], [9.0, 4.0], [5.0, 2.5], [0.5, 4.5], [7.0, 0.5]])
OFFSETS = np.array([0, 2, 6])


@pytest.mark.parametrize("per_trajectory", [False, True])
@pytest.mark.parametrize("name", list(view(PERTURBER)))
def test_sidecar_rebuilds_the_same_perturber(tmp_path, name, per_trajectory):
    method = get(name)
    built = method.build(MethodContext(region=REGION, anchor="corner"), 2.0, per_trajectory=per_trajectory)
    release = tmp_path / "out.csv"
    write_sidecar(release, method=name, epsilon=2.0, per_trajectory=per_trajectory, region=REGION,
                  crs="EPSG:32654", perturber=built)
    data = read_sidecar(release)
    for field in method.sidecar:
        assert field in data, f"{name}: sidecar field {field!r} not written"
    again = perturber_from_sidecar(data)
    assert type(again) is type(built) and repr(again) == repr(built)
    assert np.array_equal(np.asarray(again.lattice, dtype=float), np.asarray(built.lattice, dtype=float))
    # the same public parameters give the same releases, bit for bit (seed 3)
    assert np.array_equal(again.perturb_many(POINTS, OFFSETS, rng=3), built.perturb_many(POINTS, OFFSETS, rng=3))


@pytest.mark.parametrize("name", list(view(PERTURBER)))
def test_density_estimates_or_refuses_by_name(name):
    method = get(name)
    perturber = method.build(MethodContext(region=REGION), 4.0)
    reports = perturber.perturb_many(POINTS, OFFSETS, rng=5)
    if method.estimator is None:
        with pytest.raises(TypeError, match=f"the method '{name}' without one"):
            density(reports, perturber, offsets=OFFSETS, grid=4)
        return
    est = density(reports, perturber, offsets=OFFSETS, grid=4, iterations=5)
    assert est.probabilities.shape == (4, 4)
    assert est.probabilities.min() >= 0.0 and abs(est.probabilities.sum() - 1.0) < 1e-9


def test_density_refuses_an_unregistered_object():
    with pytest.raises(TypeError, match="perturber must be a registered perturber with a density estimator "
                                        r"\(tracs-d, tracs-c, strawman, planar-laplace, tracs-d-paper\); "
                                        "str is not a registered"):
        density(POINTS, "tracs-d", offsets=OFFSETS)
