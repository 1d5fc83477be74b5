"""Counter-based bit generators, callable from numba kernels.

Two block functions, both *counter based*: the output is a pure function of a key
and a counter, so any draw can be computed on its own, in any order, on any
worker, with no state carried from one draw to the next.

* Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy
  as 1, 2, 3", SC 2011): 64-bit key, 128-bit counter, 128 bits out.  Fast and
  statistically strong (passes BigCrush), not cryptographic.
* ChaCha20 (Bernstein 2008; the block function of RFC 8439): 256-bit key,
  32-bit block counter, 96-bit nonce, 512 bits out.  A cryptographically secure
  pseudo-random function: without the key, outputs are indistinguishable from
  uniform bits and reveal nothing about other outputs.

How tracs lays out a draw (``kind``, ``key``, ``stream``, ``index``, ``draw``):
``stream`` is the 64-bit identifier of one trajectory (derived from the user's
key), ``index`` the point's position within that trajectory (< 2^32) and
``draw`` the number of the random word for that point.  Philox takes the counter
``(draw >> 1, index, stream_lo, stream_hi)`` and returns word pair ``draw & 1``;
ChaCha20 takes the nonce ``(stream_lo, stream_hi, index)``, the block counter
``draw >> 3`` and returns word pair ``draw & 7``.  Distinct
``(stream, index, draw)`` therefore never share an output word.

All arithmetic is on ``uint64`` values holding 32-bit words (masked), which
numba compiles to plain integer instructions.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .._jit import helper
from .._numba_cache import announce_compiles, key_on_sources

announce_compiles()  # a kernel compiled on its first use says so on stderr, once per family

KIND_PHILOX = 0
KIND_CHACHA20 = 1

_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_PHILOX_M0 = np.uint64(0xD2511F53)
_PHILOX_M1 = np.uint64(0xCD9E8D57)
_PHILOX_W0 = np.uint64(0x9E3779B9)
_PHILOX_W1 = np.uint64(0xBB67AE85)
_U7 = np.uint64(7)
_U8 = np.uint64(8)
_U12 = np.uint64(12)
_U16 = np.uint64(16)
_U11 = np.uint64(11)
_ONE = np.uint64(1)
_THREE = np.uint64(3)
#: 2^-53: a 53-bit integer times this is a double in [0, 1) with no rounding
_TWO_M53 = 2.0 ** -53


@helper
def philox4x32(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 block: four 32-bit counter words and two key words -> four words."""
    c0 = np.uint64(c0) & _MASK32
    c1 = np.uint64(c1) & _MASK32
    c2 = np.uint64(c2) & _MASK32
    c3 = np.uint64(c3) & _MASK32
    k0 = np.uint64(k0) & _MASK32
    k1 = np.uint64(k1) & _MASK32
    for _ in range(10):
        p0 = _PHILOX_M0 * c0
        p1 = _PHILOX_M1 * c2
        n0 = (p1 >> _S32) ^ c1 ^ k0
        n2 = (p0 >> _S32) ^ c3 ^ k1
        c1 = p1 & _MASK32
        c3 = p0 & _MASK32
        c0 = n0
        c2 = n2
        k0 = (k0 + _PHILOX_W0) & _MASK32
        k1 = (k1 + _PHILOX_W1) & _MASK32
    return c0, c1, c2, c3


@helper
def _rotl32(v, n):
    return ((v << n) | (v >> (_S32 - n))) & _MASK32


@helper
def _quarter(a, b, c, d):
    a = (a + b) & _MASK32
    d = _rotl32(d ^ a, _U16)
    c = (c + d) & _MASK32
    b = _rotl32(b ^ c, _U12)
    a = (a + b) & _MASK32
    d = _rotl32(d ^ a, _U8)
    c = (c + d) & _MASK32
    b = _rotl32(b ^ c, _U7)
    return a, b, c, d


@njit(cache=True, nogil=True)
def chacha20_block(key, counter, n0, n1, n2):
    """ChaCha20 block function (RFC 8439 §2.3): 8 key words, counter, 3 nonce words -> 16 words."""
    s0 = np.uint64(0x61707865)
    s1 = np.uint64(0x3320646E)
    s2 = np.uint64(0x79622D32)
    s3 = np.uint64(0x6B206574)
    s4 = np.uint64(key[0]) & _MASK32
    s5 = np.uint64(key[1]) & _MASK32
    s6 = np.uint64(key[2]) & _MASK32
    s7 = np.uint64(key[3]) & _MASK32
    s8 = np.uint64(key[4]) & _MASK32
    s9 = np.uint64(key[5]) & _MASK32
    s10 = np.uint64(key[6]) & _MASK32
    s11 = np.uint64(key[7]) & _MASK32
    s12 = np.uint64(counter) & _MASK32
    s13 = np.uint64(n0) & _MASK32
    s14 = np.uint64(n1) & _MASK32
    s15 = np.uint64(n2) & _MASK32
    x0, x1, x2, x3, x4, x5, x6, x7 = s0, s1, s2, s3, s4, s5, s6, s7
    x8, x9, x10, x11, x12, x13, x14, x15 = s8, s9, s10, s11, s12, s13, s14, s15
    for _ in range(10):
        x0, x4, x8, x12 = _quarter(x0, x4, x8, x12)
        x1, x5, x9, x13 = _quarter(x1, x5, x9, x13)
        x2, x6, x10, x14 = _quarter(x2, x6, x10, x14)
        x3, x7, x11, x15 = _quarter(x3, x7, x11, x15)
        x0, x5, x10, x15 = _quarter(x0, x5, x10, x15)
        x1, x6, x11, x12 = _quarter(x1, x6, x11, x12)
        x2, x7, x8, x13 = _quarter(x2, x7, x8, x13)
        x3, x4, x9, x14 = _quarter(x3, x4, x9, x14)
    return ((x0 + s0) & _MASK32, (x1 + s1) & _MASK32, (x2 + s2) & _MASK32, (x3 + s3) & _MASK32,
            (x4 + s4) & _MASK32, (x5 + s5) & _MASK32, (x6 + s6) & _MASK32, (x7 + s7) & _MASK32,
            (x8 + s8) & _MASK32, (x9 + s9) & _MASK32, (x10 + s10) & _MASK32, (x11 + s11) & _MASK32,
            (x12 + s12) & _MASK32, (x13 + s13) & _MASK32, (x14 + s14) & _MASK32,
            (x15 + s15) & _MASK32)


def is_chacha_key(key):
    """Whether ``key`` is a ChaCha20 key (uint32[8]) rather than a Philox key (uint64[2])."""
    return key.dtype == np.uint32


@overload(is_chacha_key, inline="always")
def _is_chacha_key_compiled(key):
    # decided from the key's type when a kernel is compiled, and inlined, so each
    # generator gets its own specialisation of every kernel with no branch on the other
    # one (a Philox loop then compiles to vector code)
    chacha = key.dtype == types.uint32
    return lambda key: chacha


@njit(cache=True, nogil=True)
def _chacha20_u64(key, counter, n0, n1, n2, pair):
    words = chacha20_block(key, counter, n0, n1, n2)
    return words[2 * pair] | (words[2 * pair + 1] << _S32)


def _chacha_word(key, counter, n0, n1, n2, pair):
    """:func:`_chacha20_u64` where ``key`` is a ChaCha20 key (compiled versions only)."""
    raise NotImplementedError("compiled only")


@overload(_chacha_word, inline="always")
def _chacha_word_compiled(key, counter, n0, n1, n2, pair):
    # the ChaCha20 branch of a kernel typed on a Philox key is never taken (is_chacha_key is
    # a constant there): it gets a stub, so the Philox kernels type and compile no ChaCha20 code
    if key.dtype == types.uint32:
        return lambda key, counter, n0, n1, n2, pair: _chacha20_u64(key, counter, n0, n1, n2, pair)
    return lambda key, counter, n0, n1, n2, pair: _MASK32


@helper(uint64=("stream", "index", "draw"))
def draw_u64(kind, key, stream, index, draw):
    """The 64-bit random word number ``draw`` of point ``index`` of trajectory ``stream``.

    The generator is the one of ``key``: uint64[2] is a Philox key, uint32[8] a
    ChaCha20 key (``kind`` names the same choice and is not consulted; numba
    compiles one specialisation per key type, and a Philox one holds no ChaCha20 code).
    """
    stream = np.uint64(stream)
    index = np.uint64(index)
    draw = np.uint64(draw)
    lo = stream & _MASK32
    hi = stream >> _S32
    if is_chacha_key(key):
        return _chacha_word(key, draw >> _THREE, lo, hi, index, int(draw & _U7))
    w = philox4x32(draw >> _ONE, index, lo, hi, key[0], key[1])
    if draw & _ONE:
        return w[2] | (w[3] << _S32)
    return w[0] | (w[1] << _S32)


@helper
def _to_uniform(word):
    # the top 53 bits as an exact multiple of 2^-53 (a signed conversion is one instruction)
    return float(np.int64(word >> _U11)) * _TWO_M53


@njit(cache=True, nogil=True)
def draw_uniform(kind, key, stream, index, draw):
    """A uniform double in [0, 1), an exact multiple of 2^-53, from :func:`draw_u64`."""
    return _to_uniform(draw_u64(kind, key, stream, index, draw))


@helper(uint64=("stream", "index"))
def draw_u64_pair(kind, key, stream, index, pair):
    """Words ``2*pair`` and ``2*pair + 1`` of a point, equal to two :func:`draw_u64` calls.

    With Philox both come from one block, so this halves the cost of a point that
    needs an even number of words.
    """
    if is_chacha_key(key):
        first = np.uint64(2) * np.uint64(pair)
        return (draw_u64(kind, key, stream, index, first),
                draw_u64(kind, key, stream, index, first + _ONE))
    stream = np.uint64(stream)
    w = philox4x32(np.uint64(pair), np.uint64(index), stream & _MASK32, stream >> _S32,
                   key[0], key[1])
    return w[0] | (w[1] << _S32), w[2] | (w[3] << _S32)


@njit(cache=True, nogil=True)
def draw_uniform_pair(kind, key, stream, index, pair):
    """Uniforms ``2*pair`` and ``2*pair + 1`` of a point (see :func:`draw_u64_pair`)."""
    a, b = draw_u64_pair(kind, key, stream, index, pair)
    return _to_uniform(a), _to_uniform(b)


@njit(cache=True, nogil=True)
def fill_uniforms(kind, key, streams, offsets, width, out):
    """``out[i, d] = draw_uniform(kind, key, streams[t], i - offsets[t], d)`` for point i of trajectory t."""
    base = offsets[0]
    for t in range(streams.shape[0]):
        stream = streams[t]
        for i in range(offsets[t], offsets[t + 1]):
            index = i - offsets[t]
            row = i - base
            for pair in range(width // 2):
                a, b = draw_uniform_pair(kind, key, stream, index, pair)
                out[row, 2 * pair] = a
                out[row, 2 * pair + 1] = b
            if width % 2:
                out[row, width - 1] = draw_uniform(kind, key, stream, index, width - 1)
    return out


@njit(cache=True, nogil=True)
def fill_point_streams(streams, offsets, stream_of_point, index_of_point):
    """Per-point stream identifier and position within the trajectory."""
    for t in range(streams.shape[0]):
        for i in range(offsets[t], offsets[t + 1]):
            stream_of_point[i - offsets[0]] = streams[t]
            index_of_point[i - offsets[0]] = i - offsets[t]


key_on_sources(globals())  # cached kernels follow every source they compile in
