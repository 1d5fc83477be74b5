"""The tables of the tracs command follow the one number rule of tracs._text: counts whole
with thousands separators, measured values to 3 significant digits, ε as given.

The commands run in this process (the ``cli`` fixture): what is checked is the text of
their standard output, the same as a shell's; tests/cli/test_cli.py runs them in a shell."""

import re

import pytest

from tracs._text import given, plus_minus, significant, whole


def value(cell: str) -> float:
    return float(cell.replace(",", ""))


def follows(cell: str, kind: str) -> bool:
    """Whether ``cell`` is its own value written by the rule for ``kind``."""
    cell = cell.strip()
    if kind == "count":
        return whole(value(cell)) == cell
    if kind == "given":
        return given(value(cell)) == cell
    if kind == "interval":
        low, high = cell.strip("[]").split(", ")
        return significant(value(low)) == low and significant(value(high)) == high
    if kind == "pm":
        v, h = cell.split(" ± ")
        return plus_minus(value(v), value(h)) == cell
    return significant(value(cell)) == cell


@pytest.mark.parametrize("cell, kind, ok", [
    ("29,114", "count", True), ("29114", "count", False), ("0.403", "measured", True),
    ("0.4025", "measured", False), ("0.5", "measured", True), ("0.500", "measured", False),
    ("17,917", "measured", True), ("17,917.0", "measured", False), ("1.176e+04", "measured", False),
    ("34.9", "measured", True), ("0.5", "given", True), ("4", "given", True), ("4.0", "given", False),
    ("[0.471, 0.553]", "interval", True), ("[0.289, 0.5159]", "interval", False),
    ("0.453 ± 0.0014", "pm", True), ("0.453 ± 0.00140", "pm", False), ("2.6 ± 0.01", "pm", True),
    ("2.6 ± 0.0132", "pm", False),
])
def test_the_checker(cell, kind, ok):
    assert follows(cell, kind) is ok


def test_evaluate_table(cli, tmp_path):
    result = cli("evaluate", "--dataset", "unit-square", "--methods", "tracs-d,tracs-c", "--epsilons", "0.5,4",
                 "--repetitions", "2", "--points", "5", "--trajectories", "20", "--no-figure",
                 "--output-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("TraCS")]
    assert len(rows) == 4
    for line in rows:
        m = re.match(r"^(TraCS-[DC])\s+(\S+)\s+(\S+)\s+(\S+)\s+(\[.*?\])\s+(\S+)\s+(\S+)$", line)
        assert m, line
        _, eps, reps, ae, ci, ae_paper, micro = m.groups()
        assert follows(eps, "given") and follows(reps, "count"), line
        assert all(follows(c, "measured") for c in (ae, ae_paper, micro)), line
        assert follows(ci, "interval"), line


def test_audit_table(cli):
    result = cli("audit", "-m", "tracs-d", "-e", "1", "--samples", "1000")
    assert result.returncode in (0, 3), result.stderr
    header, _, *rows = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert rows
    kinds = {"claimed ε": "given", "ε lower bound": "measured", "confidence": "given",
             "draws/input": "count", "seconds": "measured"}
    names = [c.strip() for c in header.strip("|").split("|")]
    for row in rows:
        cells = dict(zip(names, (c.strip() for c in row.strip("|").split("|"))))
        for name, kind in kinds.items():
            assert follows(cells[name], kind), (name, cells[name])
    assert "| 1,000 |" in rows[0]


def test_perturb_summary(cli, checkins_csv, tmp_path):
    result = cli("perturb", checkins_csv, "-o", tmp_path / "out.csv", "-m", "tracs-c", "-e", "0.5",
                 "--region", "139.5,35.5,140.0,35.9", "--seed", "3", "--report-error")
    assert result.returncode == 0, result.stderr
    m = re.search(r": (\S+) points in (\S+) trajectories, ε = (\S+) per point \((\S+)–(\S+) per trajectory\), "
                  r"AE = (\S+) m \(not private\)", result.stdout)
    assert m, result.stdout
    points, trajectories, eps, low, high, ae = m.groups()
    assert follows(points, "count") and follows(trajectories, "count")
    assert follows(eps, "given") and follows(low, "given") and follows(high, "given")
    assert follows(ae, "measured"), ae
