"""The command-line promises, checked as a user's shell sees them: exit status, standard error, files.

A few runs go through the console script that ``pip install`` creates (``tracs``, next
to the interpreter; the module's ``python -m tracs.cli`` when no script is installed),
a new process each with this checkout first on ``PYTHONPATH``: a drop report and a
summary line on success, ``--strict`` refusing a drop, ``tracs map -o x.txt`` refused.
The other promises run the same ``main`` in this process from the same folder (the
script only calls it): an output equal to the input (by name, ``..`` or a symlink) is
refused; a one-row trajectory runs with ``--pad``; a negative ``--split-gap`` is
refused; naive times say which timezone was assumed; a binary input names the byte
offset and line; a file on two continents is warned about.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = "uid,datetime,lat,lng\n"
TKY = ("-m", "tracs-c", "-e", "2", "--region", "tky", "--seed", "1")


def _script() -> list:
    found = Path(sys.executable).with_name("tracs")
    if found.is_file():
        return [str(found)]
    on_path = shutil.which("tracs")
    return [on_path] if on_path else [sys.executable, "-m", "tracs.cli"]


def tracs(*args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("TRACS_DEBUG", None)
    return subprocess.run([*_script(), *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=180)


@pytest.fixture
def in_process(cli, monkeypatch):
    """``tracs(*args, cwd=folder)`` through ``tracs.cli.main`` in this process (the ``cli`` fixture)."""

    def run(*args, cwd):
        monkeypatch.chdir(cwd)
        return cli(*args)

    return run


def rows(n=4, uid=1, lat=35.70, lng=139.70, zone="Z"):
    return [f"{uid},2012-01-01T{10 + i:02d}:00:00{zone},{lat + 0.01 * i:.4f},{lng + 0.01 * i:.4f}\n"
            for i in range(n)]


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "in.csv").write_text(HEADER + "".join(rows(4) + rows(3, uid=2)))
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "in.csv", tmp_path / "alias.csv")
    return tmp_path


def test_the_script_is_the_package_entry_point():
    script = _script()
    if script[0] == sys.executable:
        pytest.skip("no tracs script installed next to this interpreter")
    assert "tracs.cli" in Path(script[0]).read_text()


@pytest.mark.parametrize("output", ["in.csv", "./in.csv", "sub/../in.csv", "alias.csv"])
def test_output_equal_to_the_input_is_refused(in_process, folder, output):
    before = (folder / "in.csv").read_bytes()
    result = in_process("perturb", "in.csv", "-o", output, *TKY, cwd=folder)
    assert result.returncode == 1
    assert "would overwrite the input" in result.stderr and "Traceback" not in result.stderr
    assert (folder / "in.csv").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["alias.csv", "in.csv", "sub"]


@pytest.mark.slow  # new interpreters
def test_drop_report_and_summary_line(folder):
    data = rows(6)
    data[2] = "1,2012-01-01T12:00:00Z,abc,139.7\n"  # line 4
    (folder / "bad.csv").write_text(HEADER + "".join(data))
    result = tracs("perturb", "bad.csv", "-o", "out.csv", *TKY, cwd=folder)
    assert result.returncode == 0, result.stderr
    assert ("dropped 1 row(s): latitude or longitude is empty, not a number, NaN or infinite in columns "
            "'lat', 'lng': line 4") in result.stderr
    assert "read 6 rows: dropped 1 for bad values" in result.stderr
    clean = tracs("perturb", "in.csv", "-o", "clean.csv", *TKY, cwd=folder)
    assert clean.returncode == 0 and "read 7 rows: dropped 0 for bad values" in clean.stderr
    assert (folder / "out.csv").read_text().count("\n") == 6  # header + 5 rows


@pytest.mark.slow  # new interpreters
def test_strict_refuses_a_drop_and_writes_nothing(folder):
    (folder / "bad.csv").write_text(HEADER + "".join(rows(3)) + "1,yesterday,35.7,139.7\n")
    result = tracs("perturb", "bad.csv", "-o", "out.csv", *TKY, "--strict", cwd=folder)
    assert result.returncode == 1
    assert "--strict: 1 row(s) dropped for bad values" in result.stderr and "line 5" in result.stderr
    assert not (folder / "out.csv").exists()


def test_one_row_trajectory_with_pad(in_process, folder):
    (folder / "one.csv").write_text(HEADER + rows(1)[0])
    result = in_process("perturb", "one.csv", "-o", "out.csv", "-m", "tracs-d", "-e", "2", "--region-from-data",
                        "--pad", "500", "--seed", "1", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "1 point in 1 trajectory" in result.stdout
    without = in_process("perturb", "one.csv", "-o", "out2.csv", "-m", "tracs-d", "-e", "2",
                         "--region-from-data", cwd=folder)
    assert without.returncode == 1 and "pass --pad" in without.stderr


def test_negative_split_gap_is_refused(in_process, folder):
    result = in_process("perturb", "in.csv", "-o", "out.csv", *TKY, "--split-gap=-3h", cwd=folder)
    assert result.returncode == 1
    assert "--split-gap must be a positive time span" in result.stderr
    assert not (folder / "out.csv").exists()


def test_naive_times_name_the_timezone_assumed(in_process, folder):
    (folder / "naive.csv").write_text(HEADER + "".join(rows(4, zone="")))
    result = in_process("perturb", "naive.csv", "-o", "out.csv", *TKY, cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "without a timezone were read as UTC" in result.stderr


@pytest.mark.slow  # new interpreters
def test_map_to_a_text_file_is_refused(folder):
    assert tracs("perturb", "in.csv", "-o", "released.csv", *TKY, cwd=folder).returncode == 0
    result = tracs("map", "in.csv", "released.csv", "-o", "x.txt", cwd=folder)
    assert result.returncode == 1 and "ending in .html" in result.stderr
    assert not (folder / "x.txt").exists()


def test_binary_input_names_offset_and_line(in_process, folder):
    (folder / "bin.csv").write_bytes(HEADER.encode() + b"1,2012-01-01T10:00:00Z,35.7,1\x0039.7\n")
    result = in_process("perturb", "bin.csv", "-o", "out.csv", *TKY, cwd=folder)
    assert result.returncode == 1
    assert "bin.csv (a binary file: NUL byte at byte offset 50, line 2)" in result.stderr


def test_two_continents_are_warned_about_with_a_region(in_process, folder):
    (folder / "two.csv").write_text(HEADER + "".join(rows(3) + rows(2, uid=2, lat=48.85, lng=2.35)))
    result = in_process("perturb", "two.csv", "-o", "out.csv", *TKY, "--drop", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "it seems to span two continents" in result.stderr
    assert "dropped 2 row(s) outside the region: line 5, line 6" in result.stderr
