"""The loaders read every file with the reader the format table chooses (tracs.io.records), text with
the pandas reader's types."""

import numpy as np
import pandas as pd
import pytest

import data_loaders as dl
from tracs.io import table_readers
from tracs.io import delimited_text as _io
from tracs.io.arrow_text import ShortLineError
from tracs.io.records import read_records

TABLE = ("uid,when,lat,lng,poi_id,count,share,flag,code\n"
         "1,2012-04-03T18:00:00Z,35.70,139.70,v1,3,0.5,true,007\n"
         "1,2012-04-03T19:00:00Z,35.71,139.71,v2,,1e-3,False,010\n"
         "2,2012-04-03T18:30:00Z,35.72,139.72,v3,5,inf,TRUE,x1\n"
         "2,2012-04-03T18:40:00Z,35.73,139.73,v4,6,2,false,12,extra\n")


@pytest.fixture
def table_file(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(TABLE)
    return path


def test_arrow_reader_gives_the_pandas_result(table_file, monkeypatch):
    """Types inferred as pandas does (ints with gaps as floats, booleans, text ids), same line numbers."""
    expected = _io.read_table_pandas(table_file, sep=",", header=True, text=("poi_id", "code"))
    calls = []
    monkeypatch.setattr(_io, "read_table_pandas", lambda *a, **k: calls.append(a))
    records = read_records(table_file)
    assert calls == []  # valid UTF-8 with no short line: the Arrow reader only
    assert records.format.key == "csv"
    pd.testing.assert_frame_equal(records.frame(text=("poi_id", "code")), expected.frame)
    assert records.raw.lines.tolist() == expected.lines.tolist() == [2, 3, 4]
    assert records.raw.bad_lines.tolist() == expected.bad_lines.tolist() == [5]


def _pandas_only(*args, **kwargs):
    raise ShortLineError("as if a line had too few fields: the pandas reader reads the file")


def test_blank_lines_and_the_loaded_frame(tmp_path, monkeypatch):
    """With a blank line pandas infers floats for every number column; the loaded frames agree."""
    path = tmp_path / "blank.csv"
    path.write_text(TABLE.replace("\n1,", "\n\n1,", 1))
    got = read_records(path).raw
    assert got.blank_lines.tolist() == [2] and got.lines.tolist() == [3, 4, 5] and got.bad_lines.tolist() == [6]
    arrow = dl.load_checkins(path, time="when")
    monkeypatch.setattr(table_readers, "read_text", _pandas_only)
    pandas = dl.load_checkins(path, time="when")
    pd.testing.assert_frame_equal(arrow.drop(columns=["count", "code"]), pandas.drop(columns=["count", "code"]))
    assert arrow["code"].tolist() == ["007", "010", "x1"]  # ids stay text
    assert dict(arrow.attrs["report"]) == dict(pandas.attrs["report"])


@pytest.mark.parametrize("content, reason", [
    ("uid,datetime,lat,lng,poi_id\n1,2012-04-03T18:00:00Z,35.7,139.7\n", "short line: padded"),
    ("uid,datetime,lat,lng,name\n1,2012-04-03T18:00:00Z,35.7,139.7,Bar\n"
     .encode("utf-8") + "3,2012-04-03T18:00:00Z,35.7,139.7,Caf\xe9\n".encode("latin-1"), "not UTF-8"),
])
def test_pandas_reader_for_what_arrow_reads_otherwise(tmp_path, monkeypatch, content, reason):
    """Lines with too few fields (padded) and files that are not UTF-8 go to the pandas reader."""
    path = tmp_path / "odd.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    calls = []
    original = _io.read_table_pandas
    monkeypatch.setattr(_io, "read_table_pandas", lambda *a, **k: calls.append(a) or original(*a, **k))
    frame = dl.load_checkins(path)
    assert len(calls) == 1, reason
    assert len(frame) >= 1


def test_foursquare_loader_uses_the_arrow_reader(tmp_path, monkeypatch):
    path = tmp_path / "fsq.tsv"
    path.write_text("1\tv1\tc1\tCafe\t35.7\t139.7\t540\tTue Apr 03 18:00:09 +0000 2012\n"
                    "1\tv2\tc2\tBar\t35.8\t139.8\t540\tTue Apr 03 19:00:09 +0000 2012\n")
    monkeypatch.setattr(_io, "read_table_pandas", lambda *a, **k: pytest.fail("pandas reader used"))
    frame = dl.load_foursquare(path)
    assert frame["poi_id"].tolist() == ["v1", "v2"] and frame["utc_offset"].tolist() == [540, 540]
    assert frame["source_line"].tolist() == [1, 2]
    assert np.issubdtype(frame["uid"].dtype, np.integer)


def test_a_registered_format_is_read_by_load_any(tmp_path, monkeypatch):
    """A format added to the table of tracs.io.formats (here ``.tsv2``: a tab-separated table after a
    line naming the layout) is read by ``load_any`` with the format's own reader, like every command."""
    from tracs.io import formats
    from tracs.io.table_readers import read_delimited

    def read_tsv2(path, request):
        body = tmp_path / "body.tsv"
        body.write_text(path.read_text().split("\n", 1)[1])
        return read_delimited(body, request)

    monkeypatch.setitem(formats.FORMATS, "tsv2", formats.Format("TSV2", "tsv2", (".tsv2",), read=read_tsv2))
    path = tmp_path / "points.tsv2"
    path.write_text("#tsv2\n" + TABLE.replace(",", "\t").replace("\t12\textra", "\t12").replace("when", "datetime"))
    assert dl.detect_format(path) == "table"
    frame = dl.load_any(path)
    assert frame["uid"].tolist() == ["1", "1", "2", "2"]
    assert frame.attrs["report"].rows_kept == 4
    assert "TSV2" in formats.supported()


def test_the_help_and_the_refusal_list_the_table(monkeypatch, capsys):
    """``tracs perturb --help`` and the refusal's list of formats are the table's, a format registered
    after import included."""
    from tracs.cli import main
    from tracs.io import formats
    from tracs.io.table_readers import read_delimited

    monkeypatch.setitem(formats.FORMATS, "tsv2", formats.Format("TSV2", "tsv2", (".tsv2",), read=read_delimited))
    assert formats.SUPPORTED.endswith(", TSV2")
    assert main(["perturb", "--help"]) == 0
    assert "TSV2" in " ".join(capsys.readouterr().out.split())


FOURSQUARE_ROWS = {"User ID": ["007", "7"], "Venue ID": ["v1", "v2"], "Venue Category": ["c1", "c2"],
                   "Venue Name": ["Cafe", "Bar"], "Latitude": [35.7, 35.8], "Longitude": [139.7, 139.8],
                   "Timezone": [540, 540],
                   "UTC Time": ["Tue Apr 03 18:00:09 +0000 2012", "Tue Apr 03 19:00:09 +0000 2012"]}


def test_the_foursquare_loader_reads_any_container_of_the_table(tmp_path):
    """The set's header names in a Parquet file: read by the Parquet entry's reader, named by the loader."""
    path = tmp_path / "fsq.parquet"
    pd.DataFrame(FOURSQUARE_ROWS).to_parquet(path)
    frame = dl.load_foursquare(path)
    text = tmp_path / "fsq.csv"
    pd.DataFrame(FOURSQUARE_ROWS).to_csv(text, index=False)
    assert frame.attrs["report"].format == "foursquare-parquet" and frame["source_row"].tolist() == [0, 1]
    assert frame["uid"].tolist() == dl.load_foursquare(text)["uid"].tolist() == ["007", "7"]  # as written
    assert frame["poi_id"].tolist() == ["v1", "v2"] and frame["utc_offset"].tolist() == [540, 540]


@pytest.mark.parametrize("loader, name, content, message", [
    (dl.load_foursquare, "trips.csv",
     '"TRIP_ID","TAXI_ID","TIMESTAMP","POLYLINE"\n"1","2","1372636858","[[-8.6,41.1]]"\n',
     r"trips\.csv is not a Foursquare TSMC2014 file: it is a Porto taxi CSV file"),
    (dl.load_gowalla, "f.parquet", None, r"f\.parquet is not a Gowalla check-in file: it has 8 columns, expected 5"),
    (dl.load_checkins, "lines.geojson",
     '{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"uid": "1"}, "geometry": '
     '{"type": "LineString", "coordinates": [[139.7, 35.7], [139.8, 35.8]]}}]}',
     r"must hold points \(one per check-in\): lines\.geojson holds lines \(tracs\.io\.read_checkins"),
])
def test_files_the_loader_does_not_read(tmp_path, loader, name, content, message):
    path = tmp_path / name
    if content is None:
        pd.DataFrame(FOURSQUARE_ROWS).to_parquet(path)
    else:
        path.write_text(content)
    with pytest.raises(ValueError, match=message):
        loader(path)
