"""The compiled forward–backward recursions of :mod:`tracs.estimate.smoothing`.

One kernel call runs every trajectory of a chunk, one trajectory after the other
(no Python iteration per step or per point).  Each step is the product
``Kx · A · Ky`` of the separable distance-decay kernel with a ``Gx × Gy`` array.
The kernels are banded (entries below :data:`tracs.estimate.smoothing.CUTOFF` are
zero) and held as blocks of rows, each with the columns its band covers
(:func:`_banded`): a step is BLAS products of the blocks, ``Gx·Gy·(Wx + Wy)``
multiplications for blocks ``W`` columns wide instead of ``Gx·Gy·(Gx + Gy)``.  A
kernel of ones (an infinite scale) is the sum of ``A``.  The numbers are those of the
batched NumPy recursions with dense kernels the module replaced, to 1e-9 (tested on
random cases).
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources

__all__ = ["smoothed_marginals", "log_likelihood"]


@numba.njit(cache=True, nogil=True)
def _banded(blocks, starts, a, out):
    """``out = K · a`` for a kernel held as row blocks: rows ``b·R … b·R + R − 1`` of ``K`` are zero
    outside columns ``starts[b] … starts[b] + W − 1``, held in ``blocks[b]`` (R, W)."""
    rows, width, g = blocks.shape[1], blocks.shape[2], a.shape[0]
    for b in range(blocks.shape[0]):
        m0 = b * rows
        m1 = min(g, m0 + rows)
        np.dot(blocks[b, :m1 - m0], a[starts[b]:starts[b] + width], out[m0:m1])


@numba.njit(cache=True, nogil=True)
def _spread(a, bx, sx, by, sy, full, tmp, flip, flipped, out):
    """``out = Kx · a · Ky`` (banded BLAS products, :func:`_banded`; ``Ky`` is symmetric, so
    ``a · Ky = (Ky · aᵀ)ᵀ``); ``full``: both kernels are ones, ``out = Σ a``."""
    if full:
        out[:, :] = a.sum()
        return
    _banded(bx, sx, a, tmp)
    flip[:, :] = tmp.T
    _banded(by, sy, flip, flipped)
    out[:, :] = flipped.T


@numba.njit(cache=True, nogil=True)
def _forward_step(prev, lik_r, theta, bx, sx, by, sy, full, inv_z, jump, first, work, bufs, spread, out):
    """The next filtered marginal (unnormalised) into ``out``; returns its sum."""
    gx, gy = theta.shape
    moves = not first and jump < 1.0
    if moves:
        for i in range(gx):
            for j in range(gy):
                work[i, j] = prev[i, j] * inv_z[i, j]
        _spread(work, bx, sx, by, sy, full, bufs[0], bufs[1], bufs[2], spread)
    total = 0.0
    for i in range(gx):
        for j in range(gy):
            prior = theta[i, j] * ((1.0 - jump) * spread[i, j] + jump) if moves else theta[i, j]
            v = prior * lik_r[i, j]
            out[i, j] = v
            total += v
    return total


@numba.njit(cache=True, nogil=True)
def smoothed_marginals(lik, starts, lengths, theta, bx, sx, by, sy, full, inv_z, jump, gamma):
    """Every point's smoothed marginal of the cells into ``gamma`` (n, Gx, Gy) (each sums to 1).

    ``lik`` (n, Gx, Gy): every report's likelihood per cell; trajectory ``t`` is rows
    ``starts[t]:starts[t] + lengths[t]`` (lengths > 0); the transition is
    ``(1 − jump)·K θ / Z + jump·θ`` with ``1 / Z = inv_z``, ``K = Kx ⊗ Ky`` held as row
    blocks ``(bx, sx)``, ``(by, sy)`` (:func:`_banded`), or ones when ``full``.
    """
    gx, gy = theta.shape
    work, spread = np.empty((gx, gy)), np.zeros((gx, gy))
    bufs = (np.empty((gx, gy)), np.empty((gy, gx)), np.empty((gy, gx)))
    beta, weighted = np.empty((gx, gy)), np.empty((gx, gy))
    for t in range(len(starts)):
        s, length = starts[t], lengths[t]
        for k in range(length):  # forward: gamma holds the filtered marginals α
            r = s + k
            total = _forward_step(gamma[r - 1] if k > 0 else theta, lik[r], theta, bx, sx, by, sy, full,
                                  inv_z, jump, k == 0, work, bufs, spread, gamma[r])
            for i in range(gx):
                for j in range(gy):
                    gamma[r, i, j] /= total
        beta[:, :] = 1.0  # the last point of a trajectory
        for k in range(length - 1, -1, -1):  # backward: α·β normalised, then β of the step before
            r = s + k
            total = 0.0
            for i in range(gx):
                for j in range(gy):
                    g = gamma[r, i, j] * beta[i, j]
                    gamma[r, i, j] = g
                    total += g
            for i in range(gx):
                for j in range(gy):
                    gamma[r, i, j] /= total
            if k == 0:
                continue
            total = 0.0
            for i in range(gx):
                for j in range(gy):
                    v = lik[r, i, j] * beta[i, j] * theta[i, j]
                    weighted[i, j] = v
                    total += v
            if jump < 1.0:
                _spread(weighted, bx, sx, by, sy, full, bufs[0], bufs[1], bufs[2], spread)
            top = 0.0
            for i in range(gx):
                for j in range(gy):
                    b = (1.0 - jump) * inv_z[i, j] * spread[i, j] + jump * total if jump < 1.0 else total
                    beta[i, j] = b
                    top = max(top, b)
            for i in range(gx):
                for j in range(gy):
                    beta[i, j] /= top  # scaling: the marginals are ratios


@numba.njit(cache=True, nogil=True)
def log_likelihood(lik, starts, lengths, theta, bx, sx, by, sy, full, inv_z, jump) -> float:
    """A model's ``log P(reports)`` of a chunk (scaled forward passes); the arguments are those of
    :func:`smoothed_marginals`."""
    gx, gy = theta.shape
    work, spread = np.empty((gx, gy)), np.zeros((gx, gy))
    bufs = (np.empty((gx, gy)), np.empty((gy, gx)), np.empty((gy, gx)))
    prev, alpha = np.empty((gx, gy)), np.empty((gx, gy))
    ll = 0.0
    for t in range(len(starts)):
        for k in range(lengths[t]):
            r = starts[t] + k
            total = _forward_step(prev, lik[r], theta, bx, sx, by, sy, full, inv_z, jump, k == 0, work, bufs,
                                  spread, alpha)
            ll += np.log(total)
            for i in range(gx):
                for j in range(gy):
                    prev[i, j] = alpha[i, j] / total
    return ll


key_on_sources(globals())
