"""Small check-in files and a helper to run the ``tracs`` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest


def run_tracs(*args, cwd=None, env=None, timeout=120) -> subprocess.CompletedProcess:
    """Run ``python -m tracs.cli ARGS`` (the installed ``tracs`` script runs the same main)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("TRACS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "tracs.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=full_env, timeout=timeout)


@pytest.fixture(scope="session")
def tracs_cmd():
    """Run the command in a subprocess, as a user would (see :func:`run_tracs`)."""
    return run_tracs


@pytest.fixture
def cli(capsys):
    """Run ``tracs.cli.main`` in this process (fast: compiled kernels stay loaded).

    Returns the same fields as a finished subprocess: returncode, stdout, stderr.
    """
    from tracs.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


@pytest.fixture(scope="session")
def checkins_csv(tmp_path_factory) -> Path:
    """Three users, 60 check-ins in Tokyo at 25 venues, in time order per user."""
    rng = np.random.default_rng(0)
    venues = np.column_stack([35.60 + 0.15 * rng.random(25), 139.60 + 0.20 * rng.random(25)])
    rows = []
    for uid, n in ((101, 25), (202, 20), (303, 15)):
        picks = rng.integers(0, 25, n)
        times = pd.Timestamp("2012-04-03 18:00:00", tz="UTC") + pd.to_timedelta(np.arange(n) * 5400, unit="s")
        for v, t in zip(picks, times):
            rows.append({"uid": uid, "datetime": t.isoformat(), "lat": venues[v, 0], "lng": venues[v, 1],
                         "poi_id": f"v{v:02d}"})
    path = tmp_path_factory.mktemp("data") / "checkins.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def venues_csv(checkins_csv) -> Path:
    """The public POI file of :func:`checkins_csv`: its 25 venues (lat, lng), fixed in advance."""
    frame = pd.read_csv(checkins_csv)[["poi_id", "lat", "lng"]].drop_duplicates("poi_id")
    path = checkins_csv.parent / "venues.csv"
    frame.to_csv(path, index=False)
    return path
