"""The reproduction scripts write into an output folder; only ``--write-docs`` replaces the
published files under ``docs/`` (and never with a ``--quick`` run)."""

from __future__ import annotations

import argparse
import hashlib
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCS = EXAMPLES.parent / "docs"
sys.path.insert(0, str(EXAMPLES))

import _reproduce  # noqa: E402

#: every script that writes files the documentation shows
PUBLISHING = ["reproduce_continuous.py", "reproduce_direction.py", "reproduce_discrete.py",
              "reproduce_query_metrics.py", "reproduce_time_table.py", "estimation_tables.py",
              "reproduce_ogpm.py", "reproduce_results.py", "data_docs.py"]


def _parser(quick: bool) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="script")
    if quick:
        p.add_argument("--quick", action="store_true")
    _reproduce.add_output_options(p, published=DOCS / "figures" / "x")
    return p


@pytest.mark.parametrize("argv, expected", [
    ([], Path("output") / "script"),
    (["--output-dir", "elsewhere"], Path("elsewhere")),
    (["--out-dir", "elsewhere"], Path("elsewhere")),
    (["--quick"], Path("output") / "script"),
    (["--write-docs"], DOCS / "figures" / "x"),
])
def test_output_folder(argv, expected):
    args = _reproduce.parse_output_args(_parser(True), argv, script="script")
    assert args.out_dir == expected


@pytest.mark.parametrize("argv, message", [
    (["--write-docs", "--quick"], "--write-docs publishes a full run; it excludes --quick"),
    (["--write-docs", "--output-dir", "x"], "--write-docs writes into the docs; it excludes --output-dir"),
])
def test_write_docs_conflicts(argv, message, capsys):
    with pytest.raises(SystemExit) as err:
        _reproduce.parse_output_args(_parser(True), argv, script="script")
    assert err.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("script", PUBLISHING)
def test_every_publishing_script_has_the_options(script, monkeypatch, capsys):
    """Each script runs as a program (``__main__``, as ``python script --help`` does), in this process."""
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / script), "--help"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    out = capsys.readouterr()
    assert done.value.code == 0, out.err[-2000:]
    assert "--output-dir" in out.out and "--write-docs" in out.out


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("direction*"))}


def test_a_default_run_leaves_the_docs_alone(tmp_path):
    before = _digest(DOCS / "figures")
    assert before, "the published direction figure is missing"
    out = subprocess.run([sys.executable, str(EXAMPLES / "reproduce_direction.py"), "--samples", "500",
                          "--repetitions", "1", "--epsilons", "2"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "output" / "reproduce_direction" / "direction.csv").is_file()
    assert _digest(DOCS / "figures") == before
