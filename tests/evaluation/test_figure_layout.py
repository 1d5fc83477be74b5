"""Figures keep their titles and labels inside the saved picture."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from tracs.plots import error_vs_epsilon, pyplot


@pytest.mark.parametrize("title", [
    "tky: 101 trajectories, 29,114 points, 5 rep.",
    "chi: 12,345 trajectories, 36,094 points, 20 repetitions, rounded to points of interest, seed 0",
])
def test_title_and_labels_are_not_clipped(title):
    summary = pd.DataFrame({"label": ["TraCS-D"] * 3 + ["planar Laplace"] * 3, "epsilon": [2, 4, 8] * 2,
                            "ae_mean": [3.0, 2.0, 1.0, 4.0, 3.0, 2.0], "ae_ci_low": [2.5, 1.5, 0.5, 3.5, 2.5, 1.5],
                            "ae_ci_high": [3.5, 2.5, 1.5, 4.5, 3.5, 2.5], "units": ["m"] * 6})
    fig = error_vs_epsilon(summary, title=title)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    frame = fig.bbox
    [ax] = fig.axes
    for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
        box = text.get_window_extent(renderer)
        assert box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1, (text.get_text(), box, frame)
        assert box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1, (text.get_text(), box, frame)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    """Without matplotlib (it is the optional `plots` extra) the error says what to install."""
    import sys

    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    summary = pd.DataFrame({"label": ["TraCS-D"], "epsilon": [1.0], "ae_mean": [1.0]})
    with pytest.raises(ImportError, match=r'tracs\.plots needs matplotlib.*pip install "tracs\[plots\]"'):
        error_vs_epsilon(summary, low=None, high=None)
    with pytest.raises(ImportError, match=r'tracs\.plots needs matplotlib.*pip install "tracs\[plots\]"'):
        pyplot()
