"""The trajectory data set readers on files as users have them: old Mac line ends, bytes that are
not UTF-8, NUL bytes, ids with spaces.  Every file is written here, in the data set's layout."""

from __future__ import annotations

import pytest

from tracs.io import read_checkins
from tracs.io.tracks import TrackFileError

from track_samples import GEOLIFE_HEADER, PORTO_HEADER, plt_line, porto_row

PLT_LINES = [plt_line(39.984702, 116.318417, 492, "2008-10-23", "02:53:04"),
             plt_line(39.984683, 116.31845, 492, "2008-10-23", "02:53:10"),
             plt_line(39.984686, 116.318417, 492, "2008-10-23", "02:53:15")]
TDRIVE = "1,2008-02-02 15:36:08,116.51172,39.92123\n1,2008-02-02 15:46:08,116.51135,39.93883\n"


def _geolife(root, body: bytes, name="20081023025304.plt"):
    path = root / "Data" / "000" / "Trajectory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return root


def _sorted(frame):
    return frame.sort_values("source_line").reset_index(drop=True)


def test_geolife_with_carriage_returns_only(tmp_path):
    """A .plt file with CR-only line ends was skipped as "only the header" (and the summary said dropped 0)."""
    root = _geolife(tmp_path, (GEOLIFE_HEADER + "".join(PLT_LINES)).replace("\r\n", "\r").encode())
    frame = _sorted(read_checkins(root))
    assert len(frame) == 3 and frame["source_line"].tolist() == [7, 8, 9]
    assert not any("skipped" in n for n in frame.attrs["report"].notes)


def test_tdrive_with_carriage_returns_only(tmp_path):
    """T-Drive with CR-only line ends: 'unexpected IndexError'."""
    path = tmp_path / "1.txt"
    path.write_bytes(TDRIVE.replace("\n", "\r").encode())
    frame = _sorted(read_checkins(path))
    assert len(frame) == 2 and frame["source_line"].tolist() == [1, 2]


def test_csv_with_carriage_returns_only(tmp_path):
    path = tmp_path / "in.csv"
    path.write_bytes(b"uid,datetime,lat,lng\r7,2024-01-01T00:00:00Z,35.6,139.6\r8,2024-01-01T00:01:00Z,bad,139.6\r")
    frame = read_checkins(path)
    assert frame["uid"].tolist() == ["7"] and frame.attrs["report"].dropped == {"bad_coords": [3]}


def test_tdrive_and_porto_ids_are_kept_as_written(tmp_path):
    """' 20000589' merged with '20000589' (both readers trimmed the ids)."""
    folder = tmp_path / "taxis"
    folder.mkdir()
    (folder / "1.txt").write_text(" 1,2008-02-02 15:36:08,116.51172,39.92123\n1,2008-02-02 15:46:08,116.5,39.9\n"
                                  "NA,2008-02-02 15:56:08,116.5,39.9\n")
    assert sorted(read_checkins(folder)["uid"].tolist()) == [" 1", "1", "NA"]
    porto = tmp_path / "train.csv"
    porto.write_text(PORTO_HEADER + porto_row("1", " 20000589", 1372636858, [[-8.61, 41.14]])
                     + porto_row("2", "20000589", 1372636858, [[-8.61, 41.14]])
                     + porto_row(" 3", "NA", 1372636858, [[-8.61, 41.14]]))
    frame = _sorted(read_checkins(porto))
    assert frame["uid"].tolist() == [" 20000589", "20000589", "NA"]
    assert frame["trip_id"].tolist() == ["1", "2", " 3"]


def _tdrive_bytes(tmp_path, data: bytes):
    path = tmp_path / "taxis" / "1.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    (path.parent / "2.txt").write_text(TDRIVE.replace("1,", "2,"))
    return path.parent


def _porto_bytes(tmp_path, data: bytes):
    path = tmp_path / "train.csv"
    path.write_bytes(PORTO_HEADER.encode() + porto_row("1", "20000589", 1372636858, [[-8.61, 41.14]]).encode()
                     + data)
    return path


def _geolife_bytes(tmp_path, data: bytes):
    return _geolife(tmp_path, (GEOLIFE_HEADER + PLT_LINES[0]).encode() + data)


ROW_TDRIVE = b"1,2008-02-02 15:46:08,116.51135,39.93883\n"
ROW_PORTO = porto_row("2", "20000589", 1372636858, [[-8.61, 41.14]]).encode()
ROW_PLT = PLT_LINES[1].encode()


@pytest.mark.parametrize("write, data, message", [
    (_tdrive_bytes, ROW_TDRIVE + b"1\xe9,2008-02-02 15:46:08,116.5,39.9\n",
     r"^1\.txt: line 2 is not UTF-8 text \(byte b'\\xe9' at byte offset 42\): save the file as UTF-8$"),
    (_tdrive_bytes, ROW_TDRIVE + b"1\x00,2008-02-02 15:46:08,116.5,39.9\n",
     r"^1\.txt: line 2 holds a NUL byte \(byte offset 42\): a binary or damaged file, not text$"),
    (_porto_bytes, ROW_PORTO.replace(b"20000589", b"2000\xff589"),
     r"^train\.csv: line 3 is not UTF-8 text \(byte b'\\xff' at byte offset \d+\): save the file as UTF-8$"),
    (_porto_bytes, ROW_PORTO.replace(b"20000589", b"2000\x00589"),
     r"^train\.csv: line 3 holds a NUL byte \(byte offset \d+\): a binary or damaged file, not text$"),
    (_geolife_bytes, ROW_PLT.replace(b"0,492", b"0,4\xe92"),
     r"^000/Trajectory/20081023025304\.plt: line 8 is not UTF-8 text \(byte b'\\xe9' at byte offset \d+\)"),
    (_geolife_bytes, ROW_PLT + b"\x00",
     r"^000/Trajectory/20081023025304\.plt: line 9 holds a NUL byte \(byte offset \d+\)"),
], ids=["tdrive-utf8", "tdrive-nul", "porto-utf8", "porto-nul", "geolife-utf8", "geolife-nul"])
def test_bytes_that_are_not_text_are_named_with_file_line_and_offset(write, data, message, tmp_path):
    """Arrow said 'Row #8: invalid UTF8' naming no file; a NUL byte in a T-Drive id made a new user."""
    path = write(tmp_path, data)
    with pytest.raises(TrackFileError, match=message):
        read_checkins(path)


def test_porto_offset_is_the_byte_of_the_file(tmp_path):
    path = _porto_bytes(tmp_path, ROW_PORTO.replace(b"20000589", b"2000\xff589"))
    with pytest.raises(TrackFileError) as caught:
        read_checkins(path)
    offset = int(str(caught.value).split("byte offset ")[1].split(")")[0])
    assert path.read_bytes()[offset:offset + 1] == b"\xff"
