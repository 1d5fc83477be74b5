"""Figures of the optimal piecewise mechanism paper (OGPM), from tracs' mechanisms and estimators.

Zheng, Mishra & Hu, "Optimal piecewise-based mechanism for collecting bounded numerical
data under local differential privacy", PETS 2025, Section 7.1 and Appendix B.7:
Figures 8–15 and 20 (expected errors), and Section 7.2: Figures 16–17 (distribution and
mean estimation on stand-in data sets, :mod:`_ogpm_estimation`, seeded).  Figures 8–15
and 20 are exact: every number is an expected error ``Err(x) = E[L(Y, x)]``
(no sampling): the mechanisms' ``expected_error(x, p)`` / ``worst_case_error(p)`` with
``p = 1`` for ``L = |y − x|`` and ``p = 2`` for ``|y − x|²``.  Whole-domain error is
``Err(x)`` on an even grid of inputs over the domain (the paper plots this curve; its
"average error across the whole domain" is the mean of the curve).  Worst-case error is
``max_x Err(x)``.

In the circular domain the paper "flattens" ``[0, 2π)`` for PM-C and SW-C (they are
applied to the interval ``[0, 2π]``).  Its stated ratios match these peers' errors
measured with the interval distance ``|y − x|`` (rows ``PM-C``, ``SW-C``); the rows
``PM-C (circ)`` / ``SW-C (circ)`` measure them with the circular distance
``min(|y − x|, 2π − |y − x|)`` instead, integrated against the mechanism's exact cdf
on a fine output grid (midpoint rule on exact cell masses).

"OGPM" is the GPM optimal for the figure's loss: ``OptimalClassical`` /
``OptimalCircular`` with ``loss="absolute"`` for ``|y − x|`` and ``loss="square"`` for
``|y − x|²`` (the paper's stated ratios for its ``|y − x|²`` figures are met by the
square-error optimum, not by Theorem 3.7's closed form).  The ``|y − x|²`` panels of
Figures 9–11 also carry ``OGPM (abs-opt)``, the ``|y − x|``-optimal mechanism scored by
``|y − x|²``, for comparison.

The paper's text does not state the ε grid of its worst-case figures (9, 11, 14, 15);
we use ε = 1, 1.25, …, 8: of the grids tried (``grid_fit.csv``, full run only) it is the
one that meets the six stated worst-case ratios of Figures 9 and 11 best (all within
0.1 point).

Writes ``figNN.csv`` (tidy: figure, panel, mechanism, epsilon, p, x,
error) with ``figNN.png``, ``summary.csv`` (the paper's stated ratios beside ours) and
``claims.csv`` (the paper's qualitative statements, each checked: holds true/false);
``fig16.csv``/``fig17.csv`` (mean error and standard error over seeded runs per data set,
collector, mechanism and ε) with their figures and ``estimation_summary.csv``, into
``output/reproduce_ogpm`` or ``--output-dir``; only ``--write-docs`` (a full run) replaces
the published files in ``docs/figures/ogpm``.

    python examples/reproduce_ogpm.py --quick    # 41 inputs, ε step 1.75; 4/1 runs at 3 budgets
    python examples/reproduce_ogpm.py            # 201 inputs per curve, ε step 0.25; 100/10 runs
    python examples/reproduce_ogpm.py --write-docs   # the full run, published in docs/figures/ogpm
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tracs.mechanisms import (
    BoundedLaplace,
    Compressed,
    Laplace,
    OptimalCircular,
    OptimalClassical,
    PiecewiseMechanism,
    Purkayastha,
    SquareWave,
    Staircase,
    Truncated,
    staircase_square_gamma,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _ogpm_estimation as estimation  # noqa: E402
from _reproduce import add_output_options, parse_output_args  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "figures" / "ogpm"
TAU = 2 * math.pi
CIRC = " (circ)"

# Mechanisms the paper compares that tracs does not ship (written into the CSVs as rows
# with an empty error, never invented): none since the square-error optimum is shipped.
MISSING: dict[str, list[str]] = {}
ABS = "OGPM (abs-opt)"
#: the staircase with the step fraction that minimises E[Z²] (Geng & Viswanath)
STAIR2 = "Staircase (x²)"


def loss_of(p: int) -> str:
    """The loss the OGPM of a figure with error power ``p`` is optimal for."""
    return "square" if p == 2 else "absolute"


def classical(name: str, eps: float, low: float = 0.0, high: float = 1.0, p: int = 1):
    """The classical-domain mechanisms by the paper's names, on ``[low, high]``.

    ``OGPM`` is optimal for the error power ``p``; ``OGPM (abs-opt)`` is always the
    ``|y − x|``-optimal one.
    """
    table = {
        "OGPM": lambda: OptimalClassical(epsilon=eps, low=low, high=high, loss=loss_of(p)),
        ABS: lambda: OptimalClassical(epsilon=eps, low=low, high=high),
        "PM-C": lambda: Compressed(PiecewiseMechanism(epsilon=eps, low=low, high=high)),
        "SW-C": lambda: Compressed(SquareWave(epsilon=eps, low=low, high=high)),
        "PM": lambda: PiecewiseMechanism(epsilon=eps, low=low, high=high),
        "SW": lambda: SquareWave(epsilon=eps, low=low, high=high),
        "T-PM": lambda: Truncated(PiecewiseMechanism(epsilon=eps, low=low, high=high)),
        "T-SW": lambda: Truncated(SquareWave(epsilon=eps, low=low, high=high)),
        "Staircase": lambda: Staircase(epsilon=eps, low=low, high=high),
        STAIR2: lambda: Staircase(epsilon=eps, low=low, high=high, gamma=staircase_square_gamma(eps)),
        "T-" + STAIR2: lambda: Truncated(Staircase(epsilon=eps, low=low, high=high,
                                                  gamma=staircase_square_gamma(eps))),
        "T-Laplace": lambda: Truncated(Laplace(epsilon=eps, low=low, high=high)),
        "B-Laplace": lambda: BoundedLaplace(epsilon=eps, low=low, high=high),
    }
    return table[name]()


def circular_error(name: str, eps: float, x: np.ndarray, p: int, cells: int) -> np.ndarray:
    """``E[d(Y, x)^p]`` with ``d`` the circular distance on ``[0, 2π)``.

    OGPM (``OptimalCircular``) and Purkayastha measure it themselves.  PM-C and SW-C
    on the flattened interval ``[0, 2π]`` report their own ``|y − x|`` (what the
    paper's numbers match); ``PM-C (circ)`` / ``SW-C (circ)`` integrate the circular
    distance against their exact cdf.
    """
    if name == "OGPM":
        return OptimalCircular(epsilon=eps, loss=loss_of(p)).expected_error(x, p)
    if name == ABS:
        return OptimalCircular(epsilon=eps).expected_error(x, p)
    if name == "Purkayastha":
        return Purkayastha(epsilon=eps).expected_error(x, p)
    if not name.endswith(CIRC):
        return classical(name, eps, 0.0, TAU).expected_error(x, p)
    m = classical(name.removesuffix(CIRC), eps, 0.0, TAU)
    edges = np.linspace(0.0, TAU, cells + 1)
    mid = 0.5 * (edges[:-1] + edges[1:])
    mass = np.diff(m.cdf(edges[None, :], x[:, None]), axis=1)
    gap = np.abs(mid[None, :] - x[:, None])
    dist = np.minimum(gap, TAU - gap)
    return (mass * dist**p).sum(axis=1)


def _rows(fig, panel, mech, eps, p, x, err):
    return pd.DataFrame({"figure": fig, "panel": panel, "mechanism": mech, "epsilon": eps,
                         "p": p, "x": x, "error": err})


def whole_classical(fig, mechs, epsilons, p, n, low=0.0, high=1.0, panel=None):
    frames = []
    for eps in epsilons:
        for name in mechs:
            lo, hi = (-1.0, 1.0) if name in {"PM", "T-PM"} or (panel == "a" and name == "OGPM") else (low, high)
            xs = np.linspace(lo, hi, n)
            err = classical(name, eps, lo, hi, p).expected_error(xs, p)
            frames.append(_rows(fig, panel or f"eps={eps:g}", name, eps, p, xs, err))
    return pd.concat(frames, ignore_index=True)


def worst_classical(fig, mechs, epsilons, powers):
    frames = []
    for p in powers:
        for name in mechs + ([ABS] if p == 2 and fig == "fig09" else []):
            err = [classical(name, e, p=p).worst_case_error(p) for e in epsilons]
            frames.append(_rows(fig, f"p={p}", name, epsilons, p, np.nan, err))
    return pd.concat(frames, ignore_index=True)


def whole_circular(fig, mechs, epsilons, p, n, cells):
    x = np.linspace(0.0, TAU, n, endpoint=False)
    frames = [_rows(fig, f"eps={e:g}", name, e, p, x, circular_error(name, e, x, p, cells))
              for e in epsilons for name in mechs]
    return pd.concat(frames, ignore_index=True)


def worst_circular(fig, mechs, epsilons, powers, n, cells):
    # The grid contains x = π, where the paper proves the circular worst case lies.
    x = np.linspace(0.0, TAU, n, endpoint=False)
    frames = []
    for p in powers:
        for name in mechs + ([ABS] if p == 2 and fig == "fig11" else []):
            err = [float(circular_error(name, e, x, p, cells).max()) for e in epsilons]
            frames.append(_rows(fig, f"p={p}", name, epsilons, p, np.nan, err))
    return pd.concat(frames, ignore_index=True)


def build(quick: bool) -> dict[str, pd.DataFrame]:
    """All figures' tidy tables (exact errors), keyed by ``figNN``."""
    n = 41 if quick else 201
    n_circ = 40 if quick else 200          # even, so x = π is on the grid
    cells = 2_000 if quick else 20_000
    grid = list(np.arange(1.0, 8.01, 1.75 if quick else 0.25).round(2))
    peers = ["OGPM", "PM-C", "SW-C"]
    flat = peers + ["PM-C" + CIRC, "SW-C" + CIRC]
    figs = {
        "fig08": whole_classical("fig08", peers, [2.0, 4.0], 1, n),
        "fig09": worst_classical("fig09", peers, grid, (1, 2)),
        "fig10": whole_circular("fig10", flat + [ABS], [2.0, 4.0], 2, n_circ, cells),
        "fig11": worst_circular("fig11", flat, grid, (1, 2), n_circ, cells),
        "fig12": pd.concat([
            whole_classical("fig12", ["OGPM", "PM", "T-PM"], [2.0], 2, n, panel="a"),
            whole_classical("fig12", ["OGPM", "SW", "T-SW"], [2.0], 2, n, panel="b"),
        ], ignore_index=True),
        "fig13": whole_classical("fig13", ["OGPM", "Staircase", "T-Laplace", "B-Laplace"],
                                 [2.0, 4.0], 1, n),
        "fig14": pd.concat([
            worst_classical("fig14", ["OGPM", "Staircase", "T-Laplace", "B-Laplace"], grid, (1,)),
            # the square-error comparison (extension): x²-optimal staircase, also truncated
            worst_classical("fig14", ["OGPM", STAIR2, "T-" + STAIR2, "T-Laplace", "B-Laplace"], grid, (2,)),
        ], ignore_index=True),
        "fig15": worst_circular("fig15", ["OGPM", "Purkayastha"], grid, (1, 2), n_circ, cells),
        "fig20": whole_classical("fig20", peers, [0.4, 0.8], 1, n),
    }
    return figs


#: the six worst-case ratios the paper states (Figures 9b, 11a, 11b: vs PM-C, SW-C), in %
STATED_WORST = (89.9, 61.7, 50.0, 41.6, 22.4, 15.4)


def grid_fit(starts=(0.5, 1.0), stops=(8.0, 10.0), steps=(0.25, 0.5, 1.0)) -> pd.DataFrame:
    """Our six worst-case ratios on candidate ε grids, best match to :data:`STATED_WORST` first.

    Every ratio is mean(OGPM worst case) / mean(peer worst case) over the grid, with the
    OGPM optimal for the figure's loss.
    """
    cache: dict[float, list[float]] = {}

    def errors(e):
        if e not in cache:
            cache[e] = [classical("OGPM", e, p=2).worst_case_error(2),
                        classical("PM-C", e).worst_case_error(2), classical("SW-C", e).worst_case_error(2)]
            for p in (1, 2):
                cache[e] += [OptimalCircular(epsilon=e, loss=loss_of(p)).worst_case_error(p),
                             classical("PM-C", e, 0.0, TAU).worst_case_error(p),
                             classical("SW-C", e, 0.0, TAU).worst_case_error(p)]
        return cache[e]

    rows = []
    for start in starts:
        for stop in stops:
            for step in steps:
                grid = np.arange(start, stop + 1e-9, step).round(4)
                tot = np.sum([errors(float(e)) for e in grid], axis=0)
                ours = 100 * np.array([tot[0] / tot[1], tot[0] / tot[2], tot[3] / tot[4], tot[3] / tot[5],
                                       tot[6] / tot[7], tot[6] / tot[8]])
                rows.append({"grid": f"{start:g}:{stop:g}:{step:g}",
                             **{f"stated_{i}": v for i, v in enumerate(STATED_WORST)},
                             **{f"ours_{i}": round(v, 2) for i, v in enumerate(ours)},
                             "max_abs_diff": round(float(np.max(np.abs(ours - STATED_WORST))), 2)})
    return pd.DataFrame(rows).sort_values("max_abs_diff", ignore_index=True)


def _mean(df, mech, **where):
    sel = df["mechanism"] == mech
    for k, v in where.items():
        sel &= df[k] == v
    return float(df.loc[sel, "error"].mean())


def summary(figs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's stated statistics beside ours (ratio of mean errors, in %)."""
    rows = []

    def ratio(fig, vs, paper, who="OGPM", **where):
        df = figs[fig]
        ours = 100 * _mean(df, who, **where) / _mean(df, vs, **where)
        what = ", ".join(f"{k}={v}" for k, v in where.items())
        rows.append({"figure": fig, "statistic": f"mean {who} / mean {vs} (%), {what}",
                     "paper": paper, "ours": round(ours, 1)})

    for eps, a, b in [(2.0, 94.2, 92.3), (4.0, 90.5, 74.7)]:
        ratio("fig08", "PM-C", a, epsilon=eps)
        ratio("fig08", "SW-C", b, epsilon=eps)
    for who in ("OGPM", ABS):  # the square-error optimum, then Theorem 3.7's mechanism
        ratio("fig09", "PM-C", 89.9, who=who, p=2)
        ratio("fig09", "SW-C", 61.7, who=who, p=2)
    for who in ("OGPM", ABS):
        for eps, a, b in [(2.0, 47.5, 43.0), (4.0, 41.3, 24.6)]:
            ratio("fig10", "PM-C", a, who=who, epsilon=eps)
            ratio("fig10", "SW-C", b, who=who, epsilon=eps)
    for p, a, b in [(1, 50.0, 41.6), (2, 22.4, 15.4)]:
        ratio("fig11", "PM-C", a, p=p)
        ratio("fig11", "SW-C", b, p=p)
    ratio("fig11", "PM-C", 22.4, who=ABS, p=2)
    ratio("fig11", "SW-C", 15.4, who=ABS, p=2)
    f20 = figs["fig20"]
    for eps, paper in [(0.4, 0.008), (0.8, 0.015)]:
        sub = f20[f20["epsilon"] == eps].pivot_table(index="x", columns="mechanism", values="error")
        gap = float(np.maximum(sub["PM-C"] - sub["OGPM"], sub["SW-C"] - sub["OGPM"]).max())
        rows.append({"figure": "fig20", "statistic": f"max_x (peer − OGPM), epsilon={eps}",
                     "paper": paper, "ours": round(gap, 4)})
    for fig, names in MISSING.items():
        for name in names:
            rows.append({"figure": fig, "statistic": f"{name}: not shipped by tracs",
                         "paper": np.nan, "ours": np.nan})
    return pd.DataFrame(rows)


def _curve(df, mech, **where):
    sel = df["mechanism"] == mech
    for k, v in where.items():
        sel &= df[k] == v
    return df.loc[sel].sort_values("x" if df.loc[sel, "x"].notna().any() else "epsilon")


def claims(figs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's qualitative statements, each checked on the exact errors."""
    rows = []

    def claim(fig, text, holds, detail=""):
        rows.append({"figure": fig, "claim": text, "holds": bool(holds), "detail": detail})

    def lowest(fig, where, tol=1e-9, circ=False, skip=()):
        df = figs[fig]
        df = df[df["mechanism"].str.endswith(CIRC) | (df["mechanism"] == "OGPM")] if circ \
            else df[~df["mechanism"].str.endswith(CIRC)]
        df = df[~df["mechanism"].isin(skip)]
        for key, sub in df.groupby(where):
            ogpm = sub[sub["mechanism"] == "OGPM"].sort_values(["x", "epsilon"])["error"].to_numpy()
            for name in set(sub["mechanism"]) - {"OGPM"}:
                other = sub[sub["mechanism"] == name].sort_values(["x", "epsilon"])["error"].to_numpy()
                if len(other) == len(ogpm) and not (ogpm <= other * (1 + tol)).all():
                    share = float((ogpm <= other * (1 + tol)).mean())
                    return False, f"{key}: OGPM ≤ {name} at {share:.1%} of the grid"
        return True, ""

    for fig, where, text in [
        ("fig08", "panel", "OGPM has the lowest error across all x"),
        ("fig09", "panel", "OGPM's worst-case error is the lowest across all ε (both metrics)"),
        ("fig10", "panel", "OGPM has the lowest error across all x"),
        ("fig11", "panel", "OGPM has the lowest worst-case error across all ε"),
        ("fig12", "panel", "OGPM achieves the lowest error across all x"),
        ("fig13", "panel", "OGPM generally achieves lower errors than Staircase, T-Laplace, B-Laplace (checked: at every x)"),
        ("fig14", "panel", "OGPM achieves the lowest worst-case error across all ε (p=2: vs the x²-optimal staircase)"),
        ("fig15", "panel", "OGPM consistently outperforms the Purkayastha mechanism"),
        ("fig20", "panel", "OGPM has the lowest error across all x at ε = 0.4, 0.8"),
    ]:
        claim(fig, text, *lowest(fig, where, skip=("T-" + STAIR2,)))
    f14 = figs["fig14"]
    f14 = f14[f14["p"] == 2]
    ogpm2 = _curve(f14, "OGPM")["error"].to_numpy()
    cut2 = _curve(f14, "T-" + STAIR2)["error"].to_numpy()
    eps2 = _curve(f14, "OGPM")["epsilon"].to_numpy()
    claim("fig14", "(not in the paper) p=2: OGPM below the truncated x²-optimal staircase at every ε",
          (ogpm2 <= cut2).all(), "truncated staircase lower at ε = " + ", ".join(f"{e:g}" for e in eps2[cut2 < ogpm2]))
    for fig in ("fig10", "fig11"):
        claim(fig, "(not in the paper) OGPM also lowest against PM-C/SW-C scored by circular distance (rel. tol. 1e-6, quadrature)",
              *lowest(fig, "panel", tol=1e-6, circ=True))

    f12 = figs["fig12"]
    gain = {}
    for panel, m in [("a", "PM"), ("b", "SW")]:
        raw = _curve(f12, m, panel=panel)["error"].mean()
        cut = _curve(f12, "T-" + m, panel=panel)["error"].mean()
        gain[m] = 1 - cut / raw
    claim("fig12", "T-PM reduces PM's error more than T-SW reduces SW's", gain["PM"] > gain["SW"],
          f"mean reduction PM {gain['PM']:.1%}, SW {gain['SW']:.1%}")

    f13 = figs["fig13"]
    for eps in (2.0, 4.0):
        st = _curve(f13, "Staircase", epsilon=eps)["error"].to_numpy()
        claim("fig13", f"Staircase error is constant in x (ε={eps:g})", np.ptp(st) <= 1e-9 * st.max())
        tl = _curve(f13, "T-Laplace", epsilon=eps)
        mid = tl["error"].to_numpy()[len(tl) // 2]
        claim("fig13", f"T-Laplace: maximum at the midpoint, minimum at the endpoints (ε={eps:g})",
              np.isclose(mid, tl["error"].max()) and np.isclose(tl["error"].iloc[0], tl["error"].min()))
        bl = _curve(f13, "B-Laplace", epsilon=eps)["error"].to_numpy()
        at_mid = bl[len(bl) // 2]
        if eps == 2.0:
            text, holds = "B-Laplace: error decreases with x to its minimum at the midpoint", np.isclose(at_mid, bl.min())
        else:
            text, holds = "B-Laplace: error increases with x and peaks at the midpoint", np.isclose(at_mid, bl.max())
        claim("fig13", f"{text} (ε={eps:g})", holds,
              f"x=0: {bl[0]:.4g}, midpoint: {at_mid:.4g}, min {bl.min():.4g}, max {bl.max():.4g}")

    f14 = figs["fig14"]
    f14 = f14[f14["p"] == 1]
    og = _curve(f14, "OGPM")["error"].to_numpy()
    stc = _curve(f14, "Staircase")["error"].to_numpy()
    claim("fig14", "Staircase approaches OGPM at large ε", stc[-1] / og[-1] < stc[0] / og[0],
          f"Staircase/OGPM at smallest ε {stc[0] / og[0]:.3g}, at largest ε {stc[-1] / og[-1]:.3g}")
    lap = _curve(f14, "T-Laplace")["error"].to_numpy()
    claim("fig14", "For small ε, T-Laplace has a significant advantage over Staircase",
          lap[0] < stc[0], f"smallest ε: T-Laplace {lap[0]:.4g}, Staircase {stc[0]:.4g}")
    return pd.DataFrame(rows)


def plot(fig_id: str, df: pd.DataFrame, path: Path) -> None:
    from tracs.plots import pyplot

    plt = pyplot()

    panels = list(dict.fromkeys(df["panel"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        sub = df[df["panel"] == panel]
        worst = sub["x"].isna().all()
        for name, g in sub.groupby("mechanism", sort=False):
            ax.plot(g["epsilon"] if worst else g["x"], g["error"], label=name,
                    marker="o" if worst else None, ms=3)
        p = int(sub["p"].iloc[0])
        ax.set_xlabel("ε" if worst else "x")
        ax.set_ylabel(("worst-case " if worst else "expected ") + ("|y − x|" if p == 1 else "|y − x|²"))
        if worst:
            ax.set_yscale("log")
        ax.set_title(f"{fig_id} {panel}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict[str, pd.DataFrame]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="coarse grids (seconds)")
    add_output_options(ap, published=OUT)
    ap.add_argument("--no-plots", action="store_true", help="CSV files only")
    ap.add_argument("--repetitions", type=int, default=None,
                    help="Figures 16–17: runs scored on the raw reports (default 100, --quick 4)")
    ap.add_argument("--estimate-repetitions", type=int, default=None,
                    help="Figures 16–17: runs also scored by tracs.estimate (default 10, --quick 1)")
    ap.add_argument("--seed", type=int, default=0, help="Figures 16–17: root seed (default 0)")
    args = parse_output_args(ap, argv, script="reproduce_ogpm")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    figs = build(args.quick)
    for fig_id, df in figs.items():
        for name in MISSING.get(fig_id, []):
            df = pd.concat([df, _rows(fig_id, "missing", name, np.nan, np.nan, np.nan, [np.nan])],
                           ignore_index=True)
        df.to_csv(args.out_dir / f"{fig_id}.csv", index=False, float_format="%.6g")
        if not args.no_plots:
            plot(fig_id, df.dropna(subset=["error"]), args.out_dir / f"{fig_id}.png")
    table = summary(figs)
    table.to_csv(args.out_dir / "summary.csv", index=False)
    checked = claims(figs)
    checked.to_csv(args.out_dir / "claims.csv", index=False)
    if not args.quick:
        fit = grid_fit()
        fit.to_csv(args.out_dir / "grid_fit.csv", index=False)
        print(fit.head(4).to_string(index=False))
        print()
    print(table.to_string(index=False))
    print()
    print(checked.to_string(index=False))
    figs.update(estimation_figures(args))
    return figs


def estimation_figures(args) -> dict[str, pd.DataFrame]:
    """Figures 16–17 (seeded runs on the stand-in data sets) and their summary."""
    epsilons = [1.0, 4.0, 8.0] if args.quick else [float(e) for e in range(1, 9)]
    reps = args.repetitions or (4 if args.quick else 100)
    est = min(reps, args.estimate_repetitions or (1 if args.quick else 10))
    runs = estimation.run(epsilons, reps, est, seed=args.seed)
    figs = estimation.tables(runs)
    for fig_id, df in figs.items():
        df.to_csv(args.out_dir / f"{fig_id}.csv", index=False, float_format="%.6g")
        if not args.no_plots:
            estimation.plot(fig_id, df, args.out_dir / f"{fig_id}.png")
    table = estimation.summary(figs)
    table.to_csv(args.out_dir / "estimation_summary.csv", index=False)
    print()
    print(table.to_string(index=False))
    return figs


if __name__ == "__main__":
    main()
