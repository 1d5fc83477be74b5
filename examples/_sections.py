"""The experiments of docs/results.md that follow the TraCS paper's sections 4.1 and 4.2 and its appendix."""

from __future__ import annotations

from _tables import Column, Config, Section, Table, difference_interval, pm, save_figure, summary_frame, value
from tracs._text import significant

EPS = (2.0, 4.0, 6.0, 8.0, 10.0)
LABELS = {"tracs-d": "TraCS-D", "tracs-c": "TraCS-C", "strawman": "Strawman", "planar-laplace": "T-Laplace",
          "atp": "ATP", "ngram": "NGram", "lsrr": "L-SRR", "lsrr-thresholds": "L-SRR thr."}
DISCRETE = ("atp", "ngram", "lsrr", "lsrr-thresholds", "tracs-d", "tracs-c")
QUERY = ("range_preservation", "hotspot_count_error")
#: the paper's Table 3, ms per location: (total, perturb)
TABLE3 = {"atp": (145.7, 125.8), "ngram": (100.9, 92.8), "lsrr": (6.2, 0.003), "tracs-d": (0.06, 0.018),
          "tracs-c": (0.05, 0.003)}


def grid_unit(spec, method, eps, reps, anchor="center", rounding=None, metrics=(), units="metres"):
    # the anchor is TraCS-D's only: other methods get one unit whatever the table's anchor
    return ("grid", spec, method, float(eps), reps, anchor if method == "tracs-d" else "center", rounding,
            tuple(metrics), units)


# ----------------------------------------------------------------------------- continuous regions

#: ε of the continuous spaces' denoised tables: the raw tables' and ε = 1
CONTINUOUS_DENOISED_EPS = (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
#: repetitions of the denoised tables (a fit of the prior per release: far costlier than the raw cells)
DENOISED_REPS = 3
#: methods of the continuous spaces' denoised tables; planar Laplace's columns run only with
#: ``Config.denoise_laplace`` (``--denoise-laplace``), else ``n/a``: the fit of its prior did not end
#: within 5 minutes per release of 1,000 points here
CONTINUOUS = ("tracs-d", "tracs-c", "strawman", "planar-laplace")
LAPLACE = "planar-laplace"


def not_run(result, row) -> str:
    return "n/a"


def ratio_text(result, row) -> str:
    return f"{result['ratio']:.2f}".rstrip("0").rstrip(".")


def repetitions_note(cfg: Config, name: str, default: int, rows) -> str:
    """The rows of a denoised table run with more repetitions than ``default`` (``Config.repetitions_at``)."""
    more = {e: n for e in rows if (n := cfg.repetitions(default, name, e)) != default}
    if not more:
        return ""
    return "; ".join(f"ε = {e:g}: {n} repetitions" for e, n in more.items()) + f" (the other rows: {default})."


def raw_and_denoised(block: str, unit, cfg: Config, note=None) -> Table:
    """A table of raw and denoised AE side by side, ``denoised / raw`` beside them; ``unit(method)(ε)``
    is a ``denoised-continuous`` unit (``_cells``); planar Laplace's columns are ``n/a`` unless
    ``cfg.denoise_laplace``."""
    columns = []
    for m in CONTINUOUS:
        run = m != LAPLACE or cfg.denoise_laplace
        u = unit(m) if run else (lambda e: None)
        columns += [Column(f"{LABELS[m]} raw", u, pm(key="raw") if run else not_run),
                    Column("denoised", u, pm(key="denoised") if run else not_run),
                    Column("ratio", u, ratio_text if run else not_run)]
    return Table(block, "ε", CONTINUOUS_DENOISED_EPS, columns, note=note)


def continuous(cfg: Config) -> Section:
    reps = cfg.pick(20, 3)
    size = cfg.pick((100, 100), (30, 30))
    specs = {"unit-square": ("region", "unit-square", *size), "2x10": ("region", "2x10", *size)}

    def col(region, method, anchor="corner", label=None):
        return Column(label or LABELS[method], lambda e: grid_unit(specs[region], method, e, reps, anchor), pm())

    tables = [Table(f"continuous-{region}", "ε", EPS,
                    [col(region, m) for m in ("tracs-d", "tracs-c", "strawman", "planar-laplace")])
              for region in specs]
    # independent points: nothing to smooth along a trajectory, each report is denoised on its own
    # (10 trajectories of 100 points per repetition)
    den_reps, den_size = cfg.pick(DENOISED_REPS, 2), cfg.pick((10, 100), (3, 20))

    def den(region):
        return lambda m: lambda e: ("denoised-continuous", ("region", region, *den_size), m, float(e),
                                    cfg.repetitions(den_reps, region, e), "corner", "metres", "point")
    denoised_tables = [raw_and_denoised(f"continuous-{region}-denoised", den(region), cfg,
                                        lambda results, region=region: repetitions_note(
                                            cfg, region, den_reps, CONTINUOUS_DENOISED_EPS))
                       for region in specs]
    tables.append(Table("continuous-anchor", "ε", EPS, [
        col("unit-square", "tracs-d", "corner", "[0,1)²: corner"),
        col("unit-square", "tracs-d", "center", "[0,1)²: centre"),
        col("2x10", "tracs-d", "corner", "[0,2)×[0,10): corner"),
        col("2x10", "tracs-d", "center", "[0,2)×[0,10): centre")]))

    def files(results, out):
        paths = []
        for table, region, name in zip(tables[:2], specs, ("[0,1)²", "[0,2)×[0,10)")):
            summary, runs = summary_frame(results, table)
            paths += save_figure(summary, runs, out, f"continuous_{region}_corner",
                                 title=f"S = {name}, TraCS-D anchor: corner", ylabel="average error (region units)")
        return paths

    return Section("continuous", "continuous regions", tables + denoised_tables, files)


# ----------------------------------------------------------------------------- direction only


def direction(cfg: Config) -> Section:
    eps = (0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    samples, reps = cfg.pick(100_000, 10_000), cfg.pick(10, 3)
    names = {"circular": "circular (optimal)", "krr-3": "3-sector k-RR", "krr-6": "6-sector k-RR",
             "krr-12": "12-sector k-RR"}

    def unit(e):
        return ("direction", float(e), samples, reps)

    def inside(result, row):
        hits = sum(abs(result[k]["mean"] - result[k]["exact"]) <= result[k]["half"] for k in names)
        return f"{hits} of {len(names)}"

    sampled = Table("direction", "ε", eps, [Column(label, unit, pm(key=key)) for key, label in names.items()]
                    + [Column("closed form inside ±", unit, inside)])
    exact = Table("direction-exact", "ε", eps,
                  [Column(label, unit, value("exact", key=key)) for key, label in names.items()])

    def files(results, out):
        frames = [summary_frame(results, sampled, [c], key=k) for c, k in zip(sampled.columns[:4], names)]
        import pandas as pd

        summary = pd.concat([f[0] for f in frames], ignore_index=True)
        runs = pd.concat([f[1] for f in frames], ignore_index=True)
        return save_figure(summary, runs, out, "direction", title=f"direction only: {samples:,} directions × "
                           f"{reps} runs", ylabel="mean circular error (rad)")

    return Section("direction", "direction only", [sampled, exact], files)


# ----------------------------------------------------------------------------- check-in data


def checkin_cells(cfg: Config):
    """``(reps, spec, unit)`` of the check-in tables: 3 repetitions (quick: 1, on 20 users) and
    ``unit(name, method)(ε)``, the grid unit of a cell."""
    reps = cfg.pick(3, 1)
    stop = cfg.pick(None, 20)
    spec = {name: ("checkins", name, 0, stop) for name in ("tky", "chi")}

    def unit(name, method):
        return lambda e: grid_unit(spec[name], method, e, reps, metrics=QUERY)
    return reps, spec, unit


def discrete(cfg: Config) -> Section:
    reps, spec, unit = checkin_cells(cfg)

    def both(methods, text):
        return [Column(f"{name.upper()}: {LABELS[m]}" if i == 0 else LABELS[m], unit(name, m), text)
                for name in ("tky", "chi") for i, m in enumerate(methods)]

    five = ("atp", "ngram", "lsrr", "tracs-d", "tracs-c")
    ae = [Table(f"discrete-{name}", "ε", EPS, [Column(LABELS[m], unit(name, m), pm()) for m in five])
          for name in ("tky", "chi")]
    normalised = Table("discrete-normalised", "ε", EPS, both(five, value("normalised")))

    def thresholds_text(result, row):
        return f"{pm()(result, row)} ({result['normalised']:.3f})"

    def loss(name):
        return Column("actual loss", lambda e: ("loss", name, "nominal", float(e)), value("value"))

    thr = []
    for name in ("tky", "chi"):
        thr += [Column(f"{name.upper()}: L-SRR", unit(name, "lsrr"), pm()),
                Column("L-SRR thresholds", unit(name, "lsrr-thresholds"), thresholds_text), loss(name),
                Column("TraCS-D", unit(name, "tracs-d"), value("mean")),
                Column("TraCS-C", unit(name, "tracs-c"), value("mean"))]
    thresholds = Table("lsrr-thresholds", "ε", EPS, thr)
    sizes = Table("lsrr-group-sizes", "data set", ("tky", "chi"), [
        Column(f"median n_{i + 1}", lambda n: ("loss", n, "sizes"),
               (lambda i: lambda r, row: f"{r['median'][i]:,}")(i)) for i in range(3)],
        row_text=str.upper, align="---")
    paper_loss = Table("lsrr-paper-loss", "stated ε", ("tky", "chi"), [
        Column(f"{e:g}", (lambda e: lambda n: ("loss", n, "paper", e))(e), value("value")) for e in EPS],
        row_text=lambda n: f"{n.upper()}: actual loss of the paper's L-SRR", align="---")
    data = Table("datasets", "data set", ("tky", "chi"), [
        Column("users", lambda n: ("data", n), value("users")),
        Column("check-ins", lambda n: ("data", n), value("points")),
        Column("venues", lambda n: ("data", n), value("venues")),
        Column("mean / longest trajectory", lambda n: ("data", n),
               lambda r, row: f"{r['mean_length']:.0f} / {r['max_length']:,}"),
        Column("hotspot venues (top 20 %)", lambda n: ("data", n), value("hotspots")),
        Column("public region (km)", lambda n: ("data", n),
               lambda r, row: f"{r['region_km'][0]:.1f} × {r['region_km'][1]:.1f}")],
        row_text=str.upper, align="---")
    query = [Table(f"query-{short}", "ε", EPS, both(DISCRETE, value(metric)))
             for short, metric in (("range", "range_preservation"), ("hotspot", "hotspot_count_error"))]

    def files(results, out):
        import pandas as pd

        paths = []
        for table, name in zip(ae, ("tky", "chi")):
            summary, runs = summary_frame(results, table)
            paths += save_figure(summary, runs, out, f"discrete_{name}", title=f"{name.upper()}: AE, outputs "
                                 "rounded to the venues", ylabel="average error (m)")
        rows = [{"dataset": name, "method": m, "epsilon": e,
                 **{k: results[unit(name, m)(e)][k] for k in QUERY}}
                for name in ("tky", "chi") for m in DISCRETE for e in EPS]
        paths.append(out / "paper_query_metrics.csv")
        pd.DataFrame(rows).to_csv(paths[-1], index=False, float_format="%.6g")
        return paths

    return Section("discrete", "check-in data", [data, *ae, normalised, thresholds, sizes, paper_loss, *query],
                   files)


# ----------------------------------------------------------------------------- denoised releases

#: ε of the denoised tables: the discrete table's and ε = 1
DENOISE_EPS = (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
#: baselines of the denoised tables: ATP under a surrogate law, the others under their exact law
BASELINES = ("atp", "ngram", "em", "lsrr")
#: the fixed rule of the targets: TraCS-D denoised given its trajectory, the POI nearest the posterior mean
TARGET = ("tracs-d", "mean")
NAMES = {**LABELS, "em": "EM"}


def denoised(cfg: Config) -> Section:
    """The discrete table's setting, every method raw and denoised over the venues given its trajectory
    (``tracs evaluate --denoise trajectory``: TraCS-D smoothed, EM, L-SRR and ATP with the revisit prior,
    ATP under a surrogate law, N-gram given the previous released venue) except TraCS-C, per report
    (``point``)."""
    reps, spec, _ = checkin_cells(cfg)

    def den(name, method):
        how = "point" if method == "tracs-c" else "trajectory"
        return lambda e: ("denoised", spec[name], method, float(e), cfg.repetitions(reps, name, e), how)

    def gap(name, label, denoised_baselines):
        """TraCS-D denoised (the fixed rule) against the best baseline: ``−12 %`` means 12 % below it."""
        def units(e):
            return [den(name, m)(e) for m in BASELINES] + [den(name, TARGET[0])(e)]

        def text(results, e):
            best_base = min(r["raw"]["mean"] for r in results[:len(BASELINES)])
            if denoised_baselines:
                best_base = min([best_base] + [r[TARGET[1]]["mean"] for r in results[:len(BASELINES)]])
            percent = round(100 * (results[-1][TARGET[1]]["mean"] / best_base - 1))
            return f"{percent:+d} %" if percent else "0 %"  # a gap that rounds to nothing has no sign
        return Column(label, units, text, many=True)

    def decided(name):
        """The rows with more repetitions: TraCS-D denoised (the fixed rule) minus the best raw baseline,
        with the 95 % Welch interval of the difference."""
        def note(results):
            lines = []
            for e in DENOISE_EPS:
                if (n := cfg.repetitions(reps, name, e)) == reps:
                    continue
                raws = {m: results[den(name, m)(e)]["raw"] for m in BASELINES}
                best = min(BASELINES, key=lambda m: raws[m]["mean"])
                target = results[den(name, TARGET[0])(e)][TARGET[1]]
                diff, low, high = difference_interval(target["runs"], raws[best]["runs"])
                verdict = ("below" if high < 0 else "above" if low > 0 else "not decided") + " at 95 %"
                lines.append(f"ε = {e:g}, {n} repetitions (the other rows: {reps}): TraCS-D denoised "
                             f"{target['mean']:,.0f} m, raw {NAMES[best]} {raws[best]['mean']:,.0f} m; "
                             f"difference {diff:+,.0f} m, 95 % interval {low:+,.0f} to {high:+,.0f} m "
                             f"(Welch): {verdict}.")
            return "\n".join(lines)
        return note

    tables, modes = [], []
    for name in ("tky", "chi"):
        columns = []
        for m in BASELINES + ("tracs-d", "tracs-c"):
            columns += [Column(NAMES[m], den(name, m), pm(key="raw")),
                        Column(f"{NAMES[m]} denoised", den(name, m), pm(key="mean"))]
        columns += [gap(name, "TraCS-D denoised vs best raw baseline", False),
                    gap(name, "vs best baseline, raw or denoised", True)]
        tables.append(Table(f"denoised-{name}", "ε", DENOISE_EPS, columns, note=decided(name)))
        modes += [Column(f"{name.upper()}: {NAMES[m]}" if i == 0 else NAMES[m], den(name, m), pm(key="mode"))
                  for i, m in enumerate(BASELINES + ("tracs-d", "tracs-c"))]
    tables.append(Table("denoised-modes", "ε", DENOISE_EPS, modes,
                        note=lambda results: " ".join(f"{n.upper()}: {text}" for n in ("tky", "chi")
                                                      if (text := repetitions_note(cfg, n, reps, DENOISE_EPS)))))
    return Section("denoised", "denoised releases", tables, None, extra_units=[])


def degrees(cfg: Config) -> Section:
    spec = ("checkins", "tky", 0, cfg.pick(None, 20))
    methods = ("tracs-d", "tracs-c")

    def unit(m):
        return grid_unit(spec, m, 2.0, 1, metrics=("ae_degrees",))

    table = Table("degrees", "ε = 2, TKY", methods, [
        Column("AE (m)", unit, value("mean")), Column("AE (degrees)", unit, value("ae_degrees"))],
        row_text=lambda m: LABELS[m], align="---")
    return Section("degrees", "errors in degrees", [table])


# ----------------------------------------------------------------------------- time


def timing(cfg: Config) -> Section:
    methods = ("atp", "ngram", "lsrr", "tracs-d", "tracs-c")
    repeat, stop = cfg.pick(3, 1), cfg.pick(None, 10)

    def table(name, paper):
        rows = [("total (here)", "total"), ("perturb (here)", "perturb")]
        cols = [Column(LABELS[m], (lambda m: lambda row: None if row[0].endswith("(paper)") else
                                   ("time", name, methods, 4.0, repeat, stop))(m),
                       (lambda m: lambda r, row: f"{TABLE3[m][row[1] == 'perturb']:g}" if r is None
                        else format_ms(r[m][row[1]]))(m)) for m in methods]
        if paper:
            rows += [("total (paper)", "total"), ("perturb (paper)", "perturb")]
        return Table(f"time-{name}", "ms per location", rows, cols, row_text=lambda row: row[0], align="---:")

    def files(results, out):
        import pandas as pd

        rows = [{"dataset": name, "method": m, "epsilon": 4.0, "total_ms": r[m]["total"],
                 "perturb_ms": r[m]["perturb"]}
                for name in ("tky", "chi") for r in [results[("time", name, methods, 4.0, repeat, stop)]]
                for m in methods]
        out.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(out / "time_table.csv", index=False, float_format="%.6g")
        return [out / "time_table.csv"]

    return Section("time", "time per location", [table("tky", True), table("chi", False)], files)


def format_ms(ms: float) -> str:
    return significant(ms)
