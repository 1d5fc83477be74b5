"""Experiment grids: methods × ε × repetitions on a data set, with honest error bars.

The pieces:

* :data:`METHODS` — the perturbers and baselines of the registry of methods
  (:mod:`tracs.methods`) by command-line name (``tracs-d``, ``tracs-c``, ``strawman``,
  ``planar-laplace``, ``tracs-d-paper``, ``em``, ``ngram``, ``lsrr``, ``lsrr-thresholds``,
  ``atp``, ``tp``), each built by ``build(context, ε)``.  ``lsrr-thresholds`` is the
  L-SRR grouping of the paper's experiments, which is not ε-LDP (see
  :class:`tracs.baselines.LSRR`).
* :class:`Dataset` — trajectories (flat ``(N, 2)`` coordinates + offsets), the public
  region, the points of interest when the space is discrete, the data's units and
  the map to the paper's normalised units.  :func:`load_dataset` builds one from a
  name (``unit-square``, ``2x10``, ``synthetic``, ``tky``, ``nyc``, ``chi``) or a path.
* :func:`run_grid` — the tidy results table, one row per (repetition, method, ε).
* :func:`summarise` — one row per (method, ε): mean AE with a confidence interval.
* :func:`direction_study` and :func:`time_methods` — the paper's direction-only study
  and its time table.

Seeds
-----
Every cell of the grid draws from its own stream,
``SeedSequence(seed, spawn_key=(tag(method), tag(ε), repetition))``, and the data of a
repetition (random trajectories on a continuous region) from
``SeedSequence(seed, spawn_key=(tag("data"), repetition))``.  Results therefore do not
depend on the order of the grid, on which other methods or ε are in it, nor on how
it is split across processes; all methods of one repetition see the same data
(paired comparisons).  Only the timing columns vary between two runs.
"""

from .._lazy import lazy_names

__all__ = [
    "METHODS",
    "EXTRA_METRICS",
    "MetricSpec",
    "RANGE_DELTA",
    "HOTSPOT_SHARE",
    "parse_metrics",
    "MethodContext",
    "Dataset",
    "DATA_FILES",
    "REGIONS",
    "continuous_dataset",
    "checkin_dataset",
    "load_dataset",
    "degree_scale",
    "parse_methods",
    "parse_epsilons",
    "cell_seed",
    "run_grid",
    "summarise",
    "summary_records",
    "confidence_interval",
    "markdown_table",
    "format_number",
    "direction_study",
    "time_methods",
    "data_path",
    "read_checkins",
    "JSON_KEYS",
]


# public name -> module of this package that defines it; a name is imported on first use, so
# ``from tracs.evaluation import METHODS`` (the command line's parser) imports neither pandas
# (the summaries and the runner) nor any mechanism
_EXPORTS = {
    **dict.fromkeys(("DATA_FILES", "REGIONS", "Dataset", "checkin_dataset", "continuous_dataset", "data_path",
                     "degree_scale", "load_dataset", "read_checkins"), "experiment_data"),
    **dict.fromkeys(("METHODS", "MethodContext", "parse_epsilons", "parse_methods"), "choices"),
    **dict.fromkeys(("EXTRA_METRICS", "HOTSPOT_SHARE", "RANGE_DELTA", "MetricSpec", "parse_metrics"), "extra_metrics"),
    **dict.fromkeys(("JSON_KEYS", "confidence_interval", "format_number", "markdown_table", "summarise",
                     "summary_records"), "summaries"),
    **dict.fromkeys(("cell_seed", "direction_study", "run_grid", "time_methods"), "runner"),
}

_SUBMODULES = {"experiment_data", "choices", "extra_metrics", "summaries", "runner", "estimated"}


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, _SUBMODULES)
