"""Figures 16–17 of the OGPM paper: distribution and mean estimation from LDP reports.

Zheng, Mishra & Hu (PETS 2025), Section 7.2: 6,159 MotionSense values (Accelerometer,
normalised to [0, 1], for the classical domain; Attitude angles for the circle) are
released by OGPM, PM-C and SW-C (and OGPM-U for the classical mean); the collector
bins the raw reports into 50 cells and scores ``Σ|F̂ − F|`` against the true 50-cell
histogram, and scores the mean by ``|μ̂ − μ|`` (the circular mean on the circle),
averaged over 500 runs.

MotionSense is not available here.  Stand-ins (public parameters fixed in advance, never
computed from the data):

* ``tky-step`` / ``chi-step``: lengths of consecutive check-in steps of each user (metres
  in the UTM zone of the data), capped at :data:`STEP_CAP` = 10 km and divided by it;
* ``near-zero``: ``min(|N(0, 0.1²)|, 1)`` drawn with a fixed seed, a set concentrated
  near 0 in place of the Accelerometer (the paper says that data set is "concentrated
  around zero");
* ``tky-hour`` / ``chi-hour``: the local time of day of every check-in as an angle
  (``2π·seconds/86,400``; Tokyo's local time as recorded, Chicago's from UTC with the
  ``America/Chicago`` zone), concentrated around the evening (mean resultant length
  about 0.4) like a sensor angle;
* ``tky-bearing``: directions of the non-zero steps, clockwise from grid north, in
  ``[0, 2π)`` — almost uniform (mean resultant length about 0.01), so its circular mean
  is barely defined: a hard case for every mechanism, kept to show it.

Each set is subsampled to the paper's 6,159 values (fixed seed).  Where the check-in
files are absent a synthetic city (``data_loaders.synthetic_checkins``) replaces them and
the data set's name says so.

Two collectors are scored:

* ``raw`` — the paper's: the reports as they are (50-cell histogram; mean or circular
  mean of the reports);
* ``estimate`` — :mod:`tracs.estimate`: ``distribution(reports, mechanism, bins=50)``
  (EM with the exact transition matrix) and ``mean(reports, mechanism)`` (unbiased where
  ``E[Y|x]`` is affine, circular for OGPM on the circle, else the mean of a 256-cell EM
  estimate).  PM-C and SW-C on the flattened circle are interval mechanisms, for which
  ``mean`` estimates the linear mean of the angles; their circular mean is taken from
  their 50-cell EM distribution instead (cell centres).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tracs.mechanisms import Compressed, OptimalCircular, OptimalClassical, OptimalUnbiased, PiecewiseMechanism, \
    SquareWave

TAU = 2 * math.pi
#: public cap of a step length, metres (steps beyond it count as the cap)
STEP_CAP = 10_000.0
#: the paper's number of values (first three MotionSense files)
SIZE = 6159
#: the paper's number of cells of the distribution error
BINS = 50
#: the paper's statements, in % (Figure 16: distribution; Figure 17: mean)
STATED = {
    ("fig16", "classical", "PM-C"): 93.5, ("fig16", "classical", "SW-C"): 86.7,
    ("fig16", "circular", "PM-C"): 72.2, ("fig16", "circular", "SW-C"): 84.0,
    ("fig17", "classical", "PM-C"): 66.2, ("fig17", "classical", "SW-C"): 55.4,
    ("fig17", "circular", "PM-C"): 2.3, ("fig17", "circular", "SW-C"): 3.6,
}


def _steps(name: str, rng: np.random.Generator):
    """(step lengths in metres, bearings of the non-zero steps, times of day as angles, label)."""
    import data_loaders
    from data_loaders.datasets import dataset_path

    try:
        path = dataset_path(name)
        checkins = (data_loaders.load_gowalla if name == "chi" else data_loaders.load_foursquare)(path)
        label = name
    except FileNotFoundError:
        checkins = data_loaders.synthetic_checkins(users=200, seed=int(rng.integers(2**31)))
        label = f"synthetic ({name} absent)"
    if "local_time" in checkins:
        local = pd.to_datetime(checkins["local_time"])
    else:
        zone = "America/Chicago" if name == "chi" else "UTC"
        local = pd.to_datetime(checkins["datetime"], utc=True).dt.tz_convert(zone)
    seconds = (local.dt.hour * 3600 + local.dt.minute * 60 + local.dt.second).to_numpy(dtype=np.float64)
    hours = np.mod(TAU * seconds / 86_400.0, TAU)
    trajs = data_loaders.to_trajectories(checkins, crs="utm")
    xy = np.asarray(trajs.coords, dtype=np.float64)
    d = np.diff(xy, axis=0)
    same = np.ones(len(xy) - 1, dtype=bool)
    same[np.asarray(trajs.offsets[1:-1]) - 1] = False  # a step never crosses two trajectories
    d = d[same]
    length = np.hypot(d[:, 0], d[:, 1])
    bearing = np.mod(np.arctan2(d[length > 0, 0], d[length > 0, 1]), TAU)
    return length, bearing, hours, label


def _subsample(values, rng, size=SIZE):
    values = np.asarray(values, dtype=np.float64)
    return values if values.size <= size else rng.choice(values, size, replace=False)


def stand_ins(seed: int = 0) -> list[tuple[str, str, np.ndarray]]:
    """The data sets: ``[(name, "classical" | "circular", values)]`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    sets = []
    steps = {city: _steps(city, rng) for city in ("tky", "chi")}
    for length, _, _, label in steps.values():
        sets.append((f"{label}-step", "classical", _subsample(np.minimum(length, STEP_CAP) / STEP_CAP, rng)))
    sets.append(("near-zero", "classical", np.minimum(np.abs(rng.normal(0.0, 0.1, SIZE)), 1.0)))
    for _, _, hours, label in steps.values():
        sets.append((f"{label}-hour", "circular", _subsample(hours, rng)))
    _, bearing, _, label = steps["tky"]
    sets.append((f"{label}-bearing", "circular", _subsample(bearing, rng)))
    return sets


def mechanisms(domain: str, eps: float, *, mean: bool) -> dict:
    """The paper's mechanisms for a domain; OGPM-U joins the classical mean."""
    high = 1.0 if domain == "classical" else TAU
    table = {
        "OGPM": OptimalClassical(epsilon=eps) if domain == "classical" else OptimalCircular(epsilon=eps),
        "PM-C": Compressed(PiecewiseMechanism(epsilon=eps, low=0.0, high=high)),
        "SW-C": Compressed(SquareWave(epsilon=eps, low=0.0, high=high)),
    }
    if mean and domain == "classical":
        table["OGPM-U"] = OptimalUnbiased(epsilon=eps)
    return table


def _hist(values, high):
    counts, _ = np.histogram(np.clip(values, 0.0, high), bins=BINS, range=(0.0, high))
    return counts / counts.sum()


def circular_mean(angles, weights=None) -> float:
    """``atan2(Σ w sin, Σ w cos)`` in ``[0, 2π)``."""
    return float(np.mod(np.arctan2(np.average(np.sin(angles), weights=weights),
                                   np.average(np.cos(angles), weights=weights)), TAU))


def _angle_gap(a, b) -> float:
    gap = abs(a - b) % TAU
    return min(gap, TAU - gap)


def _estimated(reports, mech, name, domain):
    """(50-cell distribution, mean) by tracs.estimate."""
    from tracs.estimate import distribution, mean

    dist = distribution(reports, mech, bins=BINS, bootstrap=0)
    if domain == "circular":
        mu = mean(reports, mech).value if name == "OGPM" else circular_mean(dist.centers, dist.probabilities)
    elif name == "OGPM":
        # the value mean() returns (EM on 256 cells), without its 20 bootstrap refits
        mu = distribution(reports, mech, bins=256, bootstrap=0).mean()
    else:
        mu = mean(reports, mech).value
    return dist.probabilities, mu


def run(epsilons, repetitions: int, estimate_repetitions: int, seed: int = 0):
    """Tidy per-run errors: figure, dataset, domain, protocol, mechanism, epsilon, run, error."""
    rows = []
    for d_index, (dataset, domain, x) in enumerate(stand_ins(seed)):
        high = 1.0 if domain == "classical" else TAU
        true_hist = _hist(x, high)
        true_mean = float(x.mean()) if domain == "classical" else circular_mean(x)
        for e_index, eps in enumerate(epsilons):
            for m_index, (name, mech) in enumerate(mechanisms(domain, eps, mean=True).items()):
                for run_index in range(repetitions):
                    key = ((seed * 97 + d_index) * 101 + e_index) * 1009 + m_index * 10007 + run_index
                    y = mech.sample(x, rng=key)
                    base = {"dataset": dataset, "domain": domain, "mechanism": name, "epsilon": eps,
                            "run": run_index}
                    if domain == "classical":
                        raw_mean = abs(float(y.mean()) - true_mean)
                    else:
                        raw_mean = _angle_gap(circular_mean(y), true_mean)
                    rows.append({**base, "figure": "fig17", "protocol": "raw", "error": raw_mean})
                    if name != "OGPM-U":  # the paper uses OGPM-U for the mean only
                        rows.append({**base, "figure": "fig16", "protocol": "raw",
                                     "error": float(np.abs(_hist(y, high) - true_hist).sum())})
                    if run_index >= estimate_repetitions:
                        continue
                    probs, mu = _estimated(y, mech, name, domain)
                    gap = abs(mu - true_mean) if domain == "classical" else _angle_gap(mu, true_mean)
                    rows.append({**base, "figure": "fig17", "protocol": "estimate", "error": gap})
                    if name != "OGPM-U":
                        rows.append({**base, "figure": "fig16", "protocol": "estimate",
                                     "error": float(np.abs(probs - true_hist).sum())})
    return pd.DataFrame(rows)


def tables(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``fig16``/``fig17``: mean error and its standard error per cell of the grid."""
    keys = ["figure", "dataset", "domain", "protocol", "mechanism", "epsilon"]
    agg = runs.groupby(keys, sort=False)["error"].agg(["mean", "std", "count"]).reset_index()
    agg["se"] = agg["std"] / np.sqrt(agg["count"])
    agg = agg.rename(columns={"mean": "error", "count": "runs"}).drop(columns="std")
    return {fig: agg[agg["figure"] == fig].reset_index(drop=True) for fig in ("fig16", "fig17")}


def summary(figs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """OGPM's mean error over the ε grid as % of PM-C's and SW-C's, per data set and collector."""
    rows = []
    for fig, df in figs.items():
        for (dataset, domain, protocol), sub in df.groupby(["dataset", "domain", "protocol"], sort=False):
            total = sub.groupby("mechanism")["error"].mean()
            for peer in ("PM-C", "SW-C"):
                rows.append({"figure": fig, "dataset": dataset, "domain": domain, "protocol": protocol,
                             "statistic": f"mean OGPM / mean {peer} (%)",
                             "paper": STATED[(fig, domain, peer)],
                             "ours": round(100 * total["OGPM"] / total[peer], 1)})
            if "OGPM-U" in total:
                rows.append({"figure": fig, "dataset": dataset, "domain": domain, "protocol": protocol,
                             "statistic": "mean OGPM-U / mean OGPM (%)", "paper": np.nan,
                             "ours": round(100 * total["OGPM-U"] / total["OGPM"], 1)})
    return pd.DataFrame(rows)


def plot(fig_id: str, df: pd.DataFrame, path) -> None:
    """One panel per data set: error vs ε, solid = raw reports, dashed = tracs.estimate."""
    from tracs.plots import pyplot

    plt = pyplot()

    sets = list(dict.fromkeys(df["dataset"]))
    cols = math.ceil(len(sets) / 2)
    fig, axes = plt.subplots(2, cols, figsize=(4.2 * cols, 6.4), squeeze=False)
    colours = {"OGPM": "C0", "PM-C": "C1", "SW-C": "C2", "OGPM-U": "C3"}
    for ax in axes.ravel()[len(sets):]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.ravel(), sets):
        sub = df[df["dataset"] == dataset]
        for (protocol, name), g in sub.groupby(["protocol", "mechanism"], sort=False):
            g = g.sort_values("epsilon")
            ax.plot(g["epsilon"], g["error"], color=colours[name], ls="-" if protocol == "raw" else "--",
                    marker="o", ms=3, label=f"{name} ({protocol})")
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("Σ|F̂ − F| (50 cells)" if fig_id == "fig16" else "|μ̂ − μ|")
        ax.set_title(f"{fig_id} {dataset} ({sub['domain'].iloc[0]})", fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
