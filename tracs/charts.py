"""Line charts of evaluation results as SVG, with no plotting library.

``tracs evaluate`` and ``tracs demo`` draw their error-against-ε chart with this
module, so they need neither matplotlib nor a display: the SVG file opens in any
browser and scales without blurring.  :mod:`tracs.plots` draws the same chart with
matplotlib (the ``plots`` extra) for figures to edit or combine.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import numpy as np

from .errors import InputError

__all__ = ["error_vs_epsilon_svg", "write_svg", "nice_ticks"]

#: line colours, in order of first appearance (colour-blind-safe, Okabe and Ito)
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: marker shapes, in the same order
SHAPES = ("circle", "square", "triangle", "diamond", "down")
WIDTH, HEIGHT = 640, 420
LEFT, RIGHT, TOP, BOTTOM = 72, 20, 56, 52


def nice_ticks(low: float, high: float, count: int = 5) -> np.ndarray:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering ``[low, high]``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise InputError(f"cannot place ticks on [{low}, {high}]")
    if high <= low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return np.arange(first, last + 1) * step


def _number(value: float) -> str:
    return f"{value:,.10g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.2g}"


def _wrap(text: str, width: int = 78) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def _points(pairs) -> str:
    """``x,y x,y …``: an SVG ``points`` attribute."""
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in pairs)


def _marker(shape: str, x: float, y: float, colour: str, size: float = 4.0) -> str:
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{colour}"/>'
    if shape == "square":
        return (f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" height="{2 * size:.1f}" '
                f'fill="{colour}"/>')
    s = 1.25 * size
    points = {"triangle": [(x, y - s), (x + s, y + s * 0.8), (x - s, y + s * 0.8)],
              "down": [(x, y + s), (x + s, y - s * 0.8), (x - s, y - s * 0.8)],
              "diamond": [(x, y - s), (x + s, y), (x, y + s), (x - s, y)]}[shape]
    return f'<polygon points="{_points(points)}" fill="{colour}"/>'


def error_vs_epsilon_svg(summary, *, value: str = "ae_mean", low: str | None = "ae_ci_low",
                         high: str | None = "ae_ci_high", label: str = "label", title: str | None = None,
                         ylabel: str | None = None, logy: bool = False) -> str:
    """An error (default: mean AE) against ε, one line per method with its interval, as an SVG document.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`tracs.evaluation.summarise` (or any frame with ``epsilon``,
        ``value`` and, optionally, the ``low``/``high`` interval columns).
    value, low, high : str
        Column names of the plotted value and its interval (``None``: no interval).
    label : str
        Column naming the lines (``method`` when absent).
    title, ylabel : str, optional
    logy : bool
        Logarithmic error axis (every plotted value must be positive).

    Returns
    -------
    str
        A standalone SVG document (UTF-8 text).
    """
    if label not in summary.columns:
        label = "method"
    for column in ("epsilon", value, label):
        if column not in summary.columns:
            raise InputError(f"the summary has no column {column!r}")
    if not len(summary):
        raise InputError("the summary has no rows to draw")
    bands = bool(low and high and low in summary.columns and high in summary.columns)
    groups = []
    for name, group in summary.groupby(label, sort=False):
        group = group.sort_values("epsilon")
        x = group["epsilon"].to_numpy(dtype=float)
        y = group[value].to_numpy(dtype=float)
        lo = group[low].to_numpy(dtype=float) if bands else y
        hi = group[high].to_numpy(dtype=float) if bands else y
        groups.append((str(name), x, y, lo, hi))
    xs = np.concatenate([g[1] for g in groups])
    ys = np.concatenate([np.concatenate([g[2], g[3], g[4]]) for g in groups])
    ys = ys[np.isfinite(ys)]
    if not ys.size:
        raise InputError(f"column {value!r} holds no finite value to draw")
    if logy:
        if (ys <= 0).any():
            raise InputError("logy needs positive values; the summary holds values ≤ 0")
        ys = np.log10(ys)
    if logy:  # ticks at powers of ten, at least two
        y_ticks = np.arange(math.floor(ys.min()), max(math.ceil(ys.max()), math.floor(ys.min()) + 1) + 1,
                            dtype=float)
    else:
        y_ticks = nice_ticks(float(ys.min()), float(ys.max()))
    eps = np.unique(xs)
    x_ticks = eps if len(eps) <= 12 else nice_ticks(float(eps.min()), float(eps.max()))
    x0, x1 = float(min(x_ticks.min(), eps.min())), float(max(x_ticks.max(), eps.max()))
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    pad = 0.04 * (x1 - x0)
    x0, x1 = x0 - pad, x1 + pad
    y0, y1 = float(y_ticks[0]), float(y_ticks[-1])
    title_lines = _wrap(title) if title else []
    top = TOP + 16 * max(len(title_lines) - 1, 0)
    height = HEIGHT + top - TOP
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - top - BOTTOM

    def px(v):
        return LEFT + (np.asarray(v, dtype=float) - x0) / (x1 - x0) * plot_w

    def axis_y(a):  # a position on the y axis (log10 of the value when logy) -> screen y
        return top + (y1 - a) / (y1 - y0) * plot_h

    def py(v):
        v = np.asarray(v, dtype=float)
        return axis_y(np.log10(v) if logy else v)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>']
    for i, line in enumerate(title_lines):
        out.append(f'<text x="{WIDTH / 2:.1f}" y="{24 + 16 * i}" text-anchor="middle" font-size="14">'
                   f'{escape(line)}</text>')
    for t in y_ticks:
        y = axis_y(t)
        text = _number(10.0 ** t) if logy else _number(t)
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(text)}</text>')
    for t in x_ticks:
        x = float(px(t))
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 18}" text-anchor="middle">{t:g}</text>')
    out.append(f'<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    if ylabel is None:
        units = summary["units"].iloc[0] if "units" in summary.columns else ""
        ylabel = f"average error ({units})" if units else "average error"
    out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{height - 12}" text-anchor="middle">ε (per point)</text>')
    out.append(f'<text transform="translate(18 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(ylabel)}</text>')
    lx = LEFT + plot_w - 8 - (30 + 7 * max(len(g[0]) for g in groups))
    for i, (name, x, y, lo, hi) in enumerate(groups):
        colour, shape = COLOURS[i % len(COLOURS)], SHAPES[i % len(SHAPES)]
        keep = np.isfinite(y)
        if bands:
            band = keep & np.isfinite(lo) & np.isfinite(hi)
            ring = [*zip(px(x[band]), py(hi[band])), *zip(px(x[band])[::-1], py(lo[band])[::-1])]
            if ring:
                out.append(f'<polygon class="interval" points="{_points(ring)}" '
                           f'fill="{colour}" fill-opacity="0.2"/>')
        points = list(zip(px(x[keep]), py(y[keep])))
        out.append(f'<polyline class="series" data-label="{escape(name)}" fill="none" stroke="{colour}" '
                   f'stroke-width="1.8" points="{_points(points)}"/>')
        out.extend(_marker(shape, a, b, colour) for a, b in points)
        # the legend sits in the top-right corner, where errors (falling with ε) leave room
        ly = top + 14 + 18 * i
        out.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{ly:.1f}" y2="{ly:.1f}" stroke="{colour}" '
                   f'stroke-width="1.8"/>')
        out.append(_marker(shape, lx + 12, ly, colour))
        out.append(f'<text x="{lx + 30}" y="{ly + 4:.1f}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_svg(svg: str, path) -> Path:
    """Write the SVG document ``svg`` to ``path`` (UTF-8); the path."""
    path = Path(path)
    path.write_text(svg, encoding="utf-8")
    return path
