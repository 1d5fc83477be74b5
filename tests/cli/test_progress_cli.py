"""Progress bars of the tracs command: none when standard error is not a terminal (or with
--quiet), one per long step when forced with TRACS_PROGRESS=always, none for a short step on
a real terminal.

The real-file runs and the terminal run are new processes (a pipe and a pseudo-terminal
as a shell gives them); the map, evaluate and audit cases run the command in this process,
whose captured standard error is not a terminal either."""

import os
import select
import subprocess
import sys
import time

import pytest

from tracs._progress import ENVIRONMENT

REGION = ("--region", "139.5,35.5,140.0,35.9")
BAR = "%|"  # tqdm's bar: "read x.csv:  53%|█████▎    | 2.10M/3.98M"


def _no_bar(result):
    assert BAR not in result.stderr and "\r" not in result.stderr, result.stderr


def test_perturb_prints_no_bar_to_a_pipe(tracs_cmd, tky_path, tmp_path):
    """A real file, output piped: stdout holds the one summary line, stderr only the report."""
    result = tracs_cmd("perturb", tky_path, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2",
                       "--region", "tky", "--seed", "1", env={ENVIRONMENT: ""})
    assert result.returncode == 0, result.stderr
    _no_bar(result)
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("TraCS-D: 29,114 points")
    assert all(line.startswith("tracs perturb: ") for line in result.stderr.splitlines())


@pytest.mark.slow
def test_forced_bars_show_each_long_step_and_quiet_silences_them(tracs_cmd, tky_path, tmp_path):
    args = ("perturb", tky_path, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", "--region", "tky",
            "--seed", "1")
    forced = tracs_cmd(*args, env={ENVIRONMENT: "always"})
    assert forced.returncode == 0, forced.stderr
    assert f"read {tky_path.name}:" in forced.stderr and "perturb:" in forced.stderr
    assert BAR in forced.stderr
    quiet = tracs_cmd(*args, "--quiet", env={ENVIRONMENT: "always"})
    assert quiet.returncode == 0, quiet.stderr
    _no_bar(quiet)
    assert quiet.stdout == forced.stdout  # bars never reach standard output


def with_progress(cli, monkeypatch, value):
    """The command in this process (the ``cli`` fixture: standard error captured, not a terminal)
    with ``TRACS_PROGRESS`` set to ``value``, read when a bar starts."""

    def run(*args):
        monkeypatch.setenv(ENVIRONMENT, value)
        return cli(*args)

    return run


def test_map_bars(cli, monkeypatch, checkins_csv, tmp_path):
    plain = with_progress(cli, monkeypatch, "")("map", checkins_csv, "-o", tmp_path / "a.html", "-e", "4",
                                                "--seed", "1")
    assert plain.returncode == 0, plain.stderr
    _no_bar(plain)
    always = with_progress(cli, monkeypatch, "always")
    forced = always("map", checkins_csv, "-o", tmp_path / "b.html", "-e", "4", "--seed", "1")
    assert forced.returncode == 0, forced.stderr
    assert "draw users:" in forced.stderr and "write map:" in forced.stderr
    quiet = always("map", checkins_csv, "-o", tmp_path / "c.html", "-e", "4", "--seed", "1", "-q")
    _no_bar(quiet)


@pytest.mark.parametrize("command", [
    ("evaluate", "--dataset", "unit-square", "--methods", "tracs-d", "--epsilons", "1", "--repetitions", "1",
     "--points", "5", "--trajectories", "5", "--no-figure"),
    ("audit", "-m", "tracs-d", "-e", "1", "--samples", "100"),
])
def test_other_commands_print_no_bar_to_a_pipe(cli, monkeypatch, tmp_path, command):
    extra = ("--output-dir", tmp_path) if command[0] == "evaluate" else ()
    result = with_progress(cli, monkeypatch, "")(*command, *extra)
    assert result.returncode in (0, 3), result.stderr
    _no_bar(result)
    forced = with_progress(cli, monkeypatch, "always")(*command, *extra)
    assert BAR in forced.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_short_run_on_a_terminal_shows_no_bar(checkins_csv, tmp_path):
    """Standard error is a real (pseudo-)terminal; the steps last well under 2 s: no bar."""
    primary, secondary = os.openpty()
    env = {**os.environ, ENVIRONMENT: ""}
    proc = subprocess.Popen([sys.executable, "-m", "tracs.cli", "perturb", checkins_csv, "-o", tmp_path / "o.csv",
                             "-m", "tracs-c", "-e", "4", *REGION], stdout=subprocess.PIPE, stderr=secondary, env=env)
    os.close(secondary)
    chunks, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.5)
        if ready:
            try:
                data = os.read(primary, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(primary)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0, text
    assert "read 60 rows" in text  # the terminal does receive standard error
    assert BAR not in text
