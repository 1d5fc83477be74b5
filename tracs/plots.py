"""Matplotlib figures of evaluation results (imported lazily: ``import tracs`` never loads it).

Figures are built on :class:`matplotlib.figure.Figure` directly, without
``pyplot``, so they render on machines without a display and never open windows.
matplotlib is an optional dependency: ``pip install "tracs[plots]"``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import MissingExtraError

__all__ = ["error_vs_epsilon", "save_figure", "pyplot", "MARKERS"]

PLOTS_EXTRA = 'tracs.plots needs matplotlib, an optional dependency: pip install "tracs[plots]"'


def _matplotlib():
    """:mod:`matplotlib`, or an ImportError naming the extra that installs it."""
    try:
        import matplotlib
    except ImportError as error:
        raise MissingExtraError(PLOTS_EXTRA) from error
    return matplotlib


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (files only, no display needed).

    Raises
    ------
    ImportError
        Without matplotlib, naming the extra that installs it.
    """
    _matplotlib().use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure_class():
    """:class:`matplotlib.figure.Figure`, or an ImportError naming the extra that installs it."""
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure


#: one marker per method label, stable across figures
MARKERS = {"TraCS-D": "o", "TraCS-C": "s", "Strawman": "^", "planar Laplace": "v", "EM": "D",
           "NGram": "P", "L-SRR": "X", "ATP": "*", "TP": "h"}


def error_vs_epsilon(summary, *, value: str = "ae_mean", low: str | None = "ae_ci_low",
                     high: str | None = "ae_ci_high", label: str = "label", title: str | None = None,
                     ylabel: str | None = None, logy: bool = False, ax=None):
    """Plot an error (default: mean AE) against ε, one line per method, with its interval.

    The chart of :func:`tracs.charts.error_vs_epsilon_svg`, as a matplotlib figure
    to edit or combine.

    Parameters
    ----------
    summary, value, low, high, label, title, ylabel, logy
        As in :func:`tracs.charts.error_vs_epsilon_svg`.
    ax : matplotlib Axes, optional
        Draw into it; by default a new figure is made.

    Returns
    -------
    matplotlib.figure.Figure
    """
    Figure = _figure_class()
    if ax is None:
        fig = Figure(figsize=(5.5, 3.8), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    if label not in summary.columns:
        label = "method"
    for name, group in summary.groupby(label, sort=False):
        group = group.sort_values("epsilon")
        x = group["epsilon"].to_numpy(dtype=float)
        y = group[value].to_numpy(dtype=float)
        line, = ax.plot(x, y, marker=MARKERS.get(str(name), "o"), label=str(name), linewidth=1.5,
                        markersize=5)
        if low and high and low in group and high in group:
            ax.fill_between(x, group[low].to_numpy(dtype=float), group[high].to_numpy(dtype=float),
                            color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("ε (per point)")
    if ylabel is None:
        units = summary["units"].iloc[0] if "units" in summary.columns and len(summary) else ""
        ylabel = f"average error ({units})" if units else "average error"
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    eps = np.unique(summary["epsilon"].to_numpy(dtype=float))
    if len(eps) <= 12:
        ax.set_xticks(eps)
        ax.set_xticklabels([f"{e:g}" for e in eps])
    if title:
        ax.set_title(title, wrap=True)  # long titles wrap inside the figure instead of being cut
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, fontsize="small")
    return fig


def save_figure(fig, path) -> Path:
    """Write ``fig`` to ``path`` (format from the extension: .png, .svg, .pdf)."""
    path = Path(path)
    fig.savefig(path, dpi=150)
    return path
