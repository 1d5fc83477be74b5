"""``tracs demo`` releases its TraCS-D file from each user's keyed stream of ``--seed``, as
``tracs perturb --seed`` draws it (:func:`tracs.engine.perturb_many` with ``rng=seed``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tracs import evaluation
from tracs.cli.perturb import released_frame
from tracs.engine import perturb_many


def test_demo_draws_the_keyed_streams_of_its_seed(cli, tmp_path):
    out = tmp_path / "demo"
    result = cli("demo", "--dataset", "synthetic", "--epsilons", "4", "--repetitions", "1", "--seed", "3",
                 "--output-dir", out, "--no-progress", "--tiles", "none")
    assert result.returncode == 0, result.stderr
    released = pd.read_csv(out / "released_tracs-d_eps4.csv")
    dataset = evaluation.load_dataset("synthetic", seed=3)
    ctx = evaluation.MethodContext(region=dataset.region, pois=dataset.pois)
    raw = perturb_many(evaluation.METHODS["tracs-d"].build(ctx, 4.0), dataset.coords, dataset.offsets, rng=3,
                       keys=dataset.keys)
    rounded = ctx.poi_space.round(raw)[0]
    lengths = np.diff(dataset.offsets)
    expected = released_frame(dataset.trajectories, rounded, np.full(len(rounded), 4.0), np.repeat(4.0 * lengths, lengths))
    np.testing.assert_array_equal(released["lat"].to_numpy(), expected["lat"].to_numpy())
    np.testing.assert_array_equal(released["lng"].to_numpy(), expected["lng"].to_numpy())
