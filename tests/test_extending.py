"""The installable extension of ``examples/extending`` reaches every command through entry points.

The package's folder is put on ``sys.path`` and ``importlib.metadata.entry_points`` answers
with the entry points its ``pyproject.toml`` declares (installing it into a fresh virtual
environment is what CI does, with ``examples/extending/check_installed.py``): the toy
perturber, its format and its estimator then work in ``tracs perturb``, ``audit``,
``estimate`` and ``evaluate`` run through the command's main function.
"""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tracs import _plugins
from tracs.estimate import estimators as estimator_registry
from tracs.io import formats as format_registry
from tracs.methods import _registry as method_registry

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "extending"
DECLARED = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]["entry-points"]


_REAL_ENTRY_POINTS = metadata.entry_points


def _entry_points(declared):
    """A stand-in for ``importlib.metadata.entry_points`` answering the groups of ``declared``
    (group -> name -> value) with its entries, any other question as the real one does."""
    def entry_points(**selection):
        if selection.get("group") not in declared:
            return _REAL_ENTRY_POINTS(**selection)
        return [metadata.EntryPoint(name, value, selection["group"])
                for name, value in declared[selection["group"]].items()]

    return entry_points


def _forget_toys():
    method_registry._REGISTRY.pop("toy-cells", None)
    format_registry.FORMATS.pop("toy-text", None)
    estimator_registry.unregister_estimator("toy-cells")


@pytest.fixture
def installed(monkeypatch):
    """The example as if installed: its folder importable, its entry points declared, every group unread."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setattr(metadata, "entry_points", _entry_points(DECLARED))
    monkeypatch.setattr(_plugins, "loaded", set())
    _forget_toys()
    yield
    _forget_toys()


@pytest.fixture
def cli(capsys):
    """``tracs ARGS`` through the command's main function, in this process."""
    from tracs.cli import main

    return lambda *args: SimpleNamespace(returncode=main(list(map(str, args))), **dict(
        zip(("stdout", "stderr"), capsys.readouterr())))


@pytest.fixture
def checkins(tmp_path) -> Path:
    """Three users (ids as written: ``007``), ten check-ins each in Tokyo, in time order."""
    rng = np.random.default_rng(5)
    users = np.repeat(["007", "042", "100"], 10)
    times = pd.Timestamp("2012-04-03 18:00:00", tz="UTC") + pd.to_timedelta(np.arange(30) * 600, unit="s")
    frame = pd.DataFrame({"uid": users, "datetime": [t.isoformat() for t in times],
                          "lat": 35.60 + 0.15 * rng.random(30), "lng": 139.60 + 0.20 * rng.random(30)})
    path = tmp_path / "checkins.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_toy_is_not_part_of_the_package():
    assert not list((EXAMPLE.parents[1] / "tracs").rglob("tracs_toy*"))
    assert set(DECLARED) == set(_plugins.GROUPS)


def test_entry_points_are_read_on_first_lookup_only(installed):
    import tracs.methods as methods

    assert "toy-cells" not in method_registry._REGISTRY  # importing registers nothing
    assert "toy-cells" in methods.view("perturber")
    assert methods.get("toy-cells").estimator == "toy-cells"
    assert "toy-cells" in estimator_registry.estimators()
    assert format_registry.output_format("out.toytext").key == "toy-text"
    assert "Toy text" in format_registry.supported()


def test_the_commands_run_the_toy(installed, cli, checkins, tmp_path):
    from tracs.io.parameters import embedded_parameters

    help_text = cli("perturb", "--help").stdout
    assert "toy-cells" in " ".join(help_text.split())
    released = tmp_path / "released.toytext"
    result = cli("perturb", checkins, "-o", released, "-m", "toy-cells", "-e", "2", "--region", "tky",
                 "--seed", "1", "-q")
    assert result.returncode == 0, result.stderr
    # the release holds every row, the ids as written and its parameters on the first line
    first = released.read_text().splitlines()[0]
    assert first.startswith("#tracs ") and json.loads(first[7:])["method"] == "toy-cells"
    assert embedded_parameters(released)["method"] == "toy-cells"
    renamed = released.with_name("released.txt")  # told by its first bytes, the entry's sniff
    renamed.write_bytes(released.read_bytes())
    assert format_registry.container_of(renamed) == "toy-text"
    rows = pd.read_csv(released, sep="|", skiprows=1, dtype={"uid": str})
    assert len(rows) == 30 and sorted(set(rows["uid"])) == ["007", "042", "100"]
    # every released point is a cell centre (8 x 8 cells): at most 64 distinct points
    assert len(rows[["lat", "lng"]].drop_duplicates()) <= 64

    result = cli("estimate", released, "-o", tmp_path / "density.csv", "--grid", "4")
    assert result.returncode == 0, result.stderr
    density = pd.read_csv(tmp_path / "density.csv")
    assert len(density) == 16 and abs(density["probability"].sum() - 1.0) < 1e-9

    result = cli("audit", "-m", "toy-cells", "--samples", "2000", "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr  # 3 would be "unverifiable (no lattice)"
    assert "toy-cells" in result.stdout and "unverifiable" not in result.stdout

    result = cli("evaluate", "--dataset", "unit-square", "--methods", "toy-cells,tracs-c", "--epsilons", "2",
                 "--repetitions", "2", "--points", "5", "--trajectories", "4", "--no-figure", "--no-progress",
                 "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [row["method"] for row in json.loads(result.stdout)] == ["toy-cells", "tracs-c"]


def test_the_toy_estimator_recovers_a_concentrated_density(installed):
    """Seed 3, 4,000 points in one toy cell at ε = 2: the estimate puts at least 0.6 of the mass there
    (the raw reports only about 0.46: (e² − 1)/(e² − 1 + 64) + 1/64 of them)."""
    from tracs import Rectangle
    from tracs.estimate import density
    from tracs.methods import MethodContext, get

    region = Rectangle(0.0, 0.0, 800.0, 800.0)
    toy = get("toy-cells").build(MethodContext(region=region), 2.0)
    points = np.full((4000, 2), 150.0)  # the cell [100, 200)² of the toy's 8 x 8
    reports = toy.perturb_many(points, np.array([0, 4000]), rng=3)
    est = density(reports, toy, grid=8, refine=1)
    assert est.probabilities[1, 1] >= 0.6
    assert np.mean(np.all(reports == [150.0, 150.0], axis=1)) < 0.5


def test_the_evaluation_estimates_the_toy(installed):
    """The estimated range-query column asks the registry: a number for the toy (it was NaN for any
    class outside a fixed list), seed 1."""
    from types import SimpleNamespace

    from tracs import Rectangle
    from tracs.evaluation.estimated import range_query_estimated
    from tracs.methods import MethodContext, get

    region = Rectangle(0.0, 0.0, 800.0, 800.0)
    toy = get("toy-cells").build(MethodContext(region=region), 4.0)
    points = np.random.default_rng(0).uniform(0.0, 800.0, (60, 2))
    offsets = np.array([0, 30, 60])
    reports = toy.perturb_many(points, offsets, rng=1)
    error = range_query_estimated(points, reports, offsets, SimpleNamespace(region=region),
                                  np.random.default_rng(2), perturber=toy)
    assert np.isfinite(error) and 0.0 <= error < 1.0


def test_a_broken_extension_is_a_warning_naming_it(monkeypatch, installed):
    declared = {group: dict(entries) for group, entries in DECLARED.items()}
    declared["tracs.methods"]["broken"] = "tracs_toy.nowhere:METHOD"
    declared["tracs.formats"]["wrong-kind"] = "tracs_toy.perturber:METHOD"
    monkeypatch.setattr(metadata, "entry_points", _entry_points(declared))
    from tracs.methods import view

    with pytest.warns(_plugins.PluginWarning, match=re.escape("the extension broken = tracs_toy.nowhere:METHOD "
                                                              "(entry point group tracs.methods) is not loaded")):
        assert "toy-cells" in view("perturber")  # the others are registered
    with pytest.warns(_plugins.PluginWarning, match="wrong-kind .* it names a Method, not a Format"):
        assert format_registry.output_format("x.toytext").key == "toy-text"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view("perturber")  # a group is read once


def test_the_dask_estimate_runs_the_toy_estimator(installed):
    """An estimator without counts or merge keeps its blocks in the partitions: the Dask estimate
    equals the in-process one to 1e-9 (3 partitions, users spanning them; seed 3)."""
    dask = pytest.importorskip("dask", reason="tracs[dask] is not installed")
    dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
    from tracs import Rectangle
    from tracs import dask as tdask
    from tracs.estimate import density
    from tracs.methods import MethodContext, get

    region = Rectangle(0.0, 0.0, 800.0, 800.0)
    toy = get("toy-cells").build(MethodContext(region=region), 2.0)
    rng = np.random.default_rng(0)
    uid = np.repeat(np.arange(20), 30)
    reports = toy.perturb_many(rng.normal(300.0, 120.0, (600, 2)).clip(0.0, 800.0), np.arange(0, 601, 30), rng=3)
    frame = pd.DataFrame({"uid": uid, "t": np.arange(600), "x": reports[:, 0], "y": reports[:, 1]})
    ref = density(reports, toy, offsets=np.arange(0, 601, 30), grid=8)
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        est = tdask.estimate(dd.from_pandas(frame.sample(frac=1.0, random_state=1), npartitions=3, sort=False),
                             toy, grid=8, user="uid", time="t", x="x", y="y")
    np.testing.assert_allclose(est.probabilities, ref.probabilities, rtol=0, atol=1e-9)


@pytest.mark.parametrize("cells", [2, 8, 1024])
def test_the_toy_pmf_is_within_the_bound(installed, cells):
    """The keep probability as sampled (a multiple of 2^-53) gives a worst ratio of at most e^ε."""
    from tracs import Rectangle
    from tracs_toy.perturber import MAX_EPSILON, RandomCells

    toy = RandomCells(Rectangle(0.0, 0.0, 1.0, 1.0), 1.0, cells=cells)
    eps = np.array([1e-6, 0.1, 1.0, 2.0, 10.0, 20.0, MAX_EPSILON])
    p = toy.keep_probability(eps)
    assert np.all(p * 2.0 ** 53 == np.floor(p * 2.0 ** 53)) and np.all((p >= 0.0) & (p < 1.0))
    assert np.all(1.0 + p * cells ** 2 / (1.0 - p) <= np.exp(eps))
