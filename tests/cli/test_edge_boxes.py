"""Boxes at the edges of the globe: each gives a region inside the box or is refused up front."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pyproj

from tracs.public import LonLatBox

#: one metre, in degrees of latitude (a released point may miss the box by less)
METRE_LAT = 1.0 / 111_000.0

REFUSED = [
    ((-180, -90, 180, 90), "it reaches both poles"),
    ((-180, 80, 180, 89), "it is a ring around a pole (every longitude, short of the pole): give the cap"),
    ((-170, -60, 170, 60), "it spans 340° of longitude"),
    ((-90, -60, 90, 60), "it spans 180° of longitude, too wide for one projection"),
    ((-20, -5, 20, 5), "its rectangle in metres would leave the box by up to"),
    ((0, -90, 0.00001, -89), "it reaches the pole over 1e-05° of longitude, a wedge no rectangle in metres fits "
                             "(give the cap -180,-90,180,LAT"),
]


@pytest.mark.parametrize("bounds, message", REFUSED, ids=[str(b) for b, _ in REFUSED])
def test_boxes_no_rectangle_fits_are_refused(bounds, message):
    with pytest.raises(ValueError) as info:
        LonLatBox(*bounds).to_region()
    assert message in str(info.value)
    assert "\n" not in str(info.value) and "split the data" in str(info.value)


@pytest.mark.parametrize("bounds, message", REFUSED[:2], ids=["world", "ring"])
def test_perturb_refuses_them_before_reading_the_data(cli, tmp_path, bounds, message):
    data = tmp_path / "in.csv"
    data.write_text("uid,datetime,lat,lng\n1,2024-03-01T00:00:00Z,85,10\n")
    result = cli("perturb", data, "-o", tmp_path / "o.csv", "--region",
                 ",".join(map(str, bounds)), "-m", "tracs-c", "-e", "2", "-q")
    assert result.returncode != 0
    assert message in result.stderr and "Rectangle(" not in result.stderr
    assert not (tmp_path / "o.csv").exists()


ACCEPTED = [
    (-180, 80, 180, 90),    # the cap around the North Pole: the square in its circle
    (-180, -90, 180, -80),  # the cap around the South Pole
    (-10, 85, 10, 90),      # a wedge reaching the pole: a square inside it
    (-60, -90, -50, -85),   # a wedge reaching the South Pole
    (10, 85, 40, 89),       # a turned sector near the pole
    (170, 84, 180, 86),     # west edge on the right in UPS
    (-60, -10, 60, 10),     # wide, across the equator
]


def _rows_in(box: LonLatBox, n=24, seed=0):
    """Rows of three users at random points of the region's rectangle, in degrees."""
    region, crs = box.to_region(), box.metric_crs()
    rng = np.random.default_rng(seed)
    x = rng.uniform(region.xmin, region.xmax, n)
    y = rng.uniform(region.ymin, region.ymax, n)
    lon, lat = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True).transform(x, y)
    times = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 600, unit="s")
    return pd.DataFrame({"uid": np.arange(n) % 3, "datetime": times.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "lat": lat, "lng": lon})


@pytest.mark.parametrize("bounds", ACCEPTED, ids=[str(b) for b in ACCEPTED])
def test_every_released_point_lies_in_an_accepted_box(cli, tmp_path, bounds):
    box = LonLatBox(*bounds)
    data, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _rows_in(box).to_csv(data, index=False)
    for method in ("tracs-c", "tracs-d"):
        result = cli("perturb", data, "-o", out, "-m", method, "-e", "2", "--region", str(box), "--seed", "3", "-q")
        assert result.returncode == 0, result.stderr
        frame = pd.read_csv(out)
        assert len(frame) == 24
        lat, lon = frame["lat"].to_numpy(), frame["lng"].to_numpy()
        slack_lon = METRE_LAT / max(np.cos(np.radians(np.abs(lat).max())), 1e-9)
        assert ((lat >= box.min_lat - METRE_LAT) & (lat <= box.max_lat + METRE_LAT)).all(), method
        near_pole = np.abs(lat) > 90 - 1e-5  # at the pole every longitude is the same point
        assert (near_pole | ((lon >= box.min_lon - slack_lon) & (lon <= box.max_lon + slack_lon))).all(), method
