"""Every reader of the format table returns the one raw parse type, ``RawColumns``: the public data
sets' readers, the commands' reading path (``read_columns``) and the Porto file read in blocks
(the block size carried by the read request)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import data_loaders as dl
from tracs.io import formats
from tracs.io.checkin_files import checkin_arguments, read_columns
from tracs.io.formats import format_of
from tracs.io.raw import FILE_COLUMN, RawColumns, ReadRequest, files_of
from track_samples import write_cabspotting, write_geolife, write_porto, write_porto_many, write_tdrive

LAYOUTS = {
    "geolife": (lambda p: write_geolife(p / "g"), "geolife-plt", "trajectory_id", "UTC", True),
    "tdrive": (lambda p: write_tdrive(p / "t"), "tdrive-txt", None, None, True),
    "porto": (lambda p: write_porto(p / "train.csv"), "porto-csv", "trip_id", "UTC", False),
    "cabspotting": (lambda p: write_cabspotting(p / "cabs"), "cabspotting-txt", None, "UTC", True),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_data_sets_readers_return_raw_columns(tmp_path, layout):
    write, fmt, traj, zone, folder = LAYOUTS[layout]
    path = write(tmp_path)
    entry = format_of(path)
    assert entry.key == layout
    raw = entry.reader()(path, ReadRequest(plan=None, input_format=layout))
    assert isinstance(raw, RawColumns) and raw.fmt == fmt and raw.position == "line"
    table = raw.table
    assert table.column_names[:4] == ["uid", "datetime", "lat", "lng"]
    assert table.schema.field("uid").type == pa.large_string()  # ids as written, as text
    assert table.schema.field("datetime").type == pa.timestamp("ns", tz=zone)
    assert raw.roles == {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng",
                         **({"traj": traj} if traj else {})}
    assert len(raw.lines) == table.num_rows and raw.lines.dtype == np.int64
    where = files_of(table)
    assert (where is not None) == folder and (FILE_COLUMN in table.column_names) == folder
    if folder:
        assert len(where[0]) == table.num_rows and len(raw.bad_files) == len(raw.bad_lines)


def test_read_columns_returns_the_rows_with_their_roles(tmp_path):
    """The commands' reading path hands on a RawColumns: each role found, times read, no row checked."""
    raw = read_columns(write_geolife(tmp_path / "g"))
    assert isinstance(raw, RawColumns) and raw.source == "g" and raw.fmt == "geolife-plt"
    assert raw.roles == {"user": "uid", "time": "datetime", "traj": "trajectory_id"}
    assert list(raw.table.columns) == ["uid", "datetime", "trajectory_id", FILE_COLUMN]
    assert raw.table["uid"].tolist()[:3] == ["000"] * 3 and raw.lonlat.shape == (len(raw.lines), 2)
    assert len(raw.lines) == 10 and raw.bad_lines.tolist() == [9]  # the bad rows are still there
    assert files_of(raw.table)[1] == ["000/Trajectory/20081023025304.plt", "000/Trajectory/20081024010000.plt",
                                      "010/Trajectory/20081024020000.plt"]
    arguments = checkin_arguments(raw)
    assert list(arguments["extra"]) == ["trajectory_id", FILE_COLUMN]
    assert arguments["column_names"] == {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng"}


def test_the_porto_loaders_read_through_the_format_table_in_blocks(tmp_path, monkeypatch):
    """``load_porto`` and ``iter_porto`` ask the table's Porto entry, the block size in the request."""
    path, points = write_porto_many(tmp_path / "train.csv", 300)
    entry = formats.FORMATS["porto"]
    asked = []

    def reader(path, request):
        asked.append(("read", request.chunk_bytes))
        return entry.reader()(path, request)

    def blocks(path, request):
        asked.append(("blocks", request.chunk_bytes))
        return entry.block_reader()(path, request)

    monkeypatch.setitem(formats.FORMATS, "porto", formats.Format(
        entry.name, entry.key, read=reader, blocks=blocks, detect=entry.detect, selectable=True))
    whole = dl.load_porto(path, chunk_bytes=1 << 13)
    chunks = list(dl.iter_porto(path, chunk_bytes=1 << 13))
    assert asked == [("read", 1 << 13), ("blocks", 1 << 13)]
    assert len(whole) == points == sum(len(c) for c in chunks) and len(chunks) > 5
    joined = pd.concat(chunks, ignore_index=True)
    order = np.lexsort((joined["datetime"].array.asi8, pd.factorize(joined["uid"], sort=True)[0]))
    assert joined["source_line"].to_numpy()[order].tolist() == whole["source_line"].tolist()
    with pytest.raises(formats.UnsupportedFormatError, match="read whole, not in blocks"):
        formats.FORMATS["csv"].block_reader()
