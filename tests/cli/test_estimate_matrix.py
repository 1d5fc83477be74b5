"""``tracs estimate`` reads every release ``tracs perturb`` writes and counts every released row.

Every writer (CSV, TSV, GeoParquet as ``.parquet`` and ``.geoparquet``, GeoPackage,
GeoJSON, GPX; points and, where the writer has them, lines) × every input: a CSV of
users ``10``, ``2`` and ``a`` (plain, with a row outside the region left out by
``--drop``, with ``--keep-lines``), a Geolife folder, and a GPX release of users ``2``
and ``10`` read as an input.  The count ``tracs estimate`` prints is the number of
rows ``tracs perturb`` says it released and the number of rows the release holds.
One method (TraCS-C), seed 5, a 3×3 grid.
"""

from __future__ import annotations

import re

import pytest

from test_pairing import BEIJING, OUTSIDE, ROWS, TOKYO
from track_samples import write_geolife
from tracs.io.formats import FORMATS
from tracs.io.release import read_release

#: the rows of users 10 and 2 alone (released as GPX: the GPX input)
TWO = "".join(line for line in ROWS.splitlines(keepends=True) if not line.startswith("a,"))
#: (suffix, geometry) of every writer: .geoparquet is the GeoParquet writer under its other name
OUTPUTS = [(f.suffixes[0], g) for f in FORMATS.values() if f.write is not None for g in f.geometry]
OUTPUTS.append((".geoparquet", "points"))
#: input -> (region, options): the rows each releases are 7, 7 (one left out), 7, 7 (4 bad rows
#: dropped), 6
INPUTS = {"plain": (TOKYO, ()), "drop": (TOKYO, ("--drop",)), "keep-lines": (TOKYO, ("--keep-lines",)),
          "folder": (BEIJING, ()), "gpx": (TOKYO, ())}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    from tracs.cli import main

    folder = tmp_path_factory.mktemp("estimate-matrix")
    (folder / "in.csv").write_text(ROWS)
    (folder / "drop.csv").write_text(ROWS + OUTSIDE)
    (folder / "two.csv").write_text(TWO)
    # a GPX release of users 2 and 10 (ids in its tracks' extensions), read as an input
    assert main(["perturb", str(folder / "two.csv"), "-o", str(folder / "two.gpx"), "-m", "tracs-c", "-e", "4",
                 TOKYO, "--seed", "1", "-q"]) == 0
    return {"plain": folder / "in.csv", "drop": folder / "drop.csv", "keep-lines": folder / "in.csv",
            "folder": write_geolife(folder / "geolife"), "gpx": folder / "two.gpx"}


def _count(text: str) -> int:
    return int(re.search(r": ([\d,]+) (?:points|rows?) ", text).group(1).replace(",", ""))


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize(("suffix", "geometry"), OUTPUTS, ids=[f"{s[1:]}-{g}" for s, g in OUTPUTS])
def test_estimate_counts_every_released_row(cli, inputs, tmp_path, name, suffix, geometry):
    region, options = INPUTS[name]
    release = tmp_path / f"released{suffix}"
    result = cli("perturb", inputs[name], "-o", release, "-m", "tracs-c", "-e", "2", region, "--seed", "5",
                 "--geometry", geometry, *options)
    assert result.returncode == 0, result.stderr
    released = _count(result.stdout)
    assert released == len(read_release(release)) == (6 if name == "gpx" else 7)
    result = cli("estimate", release, "--grid", "3", "-o", tmp_path / "density.csv")
    assert result.returncode == 0, result.stderr
    assert f": {released:,} reports," in result.stdout, (released, result.stdout)


def test_the_gpx_input_holds_the_users_of_the_release(inputs):
    """A GPX release read as plain GPX gives the release's users (2 and 10), not the file's name."""
    from tracs.io import read_checkins

    checkins = read_checkins(inputs["gpx"])
    assert sorted(set(checkins["uid"].astype(str))) == ["10", "2"] and len(checkins) == 6
