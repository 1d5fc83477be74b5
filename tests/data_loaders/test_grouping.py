"""to_trajectories: per user, time-gap splits, de-duplication, minimum length, reports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data_loaders as dl
from tracs import Trajectories

T0 = pd.Timestamp("2012-04-01 08:00", tz="UTC")


def checkins(rows):
    """rows: (uid, minutes after T0, lng, lat, poi_id or None)."""
    frame = pd.DataFrame(rows, columns=["uid", "minutes", "lng", "lat", "poi_id"])
    frame["datetime"] = T0 + pd.to_timedelta(frame.pop("minutes"), unit="min")
    return dl.load_checkins(frame)


ROWS = [  # user 1: gaps 60, 180 (= 3 h), 181 min; user 2: one point; user 3: repeats
    (1, 0, 139.70, 35.60, 10), (1, 60, 139.71, 35.61, 11), (1, 240, 139.72, 35.62, 12),
    (1, 421, 139.73, 35.63, 13),
    (2, 5, 139.74, 35.64, 14),
    (3, 0, 139.75, 35.65, 15), (3, 1, 139.75, 35.65, 15), (3, 2, 139.7501, 35.65, 15),
    (3, 3, 139.76, 35.66, 16), (3, 4, 139.75, 35.65, 15),
]


def test_one_trajectory_per_user():
    traj = dl.to_trajectories(checkins(ROWS))
    assert isinstance(traj, Trajectories)
    assert traj.offsets.tolist() == [0, 4, 5, 10]
    assert traj.frame["trajectory"].tolist() == [0] * 4 + [1] + [2] * 5
    assert traj.crs.to_epsg() == 32654
    report = traj.report
    assert (report.points_in, report.users, report.trajectories, report.points) == (10, 3, 3, 10)
    assert report.load is not None and report.load.rows_kept == 10
    assert traj.frame.attrs["report"] is report.load


@pytest.mark.parametrize("gap", ["3h", pd.Timedelta(hours=3), "180min", np.timedelta64(3, "h")])
def test_split_where_gap_exceeds_threshold(gap):
    traj = dl.to_trajectories(checkins(ROWS), split_gap=gap, crs=None)
    # 180 min gap does not split, 181 does
    assert traj.offsets.tolist() == [0, 3, 4, 5, 10]
    assert traj.report.trajectories_split == 4 and traj.report.split_gap == "0 days 03:00:00"


def test_dedupe_consecutive_same_place():
    traj = dl.to_trajectories(checkins(ROWS), dedupe_consecutive=True, crs=None)
    # user 3: rows at minutes 1 and 2 repeat POI 15 (minute 2 with other coordinates but the
    # same poi_id); minute 4 returns to 15 after 16, so it stays
    assert traj.frame["poi_id"].tolist()[5:] == [15, 16, 15]
    assert traj.report.points_deduplicated == 2 and traj.n_points == 8


def test_dedupe_without_poi_ids_uses_coordinates():
    frame = checkins(ROWS).drop(columns="poi_id")
    traj = dl.to_trajectories(frame, dedupe_consecutive=True, crs=None)
    assert traj.report.points_deduplicated == 1  # only the exact coordinate repeat
    assert traj.n_points == 9


def test_dedupe_never_merges_across_trajectories():
    rows = [(1, 0, 139.7, 35.6, 10), (1, 500, 139.7, 35.6, 10)]
    traj = dl.to_trajectories(checkins(rows), split_gap="3h", dedupe_consecutive=True, crs=None)
    assert traj.n_points == 2 and len(traj) == 2


def test_min_points_drops_short_trajectories_and_reports():
    traj = dl.to_trajectories(checkins(ROWS), split_gap="3h", min_points=2, crs=None)
    assert traj.offsets.tolist() == [0, 3, 8]
    assert traj.frame["trajectory"].tolist() == [0] * 3 + [1] * 5  # renumbered
    r = traj.report
    assert (r.trajectories_too_short, r.points_too_short) == (2, 2)
    assert (r.trajectories, r.points) == (2, 8)
    assert "shorter than 2" in r.summary()


def test_min_points_counts_after_dedupe():
    traj = dl.to_trajectories(checkins(ROWS), min_points=4, dedupe_consecutive=True, crs=None)
    assert traj.frame["uid"].unique().tolist() == [1]  # user 3 has 3 points left
    assert traj.report.points_too_short == 1 + 3


def test_unsorted_input_is_sorted_stably_and_reported():
    frame = checkins(ROWS)
    shuffled = frame.iloc[::-1].reset_index(drop=True)
    traj = dl.to_trajectories(shuffled, crs=None)
    assert traj.report.reordered
    # the tie-free rows come back in (uid, time) order; the frame is the sorted one
    assert traj.frame["datetime"].tolist() == frame["datetime"].tolist()
    assert not dl.to_trajectories(frame, crs=None).report.reordered
    tie = pd.concat([frame.iloc[[0]].assign(poi_id=99), frame.iloc[[0]]]).reset_index(drop=True)
    assert dl.to_trajectories(tie, crs=None).frame["poi_id"].tolist() == [99, 10]


def test_projection_options():
    frame = checkins(ROWS)
    assert dl.to_trajectories(frame, crs=None).crs.to_epsg() == 4326
    assert dl.to_trajectories(frame, crs="EPSG:3857").crs.to_epsg() == 3857
    with pytest.raises(ValueError, match="geographic"):
        dl.to_trajectories(frame, crs="EPSG:4326")


def test_plain_dataframe_is_loaded_first():
    frame = checkins(ROWS)
    plain = pd.DataFrame({"uid": frame["uid"], "datetime": frame["datetime"],
                          "lat": frame.geometry.y, "lng": frame.geometry.x})
    assert len(dl.to_trajectories(plain)) == 3


@pytest.mark.parametrize("kwargs, error", [
    ({"split_gap": 3}, TypeError), ({"split_gap": "-1h"}, ValueError),
    ({"split_gap": "soon"}, ValueError), ({"split_gap": "0s"}, ValueError),
    ({"min_points": 0}, ValueError), ({"min_points": 1.5}, TypeError),
    ({"min_points": True}, TypeError), ({"dedupe_consecutive": "yes"}, TypeError),
    ({"min_points": 6}, ValueError),  # nothing left
])
def test_bad_options(kwargs, error):
    with pytest.raises(error):
        dl.to_trajectories(checkins(ROWS), **kwargs)


def test_bad_frames():
    frame = checkins(ROWS)
    with pytest.raises(ValueError, match="lack column"):
        dl.to_trajectories(frame.drop(columns="uid"))
    with pytest.raises(ValueError, match="no time"):
        dl.to_trajectories(frame.assign(datetime=frame["datetime"].where(frame.index != 2)))
    with pytest.raises(TypeError, match="datetimes"):
        dl.to_trajectories(frame.assign(datetime="2012"))
    with pytest.raises(TypeError):
        dl.to_trajectories([1, 2])


def _reference(frame, gap, min_points, dedupe):
    """Per-user Python loop: the obvious (slow) grouping, to check the vectorised one."""
    out = []
    for _, user in frame.groupby("uid", sort=True):
        pieces, current = [], [user.iloc[0]]
        for (_, prev), (_, row) in zip(user.iloc[:-1].iterrows(), user.iloc[1:].iterrows()):
            if gap is not None and row["datetime"] - prev["datetime"] > gap:
                pieces.append(current)
                current = []
            current.append(row)
        pieces.append(current)
        for piece in pieces:
            if dedupe:
                piece = [r for i, r in enumerate(piece) if i == 0 or r["poi_id"] != piece[i - 1]["poi_id"]]
            if len(piece) >= min_points:
                out.append([r["poi_id"] for r in piece])
    return out


@pytest.mark.parametrize("gap, min_points, dedupe", [
    (None, 1, False), (pd.Timedelta("3h"), 1, False), (pd.Timedelta("3h"), 3, True),
    (pd.Timedelta("30min"), 2, True)])
def test_matches_per_user_loop(gap, min_points, dedupe):
    frame = dl.synthetic_checkins(users=25, seed=3, checkins_per_user=12)
    traj = dl.to_trajectories(frame, split_gap=gap, min_points=min_points,
                              dedupe_consecutive=dedupe, crs=None)
    got = [traj.frame["poi_id"].iloc[a:b].tolist() for a, b in zip(traj.offsets[:-1], traj.offsets[1:])]
    assert got == _reference(frame, gap, min_points, dedupe)


@pytest.mark.parametrize("ids", [
    np.array([2**63 + 5, 3, 2**63 + 5], dtype=np.uint64),  # beyond int64
    np.array(["b10", "b9", "b10"]),                        # strings sort as strings
    np.array([-1, -7, -1])])
def test_user_ids_of_any_kind(ids):
    frame = pd.DataFrame({"uid": ids, "datetime": ["2012-01-01T00:00Z", "2012-01-01T01:00Z",
                                                   "2011-01-01T00:00Z"],
                          "lat": [1.0, 2.0, 3.0], "lng": [1.0, 2.0, 3.0]})
    loaded = dl.load_checkins(frame)
    assert loaded["uid"].tolist() == sorted(ids.tolist(), key=lambda v: (v, 0))
    traj = dl.to_trajectories(loaded.iloc[::-1].reset_index(drop=True), crs=None)
    first = int(np.sum(loaded["uid"] == loaded["uid"].iloc[0]))
    assert traj.report.reordered and traj.offsets.tolist() == [0, first, 3]
    assert traj.frame["uid"].tolist() == loaded["uid"].tolist()
