"""``tracs audit`` on the command line: table, exit status, bad arguments."""

from __future__ import annotations

import pytest

from tracs.cli import main


def test_audit_one_method_prints_a_table(capsys):
    status = main(["audit", "--method", "tracs-d", "--epsilon", "1", "--samples", "1000"])
    out = capsys.readouterr().out
    assert "| tracs-d | 1 |" in out and "ε lower bound" in out
    assert status in (0, 3)  # 3: no violation, lattice not declared
    # the release's times are the true times: the audit says it does not cover them
    assert "times are neither protected nor audited" in out


def test_audit_flags_the_method_that_is_not_ldp(capsys):
    status = main(["audit", "-m", "lsrr-thresholds", "--samples", "20000"])
    out = capsys.readouterr().out
    assert status == 1 and "VIOLATION" in out and "privacy loss above the claim" in out


def test_audit_all_runs_every_ldp_method(capsys):
    from tracs.privacy.catalog import CATALOG

    status = main(["audit", "--all", "--samples", "400"])
    out = capsys.readouterr().out
    for name, target in CATALOG.items():
        assert (f"| {name} |" in out) == target.ldp
    assert status in (0, 3) and "VIOLATION" not in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["audit"], "one of the arguments -m/--method --all is required"),
        (["audit", "-m", "nope"], "unknown method(s) nope"),
        (["audit", "-m", "krr", "--samples", "50"], "must be an integer >= 100"),
        (["audit", "-m", "krr", "--confidence", "1"], "must be in [0.5, 1)"),
        (["audit", "-m", "krr", "--epsilon", "0"], "must be a finite number > 0"),
        (["audit", "-m", "krr", "--all"], "not allowed with argument"),
    ],
)
def test_audit_bad_arguments(argv, fragment, capsys):
    status = main(argv)
    assert status in (1, 2)
    assert fragment in capsys.readouterr().err
