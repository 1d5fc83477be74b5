"""The forward–backward smoothing of :mod:`tracs.estimate.smoothing` as it was before its
compiled kernels: NumPy steps batched over a chunk's trajectories, one Python iteration per
step, dense kernels (no cutoff).  Only the benchmark and the tests use it, as the reference
the kernels are timed and compared against.
"""

from __future__ import annotations

import numpy as np

from tracs.estimate import smoothing

__all__ = ["smooth"]


def _kernel(centres: np.ndarray, scale: float) -> np.ndarray:
    """The Gaussian distance decay ``exp(−d² / 2 scale²)`` between the centres of one axis."""
    if not np.isfinite(scale):
        return np.ones((len(centres), len(centres)))
    d = centres[:, None] - centres[None, :]
    return np.exp(-0.5 * (d / scale) ** 2)


class _Model:
    """The transition ``(1 − w)·K θ / Z + w·θ`` on a grid."""

    def __init__(self, theta, grid, scale, jump):
        self.theta, self.jump = theta, float(jump)
        cx, cy = (0.5 * (e[:-1] + e[1:]) for e in grid)
        self.kx, self.ky = _kernel(cx, scale), _kernel(cy, scale)
        z = self.kx @ theta @ self.ky
        self.inv_z = 1.0 / np.maximum(z, 1e-300)  # α_c > 0 needs θ_c > 0, hence Z_c ≥ K(c, c)·θ_c > 0

    def predict(self, alpha):
        """Prior of the next points, ``Σ_c α_c P(· | c)``, for a batch ``alpha`` (B, Gx, Gy) of sums 1."""
        if self.jump >= 1.0:
            return np.broadcast_to(self.theta, alpha.shape)
        spread = self.kx @ (alpha * self.inv_z) @ self.ky
        return self.theta * ((1.0 - self.jump) * spread + self.jump)

    def back(self, g):
        """``Σ_n P(n | c)·g_n`` for a batch ``g`` (B, Gx, Gy)."""
        weighted = g * self.theta
        total = weighted.sum(axis=(1, 2))[:, None, None]
        if self.jump >= 1.0:
            return np.broadcast_to(total, g.shape)
        return (1.0 - self.jump) * self.inv_z * (self.kx @ weighted @ self.ky) + self.jump * total


def _forward(lik, starts, lengths, model):
    """Scaled forward pass over a chunk: every point's filtered marginal ``α`` (sums 1)."""
    alpha = np.empty_like(lik)
    prev = None
    for t in range(int(lengths.max())):
        active = lengths > t
        idx = starts[active] + t
        prior = model.theta if t == 0 else model.predict(prev[active[lengths > t - 1]])
        a = prior * lik[idx]
        a /= a.sum(axis=(1, 2))[:, None, None]
        alpha[idx] = a
        prev = a
    return alpha


def _smooth_chunk(lik, mx, my, starts, lengths, model):
    """Smoothed posterior means of a chunk's points: (n, 2)."""
    alpha = _forward(lik, starts, lengths, model)
    out = np.empty((lik.shape[0], 2))
    beta = None
    for t in range(int(lengths.max()) - 1, -1, -1):
        active = lengths > t
        idx = starts[active] + t
        b = np.ones((len(idx),) + lik.shape[1:])  # the last point of a trajectory: β = 1
        if beta is not None:
            b[lengths[active] > t + 1] = beta
        g = alpha[idx] * b
        g /= g.sum(axis=(1, 2))[:, None, None]
        out[idx, 0] = (g * mx[idx]).sum(axis=(1, 2))
        out[idx, 1] = (g * my[idx]).sum(axis=(1, 2))
        if t > 0:  # β of step t − 1 of every trajectory active at t
            beta = model.back(lik[idx] * b)
            beta = beta / beta.max(axis=(1, 2))[:, None, None]  # scaling: the marginals are ratios
    return out


def _log_likelihoods(lik, starts, lengths, theta, models) -> np.ndarray:
    """The scaled forward pass of every model at once (stacked): their log-likelihoods of a chunk."""
    kx = np.stack([m.kx for m in models])[:, None]
    ky = np.stack([m.ky for m in models])[:, None]
    inv_z = np.stack([m.inv_z for m in models])[:, None]
    stay = np.array([1.0 - m.jump for m in models])[:, None, None, None]
    jump = np.array([m.jump for m in models])[:, None, None, None]
    ll = np.zeros(len(models))
    prev = None
    for t in range(int(lengths.max())):
        active = lengths > t
        e = lik[starts[active] + t]
        if t == 0:
            a = np.broadcast_to(theta * e, (len(models),) + e.shape).copy()
        else:
            a = theta * (stay * (kx @ (prev[:, active[lengths > t - 1]] * inv_z) @ ky) + jump) * e
        c = a.sum(axis=(2, 3))
        ll += np.log(c).sum(axis=1)
        prev = a / c[:, :, None, None]
    return ll


def _fit(pts, off, perturber, estimate, family, parts, scales, jumps) -> dict:
    """The marginal log-likelihood of every ``(scale, jump)`` on the estimate's own grid
    (not its fine grid: the candidates are compared, not used)."""
    grid, theta, tables = smoothing._tables(pts, off, perturber, estimate, family, parts)
    width = float(np.mean([np.mean(np.diff(e)) for e in grid]))
    candidates = [(float(s if s is not None else k * width), float(w))
                  for s in scales for k in (smoothing.SCALES if s is None else (1,)) for w in jumps]
    models = [_Model(theta, grid, *c) for c in candidates]
    total = np.zeros(len(candidates))
    for i, j in smoothing.trajectory_ranges(off, theta.size * len(candidates)):
        lik, _, _ = tables.chunk(off[i], off[j])
        total += _log_likelihoods(lik, off[i:j] - off[i], np.diff(off[i:j + 1]), theta, models)
    return dict(zip(candidates, total.tolist()))


def smooth(pts, off, perturber, estimate, family, parts, *, scale=None, jump=None) -> smoothing.Smoothed:
    """Forward–backward posterior means of validated reports (see :func:`tracs.estimate.denoise`):
    on the estimate's fine grid (``detail``) when it has one."""
    off = np.asarray(off, dtype=np.int64)
    keep = np.concatenate([[True], np.diff(off) > 0])
    off = off[keep]  # empty trajectories hold nothing to smooth
    ll = {}
    if scale is None or jump is None:
        ll = _fit(pts, off, perturber, estimate, family, parts,
                  [scale], [jump] if jump is not None else smoothing.JUMPS)
        scale, jump = max(ll, key=ll.get)
    prior = estimate.detail if estimate.detail is not None else estimate
    grid, theta, tables = smoothing._tables(pts, off, perturber, prior, family, parts)
    model = _Model(theta, grid, float(scale), float(jump))
    out = np.empty((len(pts), 2))
    for i, j in smoothing.trajectory_ranges(off, theta.size):
        lik, mx, my = tables.chunk(off[i], off[j])
        starts, lengths = off[i:j] - off[i], np.diff(off[i:j + 1])
        out[off[i]:off[j]] = _smooth_chunk(lik, mx, my, starts, lengths, model)
    return smoothing.Smoothed(out, float(scale), float(jump), ll)
