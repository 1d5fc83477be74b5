"""Summaries of an evaluation: confidence intervals, JSON records and Markdown tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._text import significant
from ..errors import InputError
from .extra_metrics import EXTRA_METRICS


def confidence_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of independent values.

    With a single value (or no spread) the interval collapses to the mean.
    """
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values)))
    return mean, mean - half, mean + half


def _denoised_ci(group, confidence: float) -> dict:
    """Mean and confidence interval of the denoised columns of one (method, ε) group (NaN when absent)."""
    row = {}
    for key in ("ae_denoised", "ae_denoised_mean"):
        if key not in group.columns:
            continue
        values = group[key].to_numpy(dtype=np.float64)
        if np.isnan(values).all():
            row[key], row[key + "_ci_low"], row[key + "_ci_high"] = (float("nan"),) * 3
        else:
            row[key], row[key + "_ci_low"], row[key + "_ci_high"] = confidence_interval(values, confidence)
    return row


def summarise(results: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (dataset, method, ε): mean AE and its confidence interval.

    The interval is a Student-t interval over the repetitions (which are
    independent).  With a single repetition it is taken over that run's trajectories
    instead (independent given the data), from ``ae_traj_sd`` — a narrower notion of
    uncertainty, stated in the ``ci_over`` column.
    """
    from scipy import stats

    if not 0 < confidence < 1:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    extra = [c for c in EXTRA_METRICS if c in results.columns]
    rows = []
    for (dataset, method, eps), group in results.groupby(["dataset", "method", "epsilon"], sort=False):
        if len(group) >= 2:
            mean, low, high = confidence_interval(group["ae"], confidence)
            over = "repetitions"
        else:
            mean = float(group["ae"].iloc[0])
            n = int(group["n_trajectories"].iloc[0])
            sd = float(group["ae_traj_sd"].iloc[0])
            half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)) if n > 1 else 0.0
            low, high = mean - half, mean + half
            over = "trajectories"
        row = {
            "dataset": dataset, "method": method, "label": group["label"].iloc[0], "epsilon": eps,
            "repetitions": len(group), "ae_mean": mean, "ae_ci_low": low, "ae_ci_high": high,
            "ae_mean_normalised": float(group["ae_normalised"].mean()),
            "seconds_per_point": float(group["seconds_per_point"].mean()),
            "units": group["units"].iloc[0], "ci_over": over,
        }
        for metric in extra:
            row[metric] = float(group[metric].mean())
        row.update(_denoised_ci(group, confidence))
        rows.append(row)
    return pd.DataFrame(rows)


#: keys of each object of ``tracs evaluate --format json``
JSON_KEYS = ("method", "epsilon", "ae_mean", "ae_ci_low", "ae_ci_high", "ae_mean_normalised",
             "seconds_per_point")
#: keys added with ``--denoise`` (NaN, written as null, for methods not denoised)
DENOISED_KEYS = ("ae_denoised", "ae_denoised_ci_low", "ae_denoised_ci_high", "ae_denoised_mean",
                 "ae_denoised_mean_ci_low", "ae_denoised_mean_ci_high")


def summary_records(summary: pd.DataFrame) -> list[dict]:
    """The summary as plain JSON-ready dicts (keys :data:`JSON_KEYS` + extra metrics)."""
    keys = list(JSON_KEYS) + [c for c in (*EXTRA_METRICS, *DENOISED_KEYS) if c in summary.columns]
    records = []
    for row in summary.to_dict("records"):
        record = {}
        for key in keys:
            value = row[key]
            record[key] = value if isinstance(value, str) else None if math.isnan(float(value)) else float(value)
        records.append(record)
    return records


def format_number(x: float, digits: int = 3) -> str:
    """``digits`` significant digits in fixed point, whole with thousands separators from
    ``10**(digits - 1)`` up (:func:`tracs._text.significant`, the rule of every table)."""
    return significant(x, digits)


def markdown_table(summary: pd.DataFrame, *, value: str = "ae_mean", low: str | None = "ae_ci_low",
                   high: str | None = "ae_ci_high", digits: int = 3, label: str = "label") -> str:
    """A Markdown table: one row per ε, one column per method, ``mean ± half-width``.

    ``half-width`` is half the confidence interval (``(high − low)/2``); pass
    ``low=None`` to show the value alone.
    """
    if label not in summary.columns:
        label = "method"
    methods = list(dict.fromkeys(summary[label]))
    eps_values = sorted(set(summary["epsilon"]))
    lines = ["| ε | " + " | ".join(methods) + " |", "|---:|" + "---:|" * len(methods)]
    for eps in eps_values:
        cells = []
        for method in methods:
            row = summary[(summary[label] == method) & (summary["epsilon"] == eps)]
            if row.empty:
                cells.append("–")
                continue
            row = row.iloc[0]
            text = format_number(row[value], digits)
            if low and high:
                text += f" ± {format_number((row[high] - row[low]) / 2, max(digits - 1, 1))}"
            cells.append(text)
        lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- studies
