"""The ``denoised-continuous`` cells of docs/results.md (``examples/_cells.py``): raw and denoised AE
of the same releases of a continuous space, and their ratio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import _cells  # noqa: E402

SMALL = ("region", "unit-square", 10, 50)


@pytest.mark.parametrize("method", ["tracs-c", "strawman"])
def test_the_posterior_mean_is_below_the_raw_error(method):
    """Seed 0, 500 uniform points of the unit square, ε = 2: the posterior mean under the fitted prior
    lowers the AE (on the page's 1,000-point cells by about 10 % for TraCS-C, 20 % for the Strawman);
    tolerance: at most 0.97 of the raw AE."""
    unit = ("denoised-continuous", SMALL, method, 2.0, 1, "corner", "metres", "point")
    result = _cells.run_unit(unit, 0)
    assert result["raw"]["runs"] == pytest.approx(_cells.run_unit(("grid", SMALL, method, 2.0, 1, "corner", None,
                                                                    (), "metres"), 0)["runs"])
    assert result["ratio"] == pytest.approx(result["denoised"]["mean"] / result["raw"]["mean"])
    assert result["ratio"] <= 0.97
