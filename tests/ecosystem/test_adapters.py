"""MovingPandas and scikit-mobility layouts in and out of tracs."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest

import tracs
from tracs.adapters import from_movingpandas, from_skmob, perturb_movingpandas, perturb_skmob, to_skmob

REGION = tracs.Rectangle(139.5, 35.5, 139.9, 35.8)


def _points():
    times = pd.date_range("2024-05-01 08:00", periods=8, freq="7min", tz="UTC")
    return pd.DataFrame({"t": times, "tid": [1, 1, 1, 2, 2, 3, 3, 3], "user": list("aaabbccc"),
                         "lng": np.linspace(139.6, 139.75, 8), "lat": np.linspace(35.6, 35.7, 8),
                         "speed": np.arange(8.0)})


def _collection():
    mpd = pytest.importorskip("movingpandas", reason="MovingPandas not installed (pip install 'tracs[movingpandas]')")
    df = _points()
    gdf = gpd.GeoDataFrame(df.drop(columns=["lng", "lat"]), geometry=gpd.points_from_xy(df.lng, df.lat),
                           crs="EPSG:4326")
    return mpd.TrajectoryCollection(gdf, "tid", t="t", obj_id_col="user")


def test_from_movingpandas_rows():
    points = from_movingpandas(_collection())
    assert list(points["trajectory"]) == [1, 1, 1, 2, 2, 3, 3, 3]
    assert list(points["uid"]) == list("aaabbccc") and points.crs == "EPSG:4326"
    assert "speed" in points.columns and len(points) == 8


def test_perturb_movingpandas_keeps_ids_times_and_columns():
    import movingpandas as mpd

    collection = _collection()
    released = perturb_movingpandas(collection, tracs.TraCSD(REGION, 2.0), rng=4)
    assert isinstance(released, mpd.TrajectoryCollection)
    assert [t.id for t in released.trajectories] == [t.id for t in collection.trajectories]
    assert [t.obj_id for t in released.trajectories] == [t.obj_id for t in collection.trajectories]
    for before, after in zip(collection.trajectories, released.trajectories):
        assert list(after.df.index) == list(before.df.index)
        assert list(after.df["speed"]) == list(before.df["speed"])
        assert not after.df.geometry.geom_equals(before.df.geometry).any()
    again = perturb_movingpandas(collection, tracs.TraCSD(REGION, 2.0), rng=4)
    for a, b in zip(released.trajectories, again.trajectories):
        assert a.df.geometry.geom_equals_exact(b.df.geometry, tolerance=0).all()


def test_movingpandas_wrong_type():
    pytest.importorskip("movingpandas", reason="MovingPandas not installed")
    with pytest.raises(TypeError, match="pass a movingpandas.TrajectoryCollection"):
        from_movingpandas(_points())


def test_skmob_layout_round_trip():
    frame = _points().rename(columns={"t": "datetime", "user": "uid"})
    points = from_skmob(frame)
    assert points.crs == "EPSG:4326" and list(points["trajectory"]) == list(frame["tid"])
    back = to_skmob(points)
    np.testing.assert_allclose(back["lat"], frame["lat"])
    np.testing.assert_allclose(back["lng"], frame["lng"])
    assert list(back["tid"]) == list(frame["tid"]) and list(back["uid"]) == list(frame["uid"])
    released = perturb_skmob(frame, tracs.TraCSC(REGION, 4.0), rng=2)
    assert list(released["uid"]) == list(frame["uid"]) and list(released["datetime"]) == list(frame["datetime"])
    assert not np.allclose(released["lat"], frame["lat"])


@pytest.mark.parametrize("frame,error,fragment", [
    ([1, 2], TypeError, "expected a scikit-mobility TrajDataFrame"),
    (pd.DataFrame({"lat": [1.0], "lng": [2.0]}), ValueError, "missing: uid"),
])
def test_skmob_bad_input(frame, error, fragment):
    with pytest.raises(error) as info:
        from_skmob(frame)
    assert fragment in str(info.value)


def test_to_skmob_without_scikit_mobility_is_a_plain_frame(monkeypatch):
    """No release of scikit-mobility imports beside tracs' pins: the layout comes back as a DataFrame."""
    import builtins

    real_import = builtins.__import__

    def no_skmob(name, *args, **kwargs):
        if name == "skmob" or name.startswith("skmob."):
            raise ImportError("No module named 'skmob'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_skmob)
    back = to_skmob(from_skmob(_points().rename(columns={"t": "datetime", "user": "uid"})))
    assert type(back) is pd.DataFrame
    assert list(back.columns[:2]) == ["lat", "lng"] and {"datetime", "uid", "tid"} <= set(back.columns)


def test_to_skmob_builds_a_trajdataframe_when_scikit_mobility_imports():
    skmob = pytest.importorskip("skmob", reason="scikit-mobility does not install beside tracs (docs/guide.md)")
    back = to_skmob(from_skmob(_points().rename(columns={"t": "datetime", "user": "uid"})))
    assert isinstance(back, skmob.TrajDataFrame)


def test_no_skmob_extra_is_offered():
    """The guide explains why: every release pins pandas < 2 or fails to import with shapely 2."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "skmob" not in extras and "scikit-mobility" not in str(extras)
    assert "cascaded_union" in (root / "docs" / "guide.md").read_text(encoding="utf-8")
