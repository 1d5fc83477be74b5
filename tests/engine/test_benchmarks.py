"""The scaling and reference benchmark sections run, and --write-docs writes every figure from the run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import _docs, _record, reference_compare, scaling
from benchmarks.reference import round_loop, tracs_c_loop, tracs_d_loop
from tracs.poi_space import POISpace
from tracs.metrics import average_error
from tracs.perturbers import TraCSC, TraCSD
from tracs.region import Rectangle


def test_worker_counts_and_amdahl():
    assert scaling.worker_counts(1) == [1]
    assert scaling.worker_counts(2) == [1, 2]
    assert scaling.worker_counts(6) == [1, 2, 4, 6]
    assert scaling.worker_counts(16) == [1, 2, 4, 8, 16]
    assert scaling.amdahl(0.0, 8) == pytest.approx(8.0)
    assert scaling.amdahl(1.0, 8) == pytest.approx(1.0)
    f = 0.1
    assert scaling.karp_flatt(scaling.amdahl(f, 2), 2) == pytest.approx(f)


@pytest.mark.parametrize("name", ["tracs-c", "tracs-d"])
def test_reference_loops_follow_the_same_law_as_tracs(name):
    """Average errors agree within 5 % (20,000 points, seeds fixed): the comparison is like for like."""
    import random

    random.seed(3)
    region = Rectangle(0.0, 0.0, 2000.0, 1000.0)
    rng = np.random.default_rng(1)
    pts = rng.uniform((0, 0), (2000, 1000), (20_000, 2))
    offsets = np.arange(0, 20_001, 100)
    if name == "tracs-c":
        ours = TraCSC(region, 4.0).perturb_many(pts, offsets, rng=2)
        ref = np.concatenate([tracs_c_loop(pts[a:a + 100], 4.0, region.bounds) for a in offsets[:-1]])
    else:
        ours = TraCSD(region, 4.0).perturb_many(pts, offsets, rng=2)
        ref = np.concatenate([tracs_d_loop(pts[a:a + 100], 4.0, region.bounds) for a in offsets[:-1]])
    assert region.contains(ref).all()
    assert average_error(pts, ref, offsets) == pytest.approx(average_error(pts, ours, offsets), rel=0.05)


def test_reference_rounding_is_exact():
    rng = np.random.default_rng(4)
    space = POISpace(rng.uniform(0, 100, (50, 2)))
    pts = rng.uniform(0, 100, (200, 2))
    assert np.array_equal(round_loop(pts, space.points), space.round(pts)[0])


def test_sections_run_and_write_docs(tmp_path, monkeypatch, capsys):
    _record.RESULTS.clear()
    monkeypatch.setattr(_record, "PREVIOUS_PATH", tmp_path / "previous.json")
    (tmp_path / "previous.json").write_text(json.dumps(
        {"figures": {"scaling / TraCS-C / 1 workers": {"value": 1.0, "unit": "points/s"}}}))
    monkeypatch.setattr(scaling, "worker_counts", lambda cores=None: [1, 2])
    scaling.run(quick=True)
    reference_compare.run(quick=True)
    out = capsys.readouterr().out
    assert "serial fraction" in out and "same as 1 worker" in out and " NO" not in out
    for name, entry in scaling.TABLE.items():  # every workload's serial share, measured and printed
        if not name.startswith("_"):
            assert 0.0 < entry["serial_share"] < 1.0 and "glue" in entry["serial_steps"]
    assert out.count("serial share of the 1-worker CPU time") == len(scaling.TABLE) - 1
    assert "SERIAL STEP ABOVE 2%" in out or "no serial step above 2%" in out
    assert "TraCS-D, 1 worker" in out
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{_docs.BEGIN}\nold\n{_docs.END}\nrest\n")
    monkeypatch.setattr(_docs, "README", readme)
    monkeypatch.setattr(_docs, "PERFORMANCE", tmp_path / "performance.md")
    monkeypatch.setattr(_docs, "PLOT", tmp_path / "scaling.png")
    written = _docs.write_docs()
    assert (tmp_path / "scaling.png").stat().st_size > 1000 and len(written) == 4
    page = (tmp_path / "performance.md").read_text()
    assert "| TraCS-C |" in page and "Karp" in page and "reference" in page and "| serial share |" in page
    text = readme.read_text()
    assert "old" not in text and "rest" in text and "against a per-point re-implementation" in text
    saved = json.loads((tmp_path / "previous.json").read_text())["runs"][_record.cpu_model()]
    assert saved["figures"]["scaling / TraCS-C / 1 workers"]["value"] > 1.0
    assert saved["machine"]["cores"] >= 1


def test_previous_runs_are_kept_per_cpu_model(tmp_path, monkeypatch):
    """A run compares with the last documented run on its own CPU model; storing keeps the others."""
    monkeypatch.setattr(_record, "PREVIOUS_PATH", tmp_path / "previous.json")
    monkeypatch.setattr(_record, "RESULTS", {})
    monkeypatch.setattr(_record, "cpu_model", lambda: "Intel Xeon")
    # an older file: one run, on another model
    (tmp_path / "previous.json").write_text(json.dumps(
        {"machine": {"cpu": "AMD EPYC"}, "figures": {"a": {"value": 4.0, "unit": "s"}}}))
    assert _record.other_cpus() == ["AMD EPYC"] and not _record.comparable()
    assert _record.record("a", 2.0, "s") == "other CPU"
    written = _docs.write_docs(["setup"])
    assert written == [_record.PREVIOUS_PATH]
    runs = json.loads((tmp_path / "previous.json").read_text())["runs"]
    assert runs["AMD EPYC"]["figures"] == {"a": {"value": 4.0, "unit": "s"}}
    assert runs["Intel Xeon"]["figures"] == {"a": {"value": 2.0, "unit": "s"}}
    # the next run on the same model compares with it, and keeps the figures it did not measure
    _record.RESULTS.clear()
    assert _record.comparable() and _record.record("a", 3.0, "s") == "1.50x"
    assert _record.record("b", 1.0, "s") == "-"
    _record.save()
    runs = json.loads((tmp_path / "previous.json").read_text())["runs"]
    assert runs["Intel Xeon"]["figures"]["a"]["value"] == 3.0 and runs["Intel Xeon"]["figures"]["b"]["value"] == 1.0
    assert runs["AMD EPYC"]["figures"]["a"]["value"] == 4.0


def test_best_of_alternating_keeps_the_fastest_run_of_each(monkeypatch):
    from benchmarks import cli

    calls = []
    times = iter([3.0, 5.0, 2.0, 6.0, 4.0, 4.5])
    monkeypatch.setattr(cli, "measure", lambda command, env=None: (calls.append(command[0]) or next(times), 10.0))
    assert cli.best_of_alternating((["a"], None), (["b"], None), repeat=3) == ((2.0, 10.0), (4.5, 10.0))
    assert calls == ["a", "b"] * 3  # in turn


def test_earlier_sequential_samplers_are_timed_against_the_same_workload():
    from benchmarks import perturbers
    from benchmarks._timing import Row
    from tracs.region import Rectangle

    names = ["TraCS-C (many)", "TraCS-D (many)", "Strawman (many)", "PlanarLaplace (many)"]
    rows = perturbers._earlier_rows(Rectangle(0, 0, 2, 10), [Row(n, 3000, 0.01) for n in names], 3000, 1)
    assert [r.name.split(",")[0].strip() for r in rows] == ["TraCS-C", "TraCS-D", "Strawman", "PlanarLaplace"]
    assert all("lattice rate / continuous rate" in r.extra for r in rows)


def test_serial_accounting_covers_every_workload():
    from tracs.engine._account import account

    workloads, _ = scaling._workloads(20_000, 2_000)
    expected = {"TraCS-C": {"keys: canonical bytes", "perturb: batch shape"},
                "TraCS-C, text user ids": {"keys: canonical bytes", "perturb: batch shape"},
                "TraCS-D": {"keys: canonical bytes", "perturb: batch shape"},
                "rounding (10^4 POIs)": set(),
                "average error": {"error: shapes", "error: mean over trajectories"},
                "pipeline (TraCS-D + rounding + error)": {"keys: canonical bytes", "error: mean over trajectories"}}
    assert set(workloads) == set(expected)
    for name, (_, _, call) in workloads.items():
        call(1)
        total, steps = scaling.serial_steps(call)
        assert expected[name] | {"glue"} <= set(steps), name
        assert 0.0 < sum(steps.values()) < total, name  # the parallel tasks took the rest
    with account(), pytest.raises(RuntimeError, match="already running"):
        with account():
            pass


def test_estimate_section_writes_its_block_of_the_estimation_page(tmp_path, monkeypatch):
    from benchmarks import estimate

    rows = [("tracs-c", 64, 10**6, {"seconds": 4.0, "cpu": 3.5, "passes": 99, "peak_gb": 0.23}, None, ""),
            ("tracs-d", 64, 10**6, {"seconds": 80.0, "cpu": 70.0, "passes": 123, "peak_gb": 0.61}, 20.0,
             "≤ 30×, 2 GB"),
            ("strawman", 64, 10**6, {"error": "killed", "returncode": -9}, None, "≤ 30×, 2 GB")]
    growth = [(m, 32, n, {"seconds": 1.0, "cpu": c, "passes": 90, "peak_gb": g}, None, "")
              for m, n, c, g in (("tracs-c", 10**5, 1.2, 0.17), ("tracs-d", 10**5, 3.1, 0.19),
                                 ("tracs-c", 10**7, 3.4, 0.8), ("tracs-d", 10**7, 290.0, 3.3),
                                 ("tracs-c", 20_000, 0.9, 0.16))]
    monkeypatch.setattr(estimate, "ROWS", rows)
    monkeypatch.setattr(estimate, "GROWTH", growth)
    monkeypatch.setattr(estimate, "TWO_WORKERS", {"seconds": 10.0, "one_worker_seconds": 19.0,
                                                  "max_difference": 0.0, "reports": 10**6})
    page = tmp_path / "estimation.md"
    page.write_text(f"# E\n\n## Speed\n\n{estimate.BEGIN}\nold\n{estimate.END}\n\nkept\n", encoding="utf-8")
    monkeypatch.setattr(estimate, "DOC", page)
    monkeypatch.setattr(estimate, "DOC_PLOT", tmp_path / "growth.png")
    assert _docs.write_docs(["estimate"]) == [page, tmp_path / "growth.png"]
    text = page.read_text(encoding="utf-8")
    assert "old" not in text and text.endswith("kept\n")
    # the ratios to TraCS-C's 64×64 row and to TraCS-C's row of the same grid
    assert "| TraCS-C | 64×64 | 3.5 | 99 | 0.23 GB | 1× | 1× |  |" in text
    assert "| TraCS-D | 64×64 | 70 | 123 | 0.61 GB | 20× | 20× | ≤ 30×, ≤ 2 GB |" in text
    assert "| Strawman | 64×64 | failed | failed | failed |  |  | ≤ 30×, ≤ 2 GB |" in text
    assert "| 10^7 | 3.4 | 0.8 GB | 290 | 3.3 GB |" in text
    assert "| 10^5 | 1.2 | 0.17 GB | 3.1 | 0.19 GB |" in text and "10^6 |" not in text  # growth rows only
    assert "| 20,000 | 0.9 | 0.16 GB | – | – |" in text and "32×32, 10^6 reports, same run" in text
    assert "1.9× faster" in text and (tmp_path / "growth.png").stat().st_size > 1000
