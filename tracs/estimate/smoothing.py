"""Per-trajectory denoising: forward–backward smoothing of every trajectory's reports.

A hidden Markov model on the cells of the fitted density ``θ``
(:func:`tracs.estimate.grid_density`): the hidden state of a point is its true cell, the
emission of a report is the method's exact report likelihood per cell
(:mod:`tracs.estimate._emissions`, the same as the per-point posterior's), the first
point's prior is ``θ`` and the step between consecutive true points follows::

    P(next = n | current = c) = (1 − w)·K(c, n)·θ_n / Z_c + w·θ_n,    Z_c = Σ_n K(c, n)·θ_n

with ``K`` the Gaussian distance-decay kernel of the cells' centres of ``scale``
(separable: ``K = Kx ⊗ Ky``, so a step is two products of ``Gx × Gx`` and
``Gy × Gy`` matrices, never a ``cells × cells`` matrix) and ``w`` the share of jumps
drawn from the density afresh.  ``w = 1`` (or an infinite scale) makes the points
independent: smoothing is then the per-point posterior of
:func:`tracs.estimate.denoise`.  ``(scale, w)`` maximise the reports' marginal
likelihood over a small public grid of candidates (:data:`SCALES`, multiples of the
mean cell width, × :data:`JUMPS`) unless given; the candidates are compared on the
estimate's own grid, the smoothing runs on its fine grid (``detail``) when it has one.

Every smoothed point is the posterior mean of the true point given all the reports
of its trajectory: ``Σ_k γ_k m_k(r)`` with ``γ`` the smoothed marginal of the
cells and ``m_k(r)`` the within-cell mean of :mod:`tracs.estimate._emissions`.

**Per-user independence.**  A trajectory's smoothed points depend on the other
trajectories only through the fitted model (``θ``, ``scale``, ``w``): given the
model, the recursions run on each trajectory's own reports.  Everything is
post-processing of the release and its public parameters: it costs no privacy.

Work runs over chunks of whole trajectories holding at most :data:`CHUNK_CELLS`
report-cells (a longer trajectory is a chunk of its own): memory is a few arrays of
``chunk × cells`` per worker.  The recursions of a chunk are one compiled call
(:mod:`tracs.estimate._smoothing_kernels`), its trajectories one after the other;
``workers`` threads share the chunks (:func:`tracs.estimate._threads.run_chunks`), which do
not depend on ``workers``, and the candidates' log-likelihoods add the chunks' in chunk
order, so the result is the same for every number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .expectation_maximisation import one_blas_thread
from ._smoothing_kernels import log_likelihood, smoothed_marginals
from ._emissions import AxesTables, DirectionalTables
from ._threads import run_chunks

#: report × cell entries per chunk of trajectories (bounds memory: ~5 float64 arrays of this size)
CHUNK_CELLS = 1 << 21
#: candidate scales, in mean cell widths
SCALES = (0.5, 1.0, 2.0, 4.0, 8.0)
#: candidate shares of fresh jumps
JUMPS = (0.05, 0.2, 0.5)
#: kernel entries below this are zero (``d > 9.6·scale``): the kernels are banded
CUTOFF = 1e-20
#: rows per block of a banded kernel (:mod:`tracs.estimate._smoothing_kernels`)
BLOCK_ROWS = 16

__all__ = ["Smoothed", "smooth", "trajectory_ranges", "CHUNK_CELLS", "SCALES", "JUMPS", "CUTOFF", "BLOCK_ROWS"]


@dataclass(frozen=True)
class Smoothed:
    """The smoothed points and the transition model they used.

    Attributes
    ----------
    points : numpy.ndarray, shape (N, 2)
    scale : float
        Kernel scale, in the region's units (``inf``: no distance decay).
    jump : float
        Share of steps drawn afresh from the density.
    log_likelihood : dict
        ``{(scale, jump): log P(reports)}`` of every candidate evaluated (up to a
        constant common to all of them).
    """

    points: np.ndarray
    scale: float
    jump: float
    log_likelihood: dict


def _kernel(centres: np.ndarray, scale: float) -> np.ndarray:
    """The Gaussian distance decay ``exp(−d² / 2 scale²)`` between the centres of one axis, zero
    below :data:`CUTOFF`."""
    if not np.isfinite(scale):
        return np.ones((len(centres), len(centres)))
    d = centres[:, None] - centres[None, :]
    k = np.exp(-0.5 * (d / scale) ** 2)
    k[k < CUTOFF] = 0.0
    return k


def _blocks(kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A kernel as blocks of :data:`BLOCK_ROWS` rows and the columns their nonzero entries span, all
    blocks equally wide: ``(blocks (B, rows, W), first columns (B,))``."""
    g = len(kernel)
    nonzero = kernel != 0.0
    low, high = np.argmax(nonzero, axis=1), g - np.argmax(nonzero[:, ::-1], axis=1)
    first = np.arange(0, g, BLOCK_ROWS)
    low, high = np.minimum.reduceat(low, first), np.maximum.reduceat(high, first)
    width = int(np.max(high - low))
    low = np.minimum(low, g - width)
    columns = low[:, None] + np.arange(width)
    rows = np.minimum(first[:, None] + np.arange(BLOCK_ROWS), g - 1)
    blocks = kernel[rows[:, :, None], columns[:, None, :]]
    return np.ascontiguousarray(blocks), low.astype(np.int64)


class _Model:
    """The transition ``(1 − w)·K θ / Z + w·θ`` on a grid."""

    def __init__(self, theta, grid, scale, jump):
        self.theta, self.jump = np.ascontiguousarray(theta), float(jump)
        cx, cy = (0.5 * (e[:-1] + e[1:]) for e in grid)
        kx, ky = _kernel(cx, scale), _kernel(cy, scale)
        self.full = not np.isfinite(scale)
        (self.bx, self.sx), (self.by, self.sy) = _blocks(kx), _blocks(ky)
        z = kx @ theta @ ky
        self.inv_z = 1.0 / np.maximum(z, 1e-300)  # α_c > 0 needs θ_c > 0, hence Z_c ≥ K(c, c)·θ_c > 0

    def arguments(self) -> tuple:
        """The model's arguments of the kernels, after ``θ``."""
        return self.bx, self.sx, self.by, self.sy, self.full, self.inv_z, self.jump


def _smooth_chunk(lik, mx, my, starts, lengths, model):
    """Smoothed posterior means of a chunk's points: (n, 2)."""
    gamma = np.empty_like(lik)
    smoothed_marginals(lik, starts, lengths, model.theta, *model.arguments(), gamma)
    out = np.empty((lik.shape[0], 2))
    out[:, 0] = (gamma * mx).sum(axis=(1, 2))
    out[:, 1] = (gamma * my).sum(axis=(1, 2))
    return out


def trajectory_ranges(off, cells, budget=None):
    """Trajectory ranges ``[i, j)`` holding at most ``budget`` (default :data:`CHUNK_CELLS`) report-cells
    (at least one trajectory)."""
    budget = CHUNK_CELLS if budget is None else budget
    bounds, i = [], 0
    n_traj = len(off) - 1
    while i < n_traj:
        j = i + 1
        while j < n_traj and (off[j + 1] - off[i]) * cells <= budget:
            j += 1
        bounds.append((i, j))
        i = j
    return bounds


def _tables(pts, off, perturber, density, family, parts):
    """The grid, ``θ`` (sums 1) and the emission tables of ``density``'s cells."""
    grid = tuple(np.asarray(e, dtype=np.float64) for e in density.grid)
    theta = np.asarray(density.probabilities, dtype=np.float64)
    tables = (DirectionalTables if family == "directional" else AxesTables)(pts, off, perturber, grid, parts)
    return grid, theta / theta.sum(), tables


def _log_likelihoods(lik, starts, lengths, theta, models) -> np.ndarray:
    """The scaled forward pass of every model: their log-likelihoods of a chunk."""
    theta = np.ascontiguousarray(theta)
    return np.array([log_likelihood(lik, starts, lengths, theta, *m.arguments()) for m in models])


def _fit(pts, off, perturber, estimate, family, parts, scales, jumps, workers: int = 1) -> dict:
    """The marginal log-likelihood of every ``(scale, jump)`` on the estimate's own grid
    (not its fine grid: the candidates are compared, not used); the chunks' sums added in order."""
    grid, theta, tables = _tables(pts, off, perturber, estimate, family, parts)
    width = float(np.mean([np.mean(np.diff(e)) for e in grid]))
    candidates = [(float(s if s is not None else k * width), float(w))
                  for s in scales for k in (SCALES if s is None else (1,)) for w in jumps]
    models = [_Model(theta, grid, *c) for c in candidates]
    chunks = trajectory_ranges(off, theta.size * len(candidates))

    def chunk(c):
        i, j = chunks[c]
        lik, _, _ = tables.chunk(off[i], off[j], means=False)
        return _log_likelihoods(lik, off[i:j] - off[i], np.diff(off[i:j + 1]), theta, models)

    total = np.zeros(len(candidates))
    for part in run_chunks(chunk, len(chunks), workers):
        total += part
    return dict(zip(candidates, total.tolist()))


def smooth(pts, off, perturber, estimate, family, parts, *, scale=None, jump=None, workers: int = 1) -> Smoothed:
    """Forward–backward posterior means of validated reports (see :func:`tracs.estimate.denoise`):
    on the estimate's fine grid (``detail``) when it has one, the chunks of trajectories on
    ``workers`` threads.  BLAS runs on one thread
    (:func:`tracs.estimate.expectation_maximisation.one_blas_thread`): the steps' products
    are small."""
    off = np.asarray(off, dtype=np.int64)
    keep = np.concatenate([[True], np.diff(off) > 0])
    off = off[keep]  # empty trajectories hold nothing to smooth
    ll = {}
    with one_blas_thread():
        if scale is None or jump is None:
            ll = _fit(pts, off, perturber, estimate, family, parts,
                      [scale], [jump] if jump is not None else JUMPS, workers)
            scale, jump = max(ll, key=ll.get)
        prior = estimate.detail if estimate.detail is not None else estimate
        grid, theta, tables = _tables(pts, off, perturber, prior, family, parts)
        model = _Model(theta, grid, float(scale), float(jump))
        out = np.empty((len(pts), 2))
        chunks = trajectory_ranges(off, theta.size)

        def chunk(c):
            i, j = chunks[c]
            lik, mx, my = tables.chunk(off[i], off[j])
            starts, lengths = off[i:j] - off[i], np.diff(off[i:j + 1])
            out[off[i]:off[j]] = _smooth_chunk(lik, mx, my, starts, lengths, model)

        run_chunks(chunk, len(chunks), workers)
    return Smoothed(out, float(scale), float(jump), ll)
