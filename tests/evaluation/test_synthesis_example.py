"""``examples/synthesis_utility.py`` runs on real data, and its synthetic trajectories halve the reports' errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "synthesis_utility.py"


def test_synthesis_script_on_tky(tky_path):
    """TKY, TraCS-C at ε = 6, one run (seed 0): density JSD and query AvRE of the synthetic
    trajectories at most half those of the raw reports (measured: 0.054 against 0.146, 0.52 against 2.13)."""
    result = subprocess.run([sys.executable, str(SCRIPT), "--datasets", "tky", "--epsilons", "6", "--repeats", "1",
                             "--all-metrics"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| TKY | 6 | 29,114")]
    assert len(rows) == 1
    density_raw, density_syn, query_raw, query_syn = (float(v) for v in rows[0][3:7])
    assert density_syn <= density_raw / 2 and query_syn <= query_raw / 2
    assert "| TKY | 6 | synthetic |" in result.stdout


def test_synthesis_script_tracs_d_exact_law_and_binned(tky_path):
    """TKY, TraCS-D at ε = 6, one run (seed 0), ``--binned --sample 1000``: the synthetic trajectories of the
    exact law have at most half the raw reports' density JSD and query AvRE, and less than those of the binned
    model (measured: 0.0392 against 0.157 and 0.155, 0.467 against 2.47 and 2.55); the sampling table has a row."""
    result = subprocess.run([sys.executable, str(SCRIPT), "--datasets", "tky", "--epsilons", "6", "--repeats", "1",
                             "--method", "tracs-d", "--binned", "--sample", "1000"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| TKY | 6 | 29,114")]
    assert len(rows) == 1
    d_raw, d_exact, d_binned, q_raw, q_exact, q_binned = (float(v) for v in rows[0][3:9])
    assert d_exact <= d_raw / 2 and q_exact <= q_raw / 2
    assert d_exact < d_binned and q_exact < q_binned
    assert any(line.startswith("| TKY | 6 | 1,000 |") for line in result.stdout.splitlines())
