"""Bad command lines for ``tracs perturb`` and ``tracs map``: the exact failure, and nothing written.

Each case runs the command in a folder holding a check-in file ``data.csv`` (three
users in Tokyo), a POI file ``venues.csv`` and whatever the case adds; it asserts
the exit status (2: usage error from the argument parser, 1: refused input), a
fragment of the one-line message on standard error, no traceback, and that the
folder is byte for byte as before (no output, no temporary file, inputs intact).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

VENUES = np.column_stack([35.60 + 0.15 * np.random.default_rng(0).random(25),
                          139.60 + 0.20 * np.random.default_rng(1).random(25)])
ROW = "uid,datetime,lat,lng\n"


def _data(folder):
    rows = []
    for uid, n in ((101, 8), (202, 5), (303, 3)):
        for i in range(n):
            v = (uid + 7 * i) % len(VENUES)
            t = pd.Timestamp("2012-04-03 18:00:00", tz="UTC") + pd.Timedelta(hours=2 * i)
            rows.append({"uid": uid, "datetime": t.isoformat(), "lat": VENUES[v, 0], "lng": VENUES[v, 1]})
    pd.DataFrame(rows).to_csv(folder / "data.csv", index=False)
    pd.DataFrame({"lat": VENUES[:, 0], "lng": VENUES[:, 1]}).to_csv(folder / "venues.csv", index=False)


def _write(name, text):
    def make(folder):
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return make


def _mkdir(name):
    return lambda folder: (folder / name).mkdir()


def _symlink(folder):
    os.symlink(folder / "data.csv", folder / "alias.csv")


def _hardlink(folder):
    os.link(folder / "data.csv", folder / "hard.csv")


def _truncated_parquet(folder):
    """The first half of a Parquet copy of ``data.csv``: no footer."""
    import io

    buffer = io.BytesIO()
    pd.read_csv(folder / "data.csv").to_parquet(buffer)
    data = buffer.getvalue()
    (folder / "cut.parquet").write_bytes(data[:len(data) // 2])


def _two_continents(folder):
    """``data.csv`` plus two rows in Paris."""
    with open(folder / "data.csv", "a") as fh:
        fh.write("404,2012-04-03T18:00:00+00:00,48.85,2.35\n404,2012-04-03T20:00:00+00:00,48.86,2.36\n")


def _released(folder):
    """A released file for the map cases (written before the snapshot)."""
    import contextlib
    import io

    from tracs.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["perturb", str(folder / "data.csv"), "-o", str(folder / "released.csv"), "-m",
                     "tracs-c", "-e", "2", "--region", "tky", "--seed", "1"]) == 0
    (folder / "data.html").write_bytes((folder / "data.csv").read_bytes())  # an input named .html


GEOJSON_POINTS = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
                  '"geometry": {"type": "Point", "coordinates": [139.7, 35.6]}}]}')
GEOJSON_LINE = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
                '"geometry": {"type": "LineString", "coordinates": [[139.7, 35.6], [139.8, 35.7]]}}]}')
#: a polygon drawn across the antimeridian with longitudes past 180
GEOJSON_ACROSS = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
                  '"geometry": {"type": "Polygon", "coordinates": [[[179, -17], [181, -17], [181, -16], '
                  '[179, -16], [179, -17]]]}}]}')

#: the same area drawn as two parts that meet at the antimeridian
GEOJSON_SPLIT = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
                 '"geometry": {"type": "MultiPolygon", "coordinates": [[[[179, -17], [180, -17], [180, -16], '
                 '[179, -16], [179, -17]]], [[[-180, -17], [-179, -17], [-179, -16], [-180, -16], [-180, -17]]]]}}]}')

P = ("perturb", "data.csv", "-o", "out.csv")
OK = ("-m", "tracs-c", "-e", "2", "--region", "tky")
TKY_OUTSIDE = "139.75,35.60,139.80,35.65"

# (id, setup or None, argv, exit status, fragment of the message)
CASES = [
    # -- the public region ---------------------------------------------------------------------
    ("no-region", None, (*P, "-m", "tracs-c", "-e", "2"), 1, "give the public region"),
    ("no-region-says-why", None, (*P, "-m", "tracs-d", "-e", "2"), 1, "must not come from the data"),
    ("no-region-shows-flag", None, (*P, "-m", "em", "-e", "2"), 1, "--region MINLON,MINLAT,MAXLON,MAXLAT"),
    ("region-and-from-data", None, (*P, *OK, "--region-from-data"), 1, "either --region or --region-from-data"),
    ("region-unknown-preset", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "paris"), 2, "unknown region preset"),
    ("region-three-numbers", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "1,2,3"), 2, "needs 4 numbers"),
    ("region-five-numbers", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "1,2,3,4,5"), 2, "needs 4 numbers"),
    ("region-words", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "a,b,c,d"), 2, "needs 4 numbers"),
    ("region-empty-field", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "139,,140,36"), 2, "needs 4 numbers"),
    ("region-reversed-lon", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "140,35,139,36"), 2, "across the antimeridian"),
    ("region-reversed-lat", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "139,36,140,35"), 2, "the box is empty"),
    ("region-flat", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "139,35,139,36"), 2, "the box is empty"),
    ("region-lon-range", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "179,35,181,36"), 2, "longitudes must lie"),
    ("region-lat-range", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "139,89,140,91"), 2, "latitudes must lie"),
    ("region-lat-lon-swapped", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "35,139,36,140"), 2,
     "latitudes must lie"),
    ("region-nan", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "nan,35,140,36"), 2, "finite"),
    ("region-inf", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "139,35,inf,36"), 2, "finite"),
    ("region-empty", None, (*P, "-m", "tracs-c", "-e", "2", "--region", ""), 2, "unknown region preset"),
    ("region-antimeridian-negative", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "170,-20,-170,-10"), 2,
     "across the antimeridian (180°) is not supported"),
    ("region-too-wide", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "-100,-10,100,10", "--drop"), 1,
     "too wide for one projection"),
    ("region-file-missing", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "zone.geojson"), 2,
     "no such region file: zone.geojson"),
    ("region-file-points", _write("zone.geojson", GEOJSON_POINTS), (*P, "-m", "tracs-c", "-e", "2", "--region",
     "zone.geojson"), 2, "zone.geojson holds Point geometries: a region file holds polygons"),
    ("region-file-lines", _write("zone.geojson", GEOJSON_LINE), (*P, "-m", "tracs-c", "-e", "2", "--region",
     "zone.geojson"), 2, "holds LineString geometries"),
    ("region-file-garbage", _write("zone.geojson", "not json"), (*P, "-m", "tracs-c", "-e", "2", "--region",
     "zone.geojson"), 2, "cannot read the region file zone.geojson"),
    ("region-file-empty", _write("zone.geojson", '{"type": "FeatureCollection", "features": []}'),
     (*P, "-m", "tracs-c", "-e", "2", "--region", "zone.geojson"), 2, "zone.geojson holds no geometry"),
    ("region-file-antimeridian", _write("zone.geojson", GEOJSON_ACROSS), (*P, "-m", "tracs-c", "-e", "2",
     "--region", "zone.geojson"), 2, "longitudes must lie in [-180, 180]"),
    ("region-file-antimeridian-split", _write("fiji.geojson", GEOJSON_SPLIT), (*P, "-m", "tracs-c", "-e", "2",
     "--region", "fiji.geojson"), 2, "fiji.geojson reach both -180° and 180°: they cross the antimeridian"),
    ("region-negative-unknown", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "-7"), 2,
     "unknown region preset '-7'"),
    ("anchor-negative-outside", None, (*P, *OK, "-m", "tracs-d", "--anchor", "-5,3"), 1, "lies outside the region"),
    ("pad-without-from-data", None, (*P, *OK, "--pad", "100"), 1, "--pad applies to --region-from-data only"),
    ("pad-negative", None, (*P, "-m", "tracs-c", "-e", "2", "--region-from-data", "--pad", "-5"), 2,
     "must be a finite number of metres >= 0"),
    ("pad-nan", None, (*P, "-m", "tracs-c", "-e", "2", "--region-from-data", "--pad", "nan"), 2,
     "must be a finite number of metres >= 0"),
    ("pad-word", None, (*P, "-m", "tracs-c", "-e", "2", "--region-from-data", "--pad", "wide"), 2,
     "must be a number of metres"),
    ("from-data-one-point", _write("one.csv", ROW + "1,2012-01-01T10:00:00Z,35.7,139.7\n"),
     ("perturb", "one.csv", "-o", "out.csv", "-m", "tracs-c", "-e", "2", "--region-from-data"), 1, "pass --pad"),
    ("from-data-two-users-one-place",
     _write("same.csv", ROW + "1,2012-01-01T10:00:00Z,35.7,139.7\n2,2012-01-01T10:00:00Z,35.7,139.7\n"),
     ("perturb", "same.csv", "-o", "out.csv", "-m", "tracs-d", "-e", "2", "--region-from-data"), 1, "pass --pad"),
    # -- rows outside the region -----------------------------------------------------------------
    ("rows-outside", None, (*P, "-m", "tracs-c", "-e", "2", "--region", TKY_OUTSIDE), 1, "lie outside the region"),
    ("rows-outside-names-lines", None, (*P, "-m", "tracs-c", "-e", "2", "--region", TKY_OUTSIDE), 1,
     "(line 3, line 4,"),
    ("rows-outside-offers-clip", None, (*P, "-m", "tracs-c", "-e", "2", "--region", TKY_OUTSIDE), 1,
     "pass --clip"),
    ("two-continents-warned", _two_continents, (*P, *OK), 1, "it seems to span two continents; the one region "
     "given with --region"),
    ("two-continents-rows-listed", _two_continents, (*P, *OK), 1, "2 of 18 rows lie outside the region"),
    ("rows-outside-other-city", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "nyc"), 1,
     "16 of 16 rows lie outside"),
    ("drop-everything", None, (*P, "-m", "tracs-c", "-e", "2", "--region", "nyc", "--drop"), 1,
     "all 16 rows lie outside"),
    ("clip-and-drop", None, (*P, *OK, "--clip", "--drop"), 2, "not allowed with argument --clip"),
    ("strict-clip", None, (*P, "-m", "tracs-c", "-e", "2", "--region", TKY_OUTSIDE, "--clip", "--strict"), 1,
     "--strict"),
    ("strict-drop", None, (*P, "-m", "tracs-c", "-e", "2", "--region", TKY_OUTSIDE, "--drop", "--strict"), 1,
     "nothing was written"),
    ("strict-bad-row", _write("bad.csv", ROW + "1,2012-01-01T10:00:00Z,abc,139.7\n1,2012-01-01T11:00:00Z,35.7,139.7\n"),
     ("perturb", "bad.csv", "-o", "out.csv", *OK, "--strict"), 1, "1 row(s) dropped for bad values"),
    ("strict-bad-time", _write("badt.csv", ROW + "1,yesterday,35.7,139.7\n1,2012-01-01T11:00:00Z,35.7,139.7\n"),
     ("perturb", "badt.csv", "-o", "out.csv", *OK, "--strict"), 1, "--strict"),
    # -- points of interest ------------------------------------------------------------------------
    *[(f"{m}-without-pois", None, (*P, "-m", m, "-e", "2", "--region", "tky"), 1,
       "needs the public points of interest") for m in ("em", "ngram", "lsrr", "tp", "atp")],
    ("round-without-pois", None, (*P, *OK, "--round-to-pois"), 1, "--round-to-pois needs the public points"),
    ("pois-not-used", None, (*P, *OK, "--pois", "venues.csv"), 1, "--pois is used by the discrete methods"),
    ("pois-with-from-data", None, (*P, "-m", "em", "-e", "2", "--region-from-data", "--pois", "venues.csv"), 1,
     "--pois goes with --region"),
    ("pois-missing", None, (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "nope.csv"), 1,
     "no such POI file"),
    ("pois-binary", _write("bin.csv", b"\x00\x01\x02" * 100),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "bin.csv"), 1, "bin.csv: not a text file"),
    ("pois-no-lat", _write("p.csv", "x1,y1\n1,2\n3,4\n"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "needs a latitude column"),
    ("pois-word", _write("p.csv", "lat,lng\n35.7,139.7\nabc,139.8\n"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "lines 3"),
    ("pois-outside", _write("p.csv", "lat,lng\n35.7,139.7\n40.7,-74.0\n"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "POI(s) outside the region"),
    ("pois-one-place", _write("p.csv", "lat,lng\n35.7,139.7\n35.7,139.7\n"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "at least two distinct"),
    ("pois-empty", _write("p.csv", ""),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "cannot read it as CSV"),
    ("pois-header-only", _write("p.csv", "lat,lng\n"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "p.csv"), 1, "p.csv: no POI rows"),
    ("pois-is-a-folder", _mkdir("pdir"),
     (*P, "-m", "em", "-e", "2", "--region", "tky", "--pois", "pdir"), 1, "no such POI file"),
    # -- output never overwrites an input ------------------------------------------------------------
    ("output-is-input", None, ("perturb", "data.csv", "-o", "data.csv", *OK), 1, "would overwrite the input"),
    ("output-is-input-dotdot", _mkdir("sub"), ("perturb", "data.csv", "-o", "sub/../data.csv", *OK), 1,
     "would overwrite the input"),
    ("output-is-input-dot", None, ("perturb", "data.csv", "-o", "./data.csv", *OK), 1, "would overwrite the input"),
    ("output-is-input-symlink", _symlink, ("perturb", "data.csv", "-o", "alias.csv", *OK), 1,
     "would overwrite the input"),
    ("input-is-symlink-of-output", _symlink, ("perturb", "alias.csv", "-o", "data.csv", *OK), 1,
     "would overwrite the input"),
    ("output-is-input-hardlink", _hardlink, ("perturb", "data.csv", "-o", "hard.csv", *OK), 1,
     "would overwrite the input"),
    ("output-is-poi-file", None, ("perturb", "data.csv", "-o", "venues.csv", "-m", "em", "-e", "2",
                                  "--region", "tky", "--pois", "venues.csv"), 1, "would overwrite the input"),
    ("output-format", None, ("perturb", "data.csv", "-o", "out.xlsx", *OK), 1, "cannot tell the output format"),
    ("output-no-suffix", None, ("perturb", "data.csv", "-o", "out", *OK), 1, "cannot tell the output format"),
    ("output-folder", _mkdir("dir"), ("perturb", "data.csv", "-o", "dir", *OK), 1, "is a folder"),
    ("output-missing-folder", None, ("perturb", "data.csv", "-o", "nope/out.csv", *OK), 1, "does not exist"),
    ("output-missing", None, ("perturb", "data.csv", *OK), 2, "required: -o/--output"),
    # -- input files ---------------------------------------------------------------------------------
    ("input-missing", None, ("perturb", "nope.csv", "-o", "out.csv", *OK), 1, "no such file: nope.csv"),
    ("input-folder", _mkdir("indir"), ("perturb", "indir", "-o", "out.csv", *OK), 1, "is not a file"),
    ("input-empty", _write("empty.csv", ""), ("perturb", "empty.csv", "-o", "out.csv", *OK), 1,
     "cannot read empty.csv (the file is empty)"),
    ("input-header-only", _write("hdr.csv", ROW), ("perturb", "hdr.csv", "-o", "out.csv", *OK), 1,
     "hdr.csv has no check-in rows"),
    ("input-binary", _write("bin.csv", bytes(range(256)) * 20), ("perturb", "bin.csv", "-o", "out.csv", *OK), 1,
     "cannot read bin.csv (a binary file: NUL byte at byte offset 0, line 1)"),
    ("input-nul-on-line-3", _write("nul.csv", (ROW + "1,2012-01-01T10:00:00Z,35.7,139.7\n").encode()
                                   + b"1,2012-01-01T11:00:00Z,35.\x0070,139.7\n"),
     ("perturb", "nul.csv", "-o", "out.csv", *OK), 1, "nul.csv (a binary file: NUL byte at byte offset 81, line 3)"),
    ("input-binary-head", _write("head.csv", (ROW + "1,2012-01-01T10:00:00Z,35.7,139.7\n" * 200).encode()
                                  + bytes(range(256)) * 40),
     ("perturb", "head.csv", "-o", "out.csv", *OK), 1, "(NUL byte at byte offset 6821, line 202)"),
    ("input-binary-tail", _write("tail.csv", (ROW + "1,2012-01-01T10:00:00Z,35.7,139.7\n" * 2000).encode()
                                  + bytes(range(256)) * 40),
     ("perturb", "tail.csv", "-o", "out.csv", *OK), 1,
     "cannot read tail.csv (binary data from byte offset 68021, line 2002)"),
    ("input-zip", _write("book.csv", b"PK\x03\x04" + bytes(200)), ("perturb", "book.csv", "-o", "out.csv", *OK), 1,
     "cannot read book.csv (a binary file: a ZIP archive (a spreadsheet?) from byte offset 0, line 1)"),
    ("input-unclosed-quote", _write("quote.csv", ROW + '1,2012-01-01T10:00:00Z,35.7,139.7\n1,"2012,35.7,139.7\n'
                                    + "".join(f"1,2012-01-01T1{i}:00:00Z,35.7,139.7\n" for i in range(1, 6))),
     ("perturb", "quote.csv", "-o", "out.csv", *OK), 1,
     "quote.csv: line 3: a quoted field is not closed: the record that starts there runs over 6 lines to the end"),
    ("input-parquet-garbage", _write("bad.parquet", b"PAR1" + bytes(range(256))),
     ("perturb", "bad.parquet", "-o", "out.csv", *OK), 1,
     "bad.parquet is not a readable Parquet file: its footer (the last 8 bytes, from byte offset 252 of 260)"),
    ("input-parquet-truncated", _truncated_parquet, ("perturb", "cut.parquet", "-o", "out.csv", *OK), 1,
     "cut.parquet is not a readable Parquet file: its footer"),
    ("input-unparseable-strict", _write("broken.csv", ROW + '1,2012-01-01T10:00:00Z,35.7,139.7\n1,2012,"35.7,1\n'),
     ("perturb", "broken.csv", "-o", "out.csv", *OK, "--strict"), 1, "(the parser skipped it): line 3"),
    ("input-all-rows-bad", _write("allbad.csv", ROW + "1,2012-01-01T10:00:00Z,abc,139.7\n"),
     ("perturb", "allbad.csv", "-o", "out.csv", *OK), 1, "lines 2"),
    ("input-no-columns", _write("cols.csv", "a,b\n1,2\n"), ("perturb", "cols.csv", "-o", "out.csv", *OK), 1,
     "cols.csv: missing column(s) for user id"),
    # -- options ---------------------------------------------------------------------------------------
    ("method-unknown", None, (*P, "-m", "nope", "-e", "2", "--region", "tky"), 2, "invalid choice: 'nope'"),
    ("method-not-ldp", None, (*P, "-m", "lsrr-thresholds", "-e", "2", "--region", "tky"), 1, "is not ε-LDP"),
    ("method-missing", None, (*P, "-e", "2", "--region", "tky"), 2, "required: -m/--method"),
    *[(f"epsilon-{name}", None, (*P, "-m", "tracs-c", "-e", value, "--region", "tky"), 2, fragment)
      for name, value, fragment in (("zero", "0", "finite number > 0"), ("negative", "-1", "finite number > 0"),
                                    ("nan", "nan", "finite number > 0"), ("inf", "inf", "finite number > 0"),
                                    ("word", "abc", "must be a number"))],
    ("epsilon-missing", None, (*P, "-m", "tracs-c", "--region", "tky"), 2, "required: -e/--epsilon"),
    ("epsilon-too-large-em", None, (*P, "-m", "em", "-e", "1000", "--region", "tky", "--pois", "venues.csv"), 1,
     "too large for a faithful"),
    ("split-gap-negative", None, (*P, *OK, "--split-gap=-3h"), 1, "--split-gap must be a positive time span"),
    ("split-gap-zero", None, (*P, *OK, "--split-gap", "0s"), 1, "--split-gap must be a positive time span"),
    ("split-gap-word", None, (*P, *OK, "--split-gap", "3x"), 1, "is not a time span"),
    ("seed-negative", None, (*P, *OK, "--seed", "-1"), 2, "non-negative integer"),
    ("seed-word", None, (*P, *OK, "--seed", "abc"), 2, "non-negative integer"),
    ("anchor-word", None, (*P, *OK, "--anchor", "middle"), 2, "must be 'center', 'corner' or 'X,Y'"),
    ("anchor-outside", None, (*P, "-m", "tracs-d", "-e", "2", "--region", "tky", "--anchor", "0,0"), 1,
     "lies outside the region"),
    ("input-format-unknown", None, (*P, *OK, "--input-format", "kml"), 2, "invalid choice: 'kml'"),
    # -- tracs map ---------------------------------------------------------------------------------------
    ("map-txt", _released, ("map", "data.csv", "released.csv", "-o", "x.txt"), 1, "ending in .html"),
    ("map-no-suffix", _released, ("map", "data.csv", "released.csv", "-o", "x"), 1, "ending in .html"),
    ("map-csv", _released, ("map", "data.csv", "released.csv", "-o", "data.csv"), 1, "ending in .html"),
    ("map-over-input", _released, ("map", "data.html", "released.csv", "-o", "data.html"), 1,
     "would overwrite the input"),
    ("map-over-released", _released, ("map", "data.csv", "data.html", "-o", "./data.html"), 1,
     "would overwrite the input"),
]


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("setup, argv, status, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_command_line(cli, tmp_path, monkeypatch, setup, argv, status, fragment):
    monkeypatch.chdir(tmp_path)
    _data(tmp_path)
    if setup is not None:
        setup(tmp_path)
    before = _snapshot(tmp_path)
    result = cli(*argv)
    assert result.returncode == status, result.stderr
    assert fragment in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert _snapshot(tmp_path) == before  # no output, no temporary file, inputs untouched


def test_the_table_is_large_enough():
    assert len(CASES) >= 93 and len({c[0] for c in CASES}) == len(CASES)
