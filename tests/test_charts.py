"""The SVG chart of ``tracs evaluate`` / ``tracs demo``: values where they belong, bad input refused."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pytest

from tracs.charts import error_vs_epsilon_svg, nice_ticks, write_svg

SVG = "{http://www.w3.org/2000/svg}"


def _summary(**overrides):
    frame = pd.DataFrame({"label": ["TraCS-D"] * 3 + ["planar Laplace"] * 3, "epsilon": [8, 2, 4] * 2,
                          "ae_mean": [100.0, 400.0, 200.0, 300.0, 900.0, 600.0],
                          "ae_ci_low": [90.0, 350.0, 180.0, 280.0, 850.0, 560.0],
                          "ae_ci_high": [110.0, 450.0, 220.0, 320.0, 950.0, 640.0], "units": ["m"] * 6})
    return frame.assign(**overrides)


def _points(element):
    return np.array([[float(v) for v in pair.split(",")] for pair in element.get("points").split()])


@pytest.mark.parametrize("low, high, expected", [
    (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (87.0, 953.0, [0, 200, 400, 600, 800, 1000]),
    (3.0, 3.0, [2.6, 2.8, 3.0, 3.2, 3.4]),
    (-12.0, 7.0, [-15, -10, -5, 0, 5, 10]),
])
def test_nice_ticks_cover_the_range_with_round_steps(low, high, expected):
    ticks = nice_ticks(low, high)
    np.testing.assert_allclose(ticks, expected, atol=1e-9)


def test_lines_follow_the_values_sorted_by_epsilon(tmp_path):
    path = write_svg(error_vs_epsilon_svg(_summary(), title="a title"), tmp_path / "chart.svg")
    root = ElementTree.parse(path).getroot()
    series = root.findall(f".//{SVG}polyline[@class='series']")
    assert [s.get("data-label") for s in series] == ["TraCS-D", "planar Laplace"]
    tracs_d, laplace = (_points(s) for s in series)
    # x grows with ε (2, 4, 8: sorted), equal ε at equal x; y (screen) grows as the error falls
    assert np.all(np.diff(tracs_d[:, 0]) > 0) and np.allclose(tracs_d[:, 0], laplace[:, 0])
    assert np.all(np.diff(tracs_d[:, 1]) > 0)
    # screen position is linear in the value: 400, 200, 100 m -> equal-ratio gaps 2:1
    gaps = np.diff(tracs_d[:, 1])
    assert gaps[0] == pytest.approx(2 * gaps[1], rel=0.02)
    # x is linear in ε: 2 -> 4 is half of 4 -> 8
    xgaps = np.diff(tracs_d[:, 0])
    assert xgaps[1] == pytest.approx(2 * xgaps[0], rel=0.02)
    assert len(root.findall(f".//{SVG}polygon[@class='interval']")) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "a title" in texts and "average error (m)" in texts and "ε (per point)" in texts
    assert {"2", "4", "8"} <= set(texts)


def test_long_title_wraps_and_labels_are_escaped():
    svg = error_vs_epsilon_svg(_summary(label=["<A&B>"] * 3 + ["C"] * 3), title="word " * 40)
    root = ElementTree.fromstring(svg)
    title_lines = [t for t in root.iter(f"{SVG}text") if t.get("font-size") == "14"]
    assert len(title_lines) >= 3 and all(len(t.text) <= 78 for t in title_lines)
    assert "&lt;A&amp;B&gt;" in svg


def test_without_interval_columns_no_band():
    svg = error_vs_epsilon_svg(_summary().drop(columns=["ae_ci_low", "ae_ci_high"]))
    assert 'class="interval"' not in svg and svg.count('class="series"') == 2


def test_log_axis_ticks_at_powers_of_ten():
    root = ElementTree.fromstring(error_vs_epsilon_svg(_summary(), logy=True))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"10", "100", "1,000"} <= set(texts)


@pytest.mark.parametrize("frame, kwargs, error, message", [
    (_summary().drop(columns=["epsilon"]), {}, ValueError, "the summary has no column 'epsilon'"),
    (_summary().iloc[:0], {}, ValueError, "the summary has no rows to draw"),
    (_summary(ae_mean=np.nan, ae_ci_low=np.nan, ae_ci_high=np.nan), {}, ValueError,
     "column 'ae_mean' holds no finite value to draw"),
    (_summary(ae_mean=0.0), {"logy": True}, ValueError, "logy needs positive values"),
    (_summary(), {"value": "median"}, ValueError, "the summary has no column 'median'"),
])
def test_bad_input_is_refused(frame, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        error_vs_epsilon_svg(frame, **kwargs)
