"""Per-user independence through ``tracs perturb``: edit, reorder or split the file around one user.

The command keys each user's random stream by the user id, so user 7's released
rows must be bit for bit the same (the CSV text of lat and lng) whatever the other
users' rows are, in whatever order the rows come, and whether the file holds the
other users at all.  Fixed seed; exact comparisons.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

#: every ε-LDP method of the command, plus rounding and a per-trajectory budget with split trajectories
RUNS = {
    "tracs-d": ("-m", "tracs-d"),
    "tracs-d-rounded": ("-m", "tracs-d", "--round-to-pois"),
    "tracs-c": ("-m", "tracs-c"),
    "strawman": ("-m", "strawman"),
    "planar-laplace": ("-m", "planar-laplace"),
    "em": ("-m", "em"),
    "ngram": ("-m", "ngram"),
    "lsrr": ("-m", "lsrr"),
    "tp": ("-m", "tp"),
    "atp": ("-m", "atp"),
    "tracs-c-split-per-trajectory": ("-m", "tracs-c", "--split-gap", "5h", "--per-trajectory"),
    "atp-split-per-trajectory": ("-m", "atp", "--split-gap", "5h", "--per-trajectory"),
}
NEEDS_POIS = {"em", "ngram", "lsrr", "tp", "atp", "tracs-d-rounded", "atp-split-per-trajectory"}
VENUES = np.column_stack([35.60 + 0.15 * np.random.default_rng(1).random(30),
                          139.60 + 0.20 * np.random.default_rng(2).random(30)])


@pytest.fixture
def cli(capsys):
    from tracs.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


def checkins(seed: int, users=(7, 8, 9, 10), lengths=(9, 6, 12, 4)) -> pd.DataFrame:
    """Rows of the given users at the venues, 2 h apart (gaps of 7 h split trajectories)."""
    rows = []
    for uid, n in zip(users, lengths):
        rng = np.random.default_rng(seed * 1000 + uid)  # a user's rows depend on (seed, uid) only
        picks = rng.integers(0, len(VENUES), n)
        hours = np.cumsum(np.where(np.arange(n) % 4 == 3, 7, 2))
        for v, h in zip(picks, hours):
            t = pd.Timestamp("2012-04-03 08:00:00", tz="UTC") + pd.Timedelta(hours=int(h))
            rows.append({"uid": uid, "datetime": t.isoformat(), "lat": VENUES[v, 0], "lng": VENUES[v, 1]})
    return pd.DataFrame(rows)


def released_rows(cli, frame, tmp_path, name, run, seed="5"):
    """User 7's released rows (CSV text) of ``tracs perturb`` on ``frame`` with the options of ``run``."""
    method, args = run
    source = tmp_path / f"{name}.csv"
    frame.to_csv(source, index=False)
    pois = tmp_path / "venues.csv"
    pd.DataFrame({"lat": VENUES[:, 0], "lng": VENUES[:, 1]}).to_csv(pois, index=False)
    out = tmp_path / f"{name}.out.csv"
    extra = ("--pois", pois) if method in NEEDS_POIS else ()
    result = cli("perturb", source, "-o", out, "--region", "tky", "-e", "3", "--seed", seed, *args, *extra)
    assert result.returncode == 0, result.stderr
    text = pd.read_csv(out, dtype=str)
    return text[text["uid"] == "7"].set_index("datetime")[["lat", "lng", "epsilon_point"]].sort_index()


@pytest.fixture(params=sorted(RUNS))
def run(request):
    return request.param, RUNS[request.param]


def test_editing_reordering_and_splitting_the_file_leaves_user_7_unchanged(cli, tmp_path, run):
    base = checkins(0)
    first = released_rows(cli, base, tmp_path, "base", run)
    assert len(first) == 9
    # other users: new venues, other lengths, one user gone, one new user
    others = checkins(1, users=(8, 9, 11), lengths=(15, 2, 7))
    edited = pd.concat([base[base["uid"] == 7], others], ignore_index=True)
    pd.testing.assert_frame_equal(released_rows(cli, edited, tmp_path, "edited", run), first)
    shuffled = base.sample(frac=1.0, random_state=4)
    pd.testing.assert_frame_equal(released_rows(cli, shuffled, tmp_path, "shuffled", run), first)
    alone = base[base["uid"] == 7]
    pd.testing.assert_frame_equal(released_rows(cli, alone, tmp_path, "alone", run), first)
    # non-trivial: another seed releases other points
    assert not released_rows(cli, base, tmp_path, "seed", run, seed="6")["lat"].equals(first["lat"])
