"""The synthetic city, the real data sets (TRACS_DATA_DIR) and the benchmark's smoke run."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely

import data_loaders as dl

GEOD = pyproj.Geod(ellps="WGS84")


def xy(frame) -> np.ndarray:
    return shapely.get_coordinates(np.asarray(frame.geometry.array))


def assert_time_ordered(frame):
    """Users in order, each user's check-ins in time order."""
    uid = frame["uid"].to_numpy()
    t = frame["datetime"].array.asi8
    assert np.all(np.diff(uid) >= 0)
    same = np.diff(uid) == 0
    assert np.all(np.diff(t)[same] >= 0)


# ------------------------------------------------------------------------ synthetic

def test_synthetic_is_seeded_and_in_the_loaders_form():
    a = dl.synthetic_checkins(users=40, seed=9)
    b = dl.synthetic_checkins(users=40, seed=9)
    c = dl.synthetic_checkins(users=40, seed=10)
    assert a.equals(b) and not a.equals(c)
    assert list(a.columns) == ["uid", "datetime", "poi_id", "category", "source_row", "geometry"]
    assert a.crs.to_epsg() == 4326 and str(a["datetime"].dtype) == "datetime64[ns, UTC]"
    assert a["uid"].nunique() == 40
    assert_time_ordered(a)
    report = a.attrs["report"]
    assert report.format == "synthetic" and report.n_dropped == 0 and report.rows_kept == len(a)


def test_synthetic_city_is_plausible():
    frame = dl.synthetic_checkins(users=300, seed=1, checkins_per_user=30, pois=800,
                                  center=(-87.63, 41.88), radius_m=10_000)
    lon, lat = xy(frame).T
    _, _, dist = GEOD.inv(np.full(len(lon), -87.63), np.full(len(lat), 41.88), lon, lat)
    assert np.quantile(dist, 0.99) < 14_000  # within the city (Gaussian tails allowed)
    assert 28 <= len(frame) / 300 <= 32  # mean check-ins per user
    venues = frame.drop_duplicates("poi_id")
    assert len(venues) <= 800
    # each venue has one position
    assert frame.groupby("poi_id").geometry.nunique().max() == 1
    # popularity is skewed: the top 10 % of venues take far more than 10 % of check-ins
    counts = frame["poi_id"].value_counts().to_numpy()
    assert counts[: len(counts) // 10].sum() > 0.3 * counts.sum()
    # POIs cluster: mean nearest-neighbour distance far below that of uniform points
    metric = dl.to_trajectories(venues).coords
    d = np.hypot(*(metric[:, None, :] - metric[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    area = np.pi * 10_000.0**2
    assert d.min(axis=1).mean() < 0.5 * 0.5 * np.sqrt(area / len(venues))
    # sessions: a 3 h split gives several trajectories per user, most longer than one point
    traj = dl.to_trajectories(frame, split_gap="3h")
    assert 3 <= len(traj) / 300 <= 15 and np.median(traj.lengths) >= 2


@pytest.mark.parametrize("kwargs, error", [
    ({"users": 0}, ValueError), ({"users": 2.0}, TypeError), ({"checkins_per_user": 0.5}, ValueError),
    ({"radius_m": -1.0}, ValueError), ({"center": (0.0, 89.0)}, ValueError),
    ({"pois": 0}, ValueError), ({"seed": "x"}, TypeError)])
def test_synthetic_bad_arguments(kwargs, error):
    args = {"users": 3, "seed": 0} | kwargs
    with pytest.raises(error):
        dl.synthetic_checkins(**args)


def test_synthetic_handles_more_neighbourhoods_than_venues():
    frame = dl.synthetic_checkins(users=20, seed=1, pois=3, clusters=10)
    assert set(frame["poi_id"]) <= {0, 1, 2}


# ---------------------------------------------------------------------- real data

# rows, users, unique locations (coordinate pairs) from the data sets' README
EXPECTED = {"tky": (29_114, 101, 7_798), "nyc": (21_081, 101, 7_386), "chi": (36_094, 3_990, 1_000)}
REPEATS = {"tky": (33, 14), "nyc": (19, 0), "chi": (5, 0)}  # exact, other (user, time) repeats


@pytest.fixture(params=["tky", "nyc", "chi"])
def real(request):
    path = request.getfixturevalue(f"{request.param}_path")
    loader = dl.load_gowalla if request.param == "chi" else dl.load_foursquare
    return request.param, path, loader(path)


@pytest.mark.data
def test_real_counts_and_order(real):
    name, path, frame = real
    rows, users, locations = EXPECTED[name]
    assert len(frame) == rows
    assert frame["uid"].nunique() == users
    assert len(np.unique(xy(frame), axis=0)) == locations
    if name == "chi":
        assert frame["poi_id"].nunique() == locations
    assert_time_ordered(frame)
    report = frame.attrs["report"]
    assert (report.rows_read, report.rows_kept, report.dropped) == (rows, rows, {})
    assert (len(report.exact_duplicates), len(report.repeated_times)) == REPEATS[name]
    assert frame["datetime"].dt.year.between(2009, 2013).all()


@pytest.mark.data
def test_real_rows_are_the_file_rows_stably_sorted(real):
    name, path, frame = real
    raw = pd.read_csv(path, encoding="latin-1")
    time = "Timestamp" if name == "chi" else "UTC Time"
    if name == "chi":
        t = pd.to_datetime(raw[time], format="%Y-%m-%d %H:%M:%S", utc=True)
    else:  # pandas' own (slow) strptime path, as an independent check of the fast parser
        t = pd.to_datetime(raw[time], format="%a %b %d %H:%M:%S %z %Y", utc=True)
    t = t.astype("datetime64[ns, UTC]")
    order = np.lexsort((t.array.asi8, raw["User ID"].to_numpy()))
    np.testing.assert_array_equal(frame["uid"], raw["User ID"].to_numpy()[order])
    np.testing.assert_array_equal(frame["datetime"].array.asi8, t.array.asi8[order])
    np.testing.assert_array_equal(xy(frame), raw[["Longitude", "Latitude"]].to_numpy()[order])
    if name != "chi":
        offset = raw["Timezone"].to_numpy()[order]
        np.testing.assert_array_equal(frame["utc_offset"], offset)
        local = frame["datetime"].dt.tz_localize(None) + pd.to_timedelta(offset, unit="min")
        assert frame["local_time"].equals(local.rename("local_time"))
        assert frame["poi_id"].tolist() == raw["Venue ID"].to_numpy()[order].tolist()


@pytest.mark.data
def test_real_round_trip_and_trajectories(real):
    name, _, frame = real
    traj = dl.to_trajectories(frame)
    assert traj.crs.to_epsg() == {"tky": 32654, "nyc": 32618, "chi": 32616}[name]
    assert len(traj) == EXPECTED[name][1] and traj.n_points == EXPECTED[name][0]
    back = traj.to_wgs84().coords
    lon, lat = xy(frame).T
    _, _, dist = GEOD.inv(lon, lat, back[:, 0], back[:, 1])
    assert dist.max() <= 1e-3  # metres
    assert len(traj.pois().coords) == EXPECTED[name][2]
    assert traj.region().contains(traj.coords).all()
    for start, stop in zip(traj.offsets[:-1], traj.offsets[1:]):  # time order inside each
        assert np.all(np.diff(traj.frame["datetime"].array.asi8[start:stop]) >= 0)


@pytest.mark.data
def test_tky_original_tsv_form_gives_the_same_frame(tky_path, tmp_path):
    """The headerless latin-1 TSV of the original release, rebuilt from the CSV."""
    raw = pd.read_csv(tky_path, encoding="latin-1", dtype=str)
    original = tmp_path / "dataset_TSMC2014_TKY.txt"
    text = raw.to_csv(sep="\t", header=False, index=False).replace("Café", "Caf\xe9")
    original.write_bytes(text.encode("latin-1"))
    a, b = dl.load_foursquare(tky_path), dl.load_foursquare(original)
    pd.testing.assert_frame_equal(a.drop(columns=["geometry", "source_line"]),
                                  b.drop(columns=["geometry", "source_line"]))
    assert (a["source_line"] - b["source_line"] == 1).all()  # the header line
    np.testing.assert_array_equal(xy(a), xy(b))
    assert b.attrs["report"].format == "foursquare-tsv"


def test_parsers_on_real_looking_times():
    value = "Sat Dec 08 05:56:34 +0000 2012"
    expected = dt.datetime(2012, 12, 8, 5, 56, 34, tzinfo=dt.timezone.utc)
    assert dl.parse_foursquare_time([value])[0] == pd.Timestamp(expected)
    assert dl.parse_iso_time(["2010-10-19T23:55:27Z"])[0] == pd.Timestamp("2010-10-19 23:55:27Z")


# ------------------------------------------------------------------------ benchmark

def test_benchmark_smoke(capsys, monkeypatch):
    """The loading benchmark runs (small input, each figure timed once)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    from benchmarks import loaders

    def once(fn, repeat=3):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    monkeypatch.setattr(loaders, "best_time", once)
    loaders.run(quick=True)
    out = capsys.readouterr().out
    assert "load + project + group" in out and "budget of 10 s" in out  # quick runs are overhead-bound


def test_source_line_restores_the_file_order(tky_path):
    """Rows come sorted by (user, time); their ``source_line`` gives back the file's order."""
    frame = dl.load_foursquare(tky_path)
    raw = pd.read_csv(tky_path, encoding="latin-1", dtype=str)
    back = frame.sort_values("source_line")
    assert back["source_line"].tolist() == list(range(2, len(raw) + 2))  # line 1 is the header
    assert back["poi_id"].tolist() == raw["Venue ID"].tolist()
