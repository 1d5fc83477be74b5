"""The digest of a release's rows: one cryptographic hash per row, sorted, hashed once more.

A release's sidecar records ``rows_sha256`` (:mod:`tracs.io.parameters`), computed here
from a canonical form of the rows that every format stores exactly (CSV, TSV, Parquet,
GeoPackage, GPX, the properties of GeoJSON), so the digest of the columns a writer is
given equals the digest of the file read back:

* the columns ``uid``, ``trajectory``, ``datetime``, ``lat``, ``lng`` that are present
  (:data:`DIGEST_COLUMNS`);
* ``datetime`` as int64 nanoseconds UTC, ``lat`` / ``lng`` as int64 counts of 10⁻⁷
  degrees (round half to even), each as 8 little-endian bytes; missing: ``-2⁶³``;
* then ids as their UTF-8 text (``007`` stays ``007``; integers in decimal), each written
  as its byte count (4 bytes, little-endian; ``0xFFFFFFFF`` for a missing id) and its bytes.

Each row's bytes (the numbers, then the ids, each group in the order above) are hashed
with BLAKE2b (RFC 7693, 32-byte digest, personalisation ``tracs.rows.1``) by a compiled
kernel, all rows at once, with no Python per row.  The row digests are sorted as 32-byte
strings (a sort of fixed-width keys: by their first 8 bytes, the others only when two of
those are equal), and ``rows_sha256`` is SHA-256 of ``tracs-rows-2\n``, the present
columns' names joined by ``,`` and a line feed, then the sorted row digests.
The order of the rows in the file does not matter; anything else does: changing,
adding, removing or repeating a row changes the sorted list of row digests (unless two
rows collide under BLAKE2b-256), and two lists with one digest are a collision of
SHA-256.  Sorting 32-byte digests is far cheaper than sorting the mixed columns.
Because the combination only needs the multiset of row digests, the rows can be hashed
in any partition (:func:`row_hashes` per block, :func:`combine` once).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._validation import read_only
from ..errors import InputError
from .._jit import helper
from ..engine import map_ordered, point_chunks
from ..engine.stream_keys import IV, SIGMA, initial_state, rotr

__all__ = ["DIGEST_COLUMNS", "row_hashes", "combine", "SpilledRowHashes", "columns_digest", "frame_columns"]

#: the columns the digest covers, in its order
DIGEST_COLUMNS = ("uid", "trajectory", "datetime", "lat", "lng")
_IDS = DIGEST_COLUMNS[:2]
_MISSING = np.iinfo(np.int64).min
_HEADER = b"tracs-rows-2\n"


_H0 = initial_state(32, b"tracs.rows.1".ljust(16, b"\0"))


@helper
def _g(a, b, c, d, x, y):
    """BLAKE2b's mixing function G (RFC 7693, 3.1)."""
    a = a + b + x
    d = rotr(d ^ a, 32)
    c = c + d
    b = rotr(b ^ c, 24)
    a = a + b + y
    d = rotr(d ^ a, 16)
    c = c + d
    b = rotr(b ^ c, 63)
    return a, b, c, d


@helper
def _compress(h, m, counter, last, sigma, iv):
    """BLAKE2b's compression F (RFC 7693, 3.2) of the 16 words ``m`` into ``h``, its state in locals."""
    v0, v1, v2, v3, v4, v5, v6, v7 = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    v8, v9, v10, v11, v12, v13, v14, v15 = iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6], iv[7]
    v12 ^= np.uint64(counter)
    if last:
        v14 = ~v14
    for r in range(12):
        s = sigma[r % 10]
        v0, v4, v8, v12 = _g(v0, v4, v8, v12, m[s[0]], m[s[1]])
        v1, v5, v9, v13 = _g(v1, v5, v9, v13, m[s[2]], m[s[3]])
        v2, v6, v10, v14 = _g(v2, v6, v10, v14, m[s[4]], m[s[5]])
        v3, v7, v11, v15 = _g(v3, v7, v11, v15, m[s[6]], m[s[7]])
        v0, v5, v10, v15 = _g(v0, v5, v10, v15, m[s[8]], m[s[9]])
        v1, v6, v11, v12 = _g(v1, v6, v11, v12, m[s[10]], m[s[11]])
        v2, v7, v8, v13 = _g(v2, v7, v8, v13, m[s[12]], m[s[13]])
        v3, v4, v9, v14 = _g(v3, v4, v9, v14, m[s[14]], m[s[15]])
    h[0] ^= v0 ^ v8
    h[1] ^= v1 ^ v9
    h[2] ^= v2 ^ v10
    h[3] ^= v3 ^ v11
    h[4] ^= v4 ^ v12
    h[5] ^= v5 ^ v13
    h[6] ^= v6 ^ v14
    h[7] ^= v7 ^ v15


@njit(cache=True, nogil=True)
def _hash_rows(data0, offsets0, valid0, data1, offsets1, valid1, n_ids, numbers, h0, sigma,
               iv):  # pragma: no cover - compiled
    """BLAKE2b-256 of each row's canonical bytes (module docstring), as 4 little-endian words."""
    n = numbers.shape[0]
    width = numbers.shape[1]
    longest = 0
    for k in range(n):
        size = 0
        if n_ids > 0:
            size += offsets0[k + 1] - offsets0[k]
        if n_ids > 1:
            size += offsets1[k + 1] - offsets1[k]
        longest = max(longest, size)
    words = np.zeros((4 * n_ids + longest + 8 * width) // 128 * 16 + 16, dtype=np.uint64)
    msg = words.view(np.uint8)  # the row's bytes, read by the compression as little-endian words
    out = np.empty((n, 4), dtype=np.uint64)
    h = np.empty(8, dtype=np.uint64)
    for k in range(n):
        for c in range(width):  # the numbers first: whole words
            words[c] = np.uint64(numbers[k, c])
        pos = 8 * width
        for c in range(n_ids):
            data, offsets, valid = (data0, offsets0, valid0) if c == 0 else (data1, offsets1, valid1)
            a, b = offsets[k], offsets[k + 1]
            count = np.uint32(b - a) if valid[k] else np.uint32(0xFFFFFFFF)
            for i in range(4):
                msg[pos + i] = np.uint8((count >> np.uint32(8 * i)) & np.uint32(255))
            pos += 4
            if valid[k]:
                for i in range(b - a):
                    msg[pos + i] = data[a + i]
                pos += b - a
        blocks = max(1, (pos + 127) // 128)
        whole = (pos + 7) // 8
        for i in range(pos, 8 * whole):
            msg[i] = 0
        for i in range(whole, 16 * blocks):
            words[i] = 0
        for i in range(8):
            h[i] = h0[i]
        for j in range(blocks):
            _compress(h, words[16 * j:16 * j + 16], min(128 * (j + 1), pos), j == blocks - 1, sigma, iv)
        for i in range(4):
            out[k, i] = h[i]
    return out


def _text(values, n: int):
    """``(data, offsets, valid)`` of ids as UTF-8 text: an Arrow array, or a NumPy / pandas column."""
    import pyarrow as pa

    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = _arrow_ids(values)
    text = values.cast(pa.large_string())
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks() if text.num_chunks else pa.array([], pa.large_string())
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64)[text.offset:text.offset + n + 1]
    data = text.buffers()[2]
    data = np.zeros(0, np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8)
    valid = np.ones(n, np.uint8) if text.null_count == 0 else \
        text.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)
    return data, offsets, valid


def _arrow_ids(values):
    """Ids of a pandas column or NumPy array as Arrow: integers as numbers (cast to their
    decimal text), anything else as its Python text, as ``astype(str)`` gives it."""
    import pandas as pd
    import pyarrow as pa

    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_integer_dtype(series.dtype) and not series.isna().any():
        return pa.array(series.to_numpy(np.int64))
    if isinstance(series.dtype, pd.ArrowDtype) or str(series.dtype).startswith("string"):
        try:
            return pa.array(series.array)
        except (TypeError, pa.ArrowInvalid):
            pass
    return pa.array(series.astype(str).to_numpy(object), type=pa.large_string())


def _number_keys(name: str, values) -> np.ndarray:
    """int64 keys of a ``datetime`` (ns UTC) or ``lat`` / ``lng`` (10⁻⁷ degrees) column; missing: -2⁶³."""
    import pandas as pd
    import pyarrow as pa

    if name == "datetime":
        if isinstance(values, (pa.Array, pa.ChunkedArray)) and pa.types.is_timestamp(values.type):
            ns = values.cast(pa.timestamp("ns", tz="UTC")).cast(pa.int64())
            return ns.fill_null(_MISSING).to_numpy().astype(np.int64)
        values = pd.Series(values).reset_index(drop=True)
        text = values.dtype == object or pd.api.types.is_string_dtype(values.dtype)
        stamps = pd.to_datetime(values, utc=True, errors="coerce", **({"format": "ISO8601"} if text else {}))
        array = stamps.array.as_unit("ns") if hasattr(stamps.array, "as_unit") else stamps.array
        return np.asarray(array.asi8, dtype=np.int64)
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = values.to_numpy(zero_copy_only=False)
    values = values.to_numpy(dtype=float, na_value=np.nan) if isinstance(values, pd.Series) \
        else np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    key = np.full(len(values), _MISSING, dtype=np.int64)
    key[finite] = np.rint(values[finite] * 1e7).astype(np.int64)
    return key


def row_hashes(columns: dict, *, workers: int = 2) -> np.ndarray:
    """The BLAKE2b-256 digest of every row, shape ``(N, 4)`` of little-endian uint64 words.

    Parameters
    ----------
    columns : dict
        Name -> column (Arrow array, NumPy array or pandas Series) for the names of
        :data:`DIGEST_COLUMNS` present; others are ignored.
    workers : int
        Threads hashing contiguous runs of rows (the kernel releases the interpreter lock).
    """

    names = [name for name in DIGEST_COLUMNS if name in columns]
    n = len(columns[names[0]]) if names else 0
    ids = [_text(columns[name], n) for name in _IDS if name in columns]
    empty = (np.zeros(0, np.uint8), np.zeros(n + 1, np.int64), np.ones(n, np.uint8))
    ids += [empty] * (2 - len(ids))
    numbers = [_number_keys(name, columns[name]) for name in DIGEST_COLUMNS[2:] if name in columns]
    numbers = np.column_stack(numbers) if numbers else np.zeros((n, 0), np.int64)
    ids = [[read_only(np.ascontiguousarray(a)) for a in part] for part in ids]
    numbers = read_only(np.ascontiguousarray(numbers))
    n_ids = sum(name in columns for name in _IDS)
    out = np.empty((n, 4), dtype=np.uint64)

    def run(rows):
        a, b = rows
        args = [array for data, offsets, valid in ids for array in (data, offsets[a:b + 1], valid[a:b])]
        out[a:b] = _hash_rows(*args, n_ids, numbers[a:b], _H0, SIGMA, IV)

    map_ordered(run, point_chunks(n, workers, min_points=1 << 15), workers)
    return out


def combine(names, hashes) -> str:
    """``rows_sha256`` of the row digests ``hashes`` (:func:`row_hashes`, in any order,
    stacked) of rows holding the columns ``names``."""
    digest = _started(names)
    digest.update(_in_order(hashes))
    return digest.hexdigest()


def _started(names):
    """SHA-256 fed with the digest's header and the names of the columns present."""
    digest = hashlib.sha256(_HEADER)
    digest.update(",".join(n for n in DIGEST_COLUMNS if n in set(names)).encode() + b"\n")
    return digest


def _in_order(hashes) -> memoryview:
    """The bytes of the row digests ``hashes`` sorted as 32-byte strings."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64).reshape(-1, 4)
    first = hashes[:, 0].byteswap()  # the digest's first 8 bytes, compared as a big-endian word
    order = np.argsort(first)
    ranked = first[order]
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])
    if len(tied) and (hashes[order[tied]] != hashes[order[tied + 1]]).any():
        order = np.lexsort(hashes.byteswap().T[::-1])
    sorted_rows = hashes[order] if sys.byteorder == "little" else hashes[order].byteswap()
    return memoryview(sorted_rows.reshape(-1).view(np.uint8))  # flat: an empty one too


class SpilledRowHashes:
    """Row digests gathered in parts on disk, for a release too large to sort them in memory.

    Each part's digests go to one of 256 files by their first byte; :meth:`hexdigest` then
    sorts one file at a time and feeds them in byte order, which is the order of
    :func:`combine` (so the result equals ``combine`` of every part stacked).  Memory: one
    file, about 32 bytes × rows / 256.

    Parameters
    ----------
    folder : path-like
        Where the 256 files are written (removed by :meth:`close`).
    """

    BUCKETS = 256

    def __init__(self, folder):
        self._folder = Path(folder)
        self._files = [None] * self.BUCKETS
        self.names = None

    def add(self, names, hashes) -> None:
        """Add the row digests ``hashes`` (:func:`row_hashes`) of rows holding the columns ``names``."""
        names = [n for n in DIGEST_COLUMNS if n in set(names)]
        if self.names is None:
            self.names = names
        elif names != self.names:
            raise InputError(f"the parts of one release hold different columns: {self.names} and {names}")
        hashes = np.ascontiguousarray(hashes, dtype=np.uint64).reshape(-1, 4)
        first = hashes[:, 0] & 0xFF  # the digest's first byte (the words hold little-endian values)
        order = np.argsort(first, kind="stable")
        cuts = np.searchsorted(first[order], np.arange(self.BUCKETS + 1))
        for bucket in np.flatnonzero(np.diff(cuts)):
            if self._files[bucket] is None:
                self._files[bucket] = open(self._folder / f"rows-{bucket:03d}.bin", "w+b")
            self._files[bucket].write(hashes[order[cuts[bucket]:cuts[bucket + 1]]].tobytes())

    def hexdigest(self) -> str:
        """``rows_sha256`` of every row added (as :func:`combine` of them all)."""
        digest = _started(self.names or [])
        for fh in self._files:
            if fh is not None:
                fh.seek(0)
                digest.update(_in_order(np.frombuffer(fh.read(), dtype=np.uint64)))
        return digest.hexdigest()

    def close(self) -> None:
        """Remove the files."""
        for k, fh in enumerate(self._files):
            if fh is not None:
                fh.close()
                Path(fh.name).unlink(missing_ok=True)
                self._files[k] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def columns_digest(columns: dict) -> str:
    """``rows_sha256`` of rows given as columns (:func:`row_hashes`)."""
    return combine(list(columns), row_hashes(columns))


def frame_columns(frame) -> dict:
    """The digest's columns of a pandas frame (as :func:`tracs.io.release.read_release` gives it)."""
    return {name: frame[name].reset_index(drop=True) for name in DIGEST_COLUMNS if name in frame.columns}


key_on_sources(globals())  # cached kernels follow every source they compile in
