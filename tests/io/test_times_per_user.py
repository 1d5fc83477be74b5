"""Times read per group (``parse_times(..., groups=)``): each user's layout, day/month
order and epoch unit come from that user's own values; a bad value is unreadable
wherever it is; wall times in a gap or overlap of the timezone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracs.io.times import TimeFormatError, TimeReader, parse_times


def _ns(text):
    return np.datetime64(text, "ns")


def test_another_users_day_first_date_does_not_change_mine():
    alice = ["01/03/2024 08:00", "02/03/2024 08:00"]
    bob = ["13/05/2024 08:00"]
    alone = parse_times(alice, groups=[0, 0])
    together = parse_times(alice + bob, groups=[0, 0, 1])
    assert list(together[:2]) == list(alone) == [_ns("2024-01-03T08:00"), _ns("2024-02-03T08:00")]
    assert together[2] == _ns("2024-05-13T08:00")


def test_without_groups_the_column_is_one_group():
    notes = []
    out = parse_times(["01/03/2024 08:00", "13/05/2024 08:00"], notes=notes)
    assert out[0] == _ns("2024-03-01T08:00")  # day first fits every value of the one group
    assert any("'%d/%m/%Y %H:%M'" in n for n in notes), notes


def test_layouts_differ_one_note():
    notes = []
    parse_times(["01/03/2024 08:00", "13/05/2024 08:00", "2024-05-13 08:00"], groups=[0, 1, 2], notes=notes)
    line = [n for n in notes if n.startswith("times: ")]
    assert len(line) == 1 and line[0].startswith("times: 3 layouts among 3 users: "), notes
    assert "'%m/%d/%Y %H:%M' for 1 user (e.g. '01/03/2024 08:00')" in line[0]
    assert "ISO 8601 for 1 user" in line[0]


def test_seconds_and_milliseconds_users():
    values = pd.Series([1709251200, 1709251260, 1709251200000, 1709251260000, 1709251320000])
    out = parse_times(values, groups=np.array([7, 7, 3, 3, 3]))
    assert list(out) == [_ns("2024-03-01T00:00"), _ns("2024-03-01T00:01")] + \
        [_ns("2024-03-01T00:00"), _ns("2024-03-01T00:01"), _ns("2024-03-01T00:02")]
    text = parse_times(["1709251200", "1709251200000", "1709251260000"], groups=[0, 1, 1])
    assert not np.isnat(text).any()


@pytest.mark.parametrize("where", [0, 499])
def test_a_bad_time_is_unreadable_wherever_it_is(where):
    values = [f"{1 + i % 28:02d}/05/2024 08:00" for i in range(500)]
    values[where] = "31/31/2024 99:99"
    notes = []
    out = parse_times(values, notes=notes)
    assert np.isnat(out).sum() == 1 and np.isnat(out[where])
    assert any("1 time not in the layout of the other times was not read" in n for n in notes), notes


def test_a_group_with_nothing_readable_is_unread_not_refused():
    out = parse_times(["2024-05-01 08:00", "soon"], groups=[0, 1])
    assert out[0] == _ns("2024-05-01T08:00") and np.isnat(out[1])
    with pytest.raises(TimeFormatError, match="cannot read times like 'soon'"):
        parse_times(["soon", "later"], groups=[0, 1])


def test_groups_decided_by_their_own_values_are_independent_of_order():
    rng = np.random.default_rng(3)
    values = np.array(["01/03/2024 08:00", "13/05/2024 08:00", "1709251200", "2024-05-13 08:00"] * 5, dtype=object)
    groups = np.repeat(np.arange(5), 4)
    out = parse_times(list(values), groups=groups)
    order = rng.permutation(len(values))
    shuffled = parse_times(list(values[order]), groups=groups[order])
    assert np.array_equal(shuffled.view(np.int64), out[order].view(np.int64))


@pytest.mark.parametrize("ambiguous, expected", [("earlier", "2024-10-27T00:30"), ("later", "2024-10-27T01:30")])
def test_lisbon_overlap(ambiguous, expected):
    notes = []
    out = parse_times(["2024-10-27 01:30", "2024-07-01 10:00"], tz="Europe/Lisbon", ambiguous=ambiguous,
                      notes=notes, flags={"ambiguous": "--ambiguous"})
    assert out[0] == _ns(expected) and out[1] == _ns("2024-07-01T09:00")
    assert any("occurs twice in Europe/Lisbon: clocks go back from 02:00 to 01:00 on 2024-10-27; read as the "
               f"{ambiguous} occurrence" in n for n in notes), notes


def test_lisbon_gap_is_unread_with_its_reason():
    notes = []
    out = parse_times(["2024-03-31 01:30", "2024-03-31 02:30"], tz="Europe/Lisbon", notes=notes)
    assert np.isnat(out[0]) and out[1] == _ns("2024-03-31T01:30")
    assert any("1 time (e.g. 2024-03-31 01:30:00) does not exist in Europe/Lisbon: clocks jump from 01:00 to 02:00 "
               "on 2024-03-31" in n for n in notes), notes


def test_overlap_matches_zoneinfo_folds():
    import datetime as dt
    import zoneinfo

    zone = zoneinfo.ZoneInfo("Europe/Lisbon")
    wall = dt.datetime(2024, 10, 27, 1, 30)
    for ambiguous, fold in (("earlier", 0), ("later", 1)):
        utc = wall.replace(tzinfo=zone, fold=fold).astimezone(dt.timezone.utc).replace(tzinfo=None)
        assert parse_times([str(wall)], tz="Europe/Lisbon", ambiguous=ambiguous)[0] == np.datetime64(utc, "ns")


@pytest.mark.parametrize("kwargs, error, message", [
    ({"groups": [0]}, ValueError, "groups= needs one code per value (2)"),
    ({"groups": ["a", "b"]}, TypeError, "groups= must be integer codes"),
    ({"ambiguous": "first"}, ValueError, "ambiguous= first: choose earlier or later"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        parse_times(["2024-01-01 00:00", "2024-01-02 00:00"], **kwargs)
    assert message in str(info.value)


def test_reader_without_groups_reads_later_chunks_like_the_first():
    reader = TimeReader()
    first = reader(["01/03/2024 08:00"])
    later = reader(["13/05/2024 08:00", "02/03/2024 08:00"])
    assert first[0] == _ns("2024-01-03T08:00") and np.isnat(later[0]) and later[1] == _ns("2024-02-03T08:00")


def test_loaders_read_each_users_times_by_their_own_values(tmp_path):
    import data_loaders as dl

    frame = pd.DataFrame({"uid": ["alice", "alice", "bob"], "datetime": ["02/01/2024 08:00", "01/03/2024 08:00",
                                                                          "13/05/2024 08:00"],
                          "lat": [41.15, 41.16, 41.17], "lng": [-8.61, -8.62, -8.63]})
    out = dl.load_checkins(frame)
    alice = out[out["uid"] == "alice"]["datetime"].dt.strftime("%Y-%m-%d").tolist()
    assert alice == ["2024-01-03", "2024-02-01"]  # month first: her own times read both ways
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    from tracs.io import read_checkins

    again = read_checkins(path)
    assert again[again["uid"] == "alice"]["datetime"].dt.strftime("%Y-%m-%d").tolist() == alice


@pytest.mark.parametrize("text, kwargs, error, message", [
    ("uid,lat,lng\na,41.1,-8.6\n", {}, "MissingColumnsError",
     "in.csv: missing column for time: none of datetime, time, timestamp, utctime, checkintime, trackedat, basedatetime (name it with time= "
     "NAME, or give no_time=True to keep the file's order without times). Columns found: uid, lat, lng"),
    ("uid,datetime,lat,lng\na,,41.1,-8.6\n", {}, "InputError",
     "in.csv: the time column 'datetime' is empty in every row (name another with time= NAME, or give "
     "no_time=True to keep the file's order without times)"),
    ("uid,datetime,lat,lng\na,2024-01-01 00:00,41.1,-8.6\n", {"ambiguous": "both"}, "InputError",
     "ambiguous= both: choose earlier or later"),
    ("uid,datetime,lat,lng\na,soon,41.1,-8.6\nb,later,41.2,-8.6\n", {}, "TimeFormatError",
     "cannot read times like 'soon': tried ISO 8601 and 42 common layouts"),
])
def test_reading_refuses(tmp_path, text, kwargs, error, message):
    from tracs.io import read_checkins

    (tmp_path / "in.csv").write_text(text)
    with pytest.raises(Exception) as info:
        read_checkins(tmp_path / "in.csv", **kwargs)
    assert type(info.value).__name__ == error and message in str(info.value), str(info.value)


def test_no_time_reads_the_file_order(tmp_path):
    from tracs.io import read_checkins

    (tmp_path / "in.csv").write_text("uid,datetime,lat,lng\na,2024-01-02,41.1,-8.6\na,2024-01-01,41.2,-8.6\n")
    frame = read_checkins(tmp_path / "in.csv", no_time=True)
    assert frame.geometry.y.tolist() == [41.1, 41.2] and frame["datetime"].isna().all()
    assert any("the column 'datetime' is not read" in n for n in frame.attrs["report"].notes)
