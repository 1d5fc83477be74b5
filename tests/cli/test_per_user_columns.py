"""Every released column of a user depends only on that user's rows, the public parameters and the seed.

One user (``007``, whose id another user ``7`` would swallow if ids were numbers)
is released from a base file and from files where the *other* users' rows are
changed, added (a user who sorts first, rows at the top of the file, a time with
a fraction of a second, an id holding the delimiter and a quote), removed and
reordered.  For every method and every output format of the format table, the
fixed user's released rows must be byte-identical: the same CSV / TSV lines, the
same Parquet and GeoPackage values and types, the same GeoJSON features (points,
and lines with --geometry lines), the same GPX tracks.
"""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pandas as pd
import pytest

from tracs.io.formats import FORMATS as FORMAT_TABLE
from tracs.methods import BASELINE, PERTURBER, view

METHODS = view(PERTURBER, BASELINE)  # every method 'tracs perturb' offers (the registry's)
FIXED = "007"
METHOD_NAMES = [name for name, spec in METHODS.items() if spec.ldp]
# every format 'tracs perturb' writes (the format table's writers), by its first extension
FORMATS = tuple(fmt.suffixes[0].lstrip(".") for fmt in FORMAT_TABLE.values() if fmt.write is not None)


def _rows(uid, n, seed, start="2012-04-03 18:00:00", step=5400):
    rng = np.random.default_rng(seed)
    times = pd.Timestamp(start, tz="UTC") + pd.to_timedelta(np.arange(n) * step, unit="s")
    return pd.DataFrame({"uid": uid, "datetime": [t.isoformat() for t in times],
                         "lat": 35.60 + 0.15 * rng.random(n), "lng": 139.60 + 0.20 * rng.random(n)})


def _base():
    fixed = _rows(FIXED, 6, 1)
    return fixed, [_rows("7", 5, 2), _rows("12", 4, 3), _rows("b", 3, 4)]


def _interleave(fixed, others):
    """The fixed user's rows spread between the others' (its own order kept)."""
    rest = pd.concat(others, ignore_index=True)
    slots = np.linspace(0, len(rest), len(fixed), dtype=int)
    parts, last = [], 0
    for k, slot in enumerate(slots):
        parts += [rest.iloc[last:slot], fixed.iloc[[k]]]
        last = slot
    return pd.concat(parts + [rest.iloc[last:]], ignore_index=True)


def _variants():
    fixed, others = _base()
    moved = [o.assign(lat=o["lat"] + 0.01, lng=o["lng"] - 0.02) for o in others]
    first = _rows("!first", 3, 5)  # sorts before every other id
    odd = _rows('a,"b"', 2, 6).assign(datetime=["2012-04-03T18:00:00.25+00:00", "2012-04-03T19:00:00.5+00:00"])
    shuffled = pd.concat(others, ignore_index=True).sample(frac=1, random_state=3)
    return {
        "base": _interleave(fixed, others),
        "others changed": _interleave(fixed, moved),
        "user added first, rows on top": pd.concat([first, _interleave(fixed, others)], ignore_index=True),
        "fractional time and quoted id": _interleave(fixed, others + [odd]),
        "users removed": _interleave(fixed, others[:1]),
        "fixed user alone": fixed,
        "others reordered": _interleave(fixed, [shuffled]),
    }


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("per-user")
    paths = {}
    for k, (name, frame) in enumerate(_variants().items()):
        paths[name] = root / f"in{k}.csv"
        frame.to_csv(paths[name], index=False)
    rng = np.random.default_rng(9)
    pd.DataFrame({"lat": 35.60 + 0.15 * rng.random(30), "lng": 139.60 + 0.20 * rng.random(30)}).to_csv(
        root / "pois.csv", index=False)
    return root, paths


def _fixed_rows(path, fmt):
    """The fixed user's released rows as bytes / values, in the file's order."""
    if fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        fields = list(csv.reader(lines, delimiter=delimiter))
        header = fields[0]
        uid = header.index("uid")
        return header, [line for line, row in zip(lines[1:], fields[1:]) if row[uid] == FIXED]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        mask = np.asarray(table.column("uid").to_pylist(), dtype=object) == FIXED
        fixed = table.filter(mask)
        return [str(f.type) for f in table.schema], {c: fixed.column(c).to_pylist() for c in table.column_names}
    if fmt == "geojson":
        data = json.loads(path.read_text(encoding="utf-8"))
        return None, [json.dumps(f, sort_keys=True) for f in data["features"] if f["properties"]["uid"] == FIXED]
    if fmt == "gpkg":
        import pyogrio

        frame = pyogrio.read_dataframe(path)
        fixed = frame[frame["uid"] == FIXED]
        return [str(t) for t in frame.dtypes], [tuple(map(repr, row)) for row in
                                                fixed.drop(columns="geometry").itertuples(index=False)] + \
            [g.wkb_hex for g in fixed.geometry]
    tracks = re.findall(r"<trk>.*?</trk>", path.read_text(encoding="utf-8"), flags=re.S)
    return None, [t for t in tracks if f"<name>{FIXED} " in t]


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_fixed_users_rows_do_not_depend_on_other_users(method, inputs, cli, tmp_path):
    root, paths = inputs
    pois = ["--pois", str(root / "pois.csv")] if METHODS[method].discrete else []
    for fmt in FORMATS:
        seen = {}
        for name, source in paths.items():
            out = tmp_path / f"{name.replace(' ', '_').replace(',', '')}.{fmt}"
            done = cli("perturb", source, "-o", out, "-m", method, "-e", "2", "--seed", "11", "--region", "tky",
                       *pois)
            assert done.returncode == 0, done.stderr
            seen[name] = _fixed_rows(out, fmt)
        header, base = seen["base"]
        assert base, f"{method} {fmt}: the fixed user has no released rows"
        for name, (other_header, rows) in seen.items():
            assert rows == base, f"{method} {fmt}: the fixed user's rows changed with '{name}'"
            if fmt in ("csv", "tsv", "parquet", "gpkg"):
                assert other_header == header, f"{method} {fmt}: the columns changed with '{name}'"


@pytest.mark.parametrize("options", [
    ["-m", "tracs-d", "--geometry", "lines"],  # one line per trajectory (GeoJSON features)
    ["-m", "tracs-d", "--per-trajectory"],
    ["-m", "tracs-c", "--split-gap", "1h"],  # every row its own trajectory: ids 0, 1, ... per user
    ["-m", "strawman", "--split-gap", "1h", "--per-trajectory"],
    ["-m", "planar-laplace", "--round-to-pois", "--pois", "{pois}"],
    ["-m", "lsrr", "--per-trajectory", "--pois", "{pois}"],
])
def test_fixed_users_rows_with_options(options, inputs, cli, tmp_path):
    root, paths = inputs
    options = [o.replace("{pois}", str(root / "pois.csv")) for o in options]
    fmt = "geojson" if "lines" in options else "csv"
    seen = {}
    for name, source in paths.items():
        out = tmp_path / f"{name.replace(' ', '_').replace(',', '')}.{fmt}"
        done = cli("perturb", source, "-o", out, "-e", "4", "--seed", "5", "--region", "tky", *options)
        assert done.returncode == 0, done.stderr
        seen[name] = _fixed_rows(out, fmt)
    base = seen["base"]
    assert len(base[1]) == (1 if fmt == "geojson" else 6)
    if "--split-gap" in options:
        assert [line.split(",")[1] for line in base[1]] == ["0", "1", "2", "3", "4", "5"]
    for name, rows in seen.items():
        assert rows == base, f"{options}: the fixed user's rows changed with '{name}'"


def test_released_columns_by_default_and_on_request(inputs, cli, tmp_path):
    _, paths = inputs
    source = paths["base"]
    common = ["-m", "tracs-d", "-e", "1", "--seed", "3", "--region", "tky"]
    cli("perturb", source, "-o", tmp_path / "a.csv", *common)
    cli("perturb", source, "-o", tmp_path / "b.csv", *common, "--keep-lines")
    cli("perturb", source, "-o", tmp_path / "c.csv", *common, "--no-budget-columns")
    a, b, c = (pd.read_csv(tmp_path / f"{k}.csv", dtype={"uid": str}) for k in "abc")
    assert list(a.columns) == ["uid", "trajectory", "point", "datetime", "lat", "lng", "epsilon_point",
                               "epsilon_trajectory"]
    assert list(b.columns) == ["uid", "trajectory", "point", "datetime", "source_line", "lat", "lng", "epsilon_point",
                               "epsilon_trajectory"]
    assert list(c.columns) == ["uid", "trajectory", "point", "datetime", "lat", "lng"]
    assert b["source_line"].tolist() == list(range(2, len(b) + 2))  # the input's lines, in its order
    for column in c.columns:  # the other columns are unchanged
        assert a[column].equals(c[column]) and a[column].equals(b[column]), column
    # one trajectory per user, numbered 0 within each user
    assert set(a["trajectory"]) == {0}
    assert sorted(set(a["uid"])) == sorted({FIXED, "7", "12", "b"})


def test_trajectory_ids_within_each_user_or_the_inputs_own(tmp_path, cli):
    rows = pd.DataFrame({
        "uid": ["9", "1", "9", "1", "9", "1"],
        "trip": ["t2", "x", "t1", "x", "t2", "y"],
        "datetime": ["2012-04-03T10:00:00Z", "2012-04-03T10:00:00Z", "2012-04-03T11:00:00Z",
                     "2012-04-03T23:00:00Z", "2012-04-03T12:00:00Z", "2012-04-04T10:00:00Z"],
        "lat": [35.6, 35.61, 35.62, 35.63, 35.64, 35.65], "lng": [139.6, 139.61, 139.62, 139.63, 139.64, 139.65]})
    source = tmp_path / "in.csv"
    rows.to_csv(source, index=False)
    common = ["-m", "tracs-c", "-e", "1", "--seed", "3", "--region", "tky"]
    assert cli("perturb", source, "-o", tmp_path / "own.csv", *common, "--traj-col", "trip").returncode == 0
    own = pd.read_csv(tmp_path / "own.csv", dtype=str)
    assert own["trajectory"].tolist() == ["t2", "x", "t1", "x", "t2", "y"]  # the input's ids, as written
    no_col = rows.drop(columns="trip")
    no_col.to_csv(source, index=False)
    assert cli("perturb", source, "-o", tmp_path / "gap.csv", *common, "--split-gap", "3h").returncode == 0
    gap = pd.read_csv(tmp_path / "gap.csv", dtype=str)
    # user 9: one trajectory (10:00-12:00); user 1: 10:00 | 23:00 | next day -> 0, 1, 2
    assert gap["trajectory"].tolist() == ["0", "0", "0", "1", "0", "2"]
