"""User ids are kept exactly as written, everywhere: ``007`` and ``7`` are two users.

A table of id shapes (leading zeros, ``1`` vs ``1.0``, surrounding spaces, unicode,
empty and blank ids, very long ids): for each, the ids the loaders and the command
read, the ids written in the released file (its exact text) and the stream key of
each user (``tracs.random.stream_ids`` of the exact id: distinct ids, distinct keys).
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

import data_loaders
from tracs.io import read_checkins
from tracs.io.batch_files import read_points
from tracs.release import user_keys
from tracs.random import stream_ids

LONG = "9" * 40

# name: (the id of each row as written in the file, the users released in the file's order, lines dropped)
SHAPES = {
    "leading zeros": (["007", "7", "007", "7", "0007"], ["007", "7", "007", "7", "0007"], []),
    "1 and 1.0": (["1", "1.0", "1", "1.0"], ["1", "1.0", "1", "1.0"], []),
    "surrounding spaces": ([" 7", "7", "7 ", "7"], [" 7", "7", "7 ", "7"], []),
    "unicode": (["ユーザー", "Zoë", "Zoe\u0308", "zoë"], ["ユーザー", "Zoë", "Zoe\u0308", "zoë"], []),
    "empty": (["", "7", "7"], ["7", "7"], [2]),
    "blank": (["   ", "7", " "], ["7"], [2, 4]),
    "very long": ([LONG, LONG + "0", LONG, "-" + LONG], [LONG, LONG + "0", LONG, "-" + LONG], []),
    "plain integers": (["12", "3", "12", "-4"], ["12", "3", "12", "-4"], []),
}


def _write(path, ids, sep=","):
    lines = [sep.join(["uid", "datetime", "lat", "lng"])]
    for k, uid in enumerate(ids):
        lines.append(sep.join([uid, f"2012-04-03T1{k}:00:00Z", f"{35.6 + 0.01 * k:.4f}", f"{139.6 + 0.01 * k:.4f}"]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_id_shapes_are_kept_exactly(shape, tmp_path, cli):
    ids, released, dropped = SHAPES[shape]
    source = _write(tmp_path / "in.csv", ids)
    users = list(dict.fromkeys(released))
    # the loaders and the command's reader: the same exact text
    assert sorted(set(data_loaders.load_checkins(source)["uid"])) == sorted(users)
    assert sorted(set(read_checkins(source)["uid"])) == sorted(users)
    points = read_points(source)
    keys = user_keys(points.trajectory_keys())
    assert sorted(keys) == sorted(users)  # one trajectory per user, keyed by its exact id
    # distinct ids, distinct streams: the key is derived from the exact text
    assert len(set(stream_ids(keys).tolist())) == len(users)
    assert stream_ids(keys).tolist() == stream_ids([str(k) for k in keys]).tolist()
    out = tmp_path / "out.csv"
    done = cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--seed", "1", "--region", "tky")
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["uid"] for r in rows] == released  # written exactly, in the input's order
    if dropped:  # named, with their lines
        assert (f"dropped {len(dropped)} row(s): the user id is empty (or, for Foursquare and Gowalla, not an "
                f"integer) in column 'uid': {'line' if len(dropped) == 1 else 'lines'} {', '.join(map(str, dropped))}") \
            in done.stderr
    else:
        assert "dropped 0 for bad values" in done.stderr


def test_changing_one_user_never_changes_a_user_with_a_similar_id(tmp_path, cli):
    """TraCS-D: only 007's rows change; 7's released rows stay byte-identical."""
    base = _write(tmp_path / "a.csv", ["007", "7", "007", "7", "7"])
    moved = tmp_path / "b.csv"
    text = base.read_text().splitlines()
    text[1] = text[1].replace("35.6000", "35.7000")  # 007's first row
    moved.write_text("\n".join(text) + "\n")
    outs = []
    for k, source in enumerate((base, moved)):
        out = tmp_path / f"out{k}.csv"
        assert cli("perturb", source, "-o", out, "-m", "tracs-d", "-e", "2", "--seed", "1",
                   "--region", "tky").returncode == 0
        outs.append([line for line in out.read_text().splitlines() if line.startswith("7,")])
    assert len(outs[0]) == 3 and outs[0] == outs[1]


def test_typed_ids_keep_their_type(tmp_path, cli):
    """Parquet ids keep their type: integers stay integers, text stays text (``007`` too)."""
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"datetime": pd.date_range("2012-04-03", periods=4, freq="h", tz="UTC"),
                          "lat": [35.6, 35.61, 35.62, 35.63], "lng": [139.6, 139.61, 139.62, 139.63]})
    for uid, kind in (([7, 70, 7, 70], "int64"), (["007", "7", "007", "7"], "string"),
                      ([7.0, 7.5, 7.0, 7.5], "double")):
        source = tmp_path / f"in_{kind}.parquet"
        frame.assign(uid=uid).to_parquet(source, index=False)
        out = tmp_path / f"out_{kind}.parquet"
        assert cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1",
                   "--region", "tky").returncode == 0
        table = pq.read_table(out)
        assert str(table.schema.field("uid").type).replace("large_", "") == kind
        assert table.column("uid").to_pylist() == uid


def test_ids_read_as_numbers_only_when_asked(tmp_path):
    source = _write(tmp_path / "in.csv", ["007", "7", "12"])
    assert sorted(data_loaders.load_checkins(source)["uid"]) == ["007", "12", "7"]
    assert sorted(data_loaders.load_checkins(source, id_type="infer")["uid"]) == [7, 7, 12]
    assert sorted(read_checkins(source, id_type="infer")["uid"]) == [7, 7, 12]
    with pytest.raises(ValueError, match="id_type must be one of text, infer, got 'int'"):
        read_checkins(source, id_type="int")
    with pytest.raises(ValueError, match="id_type must be one of text, infer, got 'int'"):
        data_loaders.load_checkins(source, id_type="int")


def test_foursquare_ids_with_leading_zeros_stay_text(tmp_path):
    """Foursquare ids are integers; one written as 007 keeps every id's text (and a note says so)."""
    rows = ["{u}\tv1\tc1\tBar\t35.6\t139.6\t540\tTue Apr 03 18:00:09 +0000 2012",
            "{u}\tv2\tc1\tBar\t35.61\t139.61\t540\tTue Apr 03 19:00:09 +0000 2012"]
    plain = tmp_path / "plain.txt"
    plain.write_text("\n".join(r.format(u=u) for u in ("7", "12") for r in rows) + "\n")
    zeros = tmp_path / "zeros.txt"
    zeros.write_text("\n".join(r.format(u=u) for u in ("007", "7") for r in rows) + "\n")
    loaded = data_loaders.load_foursquare(plain)
    assert loaded["uid"].dtype == np.int64 and sorted(set(loaded["uid"])) == [7, 12]
    loaded = data_loaders.load_foursquare(zeros)
    assert sorted(set(loaded["uid"])) == ["007", "7"]
    assert any("user ids kept as text, exactly as written" in n and "'007'" in n
               for n in loaded.attrs["report"].notes)


def test_dask_keeps_ids_and_columns_per_user():
    """tracs.dask: ``007`` and ``7`` are two users; any partitioning gives the in-process rows."""
    dd = pytest.importorskip("dask.dataframe", reason="tracs[dask] is not installed")
    from tracs.dask import perturb, perturb_frame
    from tracs.perturbers import TraCSD
    from tracs.region import Rectangle

    perturber = TraCSD(Rectangle(0.0, 0.0, 1000.0, 1000.0), 1.0)
    frame = pd.DataFrame({"uid": ["007", "7", "b", "007", "7", "b", "7"],
                          "x": [10.0, 20, 30, 40, 50, 60, 70], "y": [15.0, 25, 35, 45, 55, 65, 75]})
    base = perturb_frame(frame, perturber, seed=3, x="x", y="y")
    moved = frame.assign(x=np.where(frame["uid"] == "007", frame["x"] + 100, frame["x"]))
    again = perturb_frame(moved, perturber, seed=3, x="x", y="y")
    seven = frame["uid"] == "7"
    assert base[seven].equals(again[seven])  # only 007 moved: 7's rows are unchanged
    assert not base[~seven & (frame["uid"] == "007")].equals(again[frame["uid"] == "007"])
    for parts in (1, 2, 3):
        done = perturb(dd.from_pandas(frame, npartitions=parts), perturber, seed=3, x="x", y="y") \
            .compute(scheduler="sync")
        assert done["uid"].tolist() == base["uid"].tolist()  # (dask may hold the text as Arrow strings)
        assert np.array_equal(done[["x", "y"]].to_numpy(), base[["x", "y"]].to_numpy()), parts


def test_trajectory_ids_keep_their_text(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("uid,trip,datetime,lat,lng\n"
                      "7,01,2012-04-03T10:00:00Z,35.60,139.60\n"
                      "7,1,2012-04-03T11:00:00Z,35.61,139.61\n"
                      "7,01,2012-04-03T12:00:00Z,35.62,139.62\n")
    for frame in (data_loaders.load_checkins(source), read_checkins(source)):
        assert frame["trip"].tolist() == ["01", "1", "01"]
        trajectories = data_loaders.to_trajectories(frame, by="trip")
        assert len(trajectories) == 2  # "01" and "1" are two trajectories


@pytest.mark.parametrize("ext, sep", [("csv", ","), ("tsv", "\t")])
def test_ids_with_quotes_and_delimiters_are_read_back_exactly(ext, sep, tmp_path, cli):
    """A released text file read back by tracs gives every id exactly (quoted only where needed)."""
    ids = ['a"b', "c,d", "007", "7"] if sep == "\t" else ['a"b', "c,d", 'e,"f"', "007", "7"]
    frame = pd.DataFrame({"uid": ids, "datetime": pd.date_range("2012-04-03", periods=len(ids), freq="h", tz="UTC"),
                          "lat": 35.6 + 0.01 * np.arange(len(ids)), "lng": 139.6 + 0.01 * np.arange(len(ids))})
    source = tmp_path / f"in.{ext}"
    if sep == "\t":  # tab-separated text has no quoting: the ids as they are
        source.write_text("uid\tdatetime\tlat\tlng\n" + "".join(
            f"{u}\t{t.isoformat()}\t{a}\t{b}\n" for u, t, a, b in frame.itertuples(index=False)), encoding="utf-8")
    else:
        frame.to_csv(source, index=False)
    assert read_checkins(source).sort_values("source_line")["uid"].tolist() == ids
    out = tmp_path / f"out.{ext}"
    done = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", "--region", "tky")
    assert done.returncode == 0, done.stderr
    back = read_checkins(out, input_format="checkins")
    assert back.sort_values("source_line")["uid"].tolist() == ids
    lines = out.read_text(encoding="utf-8").splitlines()[1:]
    assert lines[-2].startswith("007" + sep) and lines[-1].startswith("7" + sep)  # no other value quoted
    assert lines[0].startswith('"a""b"' if sep == "," else 'a"b' + sep)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".gpx"])
def test_perturb_then_estimate_counts_every_report(suffix, tmp_path, cli):
    """'tracs estimate' counted 3 reports for 4 rows of a TSV release with a tab in an id (the quotes
    the writer put around it were not taken off by the reader)."""
    from tracs.io.release import read_release

    ids = ["a\tb", "c\nd", "NA", "007"]
    source = tmp_path / "in.parquet"
    pd.DataFrame({"uid": ids, "datetime": pd.date_range("2024-01-01", periods=4, freq="min", tz="UTC"),
                  "lat": 35.6 + 0.01 * np.arange(4), "lng": 139.6 + 0.01 * np.arange(4)}).to_parquet(source)
    out = tmp_path / f"out{suffix}"
    done = cli("perturb", source, "-o", out, "-m", "tracs-c", "-e", "2", "--seed", "1", "--region", "tky", "-q")
    assert done.returncode == 0, done.stderr
    assert sorted(read_release(out)["uid"].tolist()) == sorted(ids)
    done = cli("estimate", out, "-o", tmp_path / "density.csv", "--grid", "4")
    assert done.returncode == 0 and "4 reports" in done.stdout, done.stdout + done.stderr
