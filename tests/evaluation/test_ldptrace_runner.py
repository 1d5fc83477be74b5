"""The LDPTrace comparison's runner (``benchmarks/ldptrace.py``), against a stand-in checkout.

The stand-in ``main.py`` reads the input the runner writes (an lzma pickle of lists of
``(x, y)`` tuples), checks its command line and writes the synthetic pickle under the
name LDPTrace uses, then keeps running as LDPTrace's own evaluation would: the
runner must read the file and stop the process.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

ldptrace = pytest.importorskip("benchmarks.ldptrace")

STAND_IN = textwrap.dedent('''
    import lzma, pickle, sys, time
    args = sys.argv[1:]
    assert args[:2] == ["--dataset", "porto"] and "--re_syn" in args, args
    eps = args[args.index("--epsilon") + 1]
    grid = args[args.index("--grid_num") + 1]
    with lzma.open("../data/porto.xz", "rb") as f:
        db = pickle.load(f)
    reversed_db = [list(reversed(t)) for t in db]  # a recognisable "synthesis"
    with open(f"../data/porto/syn_porto_eps_{eps}_max_0.9_grid_{grid}.pkl", "wb") as f:
        pickle.dump(reversed_db, f)
    time.sleep(600)  # its own evaluation follows: the runner stops it
''')


@pytest.fixture
def checkout(tmp_path):
    code = tmp_path / "LDPTrace" / "code"
    code.mkdir(parents=True)
    (code / "main.py").write_text(STAND_IN)
    return tmp_path


def test_runner_round_trips_trajectories_and_stops_the_process(checkout):
    coords = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.5, 7.25], [8.0, 9.0]])
    offsets = np.array([0, 3, 5])
    points, synthetic_offsets, took = ldptrace.run_ldptrace(checkout, coords, offsets, 1.0, 6)
    np.testing.assert_array_equal(synthetic_offsets, [0, 3, 5])
    np.testing.assert_array_equal(points, coords[[2, 1, 0, 4, 3]])
    assert 0 < took < 60


def test_runner_reports_a_checkout_without_main(tmp_path):
    with pytest.raises(FileNotFoundError, match="LDPTRACE_DIR must be LDPTrace's repository root"):
        ldptrace.run_ldptrace(tmp_path, np.zeros((1, 2)), np.array([0, 1]), 1.0, 6)


def test_runner_reports_a_run_that_stops_without_output(tmp_path):
    code = tmp_path / "LDPTrace" / "code"
    code.mkdir(parents=True)
    (code / "main.py").write_text("import sys\nsys.stderr.write('no data here')\nsys.exit(1)\n")
    with pytest.raises(RuntimeError, match="LDPTrace stopped before writing .*no data here"):
        ldptrace.run_ldptrace(tmp_path, np.zeros((1, 2)), np.array([0, 1]), 1.0, 6)


def test_section_says_what_is_missing(monkeypatch, capsys):
    monkeypatch.delenv("LDPTRACE_DIR", raising=False)
    ldptrace.run()
    assert "not run: set LDPTRACE_DIR" in capsys.readouterr().out
