"""Adding a perturber is its class plus one registry entry: a toy perturber defined here is
found by every command and by the library paths that iterate the registry (tracs.methods)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

from tracs.methods import PERTURBER, Method, get, method_of, registered
from tracs.perturbers import TraCSC

REGION = ("--region", "tky")


class QuarterShare(TraCSC):
    """A toy perturber: TraCS-C whose x axis gets a quarter of the budget by default."""

    def __init__(self, region, epsilon=None, *, x_share=0.25, **kwargs):
        super().__init__(region, epsilon, x_share=x_share, **kwargs)


def _toy_factory(ctx, budget, *, x_share=0.25):
    return QuarterShare(ctx.region, x_share=x_share, **budget)


TOY = Method("quarter-share", "Quarter share", PERTURBER, _toy_factory, "toy: TraCS-C with x share 1/4",
             model=QuarterShare, sidecar=("x_share",), estimator="axes")


@pytest.fixture
def toy():
    with registered(TOY) as method:
        yield method


def test_toy_is_registered_only_inside_the_block(toy):
    assert get("quarter-share") is toy
    assert method_of(QuarterShare(_rectangle(), 1.0)) is toy
    assert method_of(TraCSC(_rectangle(), 1.0)).name == "tracs-c"


def test_toy_outside_the_block_is_unknown():
    with pytest.raises(ValueError, match="unknown method 'quarter-share'; choose from .*tracs-d"):
        get("quarter-share")


def _rectangle():
    from tracs.region import Rectangle

    return Rectangle(0.0, 0.0, 1000.0, 1000.0)


def test_toy_in_perturb_sidecar_and_density(toy, cli, checkins_csv, tmp_path):
    from tracs.estimate import density
    from tracs.estimate.sidecar import perturber_from_sidecar, read_sidecar

    out = tmp_path / "released.csv"
    result = cli("perturb", *REGION, checkins_csv, "-o", out, "-m", "quarter-share", "-e", "4", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Quarter share: 60 points in 3 trajectories")
    released = pd.read_csv(out)
    assert len(released) == 60 and (released["epsilon_point"] == 4.0).all()
    # the sidecar records the entry's field and rebuilds the toy through the registry
    data = read_sidecar(out)
    assert data["method"] == "quarter-share" and data["x_share"] == 0.25
    again = perturber_from_sidecar(data)
    assert type(again) is QuarterShare and again.x_share == 0.25 and again.epsilon == 4.0
    # the density estimator finds the toy's likelihood (per-axis reports) in its entry
    reports = again.perturb_many(np.repeat([np.asarray(again.region.center)], 40, axis=0), np.array([0, 40]),
                                 rng=3)
    est = density(reports, again, grid=4, iterations=5)
    assert est.probabilities.shape == (4, 4) and abs(est.probabilities.sum() - 1.0) < 1e-9


def test_toy_in_estimate_command(toy, cli, checkins_csv, tmp_path):
    out = tmp_path / "released.csv"
    assert cli("perturb", *REGION, checkins_csv, "-o", out, "-m", "quarter-share", "-e", "4",
               "--seed", "1").returncode == 0
    result = cli("estimate", out, "-o", tmp_path / "density.csv", "--grid", "4")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "density.csv").is_file()


def test_toy_in_evaluate(toy, cli, tmp_path):
    result = cli("evaluate", "--dataset", "unit-square", "--methods", "quarter-share,tracs-c", "--epsilons", "2",
                 "--repetitions", "2", "--points", "5", "--trajectories", "4", "--no-figure", "--no-progress",
                 "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["method"] for row in rows] == ["quarter-share", "tracs-c"]
    assert all(0.0 < row["ae_mean"] < 1.5 for row in rows)  # the unit square's diameter bounds every error


def test_toy_in_audit(toy, cli):
    from tracs.cli.audit import _names
    from tracs.privacy.catalog import CATALOG

    assert "quarter-share" in _names(argparse.Namespace(all=True, method=None), CATALOG)
    result = cli("audit", "-m", "quarter-share", "--samples", "2000", "--seed", "1")
    assert result.returncode in (0, 3), result.stdout + result.stderr
    assert "quarter-share" in result.stdout


def test_perturb_help_lists_the_toy(toy, cli):
    result = cli("perturb", "--help")
    assert "quarter-share: toy: TraCS-C with x share 1/4" in " ".join(result.stdout.split())
