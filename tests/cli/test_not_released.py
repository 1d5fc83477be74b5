"""Nothing vanishes without a word: input columns and GPX elements that 'tracs perturb' does not
write are named on stderr ("not released: ...")."""

from __future__ import annotations

import pytest

REGION = "--region=139.6,35.6,139.8,35.8"
CSV = """uid,datetime,lat,lng{extra_header}
1,2024-01-01T10:00:00Z,35.68,139.70{extra}
1,2024-01-01T10:05:00Z,35.69,139.71{extra}
"""
GPX = """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
{waypoint}<trk><name>morning</name><trkseg>
<trkpt lat="35.70" lon="139.70">{ele}<time>2024-05-01T08:00:00Z</time>{more}</trkpt>
<trkpt lat="35.71" lon="139.71">{ele}<time>2024-05-01T08:01:00Z</time></trkpt>
</trkseg></trk>
</gpx>
"""


@pytest.mark.parametrize("name, content, expected", [
    ("plain.csv", CSV.format(extra_header="", extra=""), None),
    ("speed.csv", CSV.format(extra_header=",speed,poi_id", extra=",3,v1"), "not released: speed, poi_id"),
    ("plain.gpx", GPX.format(waypoint="", ele="", more=""), None),
    ("ele.gpx", GPX.format(waypoint="", ele="<ele>12</ele>", more=""), "not released: elevation"),
    ("rich.gpx", GPX.format(waypoint='<wpt lat="35.7" lon="139.7"><name>home</name></wpt>\n', ele="<ele>12</ele>",
                            more="<hdop>2</hdop><extensions><speed>3</speed></extensions>"),
     "not released: elevation, <hdop>, <extensions>/speed, 1 waypoint(s)"),
])
def test_unreleased_parts_are_named(cli, tmp_path, name, content, expected):
    source = tmp_path / name
    source.write_text(content)
    result = cli("perturb", source, "-o", tmp_path / "out.csv", "-m", "tracs-d", "-e", "2", REGION, "--seed", "1",
                 "-q")
    assert result.returncode == 0, result.stderr
    said = [line.split(": ", 1)[1] for line in result.stderr.splitlines() if "not released" in line]
    assert said == ([expected] if expected else [])
