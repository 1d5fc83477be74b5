"""The discrete benchmark's per-location table runs (tiny synthetic data, one ε)."""

from __future__ import annotations

import numpy as np

from benchmarks import discrete as bench
from tracs.poi_space import POISpace


def test_per_location_table_smoke(capsys):
    rng = np.random.default_rng(0)
    space = POISpace(rng.uniform(0, 3000, size=(200, 2)))
    coords = space.points[rng.integers(0, 200, 120)]
    offsets = np.arange(0, 121, 10)
    lines = bench._per_location("SYN", (space, coords, offsets), True, (2.0,))
    names = [line[4] for line in lines]
    assert names == ["EM", "NGram", "L-SRR", "TP", "ATP", "TraCS-D", "TraCS-C", "naive EM loop"]
    assert all(line[5] > 0 for line in lines)
    assert all(np.isfinite(line[7]) and line[7] > 0 for line in lines[:-1])
    bench._print_per_location(lines)
    assert "Table 3" in capsys.readouterr().out


def test_head_keeps_whole_trajectories():
    offsets = np.array([0, 4, 9, 15])
    coords = np.zeros((15, 2))
    head, off = bench._head(coords, offsets, 10)
    assert off.tolist() == [0, 4, 9] and len(head) == 9
    head, off = bench._head(coords, offsets, 2)  # at least one trajectory
    assert off.tolist() == [0, 4] and len(head) == 4
