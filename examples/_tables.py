"""Tables of docs/results.md as data: which unit each cell comes from and how it is printed.

A :class:`Table` fills one generated block of the page.  Each cell names the unit
(see ``_cells``) it is computed from and a function printing it, so the whole page
or any single cell can be recomputed.  A :class:`Section` groups the tables of one
experiment with the CSV and PNG files it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from tracs._text import significant

from _reproduce import DOCS

PAGE = DOCS / "results.md"


@dataclass(frozen=True)
class Config:
    """What a run depends on: the root seed, the size (full or quick) and the switches of the denoised tables.

    ``denoise_laplace``: run planar Laplace's columns of the continuous spaces' denoised tables (else
    ``n/a``).  ``repetitions_at``: ``((data set or None, ε), repetitions)`` pairs, more repetitions for
    the rows of those ε in the denoised tables (data set None: every data set).
    """

    seed: int = 0
    quick: bool = False
    denoise_laplace: bool = False
    repetitions_at: tuple = ()

    def pick(self, full, quick):
        return quick if self.quick else full

    def repetitions(self, default: int, name: str, eps: float) -> int:
        """Repetitions of a denoised table's cell of data set ``name`` at ``eps``: ``default`` unless
        ``repetitions_at`` names that ε (for that data set, or for every one)."""
        chosen = dict(self.repetitions_at)
        return chosen.get((name, float(eps)), chosen.get((None, float(eps)), default))


@dataclass
class Column:
    """A column: its header, the unit of the cell in a row (None: a constant), and its text."""

    label: str
    unit: Callable[[object], tuple | None]
    text: Callable[[object, object], str]  # (unit result or None, row) -> cell text
    #: ``unit(row)`` is a list of units and ``text`` gets the list of their results
    many: bool = False


@dataclass
class Table:
    block: str
    corner: str
    rows: Sequence
    columns: list[Column]
    row_text: Callable[[object], str] = lambda row: f"{row:g}"
    align: str = "---:"
    #: ``note(results) -> str``: lines printed below the table (none when empty)
    note: Callable[[dict], str] | None = None

    def units(self) -> list[tuple]:
        return [v for row in self.rows for c in self.columns if (u := c.unit(row)) is not None
                for v in (u if c.many else [u])]

    def cell(self, results: dict, row, column: Column) -> str:
        unit = column.unit(row)
        if column.many:
            return column.text([results[u] for u in unit], row)
        return column.text(None if unit is None else results[unit], row)

    def render(self, results: dict) -> str:
        lines = ["| " + " | ".join([self.corner] + [c.label for c in self.columns]) + " |",
                 f"|{self.align}|" + f"{self.align}|" * len(self.columns)]
        for row in self.rows:
            cells = [self.cell(results, row, c) for c in self.columns]
            lines.append("| " + " | ".join([self.row_text(row)] + cells) + " |")
        note = self.note(results) if self.note is not None else ""
        return "\n".join(lines + (["", note] if note else []))


@dataclass
class Section:
    name: str
    title: str
    tables: list[Table]
    files: Callable[[dict, Path], list[Path]] | None = None
    extra_units: list[tuple] = field(default_factory=list)

    def units(self) -> list[tuple]:
        seen = {}
        for table in self.tables:
            for unit in table.units():
                seen.setdefault(unit, None)
        for unit in self.extra_units:
            seen.setdefault(unit, None)
        return list(seen)


# ----------------------------------------------------------------------------- cell printers


def pm(digits: int = 3, key: str | None = None):
    """``mean ± half-width`` of a unit result (or of its entry ``key``); ``refused`` for a refused run."""
    def text(result, row):
        r = result if key is None else result[key]
        if "error" in r:
            return "refused"
        return f"{significant(r['mean'], digits)} ± {significant(r['half'], max(digits - 1, 1))}"
    return text


def difference_interval(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """``mean(a) − mean(b)`` of independent repetitions and its two-sided Welch interval
    (Student-t with the Welch–Satterthwaite degrees of freedom); no spread: the difference itself."""
    from scipy import stats

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    diff = float(a.mean() - b.mean())
    va, vb = (a.var(ddof=1) / len(a) if len(a) > 1 else 0.0), (b.var(ddof=1) / len(b) if len(b) > 1 else 0.0)
    if va + vb == 0:
        return diff, diff, diff
    dof = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0.0) + (vb ** 2 / (len(b) - 1) if vb else 0.0))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof) * np.sqrt(va + vb))
    return diff, diff - half, diff + half


def value(name: str, digits: int = 3, key: str | None = None):
    """One number of a unit result, ``digits`` significant digits."""
    def text(result, row):
        r = result if key is None else result[key]
        return significant(r[name], digits)
    return text


def fixed(name: str, decimals: int = 2):
    def text(result, row):
        return f"{result[name]:.{decimals}f}"
    return text


def constant(values: dict, digits: int = 3):
    """A column of published numbers, ``{row: value}``."""
    def text(result, row):
        v = values.get(row)
        return "–" if v is None else significant(v, digits)
    return text


# ----------------------------------------------------------------------------- files


def summary_frame(results: dict, table: Table, columns: Sequence[Column] | None = None,
                  key: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary (one row per line and ε) and tidy runs of the ``mean ± half`` columns of a table."""
    rows, runs = [], []
    for column in columns if columns is not None else table.columns:
        for eps in table.rows:
            unit = column.unit(eps)
            if unit is None:
                continue
            r = results[unit] if key is None else results[unit][key]
            if "error" in r:
                continue
            rows.append({"label": column.label, "epsilon": eps, "ae_mean": r["mean"],
                         "ae_ci_low": r["mean"] - r["half"], "ae_ci_high": r["mean"] + r["half"]})
            runs += [{"label": column.label, "epsilon": eps, "repetition": i, "ae": v}
                     for i, v in enumerate(r.get("runs", []))]
    return pd.DataFrame(rows), pd.DataFrame(runs)


def save_figure(summary: pd.DataFrame, runs: pd.DataFrame | None, out_dir: Path, stem: str, *, title: str,
                ylabel: str, logy: bool = False, xlabel: str | None = None) -> list[Path]:
    """Write ``<stem>.csv``, ``<stem>_runs.csv`` (when given) and ``<stem>.png``."""
    from tracs.plots import error_vs_epsilon, save_figure as save_png

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.csv"]
    summary.to_csv(paths[0], index=False, float_format="%.6g")
    if runs is not None and len(runs):
        paths.append(out_dir / f"{stem}_runs.csv")
        runs.to_csv(paths[-1], index=False, float_format="%.6g")
    fig = error_vs_epsilon(summary, title=title, ylabel=ylabel, logy=logy)
    ax = fig.axes[0]
    colours = {line.get_label(): line.get_color() for line in ax.lines}
    for line in ax.lines:  # published values: dashed, in the colour of our line of the same method
        label = line.get_label()
        if label.startswith("paper: "):
            line.set(linestyle="--", marker="x", color=colours.get(label[len("paper: "):], line.get_color()))
    if any(line.get_label().startswith("paper: ") for line in ax.lines):
        ax.legend(frameon=False, fontsize="small")
    if xlabel:
        fig.axes[0].set_xlabel(xlabel)
    paths.append(save_png(fig, out_dir / f"{stem}.png"))
    return paths
