"""The engine's compiled key hash gives exactly tracs.random.stream_ids."""

from __future__ import annotations

import numpy as np
import pytest

from tracs.engine.stream_keys import fast_stream_ids
from tracs.random import stream_ids

RNG = np.random.default_rng(0)
CASES = {
    "positions": (None, 40),
    "int range": (np.arange(1000), None),
    "large and negative ints": (RNG.integers(-10**15, 10**15, 300), None),
    "repeated ints": (np.array([5, 5, 3, 5, 3, -1, 0]), None),
    "repeated text": ([f"user{i % 37}" for i in range(300)], None),
    "multi-block and unicode text": (["é漢字" * 50, "a" * 127, "b" * 128, "c" * 129, "", "x" * 300, "a" * 127], None),
    "text in an object array": (np.array([str(i) for i in range(50)] * 2, dtype=object), None),
    "text in a fixed-width str array": (np.array(["007", "7", "ü", "7"]), None),
    "leading zeros, empty and four-byte text": (["007", "7", "07", "", "😀", "a😀b", "", "7"], None),
    "text with NUL characters (reference path)": (["a\x00", "a", "\x00", "a\x00"], None),
    "a single text key": (["only"], None),
    "uint64 beyond int64": (np.array([2**63 + 5, 3], dtype=np.uint64), None),
    "mixed ints and text (reference path)": ([5, "5", 7, b"x"], None),
    "floats (reference path)": (np.array([1.0, 2.5, 1.0]), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_streams_as_tracs_random(name):
    keys, n = CASES[name]
    n = len(keys) if n is None else n
    assert np.array_equal(fast_stream_ids(keys, n), stream_ids(keys, n))


def test_text_and_integer_keys_name_the_same_user():
    ints = np.arange(100) + 10**6
    assert np.array_equal(fast_stream_ids(ints, 100), fast_stream_ids([str(k) for k in ints], 100))


@pytest.mark.parametrize("keys, n, error, fragment", [
    ("abc", 3, TypeError, "single string"),
    ([1, 2], 3, ValueError, "2 entries for 3"),
    ([1, None], 2, ValueError, "missing"),
    (["ok", "\ud800"], 2, UnicodeEncodeError, "surrogate"),
])
def test_bad_keys_get_the_reference_errors(keys, n, error, fragment):
    with pytest.raises(error, match=fragment):
        fast_stream_ids(keys, n)


def test_hashing_on_threads_gives_the_same_streams():
    keys = np.arange(50_000) * 7 - 3
    assert np.array_equal(fast_stream_ids(keys, len(keys), workers=3), stream_ids(keys, len(keys)))


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_repeated_keys_are_numbered_alike_in_any_number_of_buckets(workers):
    # 40,000 keys: up to 4 buckets of the hash; every key repeats, some many times, interleaved
    rng = np.random.default_rng(5)
    ints = rng.integers(0, 15_000, 40_000)
    text = [f"u{k}" for k in ints[:20_000]]
    assert np.array_equal(fast_stream_ids(ints, len(ints), workers=workers), stream_ids(ints, len(ints)))
    assert np.array_equal(fast_stream_ids(text, len(text), workers=workers), stream_ids(text, len(text)))


def test_a_hash_shared_by_two_keys_takes_the_reference_path(monkeypatch):
    from tracs.engine import stream_keys

    keys = np.arange(20_000)
    monkeypatch.setattr(stream_keys, "_hash_all", lambda data, starts, *a: np.zeros(len(starts) - 1, dtype=np.uint64))
    assert np.array_equal(stream_keys.fast_stream_ids(keys, len(keys), workers=2), stream_ids(keys, len(keys)))
