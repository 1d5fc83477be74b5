"""Keyed, counter-based randomness: each user's draws depend only on (seed, user key).

Every random word tracs uses is ``draw_u64(kind, key, stream, index, draw)``: a
pure function of the *random key* (derived from the seed), the trajectory's
*stream* (derived from the user's key), the point's index within its trajectory
and the draw number.  A user's release therefore depends only on the seed, that
user's key and that user's own records — not on which other users are in the
batch, their order, how many draws their records consumed, or how the batch is
split across calls, threads or machines.  (Salmon et al., SC 2011, introduced
counter-based generators for exactly this use.)

``rng`` values accepted everywhere in tracs:

``None``
    Philox4x32-10 with a fresh key: ``numpy.random.SeedSequence()`` takes 128 bits
    of operating-system entropy and hashes them to the **64-bit** Philox key (two
    32-bit words), so there are 2^64 keys, not 2^128.
``int`` (>= 0) or ``numpy.random.SeedSequence``
    A reproducible 64-bit Philox4x32-10 key: the seed (an int of any size) is
    hashed by ``SeedSequence`` to the two 32-bit key words.
``numpy.random.Generator``
    Four 63-bit integers are drawn from it and hashed the same way to a 64-bit
    Philox key (so successive calls differ).
``"secure"``
    ChaCha20, keyed by **256** bits from ``os.urandom``: a cryptographically secure
    generator, **the one to use for deployment** (``tracs perturb --secure-rng``).
    Philox is statistically excellent but not cryptographic, and its 64-bit key
    could be recovered from enough outputs, which would reveal the noise of every
    release made with it.
``Secure(seed)``
    ChaCha20 keyed by SHA-256 of ``seed`` (256 bits): reproducible, secure while
    the seed stays secret.

Other sizes: a trajectory's stream is a 64-bit BLAKE2b hash of the user key;
Philox's 128-bit counter is ``(draw >> 1, index, stream_lo, stream_hi)`` (32 bits
each); ChaCha20's 96-bit nonce is ``(stream_lo, stream_hi, index)`` and its 32-bit
block counter ``draw >> 3`` (:mod:`tracs.random.kernels`).
"""

from __future__ import annotations

import hashlib
import numbers
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, InputTypeError
from .kernels import KIND_CHACHA20, KIND_PHILOX, fill_point_streams, fill_uniforms

__all__ = ["RandomKey", "KeyedStreams", "Secure", "resolve_key", "stream_ids", "resolve_streams",
           "point_streams", "keyed_uniforms", "KIND_PHILOX", "KIND_CHACHA20"]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


@dataclass(frozen=True)
class Secure:
    """ChaCha20 keyed from ``seed`` (int, str or bytes): reproducible and cryptographically secure.

    The key is SHA-256 of the seed; anyone who knows the seed can reproduce the
    draws, so keep it secret.  ``rng="secure"`` uses a fresh key from
    ``os.urandom`` instead.
    """

    seed: int | str | bytes

    def key_bytes(self) -> bytes:
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, str, bytes)):
            raise InputTypeError(f"Secure(seed): seed must be an int, str or bytes, got {type(seed).__name__}")
        if isinstance(seed, numbers.Integral):
            if seed < 0:
                raise InputError(f"Secure(seed): seed must be non-negative, got {seed}")
            seed = b"i" + int(seed).to_bytes((int(seed).bit_length() + 8) // 8, "little")
        elif isinstance(seed, str):
            seed = b"s" + seed.encode("utf-8")
        else:
            seed = b"b" + seed
        return hashlib.sha256(b"tracs.random.Secure\x00" + seed).digest()


@dataclass(frozen=True)
class RandomKey:
    """The seed-derived part of every draw: the generator ``kind`` and its ``key``.

    Philox keys are uint64[2] (two 32-bit words), ChaCha20 keys uint32[8]; the
    compiled kernels tell the generators apart by the key's type.
    """

    kind: int
    key: np.ndarray

    @property
    def secure(self) -> bool:
        return self.kind == KIND_CHACHA20


@dataclass(frozen=True)
class KeyedStreams:
    """A :class:`RandomKey` plus one 64-bit stream identifier per trajectory."""

    kind: int
    key: np.ndarray
    streams: np.ndarray

    @property
    def random_key(self) -> RandomKey:
        return RandomKey(self.kind, self.key)


def _words(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<u4").astype(np.uint32)


def resolve_key(rng=None) -> RandomKey:
    """The :class:`RandomKey` for an ``rng`` argument (see the module docstring)."""
    if isinstance(rng, RandomKey):
        return rng
    if isinstance(rng, KeyedStreams):
        return rng.random_key
    if isinstance(rng, str):
        if rng != "secure":
            raise InputError(f"rng: the only string accepted is 'secure', got {rng!r}")
        return RandomKey(KIND_CHACHA20, _words(os.urandom(32)))
    if isinstance(rng, Secure):
        return RandomKey(KIND_CHACHA20, _words(rng.key_bytes()))
    if isinstance(rng, np.random.Generator):
        sequence = np.random.SeedSequence(rng.integers(0, 2**63, size=4, dtype=np.int64).tolist())
    elif rng is None or isinstance(rng, np.random.SeedSequence):
        sequence = rng if rng is not None else np.random.SeedSequence()
    elif isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise InputError(f"rng seed must be non-negative, got {rng}")
        sequence = np.random.SeedSequence(int(rng))
    else:
        raise InputTypeError(
            "rng must be None, a non-negative int, a numpy.random.SeedSequence, a "
            f"numpy.random.Generator, 'secure' or tracs.random.Secure(seed), got {type(rng).__name__}"
        )
    return RandomKey(KIND_PHILOX, sequence.generate_state(2, dtype=np.uint32).astype(np.uint64))


def splitmix64(values: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, a bijection of uint64 (vectorised)."""
    z = values.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += np.uint64(_GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


class _Canonical(bytes):
    """A key already in canonical form."""


def _canonical(key) -> bytes:
    """Bytes naming a user key; ``5``, ``5.0`` and ``"5"`` name the same user (readers differ in types)."""
    if isinstance(key, _Canonical):
        return key
    if isinstance(key, (bytes, bytearray)):
        return _Canonical(b"b" + bytes(key))
    if isinstance(key, str):
        return _Canonical(b"s" + key.encode("utf-8"))
    if isinstance(key, (bool, np.bool_)):
        raise InputTypeError("keys: a user key must be an int, str or bytes, not a bool")
    if isinstance(key, numbers.Integral):
        return _Canonical(b"s" + str(int(key)).encode("ascii"))
    if isinstance(key, numbers.Real):
        value = float(key)
        if not np.isfinite(value):
            raise InputError(f"keys: a user key is missing or not finite, got {key!r}")
        if value.is_integer():
            return _Canonical(b"s" + str(int(value)).encode("ascii"))
        return _Canonical(b"s" + repr(value).encode("ascii"))
    if key is None:
        raise InputError("keys: a user key is missing (None)")
    raise InputTypeError(f"keys: a user key must be an int, str or bytes, got {type(key).__name__}")


def _hash_names(names) -> np.ndarray:
    """:func:`_hash_key` of many canonical names at once (uint64 array, the same values)."""
    prepared = hashlib.blake2b(digest_size=8, person=b"tracs.user.key")
    copy = prepared.copy
    digests = []
    for name in names:
        h = copy()
        h.update(name)
        digests.append(h.digest())
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)


def _hash_key(key) -> int:
    digest = hashlib.blake2b(_canonical(key), digest_size=8, person=b"tracs.user.key").digest()
    return int.from_bytes(digest, "little")


#: stream ids of the positions 0, 1, … computed so far (the default keys of every batch)
_POSITIONS = np.zeros(0, dtype=np.uint64)
#: positions kept (8 bytes each); longer batches hash the rest on every call
_POSITIONS_KEPT = 1 << 20


def _position_streams(n: int) -> np.ndarray:
    """``stream_ids(range(n))``: the hashes of positions already computed are kept.

    A pure function of ``n`` (each position's stream is the hash of its decimal
    name), so remembering the first ``2^20`` of them changes no value; it spares
    every batch the per-trajectory hashing of its default keys.
    """
    global _POSITIONS
    if n < 0:
        raise InputError(f"stream_ids: the number of trajectories must be >= 0, got {n}")
    have = len(_POSITIONS)
    if n > have:
        extra = _hash_names([b"s%d" % k for k in range(have, n)])
        if n <= _POSITIONS_KEPT:
            _POSITIONS = np.concatenate([_POSITIONS, extra])
        else:
            return np.concatenate([_POSITIONS, extra])
    return _POSITIONS[:n].copy()


def stream_ids(keys=None, n: int | None = None) -> np.ndarray:
    """One 64-bit stream identifier per trajectory (uint64 array).

    Parameters
    ----------
    keys : None or sequence of int / str / bytes
        The user key of each trajectory.  ``None`` uses the trajectory's position
        (``0 … n-1``), which makes results depend on the order of the batch; pass
        user keys for per-user independence.  The k-th trajectory of one key
        (k = 0, 1, … in batch order) gets its own stream, so a user's successive
        trajectories never share draws.
    n : int, optional
        The number of trajectories; required when ``keys`` is None, checked otherwise.
    """
    if keys is None:
        if n is None:
            raise InputError("stream_ids: give keys or the number of trajectories n")
        return _position_streams(int(n))
    if isinstance(keys, (str, bytes)):
        raise InputTypeError("keys must be a sequence with one key per trajectory, not a single string")
    keys = np.asarray(keys, dtype=object) if not isinstance(keys, np.ndarray) else keys
    if keys.ndim != 1:
        raise InputError(f"keys must be one-dimensional, got shape {keys.shape}")
    if n is not None and len(keys) != n:
        raise InputError(f"keys has {len(keys)} entries for {n} trajectories")
    if len(keys) == 0:
        return np.zeros(0, dtype=np.uint64)
    if keys.dtype.kind == "f" and np.isnan(keys).any():
        raise InputError("keys: a user key is missing or not finite, got nan")
    if keys.dtype.kind in "iuf":
        unique, inverse = np.unique(keys, return_inverse=True)
        if unique.dtype.kind in "iu":  # integer keys: their canonical names without the per-key dispatch
            base = _hash_names([b"s%d" % k for k in unique.tolist()])
        else:
            base = _hash_names([_canonical(k) for k in unique.tolist()])
    else:  # mixed or text keys: compare their canonical names (5 and "5" are one user)
        values = keys.tolist()
        if all(type(k) is str for k in values):
            names = [b"s" + k.encode("utf-8") for k in values]
        else:
            names = [_canonical(k) for k in values]
        first = {}  # canonical name -> its number, in order of first appearance
        inverse = np.fromiter((first.setdefault(name, len(first)) for name in names), dtype=np.intp,
                              count=len(names))
        base = _hash_names(list(first))
    # occurrence number of each trajectory among those of its key, in batch order
    order = np.argsort(inverse, kind="stable")
    sorted_inverse = inverse[order]
    starts = np.flatnonzero(np.r_[True, sorted_inverse[1:] != sorted_inverse[:-1]])
    run = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    occurrence = np.empty(len(order), dtype=np.uint64)
    occurrence[order] = (np.arange(len(order)) - run).astype(np.uint64)
    streams = base[inverse]
    later = occurrence > 0
    if later.any():
        streams[later] = splitmix64(streams[later] ^ splitmix64(occurrence[later]))
    return streams


def resolve_streams(rng=None, keys=None, n: int | None = None) -> KeyedStreams:
    """The :class:`KeyedStreams` of one call: the key from ``rng``, one stream per trajectory."""
    random_key = resolve_key(rng)
    return KeyedStreams(random_key.kind, random_key.key, stream_ids(keys, n))


def _offsets(offsets, streams) -> np.ndarray:
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or len(offsets) != len(streams) + 1:
        raise InputError(f"offsets must have {len(streams) + 1} entries (one more than the streams)")
    if np.any(np.diff(offsets) < 0):
        raise InputError("offsets must be non-decreasing")
    if len(offsets) > 1 and np.max(np.diff(offsets)) >= 2**32:
        raise InputError("a trajectory of 2^32 points or more is not supported")
    return offsets


def point_streams(ks: KeyedStreams, offsets) -> tuple[np.ndarray, np.ndarray]:
    """``(stream_of_point, index_of_point)``: uint64 arrays of length ``offsets[-1] - offsets[0]``."""
    offsets = _offsets(offsets, ks.streams)
    n = int(offsets[-1] - offsets[0])
    stream_of_point = np.empty(n, dtype=np.uint64)
    index_of_point = np.empty(n, dtype=np.uint64)
    fill_point_streams(ks.streams, offsets, stream_of_point, index_of_point)
    return stream_of_point, index_of_point


def keyed_uniforms(ks: KeyedStreams, offsets, width: int) -> np.ndarray:
    """Uniforms in [0, 1) (multiples of 2^-53), one row of ``width`` per point.

    Row ``i`` holds draws ``0 … width-1`` of its point; the values depend only on
    the key, the point's trajectory stream and its index within the trajectory.
    """
    offsets = _offsets(offsets, ks.streams)
    out = np.empty((int(offsets[-1] - offsets[0]), int(width)), dtype=np.float64)
    return fill_uniforms(ks.kind, ks.key, ks.streams, offsets, int(width), out)
