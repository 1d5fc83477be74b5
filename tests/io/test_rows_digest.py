"""The digest of a release's rows (tracs.io.digest): its stated construction, order independence,
and that every change of the rows changes it."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tracs.io.digest import columns_digest, combine, frame_columns, row_hashes


def _frame():
    return pd.DataFrame({"uid": ["007", "7", "a,b", "007"], "trajectory": ["1", "1", "0", "2"],
                         "datetime": pd.to_datetime(["2012-04-03 18:00:09.5", "2012-04-03 18:00:10.0", None,
                                                     "1999-12-31 23:59:59.0"], utc=True, format="ISO8601").astype("datetime64[ns, UTC]"),
                         "lat": [35.1234567, -0.00000005, 35.0, np.nan], "lng": [139.5, 139.00000015, 0.0, 1.0]})


def _reference_row(uid, trajectory, ns, lat, lng) -> bytes:
    """The row digest of the module docstring, with hashlib."""
    keys = [ns] + [np.iinfo(np.int64).min if np.isnan(v) else int(np.rint(v * 1e7)) for v in (lat, lng)]
    parts = struct.pack("<qqq", *keys)
    for text in (uid, trajectory):
        parts += struct.pack("<I", len(text.encode())) + text.encode()
    return hashlib.blake2b(parts, digest_size=32, person=b"tracs.rows.1").digest()


def test_row_digests_are_blake2b_of_the_stated_bytes():
    frame = _frame()
    frame.loc[1, "uid"] = "x" * 150  # a row of two blocks
    hashes = row_hashes(frame_columns(frame))
    ns = frame["datetime"].array.asi8
    for k, row in frame.iterrows():
        expected = _reference_row(row.uid, row.trajectory, ns[k], row.lat, row.lng)
        assert hashes[k].astype("<u8").tobytes() == expected
    names = "uid,trajectory,datetime,lat,lng\n".encode()
    joined = b"".join(sorted(hashes[k].astype("<u8").tobytes() for k in range(len(frame))))
    assert columns_digest(frame_columns(frame)) == hashlib.sha256(b"tracs-rows-2\n" + names + joined).hexdigest()


def test_the_digest_ignores_the_row_order_and_the_column_types():
    frame = _frame()
    digest = columns_digest(frame_columns(frame))
    assert columns_digest(frame_columns(frame.iloc[[3, 1, 0, 2]])) == digest
    arrow = {"uid": pa.array(frame.uid), "trajectory": pa.array(frame.trajectory),
             "datetime": pa.array(frame.datetime), "lat": frame.lat.to_numpy(), "lng": frame.lng.to_numpy()}
    assert columns_digest(arrow) == digest
    numbers = pd.DataFrame({"uid": [101, 202], "trajectory": [0, 1], "lat": [1.0, 2.0], "lng": [3.0, 4.0]})
    texts = numbers.astype({"uid": str, "trajectory": str})
    assert columns_digest(frame_columns(numbers)) == columns_digest(frame_columns(texts))


def _swap_lat(f):
    f.loc[[0, 1], "lat"] = f.loc[[1, 0], "lat"].to_numpy()
    return f


def _set(column, row, value):
    def change(f):
        f.loc[row, column] = value
        return f
    return change


@pytest.mark.parametrize("change", [
    _swap_lat,  # every column's values kept, rows changed
    _set("lat", 0, 35.1234568),  # one 10^-7 degree
    _set("uid", 0, "7"),  # 007 is not 7
    _set("trajectory", 2, "00"),
    _set("datetime", 0, pd.Timestamp("2012-04-03 18:00:09.500000001", tz="UTC")),
    lambda f: f.drop(index=3),
    lambda f: pd.concat([f, f.iloc[[0]]]),  # a repeated row
    lambda f: f.drop(columns="trajectory"),
])
def test_every_change_of_the_rows_changes_the_digest(change):
    frame = _frame()
    changed = change(frame.copy())
    assert columns_digest(frame_columns(changed)) != columns_digest(frame_columns(frame))


def test_partitions_combine_to_the_whole():
    frame = _frame()
    parts = [row_hashes(frame_columns(frame.iloc[a:b])) for a, b in ((0, 1), (1, 3), (3, 4))]
    assert combine(list(frame.columns), np.concatenate(parts)) == columns_digest(frame_columns(frame))


def test_hashes_tied_on_their_first_bytes_are_ordered_by_the_rest():
    hashes = np.array([[1, 5, 0, 0], [1, 2, 0, 0], [0, 9, 0, 0]], dtype=np.uint64)
    expected = hashlib.sha256(b"tracs-rows-2\nlat\n" + hashes[[2, 1, 0]].astype("<u8").tobytes()).hexdigest()
    assert combine(["lat"], hashes) == combine(["lat"], hashes[::-1]) == expected


def test_row_digests_spilled_to_disk_in_parts_combine_as_in_memory(tmp_path):
    from tracs.io.digest import SpilledRowHashes

    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**63, size=(3000, 4), dtype=np.int64).astype(np.uint64)
    hashes[:50, 0] = hashes[50:100, 0]  # equal first 8 bytes: the tie-break on the other words
    hashes[100:400, 0] = (hashes[100:400, 0] & ~np.uint64(0xFF)) | np.uint64(0x2A)  # crowded first byte
    names = ["uid", "lat", "lng"]
    with SpilledRowHashes(tmp_path) as rows:
        for part in np.array_split(rng.permutation(hashes), 7):
            rows.add(names, part)
        assert rows.hexdigest() == combine(names, hashes)
        assert len(list(tmp_path.iterdir())) <= SpilledRowHashes.BUCKETS
    assert list(tmp_path.iterdir()) == []  # closed: the files are gone
    with SpilledRowHashes(tmp_path) as rows:
        assert rows.hexdigest() == combine([], np.zeros((0, 4), np.uint64))


def test_spilled_parts_with_other_columns_are_refused(tmp_path):
    from tracs.errors import InputError
    from tracs.io.digest import SpilledRowHashes

    with SpilledRowHashes(tmp_path) as rows:
        rows.add(["uid", "lat"], np.zeros((1, 4), np.uint64))
        with pytest.raises(InputError, match=r"the parts of one release hold different columns: \['uid', 'lat'\] "
                                             r"and \['uid', 'lng'\]"):
            rows.add(["uid", "lng"], np.zeros((1, 4), np.uint64))
