"""Each user's times are read by that user's own values, on the command line: another
user's rows never change how a user's times are read nor what is released of them; a bad
time drops its row wherever it is; wall times a timezone skips or repeats; a file without
a time column needs --no-time, which keeps the file's order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

PORTO = "--region=-8.8,41.0,-8.5,41.3"


def _csv(path, rows, header="uid,time,lat,lng"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def _perturb(cli, source, out, *extra):
    return cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--seed", "5", PORTO, *extra)


def _released(out, user):
    frame = pd.read_csv(out, dtype={"uid": str, "datetime": str})
    return frame[frame["uid"] == user].reset_index(drop=True)


ALICE = [("alice", "02/01/2024 08:00", 41.15, -8.61), ("alice", "01/03/2024 08:00", 41.16, -8.62),
         ("alice", "01/04/2024 09:00", 41.17, -8.60)]
BOB = [("bob", "13/05/2024 08:00", 41.14, -8.63), ("bob", "14/05/2024 08:00", 41.13, -8.64)]


def test_another_users_layout_does_not_change_a_users_release(cli, tmp_path):
    alone, together = tmp_path / "alone.csv", tmp_path / "together.csv"
    _csv(alone, ALICE)
    _csv(together, BOB[:1] + ALICE + BOB[1:])
    for source in (alone, together):
        result = _perturb(cli, source, source.with_suffix(".out.csv"))
        assert result.returncode == 0, result.stderr
    mine = _released(alone.with_suffix(".out.csv"), "alice")
    assert mine.equals(_released(together.with_suffix(".out.csv"), "alice"))
    assert list(mine["datetime"].str[:10]) == ["2024-02-01", "2024-01-03", "2024-01-04"]  # month first: her own
    assert _released(together.with_suffix(".out.csv"), "bob")["datetime"].str[:10].tolist() == \
        ["2024-05-13", "2024-05-14"]


def test_one_note_when_layouts_differ(cli, tmp_path):
    source = _csv(tmp_path / "in.csv", ALICE + BOB + [("carol", "2024-05-13 08:00", 41.15, -8.6)])
    result = _perturb(cli, source, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "layouts among" in line]
    assert notes == ["tracs perturb: note: times: 3 layouts among 3 users: ISO 8601 for 1 user (e.g. "
                     "'2024-05-13 08:00'); '%m/%d/%Y %H:%M' for 1 user (e.g. '02/01/2024 08:00'); '%d/%m/%Y %H:%M' "
                     "for 1 user (e.g. '13/05/2024 08:00')"], result.stderr
    assert "times of 1 user like '02/01/2024 08:00' read both ways: read with '%m/%d/%Y %H:%M' (month first; " \
           "give --dayfirst to read them day first)" in result.stderr


def test_seconds_and_milliseconds_users_are_both_read(cli, tmp_path):
    march = 1709251200
    rows = [("s", march + 60 * i, 41.15, -8.61) for i in range(2)] + \
        [(u, (march + 60 * i) * 1000, 41.15, -8.61) for u in ("ms1", "ms2") for i in range(2)]
    result = _perturb(cli, _csv(tmp_path / "in.csv", rows), tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(tmp_path / "out.csv", dtype={"uid": str})
    assert len(frame) == 6 and set(frame["datetime"].str[:16]) == {"2024-03-01 00:00", "2024-03-01 00:01"}
    assert "Unix epoch seconds for 1 user" in result.stderr and "Unix epoch milliseconds for 2 users" in result.stderr


@pytest.mark.parametrize("where", [0, 499])
def test_a_bad_time_drops_its_row_wherever_it_is(cli, tmp_path, where):
    rows = [("u%d" % (i % 7), f"{1 + i % 28:02d}/05/2024 {i % 24:02d}:00", 41.15, -8.61) for i in range(500)]
    rows[where] = (rows[where][0], "31/31/2024 99:99", 41.15, -8.61)
    result = _perturb(cli, _csv(tmp_path / "in.csv", rows), tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    assert f"dropped 1 row(s): the time is empty or cannot be parsed in column 'time': line {where + 2}" \
        in result.stderr
    assert len(pd.read_csv(tmp_path / "out.csv")) == 499


@pytest.mark.parametrize("ambiguous, expected", [(None, "2024-10-27 00:30:00+00:00"), ("earlier", "2024-10-27 00:30:00+00:00"),
                                                 ("later", "2024-10-27 01:30:00+00:00")])
def test_lisbon_gap_and_overlap(cli, tmp_path, ambiguous, expected):
    rows = [("a", "2024-03-31 01:30", 41.15, -8.61), ("a", "2024-10-27 01:30", 41.16, -8.62),
            ("a", "2024-10-27 03:00", 41.17, -8.63)]
    extra = ["--timezone", "Europe/Lisbon"] + (["--ambiguous", ambiguous] if ambiguous else [])
    result = _perturb(cli, _csv(tmp_path / "in.csv", rows), tmp_path / "out.csv", *extra)
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(tmp_path / "out.csv")
    assert frame["datetime"].tolist() == [expected, "2024-10-27 03:00:00+00:00"]
    assert "dropped 1 row(s): the time is empty or cannot be parsed in column 'time': line 2" in result.stderr
    assert "1 time (e.g. 2024-03-31 01:30:00) does not exist in Europe/Lisbon: clocks jump from 01:00 to 02:00 " \
           "on 2024-03-31" in result.stderr
    assert f"occurs twice in Europe/Lisbon: clocks go back from 02:00 to 01:00 on 2024-10-27; read as the " \
           f"{ambiguous or 'earlier'} occurrence" in result.stderr


def test_no_time_keeps_the_file_order(cli, tmp_path):
    rows = [("a", f"2024-05-01 0{i}:00", 41.15 + i / 100, -8.61) for i in range(4)]
    timed = _csv(tmp_path / "timed.csv", rows)
    reversed_times = _csv(tmp_path / "reversed.csv", [(u, t, la, lo) for (u, _, la, lo), (_, t, _, _)
                                                      in zip(rows, rows[::-1])])
    untimed = _csv(tmp_path / "untimed.csv", [(u, la, lo) for u, _, la, lo in rows], header="uid,lat,lng")
    outs = {}
    for name, source, extra in (("timed", timed, []), ("reversed", reversed_times, ["--no-time"]),
                                ("untimed", untimed, ["--no-time"])):
        result = _perturb(cli, source, tmp_path / f"{name}.out.csv", *extra)
        assert result.returncode == 0, result.stderr
        outs[name] = pd.read_csv(tmp_path / f"{name}.out.csv")
    for name in ("reversed", "untimed"):
        assert np.array_equal(outs[name][["lat", "lng"]].to_numpy(), outs["timed"][["lat", "lng"]].to_numpy())
        assert outs[name]["datetime"].isna().all()
    assert "the column 'time' is not read" in _perturb(cli, reversed_times, tmp_path / "x.csv", "--no-time").stderr


@pytest.mark.parametrize("header, extra, message", [
    ("uid,lat,lng", [], "tracs perturb: error: in.csv: missing column for time: none of datetime, time, timestamp, "
                        "utctime, checkintime (name it with --time-col NAME, or give --no-time to keep the file's "
                        "order without times). Columns found: uid, lat, lng"),
    ("uid,time,lat,lng", ["--ambiguous", "first"], "argument --ambiguous: invalid choice: 'first'"),
    ("uid,datetime,lat,lng", [], "tracs perturb: error: in.csv: the time column 'datetime' is empty in every row "
                                 "(name another with --time-col NAME, or give --no-time to keep the file's order "
                                 "without times)"),
    ("uid,time,lat,lng", ["--timezone", "Lisbon"], "--timezone Lisbon: not a timezone"),
])
def test_refused(cli, tmp_path, header, extra, message):
    values = {"uid,lat,lng": "a,41.15,-8.61", "uid,datetime,lat,lng": "a,,41.15,-8.61"}.get(
        header, "a,2024-05-01 08:00,41.15,-8.61")
    (tmp_path / "in.csv").write_text(f"{header}\n{values}\n")
    try:
        result = _perturb(cli, tmp_path / "in.csv", tmp_path / "out.csv", *extra)
    except SystemExit as exit_:  # argparse
        assert exit_.code == 2
        return
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1


def test_split_gap_says_it_splits_no_untimed_points(cli, tmp_path):
    source = _csv(tmp_path / "in.csv", [("a", 41.15, -8.61), ("a", 41.16, -8.62), ("b", 41.17, -8.6)],
                  header="uid,lat,lng")
    result = _perturb(cli, source, tmp_path / "out.csv", "--no-time", "--split-gap", "1s")
    assert result.returncode == 0, result.stderr
    assert "--split-gap splits no trajectory at points without a time: they keep the file's order" in result.stderr
    assert "3 points in 2 trajectories" in result.stdout
