"""The TraCS paper's Figures 5, 7 and 8 and its per-trajectory budget setting, beside its published numbers.

The published numbers are those of the result files of the authors' experiment code
(the same runs the paper plots).  Every figure writes ``docs/figures/tracs/<name>.csv``
(ours and the paper's, one row per line and ε), ``<name>_runs.csv`` and ``<name>.png``.

* Figure 5 — one straight trajectory, nine points along y = 1 in S = [0,2) × [0,10),
  TraCS-D against TraCS-C (and the Strawman), 1,000 runs;
* Figure 7 — TKY and CHI taken as continuous spaces (no rounding): TraCS-D, TraCS-C,
  Strawman, T-Laplace on the first 100 trajectories, 20 runs, errors in degrees;
* Figure 8 — a discrete grid location space on the unit square ((g + 1)² points,
  g = 10 and 60), one random trajectory of 100 grid points, 10 runs; TraCS rounded to
  the grid;
* per-trajectory budget — ε for the whole trajectory, split evenly over its points
  (TKY: trajectories 1–10, ε = 32 … 512; CHI: the first 100 trajectories of at least
  10 points, ε = 26 … 130).
"""

from __future__ import annotations

import pandas as pd

from _sections import CONTINUOUS_DENOISED_EPS, DENOISED_REPS, LABELS, grid_unit, raw_and_denoised, \
    repetitions_note
from _tables import Column, Config, Section, Table, constant, pm, save_figure, summary_frame
from tracs._text import significant

EPS = (2.0, 4.0, 6.0, 8.0, 10.0)

#: published values (result files of the authors' code), {method: {ε: value}}
PAPER_FIG5 = {"tracs-d": (1.451, 0.9789, 0.6843, 0.4993, 0.3591), "tracs-c": (3.087, 2.114, 1.363, 0.8499, 0.5509),
              "strawman": (1.258, 0.9478, 0.7061, 0.5471, 0.4318)}
PAPER_FIG7 = {
    "tky": {"tracs-d": (0.1366, 0.09284, 0.06908, 0.0529, 0.04237),
            "tracs-c": (0.1299, 0.09401, 0.06479, 0.04273, 0.02748),
            "strawman": (0.104, 0.08956, 0.07481, 0.06465, 0.05525),
            "planar-laplace": (0.2302, 0.183, 0.1479, 0.1218, 0.1027)},
    "chi": {"tracs-d": (0.2638, 0.1875, 0.1289, 0.08985, 0.06575),
            "tracs-c": (0.1733, 0.1245, 0.08304, 0.05343, 0.03366),
            "strawman": (0.1835, 0.1651, 0.1485, 0.1377, 0.1314),
            "planar-laplace": (0.2663, 0.1959, 0.151, 0.1242, 0.1048)}}
PAPER_FIG8 = {
    10: {"atp": (0.4202, 0.3973, 0.3823, 0.3588, 0.3584), "ngram": (0.4801, 0.4234, 0.3549, 0.3055, 0.2856),
         "lsrr-thresholds": (0.4984, 0.439, 0.4174, 0.4033, 0.3831),
         "tracs-d": (0.4613, 0.3535, 0.2531, 0.1914, 0.1628), "tracs-c": (0.4182, 0.3078, 0.2149, 0.1513, 0.1307)},
    60: {"atp": (0.3936, 0.369, 0.3523, 0.321, 0.3135), "ngram": (0.457, 0.4089, 0.3737, 0.3221, 0.2933),
         "lsrr-thresholds": (0.472, 0.4227, 0.3938, 0.3726, 0.3706),
         "tracs-d": (0.4633, 0.3373, 0.2375, 0.1636, 0.12), "tracs-c": (0.3969, 0.2877, 0.1856, 0.1265, 0.07204)}}
#: denoising of Figure 7's releases (TKY and CHI), one rule per method: each trajectory smoothed as a whole;
#: TraCS-D per point (its smoothing costs minutes per release here); planar Laplace per point (its only kind)
FIG7_DENOISE = {"tracs-c": "trajectory", "strawman": "trajectory", "tracs-d": "point", "planar-laplace": "point"}
TOTALS = {"tky": (32.0, 64.0, 128.0, 256.0, 512.0), "chi": (26.0, 52.0, 78.0, 104.0, 130.0)}
PAPER_TOTAL = {
    "tky": {"atp": (0.08458, 0.08349, 0.08032, 0.07292, 0.06892),
            "ngram": (0.1053, 0.101, 0.09655, 0.08868, 0.07396),
            "lsrr-thresholds": (0.1202, 0.1092, 0.1031, 0.09833, 0.09295),
            "tracs-d": (0.1659, 0.1485, 0.125, 0.09542, 0.05548),
            "tracs-c": (0.1519, 0.1372, 0.1201, 0.09224, 0.05402)},
    "chi": {"atp": (0.1165, 0.07801, 0.06148, 0.04973, 0.04506),
            "ngram": (0.08214, 0.06094, 0.04669, 0.04088, 0.03475),
            "lsrr-thresholds": (0.144, 0.1304, 0.1239, 0.1136, 0.1052),
            "tracs-d": (0.1042, 0.06281, 0.04421, 0.03535, 0.02820),
            "tracs-c": (0.08875, 0.05892, 0.04111, 0.0336, 0.02714)}}
#: (start, stop, min_points) of the trajectories of the per-trajectory budget setting
TOTAL_RANGE = {"tky": (0, 10, 1), "chi": (0, 100, 10)}


def _paper(values: dict, rows) -> dict:
    return {m: dict(zip(rows, v)) for m, v in values.items()}


def _paper_columns(values: dict, rows, order) -> list[Column]:
    table = _paper(values, rows)
    return [Column(f"paper: {LABELS[m]}" if i == 0 else LABELS[m], lambda row: None, constant(table[m]))
            for i, m in enumerate(m for m in order if m in table)]


def _files(tables, stem_of, title_of, ylabel, xlabel=None, paper=None):
    """CSV + PNG per table: our lines with their intervals, the paper's as separate lines."""
    def files(results, out):
        out = out / "tracs"
        paths = []
        for table in tables:
            ours = [c for c in table.columns if c.unit(table.rows[0]) is not None and "×" not in c.label
                    and c.unit(table.rows[0])[0] in ("grid", "total")]
            summary, runs = summary_frame(results, table, ours)
            if paper is not None:
                rows = [{"label": f"paper: {LABELS[m]}", "epsilon": e, "ae_mean": v, "ae_ci_low": v, "ae_ci_high": v}
                        for m, vals in paper(table).items() for e, v in zip(table.rows, vals)]
                summary = pd.concat([summary, pd.DataFrame(rows)], ignore_index=True)
            paths += save_figure(summary, runs, out, stem_of(table), title=title_of(table), ylabel=ylabel,
                                 xlabel=xlabel)
        return paths
    return files


def figure5(cfg: Config) -> Section:
    runs = cfg.pick(1000, 100)
    spec = ("line", runs)
    methods = ("tracs-d", "tracs-c", "strawman")
    def unit(m):
        return lambda e: grid_unit(spec, m, e, 1, "corner")

    # the authors' code averages TraCS-D's errors over its fixed start point too (error 0): 9/10 of the AE
    tenths = Column("TraCS-D × 9/10", unit("tracs-d"), lambda r, row: significant(0.9 * r["mean"]))
    table = Table("tracs-fig5", "ε", EPS, [Column(LABELS[m], unit(m), pm()) for m in methods] + [tenths]
                  + _paper_columns(PAPER_FIG5, EPS, methods))
    return Section("fig5", "TraCS Figure 5", [table], _files(
        [table], lambda t: "figure5", lambda t: f"Figure 5: 9 points on y = 1 in [0,2)×[0,10), {runs:,} runs",
        "average error (region units)", paper=lambda t: {m: PAPER_FIG5[m] for m in ("tracs-d", "tracs-c")}))


def figure7(cfg: Config) -> Section:
    reps, stop = cfg.pick(20, 2), cfg.pick(100, 20)
    methods = ("tracs-d", "tracs-c", "strawman", "planar-laplace")
    tables = []
    for name in ("tky", "chi"):
        spec = ("checkins", name, 0, stop)
        cols = [Column(LABELS[m], (lambda m, spec: lambda e: grid_unit(spec, m, e, reps, "corner", False,
                                                                       units="degrees"))(m, spec), pm())
                for m in methods]
        tables.append(Table(f"tracs-fig7-{name}", "ε", EPS, cols + _paper_columns(PAPER_FIG7[name], EPS, methods)))
    den_reps, den_stop = cfg.pick(DENOISED_REPS, 2), cfg.pick(stop, 2)

    def smoothed(name):
        return lambda m: lambda e: ("denoised-continuous", ("checkins", name, 0, den_stop), m, float(e),
                                    cfg.repetitions(den_reps, name, e), "corner", "degrees", FIG7_DENOISE[m])
    denoised = [raw_and_denoised(f"tracs-fig7-{name}-denoised", smoothed(name), cfg,
                                 lambda results, name=name: repetitions_note(cfg, name, den_reps,
                                                                             CONTINUOUS_DENOISED_EPS))
                for name in ("tky", "chi")]
    return Section("fig7", "TraCS Figure 7", tables + denoised, _files(
        tables, lambda t: f"figure7_{t.block[-3:]}",
        lambda t: f"Figure 7: {t.block[-3:].upper()} as a continuous space, first {stop} trajectories",
        "average error (degrees)", paper=lambda t: PAPER_FIG7[t.block[-3:]]))


def figure8(cfg: Config) -> Section:
    reps = cfg.pick(10, 2)
    methods = ("atp", "ngram", "lsrr-thresholds", "lsrr", "tracs-d", "tracs-c")
    tables = []
    for g in (10, 60):
        spec = ("lattice", g, 100)
        cols = [Column(LABELS[m], (lambda m, spec: lambda e: grid_unit(spec, m, e, reps, "corner"))(m, spec), pm())
                for m in methods]
        tables.append(Table(f"tracs-fig8-g{g}", "ε", EPS, cols + _paper_columns(PAPER_FIG8[g], EPS, methods)))
    return Section("fig8", "TraCS Figure 8", tables, _files(
        tables, lambda t: f"figure8_{t.block.split('-')[-1]}",
        lambda t: f"Figure 8: grid of ({t.block.split('-g')[-1]} + 1)² points on the unit square, 100-point trajectory",
        "average error (unit square)", paper=lambda t: PAPER_FIG8[int(t.block.split('-g')[-1])]))


def per_trajectory(cfg: Config) -> Section:
    reps = cfg.pick(5, 1)
    methods = ("atp", "ngram", "lsrr", "lsrr-thresholds", "tracs-d", "tracs-c")
    tables = []
    for name in ("tky", "chi"):
        spec = ("checkins", name, *TOTAL_RANGE[name])
        share = Column("mean ε per point", lambda t, spec=spec: ("lengths", spec),
                       lambda r, t: f"{t * r['mean_inverse']:.2f}")
        cols = [share] + [Column(LABELS[m], (lambda m, spec: lambda t: ("total", spec, m, float(t), reps,
                                                                         "corner"))(m, spec), pm())
                          for m in methods]
        tables.append(Table(f"tracs-total-{name}", "ε per trajectory", TOTALS[name],
                            cols + _paper_columns(PAPER_TOTAL[name], TOTALS[name], methods)))
    return Section("total", "budget per trajectory", tables, _files(
        tables, lambda t: f"per_trajectory_{t.block[-3:]}",
        lambda t: f"{t.block[-3:].upper()}: ε per trajectory, split evenly over its points",
        "average error (degrees)", xlabel="ε per trajectory", paper=lambda t: PAPER_TOTAL[t.block[-3:]]))
