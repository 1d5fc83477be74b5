"""Column resolution and time parsing: aliases, explicit names, one message for every
missing column, explicit / detected time layouts and what the notes say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracs.io.columns import API_FLAGS, CLI_FLAGS, MissingColumnsError, resolve_columns
from tracs.io.times import TimeFormatError, parse_times


@pytest.mark.parametrize("columns, expected", [
    (["uid", "datetime", "lat", "lng"], ("uid", "datetime", "lat", "lng")),
    (["User ID", "Timestamp", "Latitude", "Longitude"], ("User ID", "Timestamp", "Latitude", "Longitude")),
    (["user_id", "time", "y", "x"], ("user_id", "time", "y", "x")),
    (["USER", "DateTime", "LAT", "LONG"], ("USER", "DateTime", "LAT", "LONG")),
    (["user", "time", "lat", "lon", "trip_id"], ("user", "time", "lat", "lon")),
    # other tools' names: trackintel / Posmo, Movebank, AIS (MarineCadastre, both cases), taxi sets
    (["id", "user_id", "tracked_at", "latitude", "longitude"], ("user_id", "tracked_at", "latitude", "longitude")),
    (["event-id", "timestamp", "location-long", "location-lat", "tag-local-identifier",
      "individual-local-identifier"], ("individual-local-identifier", "timestamp", "location-lat", "location-long")),
    (["MMSI", "BaseDateTime", "LAT", "LON", "SOG"], ("MMSI", "BaseDateTime", "LAT", "LON")),
    (["mmsi", "basedatetime", "lat", "lon"], ("mmsi", "basedatetime", "lat", "lon")),
    (["TaxiID", "Time", "Lat", "Lng"], ("TaxiID", "Time", "Lat", "Lng")),
])
def test_aliases(columns, expected):
    cmap = resolve_columns(columns)
    assert (cmap.user, cmap.time, cmap.lat, cmap.lon) == expected


def test_trajectory_alias_and_explicit_names():
    cmap = resolve_columns(["who", "when", "north", "east", "trip_id"], user="who", time="when",
                           lat="north", lon="east")
    assert cmap.used() == ["who", "when", "north", "east", "trip_id"]
    assert resolve_columns(["uid", "datetime", "lat", "lng"]).traj is None


def test_all_missing_columns_in_one_message_with_flags():
    with pytest.raises(MissingColumnsError) as info:
        resolve_columns(["a", "b", "c"], flags=CLI_FLAGS, source="f.csv")
    message = str(info.value)
    assert info.value.missing == ("user", "time", "lat", "lon")
    for flag in ("--user-col", "--time-col", "--lat-col", "--lon-col"):
        assert flag in message
    assert "Columns found: a, b, c" in message and "user=" not in message


@pytest.mark.parametrize("kwargs, fragment", [
    ({"lat": "north"}, "no column 'north' (lat= north)"),
    ({"user": "who"}, "no column 'who' (user= who)"),
])
def test_named_column_absent(kwargs, fragment):
    with pytest.raises(MissingColumnsError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        resolve_columns(["uid", "datetime", "lat", "lng"], flags=API_FLAGS, **kwargs)


def test_coordinates_not_needed_with_geometry():
    cmap = resolve_columns(["uid", "datetime"], need_coords=False)
    assert cmap.lat is None and cmap.lon is None


def _utc(text):
    return np.datetime64(pd.Timestamp(text).tz_convert("UTC").tz_localize(None), "ns")


def test_iso_and_offsets():
    notes = []
    out = parse_times(pd.Series(["2024-01-02T08:00:00+02:00", "2024-01-02 06:00:00Z", "", None]), notes=notes)
    assert out[0] == out[1] == _utc("2024-01-02T06:00Z")
    assert np.isnat(out[2]) and np.isnat(out[3])


def test_slash_dates_month_first_by_default_and_noted():
    notes = []
    out = parse_times(["01/02/2024 08:00", "03/04/2024 09:30"], notes=notes, flags=CLI_FLAGS | {
        "dayfirst": "--dayfirst", "time_format": "--time-format"})
    assert out[0] == _utc("2024-01-02T08:00Z")
    assert any("'%m/%d/%Y %H:%M'" in n and "--dayfirst" in n for n in notes), notes


def test_slash_dates_dayfirst():
    out = parse_times(["01/02/2024 08:00"], dayfirst=True)
    assert out[0] == _utc("2024-02-01T08:00Z")


def test_unambiguous_day_first_detected():
    notes = []
    out = parse_times(["25/12/2024 08:00", "01/02/2024 08:00"], notes=notes)
    assert out[0] == _utc("2024-12-25T08:00Z") and out[1] == _utc("2024-02-01T08:00Z")
    assert any("%d/%m/%Y %H:%M" in n for n in notes)


def test_explicit_format():
    out = parse_times(["02.01.2024 08:00"], time_format="%d.%m.%Y %H:%M")
    assert out[0] == _utc("2024-01-02T08:00Z")


def test_foursquare_layout():
    out = parse_times(["Sat Dec 08 05:56:34 +0000 2012"])
    assert out[0] == _utc("2012-12-08T05:56:34Z")


def test_epoch_seconds():
    notes = []
    out = parse_times(pd.Series([0, 86400.5]), notes=notes)
    assert out[1] == np.datetime64("1970-01-02T00:00:00.5", "ns") and "epoch" in notes[0]


@pytest.mark.parametrize("values, kwargs, error, fragment", [
    (["yesterday at noon", "today"], {}, TimeFormatError, "tried ISO 8601"),
    (["yesterday at noon"], {"flags": {"time_format": "--time-format"}}, TimeFormatError, "--time-format"),
    (["2024-01-02"], {"time_format": "%d/%m/%Y"}, TimeFormatError, "no time matches the format"),
    (pd.Series([True, False]), {}, TypeError, "booleans"),
])
def test_unreadable_times(values, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        parse_times(values, **kwargs)


def test_timezone_of_naive_times():
    out = parse_times(["2024-07-01 12:00"], tz="Europe/Paris")
    assert out[0] == _utc("2024-07-01T10:00Z")


@pytest.mark.parametrize("header, row, user", [
    ("event-id,visible,timestamp,location-long,location-lat,individual-taxon-canonical-name,"
     "tag-local-identifier,individual-local-identifier",
     "1,true,2010-05-28 02:02:09.000,-8.61,41.14,Ciconia ciconia,T1,Stork 7", "Stork 7"),        # Movebank
    ("MMSI,BaseDateTime,LAT,LON,SOG", "367000001,2023-01-01T00:00:01,41.14,-8.61,0.1", "367000001"),  # AIS
    ("id,user_id,tracked_at,latitude,longitude", "1,007,2024-01-01T00:00:00+01:00,41.14,-8.61", "007"),  # trackintel
])
def test_files_of_other_tools_are_read_without_naming_columns(header, row, user, tmp_path):
    from tracs.io import read_checkins

    path = tmp_path / "points.csv"
    path.write_text(header + "\n" + row + "\n")
    frame = read_checkins(path)
    assert frame["uid"].tolist() == [user] and frame.geometry.x.tolist() == [-8.61]
