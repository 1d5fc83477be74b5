"""Errors in degrees on request (the paper's check-in figures are in degrees)."""

from __future__ import annotations

import numpy as np
import pytest

from tracs import evaluation


def test_degrees_divide_each_axis_by_its_metres_per_degree():
    dataset = evaluation.load_dataset("synthetic", synthetic_users=8, seed=1)
    metres = evaluation.run_grid(dataset, ["tracs-c"], [4.0], seed=3)
    degrees = evaluation.run_grid(dataset, ["tracs-c"], [4.0], seed=3, units="degrees")
    assert (degrees["units"] == "degrees").all() and (metres["units"] == "m").all()
    east, north = dataset.degree_scale
    ratio = degrees["ae"].iloc[0] / metres["ae"].iloc[0]
    # a metre is 1/east to 1/north of a degree depending on its direction
    assert 1 / max(east, north) * (1 - 1e-9) <= ratio <= 1 / min(east, north) * (1 + 1e-9)
    assert 1e-6 < degrees["ae"].iloc[0] < 1.0  # a city: well under a degree


def test_degrees_need_a_geographic_data_set():
    dataset = evaluation.load_dataset("unit-square", trajectories=3, points=5)
    with pytest.raises(ValueError, match="errors in degrees need check-in data"):
        evaluation.run_grid(dataset, ["tracs-c"], [4.0], units="degrees")
    with pytest.raises(ValueError, match="units must be 'metres' or 'degrees'"):
        evaluation.run_grid(dataset, ["tracs-c"], [4.0], units="miles")


def test_cli_units_degrees(tmp_path):
    import json

    from tracs.cli import main

    out = tmp_path / "s.json"
    assert main(["evaluate", "--dataset", "synthetic", "--methods", "tracs-c", "--epsilons", "4",
                 "--repetitions", "1", "--units", "degrees", "--format", "json", "-o", str(out),
                 "--no-progress"]) == 0
    [record] = json.loads(out.read_text())
    assert 0 < record["ae_mean"] < 1.0 and np.isfinite(record["ae_mean"])
