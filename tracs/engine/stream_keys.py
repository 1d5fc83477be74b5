"""Stream identifiers of many user keys at compiled speed (same values as :func:`tracs.random.stream_ids`).

:func:`tracs.random.stream_ids` hashes each distinct key with BLAKE2b (8-byte
digest, personalisation ``tracs.user.key``) in a Python loop, a few µs per key:
for 10^5–10^6 users that is the serial part of a parallel batch.  This module
computes the same BLAKE2b (RFC 7693) in a numba kernel over all keys at once and
groups keys by their canonical bytes exactly as :mod:`tracs.random` does, so the
result is identical value for value (checked by the tests on integer, text and
repeated keys).  Keys of other kinds (bytes, floats, mixed) go to
:func:`tracs.random.stream_ids` itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._numba_cache import key_on_sources
from .._jit import helper
from .._validation import read_only
from ..random import splitmix64, stream_ids
from ._account import serial_step
from ._pool import map_ordered, point_chunks

__all__ = ["fast_stream_ids"]

IV = np.array([0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
                0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179],
               dtype=np.uint64)
SIGMA = np.array([
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
], dtype=np.int64)
_PERSON = b"tracs.user.key".ljust(16, b"\0")


def initial_state(size: int = 8, person: bytes = _PERSON) -> np.ndarray:
    """BLAKE2b's state before the first block: a digest of ``size`` bytes, personalisation ``person``
    (16 bytes)."""
    h = IV.copy()
    h[0] ^= np.uint64(0x01010000 ^ size)  # fan-out 1, depth 1, no key, the digest's size
    h[6] ^= np.frombuffer(person[:8], dtype="<u8")[0]
    h[7] ^= np.frombuffer(person[8:], dtype="<u8")[0]
    return h


_H0 = initial_state()


@helper
def rotr(x, n):
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


_LANES = np.array([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15],
                   [0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]], dtype=np.int64)


@njit(cache=True, nogil=True)
def _compress(h, block, counter, last, sigma, iv, lanes, v, m):  # pragma: no cover - compiled
    for i in range(16):
        word = np.uint64(0)
        for b in range(8):
            word |= np.uint64(block[8 * i + b]) << np.uint64(8 * b)
        m[i] = word
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = iv[i]
    v[12] ^= np.uint64(counter)
    if last:
        v[14] ^= np.uint64(0xFFFFFFFFFFFFFFFF)
    for r in range(12):
        row = r % 10
        for j in range(8):
            a, b, c, d = lanes[j, 0], lanes[j, 1], lanes[j, 2], lanes[j, 3]
            x, y = m[sigma[row, 2 * j]], m[sigma[row, 2 * j + 1]]
            v[a] = v[a] + v[b] + x
            v[d] = rotr(v[d] ^ v[a], 32)
            v[c] = v[c] + v[d]
            v[b] = rotr(v[b] ^ v[c], 24)
            v[a] = v[a] + v[b] + y
            v[d] = rotr(v[d] ^ v[a], 16)
            v[c] = v[c] + v[d]
            v[b] = rotr(v[b] ^ v[c], 63)
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


@njit(cache=True, nogil=True)
def _hash_all(data, starts, h0, sigma, iv, lanes):  # pragma: no cover - compiled
    """BLAKE2b-64 of each ``data[starts[k]:starts[k+1]]`` as a little-endian uint64."""
    n = len(starts) - 1
    out = np.empty(n, dtype=np.uint64)
    v = np.empty(16, dtype=np.uint64)
    m = np.empty(16, dtype=np.uint64)
    block = np.zeros(128, dtype=np.uint8)
    h = np.empty(8, dtype=np.uint64)
    # element loops, not array-to-array slice copies (``h[:] = h0``): numba compiles those with their
    # shape-mismatch error message, seconds of compiling for nothing here (a scalar fill has none)
    for k in range(n):
        for i in range(8):
            h[i] = h0[i]
        pos, hi = starts[k], starts[k + 1]
        done = 0
        while True:
            take = min(128, hi - pos)
            block[:] = 0
            for b in range(take):
                block[b] = data[pos + b]
            pos += take
            done += take
            last = pos >= hi
            _compress(h, block, done, last, sigma, iv, lanes, v, m)
            if last:
                break
        out[k] = h[0]
    return out


@njit(cache=True)
def _decimal_bytes(values):  # pragma: no cover - compiled
    """``b"s" + str(v)`` of each int64, as one byte buffer and start offsets."""
    n = len(values)
    starts = np.empty(n + 1, dtype=np.int64)
    buf = np.empty(n * 21, dtype=np.uint8)
    digits = np.empty(20, dtype=np.uint8)
    pos = 0
    for k in range(n):
        starts[k] = pos
        buf[pos] = 115  # "s"
        pos += 1
        v = values[k]
        if v < 0:
            buf[pos] = 45  # "-"
            pos += 1
        u = np.uint64(-v) if v < 0 else np.uint64(v)
        count = 0
        while True:
            digits[count] = np.uint8(48 + u % np.uint64(10))
            count += 1
            u //= np.uint64(10)
            if u == 0:
                break
        for i in range(count):
            buf[pos + i] = digits[count - 1 - i]
        pos += count
    starts[n] = pos
    return buf[:pos], starts


@njit(cache=True)
def _same_bytes_where_hashes_match(order, hashes, data, starts):  # pragma: no cover - compiled
    """False if two different keys share a hash (then the exact reference path is used)."""
    for i in range(1, len(order)):
        a, b = order[i - 1], order[i]
        if hashes[a] != hashes[b]:
            continue
        la, lb = starts[a + 1] - starts[a], starts[b + 1] - starts[b]
        if la != lb:
            return False
        for j in range(la):
            if data[starts[a] + j] != data[starts[b] + j]:
                return False
    return True


def _canonical_buffer(keys, n):
    """Canonical bytes of every key (as :mod:`tracs.random` names users), or ``None``."""
    if keys is None:
        return _decimal_bytes(np.arange(n, dtype=np.int64))
    arr = keys if isinstance(keys, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "iu" and arr.ndim == 1:
        if arr.dtype.kind == "u" and len(arr) and arr.max() > np.iinfo(np.int64).max:
            return None
        return _decimal_bytes(arr.astype(np.int64))
    items = keys.tolist() if arr is not None else list(keys)
    return _text_bytes(items)


def _text_bytes(items):
    """``b"s" + key.encode("utf-8")`` of every key, as one buffer and start offsets, when
    every key is a ``str`` without NUL characters (else ``None``: the reference path).

    The keys are joined by NUL and encoded once, in C: each separator becomes the
    next key's ``"s"``.  A key holding a lone surrogate raises ``UnicodeEncodeError``,
    as Python's encoder does key by key.
    """
    try:
        joined = "\x00".join(items)
    except TypeError:  # a key that is not a str
        return None
    if joined.count("\x00") != len(items) - 1:
        return None
    data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    separators = np.flatnonzero(data == 0)
    out = np.empty(len(data) + 1, dtype=np.uint8)
    out[0] = 115  # "s"
    out[1:] = data
    out[separators + 1] = 115
    return out, np.r_[0, separators + 1, len(out)].astype(np.int64)


def _hash_on_threads(data, starts, workers: int) -> np.ndarray:
    """:func:`_hash_all` over contiguous runs of keys on ``workers`` threads (the kernel releases the GIL).

    Each run writes its hashes into its rows of one output array, on its own thread.
    """
    n = len(starts) - 1
    hashes = np.empty(n, dtype=np.uint64)

    def run(r):
        hashes[r[0]:r[1]] = _hash_all(data, starts[r[0]:r[1] + 1], _H0, SIGMA, IV, _LANES)

    map_ordered(run, point_chunks(n, workers, min_points=1 << 13), workers)
    return hashes


def _number_repeats(hashes, data, starts, workers: int):
    """Stream ids from key hashes: a key's ``k``-th repeat (``k`` ≥ 1, in input order) is re-mixed with ``k``.

    Keys are split into ``workers`` buckets by their hash modulo the bucket count, so
    equal keys share a bucket; each bucket is sorted and numbered on its own thread.
    Within a bucket keys keep their input order, so the numbering is the same for any
    number of buckets.  Returns ``None`` if two different keys share a hash.
    """
    n = len(hashes)
    n_buckets = max(1, min(workers, n >> 13))
    streams = hashes.copy()

    def bucket(b):
        members = None if n_buckets == 1 else np.flatnonzero(hashes % np.uint64(n_buckets) == np.uint64(b))
        own = hashes if members is None else hashes[members]
        order = np.argsort(own, kind="stable")
        sorted_hashes = own[order]
        same = sorted_hashes[1:] == sorted_hashes[:-1]
        if not same.any():
            return True
        index = order if members is None else members[order]  # keys by hash, ties in input order
        if not _same_bytes_where_hashes_match(index, hashes, data, starts):
            return False
        first = np.flatnonzero(np.r_[True, ~same])
        occurrence = (np.arange(len(index)) - np.repeat(first, np.diff(np.r_[first, len(index)])))
        later = occurrence > 0
        repeat = index[later]
        streams[repeat] = splitmix64(hashes[repeat] ^ splitmix64(occurrence[later].astype(np.uint64)))
        return True

    return streams if all(map_ordered(bucket, range(n_buckets), workers)) else None


def fast_stream_ids(keys=None, n: int | None = None, *, workers: int = 1) -> np.ndarray:
    """:func:`tracs.random.stream_ids`, value for value, hashing in a compiled kernel.

    Integer arrays, lists of ``str`` and ``keys=None`` (positions) take the fast
    path; anything else, and any 64-bit hash shared by two different keys, the
    reference function.  ``workers`` threads share the hashing and the numbering of
    repeated keys; only writing the keys' canonical bytes runs on one thread.
    """
    if keys is not None and (isinstance(keys, (str, bytes)) or not hasattr(keys, "__len__")):
        return stream_ids(keys, n)
    count = n if keys is None else len(keys)
    if count is None or (n is not None and keys is not None and len(keys) != n) or count == 0:
        return stream_ids(keys, n)
    if isinstance(keys, np.ndarray) and keys.ndim != 1:
        return stream_ids(keys, n)
    with serial_step("keys: canonical bytes"):
        buffer = _canonical_buffer(keys, count)
    if buffer is None:
        return stream_ids(keys, n)
    data, starts = read_only(buffer[0]), read_only(buffer[1])  # one compiled layout whatever built them
    streams = _number_repeats(_hash_on_threads(data, starts, workers), data, starts, workers)
    return stream_ids(keys, n) if streams is None else streams


key_on_sources(globals())  # cached kernels follow every source they compile in
