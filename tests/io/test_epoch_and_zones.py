"""Epoch times told by their magnitude, forced units, compact dates, time zones and offsets."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from tracs.io.times import TimeFormatError, check_timezone, epoch_unit, parse_times

MARCH = np.datetime64("2024-03-01T00:00:00", "ns")


@pytest.mark.parametrize("values, expected, note", [
    # numbers (Parquet, frames)
    (pd.Series([1709251200, 1709251260]), [MARCH, MARCH + np.timedelta64(60, "s")], "epoch seconds"),
    (pd.Series([1709251200000]), [MARCH], "epoch milliseconds"),
    (pd.Series([1709251200000000]), [MARCH], "epoch microseconds"),
    (pd.Series([1709251200000000123]), [MARCH + np.timedelta64(123, "ns")], "epoch nanoseconds"),
    (pd.Series([1709251200.25]), [MARCH + np.timedelta64(250, "ms")], "epoch seconds"),
    (pd.Series([0, 86400]), [np.datetime64("1970-01-01", "ns"), np.datetime64("1970-01-02", "ns")],
     "epoch seconds"),
    # text made of digits (CSV as the command line reads it)
    (["1709251200"], [MARCH], "epoch seconds"),
    (["1709251200000", " 1709251260000 "], [MARCH, MARCH + np.timedelta64(60, "s")], "epoch milliseconds"),
    (["1709251200000000"], [MARCH], "epoch microseconds"),
    (["1709251200000000123"], [MARCH + np.timedelta64(123, "ns")], "epoch nanoseconds"),
    # compact dates are dates, not epoch seconds
    (["20240301", "20240302"], [MARCH, MARCH + np.timedelta64(1, "D")], "'%Y%m%d'"),
    (["20240301000000"], [MARCH], "'%Y%m%d%H%M%S'"),
])
def test_epoch_detected_by_magnitude(values, expected, note):
    notes = []
    out = parse_times(values, notes=notes, flags={"time_format": "--time-format"})
    assert list(out) == expected
    assert any(note in n for n in notes), notes


def test_detection_note_names_the_reading_and_the_option():
    notes = []
    parse_times(["1709251200000"], notes=notes, flags={"time_format": "--time-format"})
    assert notes[0] == ("times read as Unix epoch milliseconds (UTC), told by their magnitude (1709251200000 = "
                        "2024-03-01T00:00:00); --time-format epoch-s|epoch-ms|epoch-us|epoch-ns forces a unit")


def test_a_value_of_another_magnitude_is_unreadable():
    notes = []
    out = parse_times(["1709251200000", "1709251260000", "1709251200"], notes=notes)
    assert np.isnat(out).tolist() == [False, False, True]
    assert any("1 time(s) of another magnitude than Unix epoch milliseconds were not read" in n for n in notes)


@pytest.mark.parametrize("fmt, values, expected", [
    ("epoch-s", ["1709251200"], MARCH),
    ("%s", ["1709251200"], MARCH),
    ("epoch-ms", ["1709251200"], np.datetime64("1970-01-20T18:47:31.200", "ns")),
    ("epoch-us", [1709251200000000], MARCH),
    ("epoch-ns", ["1709251200000000000"], MARCH),
    ("epoch-s", ["20240301"], np.datetime64("1970-08-23T06:18:21", "ns")),  # forced: not a compact date
])
def test_forced_units(fmt, values, expected):
    notes = []
    out = parse_times(values, time_format=fmt, notes=notes, flags={"time_format": "--time-format"})
    assert out[0] == expected
    assert "as given with --time-format" in notes[0]


@pytest.mark.parametrize("magnitude, unit", [(0, "epoch-s"), (9.9e10, "epoch-s"), (1e11, "epoch-ms"),
                                             (9.9e13, "epoch-ms"), (1e14, "epoch-us"), (1e17, "epoch-ns")])
def test_epoch_bands(magnitude, unit):
    assert epoch_unit(magnitude) == unit


@pytest.mark.parametrize("zone, naive, utc", [
    ("Europe/Lisbon", "2024-07-01 10:00", "2024-07-01T09:00"),  # summer time, UTC+1
    ("Europe/Lisbon", "2024-01-01 10:00", "2024-01-01T10:00"),
    ("Asia/Shanghai", "2008-02-02 15:36:08", "2008-02-02T07:36:08"),
    ("+01:00", "2024-01-01 10:00", "2024-01-01T09:00"),
    ("-0330", "2024-01-01 10:00", "2024-01-01T13:30"),
    ("UTC+2", "2024-01-01 10:00", "2024-01-01T08:00"),
])
def test_zones_and_offsets(zone, naive, utc):
    notes = []
    out = parse_times([naive], tz=zone, notes=notes)
    assert out[0] == np.datetime64(utc, "ns")
    assert "converted to UTC" in notes[-1]


def test_epoch_times_ignore_the_zone():
    assert parse_times(["1709251200"], tz="Asia/Shanghai")[0] == MARCH


@pytest.mark.parametrize("call, error, message", [
    (lambda: check_timezone("Mars/Base", "--timezone"), ValueError,
     "--timezone Mars/Base: not a timezone; give a name such as Europe/Lisbon"),
    (lambda: check_timezone("+25:00", "--timezone"), ValueError, "--timezone +25:00: an offset must be within"),
    (lambda: parse_times(["1"], time_format="epoch-min", flags={"time_format": "--time-format"}), ValueError,
     "--time-format epoch-min: the epoch units are epoch-s, epoch-ms, epoch-us, epoch-ns"),
    (lambda: parse_times(pd.Series([1709251200]), time_format="%Y", flags={"time_format": "--time-format"}),
     TimeFormatError, "the times are numbers (e.g. 1709251200), not text in the layout '%Y'"),
    (lambda: parse_times(["soon"], flags={"time_format": "--time-format"}), TimeFormatError,
     "or epoch-s|epoch-ms|epoch-us|epoch-ns for Unix epoch numbers"),
])
def test_bad_time_options(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value), str(info.value)


def test_check_timezone_values():
    assert check_timezone(None) == "UTC" and check_timezone("Europe/Lisbon") == "Europe/Lisbon"
    assert check_timezone("+05:30") == dt.timezone(dt.timedelta(hours=5, minutes=30))
