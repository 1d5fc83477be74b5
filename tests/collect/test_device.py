"""The device: bit-for-bit equality with ``tracs perturb``, budget caps checked before any draw,
state that survives a restart, parameters it refuses."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tracs.cli import main
from tracs.collect import BudgetExhausted, Device, ParameterError, Parameters
from tracs.public import LonLatBox

BOX = LonLatBox(139.5, 35.5, 140.0, 35.9)


def checkins(n_users: int = 4, per_user: int = 25, seed: int = 3, corners: bool = False) -> pd.DataFrame:
    """Check-ins inside :data:`BOX`, users with text ids (``007`` kept as written); with
    ``corners``, each user's first four fixes are the box's corners (inside the box, outside
    the rectangle inscribed in its projection)."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        t0 = pd.Timestamp("2024-03-01", tz="UTC") + pd.Timedelta(hours=u)
        for k in range(per_user):
            lat, lng = rng.uniform(35.55, 35.85), rng.uniform(139.55, 139.95)
            if corners and k < 4:
                lng, lat = (BOX.min_lon, BOX.max_lon)[k % 2], (BOX.min_lat, BOX.max_lat)[k // 2]
            rows.append({"uid": f"00{u + 5}", "lat": lat, "lng": lng,
                         "datetime": (t0 + pd.Timedelta(minutes=7 * k)).isoformat()})
    return pd.DataFrame(rows)


def parameters(method: str, **caps) -> Parameters:
    return Parameters.build(method, 1.5, BOX, caps=caps)


@pytest.mark.parametrize("method, corners", [("tracs-d", False), ("tracs-c", False), ("tracs-d", True),
                                             ("tracs-c", True)])
def test_device_reports_equal_tracs_perturb_bit_for_bit(tmp_path, method, corners):
    frame = checkins(corners=corners)  # corners: fixes the box holds but its inscribed rectangle does not
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    release = tmp_path / "out.parquet"
    assert main(["perturb", str(source), "-m", method, "-e", "1.5", "--seed", "11", "--region",
                 ",".join(str(v) for v in BOX.bounds), "-o", str(release), "--quiet"]) == 0
    expected = pd.read_parquet(release)
    params = parameters(method)
    import pyproj

    back = pyproj.Transformer.from_crs(params.crs, 4326, always_xy=True)
    for uid, rows in frame.groupby("uid", sort=False):
        device = Device(params, uid, 11, tmp_path / f"{uid}.sqlite")
        reports = [device.report(r.lat, r.lng, r.datetime) for r in rows.itertuples()]
        lng, lat = back.transform(np.array([r["x"] for r in reports]), np.array([r["y"] for r in reports]))
        want = expected[expected.uid == uid]
        np.testing.assert_array_equal(lat, want.lat.to_numpy())
        np.testing.assert_array_equal(lng, want.lng.to_numpy())
        assert [r["index"] for r in reports] == list(range(len(rows)))
        device.close()


def test_budget_refusal_comes_before_any_draw(tmp_path):
    params = parameters("tracs-d", trajectory=3.0, day=6.0)  # 2 points per trajectory, 4 per day
    device = Device(params, "a", 1, tmp_path / "a.sqlite")
    device.report(35.7, 139.7, "2024-03-01T10:00Z")
    device.report(35.7, 139.7, "2024-03-01T10:01Z")
    with pytest.raises(BudgetExhausted, match="the trajectory budget cap is spent .resets at a new trajectory") as err:
        device.report(35.7, 139.7, "2024-03-01T10:02Z")
    assert err.value.cap == "trajectory"
    third = device.report(35.7, 139.7, "2024-03-01T10:03Z", trajectory="second")
    assert (third["trajectory"], third["index"], third["sequence"]) == (1, 0, 2)  # nothing drawn by the refusal
    device.report(35.7, 139.7, "2024-03-01T10:04Z", trajectory="second")
    with pytest.raises(BudgetExhausted, match=r"day budget cap is spent \(resets at 2024-03-02T00:00:00\+00:00\)"):
        device.report(35.7, 139.7, "2024-03-01T10:05Z", trajectory="third")
    assert device.report(35.7, 139.7, "2024-03-02T00:00Z", trajectory="third")["sequence"] == 4
    assert len(device.queued()["sequence"]) == 5


def test_restart_keeps_queue_and_never_reuses_a_stream_position(tmp_path):
    params = parameters("tracs-d")
    state = tmp_path / "s.sqlite"
    first = Device(params, "u", 9, state)
    a = first.report(35.7, 139.7, "2024-03-01T10:00Z")
    b = first.report(35.71, 139.71, "2024-03-01T10:01Z")
    del first  # killed: never closed, never uploaded
    again = Device(params, "u", 9, state)
    assert again.queued()["sequence"] == [a["sequence"], b["sequence"]]
    c = again.report(35.72, 139.72, "2024-03-01T10:02Z")
    assert (c["sequence"], c["index"]) == (2, 2)
    # the third report is the one an uninterrupted device releases
    fresh = Device(params, "u", 9, tmp_path / "fresh.sqlite")
    for lat, lon, t in [(35.7, 139.7, "2024-03-01T10:00Z"), (35.71, 139.71, "2024-03-01T10:01Z"),
                        (35.72, 139.72, "2024-03-01T10:02Z")]:
        last = fresh.report(lat, lon, t)
    assert (last["x"], last["y"]) == (c["x"], c["y"])


@pytest.mark.parametrize("change, error", [
    (lambda d: d.update(protocol=2), "protocol version 2 is not supported (this device speaks version 1)"),
    (lambda d: d["release"].update(method="no-such"), "unknown method 'no-such': this device releases with"),
    (lambda d: d["release"].update(method="planar-laplace"), "unknown method 'planar-laplace'"),
    (lambda d: d["release"].update(per_trajectory=True), "a budget per trajectory is not supported"),
    (lambda d: d["caps"].update(week=1.0), "unknown budget cap(s) 'week'"),
    (lambda d: d["caps"].update(day=-1), "the day cap must be a finite ε > 0 or null, got -1"),
    (lambda d: d.pop("box"), "the parameters lack the field 'box'"),
    (lambda d: d["release"].pop("crs"), "the parameters' release fields lack 'crs'"),
])
def test_device_refuses_parameters_it_cannot_honour(change, error):
    data = json.loads(parameters("tracs-d").to_json())
    change(data)
    with pytest.raises(ParameterError) as err:
        Parameters.from_json(json.dumps(data))
    assert error in str(err.value)


def test_parameters_round_trip_and_state_refuses_other_parameters(tmp_path):
    params = parameters("tracs-c", lifetime=15.0)
    assert Parameters.from_json(params.to_json()) == params
    Device(params, "d", 1, tmp_path / "d.sqlite").close()
    with pytest.raises(ParameterError, match="this state was made by other parameters"):
        Device(parameters("tracs-d"), "d", 1, tmp_path / "d.sqlite")
    with pytest.raises(ParameterError, match="this state was made by another key"):
        Device(params, "d", 2, tmp_path / "d.sqlite")


def test_a_refused_report_inside_a_transaction_changes_nothing(tmp_path):
    device = Device(parameters("tracs-d", day=1.5), "t", 1, tmp_path / "t.sqlite")  # one point a day
    with device.transaction():
        device.report(35.7, 139.7, "2024-03-01T10:00Z", trajectory="morning")
        with pytest.raises(BudgetExhausted):
            device.report(35.7, 139.7, "2024-03-01T18:00Z", trajectory="evening")
        nxt = device.report(35.7, 139.7, "2024-03-02T08:00Z", trajectory="next day")
    assert (nxt["trajectory"], nxt["sequence"]) == (1, 1)  # the refused trajectory took no number


def test_a_fix_outside_the_box_is_refused_before_anything_is_drawn(tmp_path):
    device = Device(parameters("tracs-c"), "007", 11, tmp_path / "d.sqlite")
    with pytest.raises(ValueError, match=r"lies outside the collection's box \[139.5, 35.5, 140.0, 35.9\]"):
        device.report(35.95, 139.7, "2024-03-01T00:00:00Z")
    assert device.report(35.5, 139.5, "2024-03-01T00:00:00Z")["sequence"] == 0  # a corner: moved, released
    device.close()
