"""tracs.random: known-answer vectors, keyed streams, and the rng argument."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tracs.random import (KIND_CHACHA20, KIND_PHILOX, KeyedStreams, RandomKey, Secure,
                          keyed_uniforms, point_streams, resolve_key, resolve_streams, stream_ids)
from tracs.random.kernels import (chacha20_block, draw_u64, draw_u64_pair, draw_uniform,
                                  philox4x32)

# Random123's published known-answer vectors for Philox4x32-10: (counter, key) -> output
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter,key,expected", PHILOX_KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(int(w) for w in philox4x32(*counter, *key)) == expected


def test_chacha20_block_rfc8439_vector():
    # RFC 8439 §2.3.2: key 00..1f, counter 1, nonce 000000090000004a00000000
    key = np.frombuffer(bytes(range(32)), dtype="<u4").astype(np.uint32)
    nonce = np.frombuffer(bytes.fromhex("000000090000004a00000000"), dtype="<u4")
    words = chacha20_block(key, 1, *(int(n) for n in nonce))
    expected = [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3, 0xC7F4D1C7, 0x0368C033,
                0x9AAA2204, 0x4E6CD4C3, 0x466482D2, 0x09AA9F07, 0x05D7C214, 0xA2028BD9,
                0xD19C12B5, 0xB94E16DE, 0xE883D0CB, 0x4E3C50A2]
    assert [int(w) for w in words] == expected


@pytest.mark.parametrize("rng", [7, "secure"])
def test_uniforms_match_single_draws_and_pairs(rng):
    ks = resolve_streams(rng, ["a", 3, "a"], 3)
    offsets = np.array([0, 4, 5, 9])
    matrix = keyed_uniforms(ks, offsets, 5)
    for t in range(3):
        for i in range(offsets[t], offsets[t + 1]):
            for d in range(5):
                u = draw_uniform(ks.kind, ks.key, ks.streams[t], i - offsets[t], d)
                assert matrix[i, d] == u
                assert u == (int(draw_u64(ks.kind, ks.key, ks.streams[t], i - offsets[t], d)) >> 11) * 2.0**-53
            pair = draw_u64_pair(ks.kind, ks.key, ks.streams[t], i - offsets[t], 1)
            assert tuple(int(w) for w in pair) == tuple(
                int(draw_u64(ks.kind, ks.key, ks.streams[t], i - offsets[t], d)) for d in (2, 3))


def test_uniforms_are_multiples_of_2_pow_minus_53_in_unit_interval():
    u = keyed_uniforms(resolve_streams(1, None, 1), [0, 100_000], 2)
    assert np.all((u >= 0) & (u < 1))
    assert np.all(u * 2.0**53 == np.floor(u * 2.0**53))


@pytest.mark.parametrize("rng", [2024, Secure(2024)], ids=["philox", "chacha20"])
def test_uniforms_are_uniform_and_independent(rng):
    # Kolmogorov-Smirnov at alpha = 1e-4 (seeded generators: fixed outcome), and the
    # correlation of successive draws and of neighbouring streams below 4 standard errors
    u = keyed_uniforms(resolve_streams(rng, None, 2), [0, 100_000, 200_000], 2)
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-4
    se = 1 / np.sqrt(100_000)
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 4 * se
    assert abs(np.corrcoef(u[:100_000, 0], u[100_000:, 0])[0, 1]) < 4 * se


def test_a_users_draws_do_not_depend_on_the_batch():
    alone = keyed_uniforms(resolve_streams(5, ["alice"], 1), [0, 3], 4)
    ks = resolve_streams(5, ["bob", "carol", "alice", "dave"], 4)
    batch = keyed_uniforms(ks, [0, 10, 12, 15, 20], 4)
    assert np.array_equal(batch[12:15], alone)
    # a different seed gives different draws
    assert not np.array_equal(keyed_uniforms(resolve_streams(6, ["alice"], 1), [0, 3], 4), alone)


def test_successive_trajectories_of_one_user_get_their_own_streams():
    streams = stream_ids(["u", "v", "u", "u"])
    assert len(set(streams.tolist())) == 4
    # the k-th trajectory of a key is the same whatever else is in the batch
    assert stream_ids(["u", "u"])[1] == streams[2]
    assert stream_ids(["x", "u", "y", "u"])[3] == streams[2]


def test_keys_name_users_whatever_the_readers_type():
    assert stream_ids([5])[0] == stream_ids(["5"])[0] == stream_ids([5.0])[0] == stream_ids(np.array([5]))[0]
    assert stream_ids([5])[0] != stream_ids([6])[0]
    assert stream_ids([b"5"])[0] != stream_ids(["5"])[0]
    assert np.array_equal(stream_ids(None, 3), stream_ids([0, 1, 2]))


def test_point_streams():
    ks = resolve_streams(1, ["a", "b"], 2)
    stream, index = point_streams(ks, [0, 2, 5])
    assert stream.tolist() == [ks.streams[0]] * 2 + [ks.streams[1]] * 3
    assert index.tolist() == [0, 1, 0, 1, 2]


def test_rng_arguments():
    assert resolve_key(3).kind == KIND_PHILOX
    assert np.array_equal(resolve_key(3).key, resolve_key(np.random.SeedSequence(3)).key)
    assert resolve_key(3).key.dtype == np.uint64 and resolve_key(3).key.shape == (2,)
    secure = resolve_key("secure")
    assert secure.kind == KIND_CHACHA20 and secure.key.dtype == np.uint32 and secure.key.shape == (8,)
    assert not np.array_equal(secure.key, resolve_key("secure").key)
    assert np.array_equal(resolve_key(Secure(9)).key, resolve_key(Secure(9)).key)
    assert not np.array_equal(resolve_key(Secure(9)).key, resolve_key(Secure("9")).key)
    g = np.random.default_rng(1)
    assert not np.array_equal(resolve_key(g).key, resolve_key(g).key)  # a Generator advances
    assert not np.array_equal(resolve_key(None).key, resolve_key(None).key)
    ks = resolve_streams(3, None, 2)
    assert isinstance(ks, KeyedStreams) and isinstance(ks.random_key, RandomKey)
    assert resolve_key(ks) == ks.random_key


@pytest.mark.parametrize("call,error,fragment", [
    (lambda: resolve_key(-1), ValueError, "non-negative"),
    (lambda: resolve_key(True), TypeError, "rng must be"),
    (lambda: resolve_key(1.5), TypeError, "rng must be"),
    (lambda: resolve_key("fast"), ValueError, "only string accepted is 'secure'"),
    (lambda: resolve_key(Secure(-2)), ValueError, "non-negative"),
    (lambda: resolve_key(Secure(1.5)), TypeError, "seed must be an int, str or bytes"),
    (lambda: stream_ids(None), ValueError, "give keys or the number"),
    (lambda: stream_ids("abc"), TypeError, "not a single string"),
    (lambda: stream_ids([1, 2], 3), ValueError, "2 entries for 3 trajectories"),
    (lambda: stream_ids([[1, 2]]), ValueError, "one-dimensional"),
    (lambda: stream_ids([1.0, np.nan]), ValueError, "missing or not finite"),
    (lambda: stream_ids(["a", None]), ValueError, "missing (None)"),
    (lambda: stream_ids(np.array([1.0, np.nan])), ValueError, "missing or not finite"),
    (lambda: stream_ids([True, "a"]), TypeError, "not a bool"),
    (lambda: stream_ids([object()]), TypeError, "must be an int, str or bytes"),
    (lambda: keyed_uniforms(resolve_streams(1, None, 2), [0, 3], 2), ValueError, "3 entries"),
    (lambda: keyed_uniforms(resolve_streams(1, None, 2), [0, 3, 2], 2), ValueError, "non-decreasing"),
])
def test_bad_arguments(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


def test_position_streams_are_remembered_without_changing_a_value(monkeypatch):
    import tracs.random as keyed

    monkeypatch.setattr(keyed, "_POSITIONS", np.zeros(0, dtype=np.uint64))
    monkeypatch.setattr(keyed, "_POSITIONS_KEPT", 6)
    explicit = stream_ids(list(range(9)))
    first = stream_ids(None, 4)
    first[:] = 0  # the caller's copy: the remembered values are untouched
    assert np.array_equal(stream_ids(None, 4), explicit[:4])
    assert np.array_equal(stream_ids(None, 6), explicit[:6]) and len(keyed._POSITIONS) == 6
    assert np.array_equal(stream_ids(None, 9), explicit) and len(keyed._POSITIONS) == 6  # beyond the cap
    assert stream_ids(None, 0).size == 0
