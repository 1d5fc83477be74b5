"""Details of what tracs perturb writes and says: the GeoJSON ``name`` member, notes under ``-q``."""

from __future__ import annotations

import json

ROWS = """uid,datetime,lat,lng
10,2024-01-01T11:00:00Z,35.66,139.72
2,2024-01-01T10:00:00Z,35.68,139.70
2,2024-01-01T10:07:00Z,35.95,139.71
"""
OPTIONS = ("-m", "tracs-c", "-e", "2", "--region=139.6,35.6,139.8,35.8", "--drop", "--seed", "1")


def test_the_geojson_name_member_is_the_outputs_own_name(cli, tmp_path):
    """The collection's name is the output's stem, not a temporary file's: two runs to one target
    write the same bytes."""
    source = tmp_path / "in.csv"
    source.write_text(ROWS)
    out = tmp_path / "released.geojson"
    written = []
    for _ in range(2):
        result = cli("perturb", source, "-o", out, *OPTIONS, "-q")
        assert result.returncode == 0, result.stderr
        written.append(out.read_bytes())
    assert json.loads(written[0])["name"] == "released"
    assert written[0] == written[1]


def test_quiet_keeps_the_notes(cli, tmp_path):
    """-q hides progress, not the notes on what was left out."""
    source = tmp_path / "in.csv"
    source.write_text(ROWS)
    result = cli("perturb", source, "-o", tmp_path / "out.csv", *OPTIONS, "-q")
    assert result.returncode == 0, result.stderr
    assert "tracs perturb: dropped 1 row(s) outside the region: line 4" in result.stderr
    assert "tracs perturb: read 3 rows: dropped 0 for bad values, dropped 1 outside the region; 2 kept" in result.stderr
