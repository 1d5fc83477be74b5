"""What the ``tracs`` command does with an exception: a refusal is one line, anything else a bug.

A :class:`tracs.TracsError` (bad input, refused parameters) or an ``OSError`` (a file that
cannot be read or written) ends the command with one line on standard error and status 1;
a usage error of the argument parser with status 2.  Any other exception (a plain
``ValueError``, ``KeyError``, ``IndexError`` from inside a command) is a bug in tracs: it is
shown with its traceback, a line saying it is a bug, and status :data:`tracs.cli.BUG_STATUS`.
``TRACS_DEBUG=1`` lets every exception out of ``main``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from tracs.cli import BUG_STATUS
from tracs.errors import InputError

ROWS = pd.DataFrame({"uid": ["1", "1", "2"], "datetime": ["2012-04-03T18:00:00Z", "2012-04-03T19:00:00Z",
                                                          "2012-04-03T18:00:00Z"],
                     "lat": [35.65, 35.66, 35.67], "lng": [139.70, 139.71, 139.72]})

# (id, argv, status, fragment of the one line): refusals raised by the library code under the
# commands (each a TracsError or an OSError), and usage errors of the parser
BAD = [
    ("missing-release", ("estimate", "nothere.csv", "-o", "est.csv"), 1, "no such file: nothere.csv"),
    ("memory-unit", ("estimate", "data.csv", "-o", "est.csv", "--grid", "8", "--memory", "2XB"), 1,
     "memory must be a number of bytes or a size such as '2GB', got '2XB'"),
    ("grid-one", ("estimate", "data.csv", "-o", "est.csv", "--grid", "1"), 1, "--grid must be >= 2, got 1"),
    ("no-region", ("perturb", "data.csv", "-o", "out.csv", "-m", "tracs-d", "-e", "1"), 1, "--region"),
    ("user-column", ("perturb", "data.csv", "-o", "out.csv", "-m", "tracs-d", "-e", "1", "--region", "tky",
                     "--user-col", "nope"), 1, "no column 'nope' (--user-col nope)"),
    ("not-a-release", ("denoise", "data.csv", "-o", "x.csv"), 1, "not a file written by 'tracs perturb'"),
    ("epsilon-zero", ("perturb", "data.csv", "-o", "out.csv", "-m", "tracs-c", "-e", "0", "--region", "tky"), 2,
     "must be a finite number > 0, got '0'"),
    ("unknown-method", ("perturb", "data.csv", "-o", "out.csv", "-m", "nosuch", "-e", "1", "--region", "tky"), 2,
     "invalid choice: 'nosuch'"),
]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACS_DEBUG", raising=False)
    ROWS.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path


@pytest.mark.parametrize("argv, status, fragment", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_refusal_is_one_line(cli, folder, argv, status, fragment):
    result = cli(*argv)
    assert result.returncode == status, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert lines[0].startswith(f"tracs {argv[0]}: error: "), lines[0]
    assert "Traceback" not in result.stderr and "bug" not in result.stderr


def _inject(monkeypatch, exc):
    """Make ``tracs estimate`` raise ``exc`` as soon as it runs."""
    from tracs.cli import estimate

    def run(args):
        raise exc

    monkeypatch.setattr(estimate, "run", run)


# (id, exception raised inside the command): plain built-in exceptions are bugs, whatever their class
BUGS = [
    ("value-error", ValueError("an array of the wrong length")),
    ("type-error", TypeError("unsupported operand")),
    ("key-error", KeyError("lat")),
    ("index-error", IndexError("index 3 is out of bounds")),
    ("zero-division", ZeroDivisionError("division by zero")),
]


@pytest.mark.parametrize("exc", [b[1] for b in BUGS], ids=[b[0] for b in BUGS])
def test_any_other_exception_is_a_bug_with_its_traceback(cli, folder, monkeypatch, exc):
    _inject(monkeypatch, exc)
    result = cli("estimate", "data.csv", "-o", "est.csv")
    assert result.returncode == BUG_STATUS and BUG_STATUS not in (0, 1, 2, 3)
    assert result.stderr.startswith("Traceback (most recent call last):"), result.stderr
    assert f"{type(exc).__name__}: {str(exc)}" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("tracs estimate: this is a bug in tracs") and type(exc).__name__ in last
    assert result.stdout == ""


def test_an_injected_refusal_stays_one_line(cli, folder, monkeypatch):
    """The same place raising a TracsError (here InputError, also a ValueError) is a refusal."""
    _inject(monkeypatch, InputError("grid sides must be >= 2"))
    result = cli("estimate", "data.csv", "-o", "est.csv")
    assert result.returncode == 1
    assert result.stderr == "tracs estimate: error: grid sides must be >= 2\n"


def test_an_os_error_stays_one_line(cli, folder, monkeypatch):
    _inject(monkeypatch, PermissionError(13, "Permission denied", "est.csv"))
    result = cli("estimate", "data.csv", "-o", "est.csv")
    assert result.returncode == 1 and result.stderr == "tracs estimate: error: Permission denied: est.csv\n"


@pytest.mark.parametrize("exc", [ValueError("an array of the wrong length"), InputError("grid sides must be >= 2")],
                         ids=["bug", "refusal"])
def test_debug_lets_every_exception_out(cli, folder, monkeypatch, exc):
    monkeypatch.setenv("TRACS_DEBUG", "1")
    _inject(monkeypatch, exc)
    with pytest.raises(type(exc)) as info:
        cli("estimate", "data.csv", "-o", "est.csv")
    assert info.value is exc


def test_a_bug_in_a_shell(folder):
    """Through the interpreter as a user runs it: the traceback, the bug line and the status."""
    script = ("import sys\nfrom tracs.cli import estimate, main\n"
              "def run(args):\n    raise ValueError('an array of the wrong length')\n"
              "estimate.run = run\nsys.exit(main(['estimate', 'data.csv', '-o', 'est.csv']))\n")
    env = {k: v for k, v in os.environ.items() if k != "TRACS_DEBUG"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=folder, env=env,
                            timeout=120)
    assert result.returncode == BUG_STATUS, result.stderr
    assert "Traceback (most recent call last):" in result.stderr
    assert "ValueError: an array of the wrong length" in result.stderr
    assert "this is a bug in tracs" in result.stderr
