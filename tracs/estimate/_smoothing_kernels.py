"""The compiled forward–backward recursions of :mod:`tracs.estimate.smoothing`.

One kernel call runs every trajectory of a chunk, one trajectory after the other
(no Python iteration per step or per point); each step is two BLAS products
``(Kx · A) · Ky`` of the separable distance-decay kernel with a ``Gx × Gy`` array,
and a kernel of ones (an infinite scale) is the sum of ``A``.  The numbers are
those of the batched NumPy recursions the kernels replaced, up to the order of the
sums (the tests compare the two to 1e-9 on random cases).
"""

from __future__ import annotations

import numba
import numpy as np

from .._numba_cache import key_on_sources

__all__ = ["smoothed_marginals", "log_likelihoods"]


@numba.njit(cache=True, nogil=True)
def _spread(a, kx, ky, full, tmp, out):
    """``out = (Kx · a) · Ky`` (BLAS products; ``full``: both kernels are ones, ``out = Σ a``)."""
    if full:
        out[:, :] = a.sum()
        return
    np.dot(kx, a, tmp)
    np.dot(tmp, ky, out)


@numba.njit(cache=True, nogil=True)
def _forward_step(prev, lik_r, theta, kx, ky, full, inv_z, jump, first, work, tmp, spread, out):
    """The next filtered marginal (unnormalised) into ``out``; returns its sum."""
    gx, gy = theta.shape
    moves = not first and jump < 1.0
    if moves:
        for i in range(gx):
            for j in range(gy):
                work[i, j] = prev[i, j] * inv_z[i, j]
        _spread(work, kx, ky, full, tmp, spread)
    total = 0.0
    for i in range(gx):
        for j in range(gy):
            prior = theta[i, j] * ((1.0 - jump) * spread[i, j] + jump) if moves else theta[i, j]
            v = prior * lik_r[i, j]
            out[i, j] = v
            total += v
    return total


@numba.njit(cache=True, nogil=True)
def smoothed_marginals(lik, starts, lengths, theta, kx, ky, full, inv_z, jump, gamma):
    """Every point's smoothed marginal of the cells into ``gamma`` (n, Gx, Gy) (each sums to 1).

    ``lik`` (n, Gx, Gy): every report's likelihood per cell; trajectory ``t`` is rows
    ``starts[t]:starts[t] + lengths[t]`` (lengths > 0); the transition is
    ``(1 − jump)·K θ / Z + jump·θ`` with ``1 / Z = inv_z``.
    """
    gx, gy = theta.shape
    work, tmp, spread = np.empty((gx, gy)), np.empty((gx, gy)), np.zeros((gx, gy))
    beta, weighted = np.empty((gx, gy)), np.empty((gx, gy))
    for t in range(len(starts)):
        s, length = starts[t], lengths[t]
        for k in range(length):  # forward: gamma holds the filtered marginals α
            r = s + k
            total = _forward_step(gamma[r - 1] if k > 0 else theta, lik[r], theta, kx, ky, full,
                                  inv_z, jump, k == 0, work, tmp, spread, gamma[r])
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
                _spread(weighted, kx, ky, full, tmp, spread)
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
def log_likelihoods(lik, starts, lengths, theta, kx, ky, full, inv_z, jump, out):
    """Add every model's ``log P(reports)`` of the chunk (scaled forward passes) to ``out`` (M,).

    Model ``m`` has the kernels ``kx[m]``, ``ky[m]``, ``full[m]``,
    ``inv_z[m]`` and ``jump[m]``; the other arguments are those of :func:`smoothed_marginals`.
    """
    gx, gy = theta.shape
    work, tmp, spread = np.empty((gx, gy)), np.empty((gx, gy)), np.zeros((gx, gy))
    prev, alpha = np.empty((gx, gy)), np.empty((gx, gy))
    for m in range(len(jump)):
        ll = 0.0
        for t in range(len(starts)):
            for k in range(lengths[t]):
                r = starts[t] + k
                total = _forward_step(prev, lik[r], theta, kx[m], ky[m], full[m],
                                      inv_z[m], jump[m], k == 0, work, tmp, spread, alpha)
                ll += np.log(total)
                for i in range(gx):
                    for j in range(gy):
                        prev[i, j] = alpha[i, j] / total
        out[m] += ll


key_on_sources(globals())
