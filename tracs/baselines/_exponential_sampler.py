"""Exact samplers for the exponential mechanism over a finite set of POIs.

``Pr[y | x] ∝ exp(−s·d(x, y))`` over the allowed POIs ``y`` (all of ``P`` or a public
subset ``C``), with ``s = ε/(2D)`` and ``D`` the public diameter.  Two exact samplers
are combined:

1. **Rejection from the uniform proposal.**  Draw ``y`` uniformly from ``P``; accept
   when ``y ∈ C`` and a standard exponential ``E`` exceeds ``s·d(x, y)`` (probability
   ``exp(−s·d)`` ≤ 1).  An accepted proposal follows the target law exactly, whatever
   the number of trials.  Expected cost ``|P| / Σ_{y∈C} exp(−s·d(x, y))`` ≤
   ``e^{ε/2}·|P|/|C|`` proposals, each Θ(1).
2. **Inverse CDF over the whole block.**  For inputs still unaccepted after a fixed
   proposal budget, weights ``exp(−s·d + shift)`` (log-sum-exp shift: the largest
   allowed logit becomes 0) for a ``(batch, |P|)`` block at a time, cumulative sum and
   one uniform per row.  Θ(|P|) per input; memory bounded by the block size.

Randomness: every row draws from its own keyed stream (``tracs.baselines._draws``),
proposal ``j`` at draw numbers ``2j`` and ``2j + 1`` and the inverse CDF at a fixed
draw number, so a row's output does not depend on the other rows of the call nor on
how many proposals they needed.

Stopping the rejection after a budget and finishing with the inverse CDF is still
exact: the accepted value of a rejection sampler is independent of how many trials
it took, so both branches draw from the same law.  Running time depends on the
input (as for any sampler whose cost depends on its distribution); only the output
is released.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from ._draws import as_row_draws
from ._exponential_kernels import candidate_mask, rejection_rows

__all__ = ["em_logits", "em_probabilities", "sample_em", "Disc", "RESOLUTION", "LOG_RESOLUTION",
           "em_max_epsilon"]

#: smallest probability (relative to 1) a sampler may be asked to realise.  The
#: samplers turn uniforms that are multiples of ``2^-53`` into choices, so a
#: probability ``p`` is realised only to within ``2^-53``: at ``p >= 2^-40`` that is
#: a relative ``2^-13`` (the loss exceeds ε by at most about 1e-4), while far smaller
#: probabilities are rounded beyond recognition — down to 0, an unbounded loss.
RESOLUTION = 2.0 ** -40
LOG_RESOLUTION = 40.0 * math.log(2.0)  # ≈ 27.73


def em_max_epsilon(n_candidates: int) -> float:
    """Largest per-draw ε the EM samplers realise faithfully over ``n_candidates`` POIs.

    The smallest probability of one draw is at least ``e^{−ε/2}/n`` (scores range over
    ``[−ε/2, 0]``); it must stay at or above :data:`RESOLUTION`:
    ``ε/2 + ln n <= 40·ln 2``.  The bound for ``P`` also covers every restricted
    candidate set ``C ⊂ P`` (smaller normaliser).
    """
    return 2.0 * (LOG_RESOLUTION - math.log(n_candidates))

_BLOCK_ELEMENTS = 1 << 20  # about 8 MB of float64 per block

# accept(rows, cand) -> bool mask.  rows: (b,) indices into the inputs of this call;
# cand: (b, m) POI indices, or (1, |P|) for the full block (broadcast against rows).
Predicate = Callable[[np.ndarray, np.ndarray], np.ndarray]


class Disc:
    """The candidate set "POIs within a radius of a public centre", one centre per row.

    A :data:`Predicate` (``disc(rows, cand)``) that :func:`sample_em` also recognises,
    so that its rejection sampler runs compiled (no Python call per block).

    Parameters
    ----------
    points : numpy.ndarray, shape (|P|, 2)
    centre : numpy.ndarray, shape (n, 2)
        Centre of each row's disc (a public value: an earlier release).
    radius2 : float or numpy.ndarray, shape (n,)
        Squared radius (of every row, or of each).
    """

    def __init__(self, points, centre, radius2):
        self.points, self.centre = points, np.asarray(centre, dtype=np.float64)
        self.radius2 = np.broadcast_to(np.asarray(radius2, dtype=np.float64), (len(self.centre),))

    def __call__(self, rows, cand):
        disc, _, _ = self.kernel_tables()
        return candidate_mask(self.points, rows, cand, disc)

    def reference(self, rows, cand):
        """The same test in NumPy (broadcast)."""
        near = self.points[cand]
        dx = near[..., 0] - self.centre[rows, 0, None]
        dy = near[..., 1] - self.centre[rows, 1, None]
        return dx * dx + dy * dy <= self.radius2[rows, None]

    def kernel_tables(self):
        """``(disc, None, None)`` for the compiled rejection pass: ``(n, 3)`` centre and squared
        radius of every row (see :func:`tracs.baselines._exponential_kernels.rejection_rows`)."""
        return np.column_stack([self.centre, self.radius2]), None, None


def em_logits(distances: np.ndarray, scale) -> np.ndarray:
    """Unnormalised log-probabilities ``−scale·d`` (broadcast)."""
    return -np.asarray(scale, dtype=np.float64)[..., None] * distances


def em_probabilities(distances, scale, allowed=None) -> np.ndarray:
    """Exact EM probabilities over the last axis (stable log-sum-exp).

    Parameters
    ----------
    distances : array_like, shape (..., m)
        ``d(x, y)`` for every candidate ``y``.
    scale : float or array_like, shape (...)
        ``ε/(2D)``.
    allowed : array_like of bool, shape (..., m), optional
        Public candidate set; rows with no allowed candidate fall back to all ``m``.
    """
    logits = em_logits(np.asarray(distances, dtype=np.float64), scale)
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        empty = ~allowed.any(axis=-1, keepdims=True)
        logits = np.where(allowed | empty, logits, -np.inf)
    logits = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def _rejection(points, x, scale, draws, accept, budget, out, done):
    """Phase 1: uniform proposals, accepted with probability exp(−s·d) and membership.

    Proposal ``j`` of row ``r`` uses the row's own draws ``2j`` (the POI) and ``2j + 1``
    (the acceptance uniform), so a row's result does not depend on the other rows.
    """
    n_poi = len(points)
    pending = np.flatnonzero(~done)
    used = 0
    m = 4
    while pending.size and used < budget:
        m = min(m, budget - used)
        step = max(1, _BLOCK_ELEMENTS // m)
        still = []
        for start in range(0, pending.size, step):
            rows = pending[start:start + step]
            cand, u = draws.proposals(rows, used, m, n_poi)
            near = points[cand]
            dist = _distances(x[rows, 0, None], x[rows, 1, None], near[..., 0], near[..., 1])
            dist *= -scale[rows, None]
            ok = u < np.exp(dist, out=dist)
            if accept is not None:
                ok &= accept(rows, cand)
            hit = ok.any(axis=1)
            first = ok.argmax(axis=1)
            out[rows[hit]] = cand[hit, first[hit]]
            done[rows[hit]] = True
            still.append(rows[~hit])
        pending = np.concatenate(still) if still else pending[:0]
        used += m
        m = min(2 * m, 256)


def _distances(x0, y0, px, py, out=None) -> np.ndarray:
    """``sqrt((x0 − px)² + (y0 − py)²)`` (broadcast; faster than ``np.hypot``)."""
    dx = np.subtract(x0, px, out=out)
    dy = y0 - py
    dx *= dx
    dy *= dy
    dx += dy
    return np.sqrt(dx, out=dx)


def _last_positive(cum: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """Clamp ``pick`` (count of cumulative sums <= u) to the last entry with positive weight.

    ``u`` can round up to the row total; the first index reaching the total is then the
    last entry of positive weight.
    """
    over = pick >= cum.shape[1]
    if over.any():
        pick[over] = np.argmax(cum[over] >= cum[over, -1:], axis=1)
    return pick


_CHUNK = 64
#: draw number of the inverse-CDF uniform (after any number of proposals)
#: proposals per row at most, so that their draw numbers stay below :data:`_FINAL`
_MAX_BUDGET = (1 << 21) - 2
_FINAL = (1 << 22) - 1  # above every proposal's draws (2j + 1 < 2^22 − 1), below the redraws


def _inverse_cdf(points, x, scale, draws, accept, fallback, rows_all, out):
    """Phase 2: exact inverse-CDF sampling over all POIs, a block of rows at a time.

    Two-level search: sums of chunks of 64 weights, a cumulative sum over the chunks,
    then a cumulative sum inside the chosen chunk only.
    """
    n_poi = len(points)
    n_chunks = -(-n_poi // _CHUNK)
    width = n_chunks * _CHUNK
    step = max(1, _BLOCK_ELEMENTS // width)
    every = np.arange(n_poi)[None, :]
    px, py = points[:, 0], points[:, 1]
    buffer = np.zeros((min(step, rows_all.size), width))
    for start in range(0, rows_all.size, step):
        rows = rows_all[start:start + step]
        b = rows.size
        weights = buffer[:b]
        logits = weights[:, :n_poi]
        _distances(x[rows, 0, None], x[rows, 1, None], px, py, out=logits)
        logits *= -scale[rows, None]
        if accept is not None:
            allowed = np.broadcast_to(accept(rows, every), logits.shape)
            empty = ~allowed.any(axis=1)
            if empty.any() and fallback is not None:
                allowed = allowed.copy()
                allowed[empty] = np.broadcast_to(fallback(rows[empty], every),
                                                 (int(empty.sum()), n_poi))
                empty = ~allowed.any(axis=1)
            allowed = allowed | empty[:, None]  # empty set -> all of P
            logits[~allowed] = -np.inf
        logits -= logits.max(axis=1, keepdims=True)  # log-sum-exp shift: the top weight is 1
        np.exp(logits, out=logits)
        chunks = weights.reshape(b, n_chunks, _CHUNK)
        cum = np.cumsum(chunks.sum(axis=2), axis=1)
        u = draws.uniform(rows, _FINAL) * cum[:, -1]
        j = _last_positive(cum, (cum <= u[:, None]).sum(axis=1))
        u -= np.where(j > 0, cum[np.arange(b), j - 1], 0.0)
        inner = np.cumsum(chunks[np.arange(b), j], axis=1)
        k = _last_positive(inner, (inner <= u[:, None]).sum(axis=1))
        out[rows] = j * _CHUNK + k


def sample_em(points: np.ndarray, x: np.ndarray, scale, draws,
              accept: Optional[Predicate] = None, budget: Optional[int] = None,
              fallback: Optional[Predicate] = None) -> np.ndarray:
    """Draw one POI index per row of ``x`` from the exponential mechanism.

    Parameters
    ----------
    points : numpy.ndarray, shape (|P|, 2)
        The POIs.
    x : numpy.ndarray, shape (n, 2)
        True locations (any coordinates; usually POIs).
    scale : float or numpy.ndarray, shape (n,)
        ``ε/(2D)`` for each row.
    draws : tracs.baselines._draws.RowDraws, or an rng (None, int, SeedSequence, Generator)
        The rows' own keyed draws (one row of ``draws`` per row of ``x``).  An rng
        gives each row a stream of its own from that seed (for direct use).
    accept : callable, optional
        Public candidate-set membership ``accept(rows, cand) -> bool`` (see
        :data:`Predicate`); ``None`` means all of ``P``.  With ``None``, a
        :class:`Disc` or any predicate with ``kernel_tables()`` (TP's
        :class:`~tracs.baselines._sectors.Sectors`) the rejection phase is compiled.  A row whose set is empty
        samples from the ``fallback`` set instead, and from all of ``P`` when that
        is empty too (or not given).
    budget : int, optional
        Proposals per row before switching to the inverse CDF (default
        ``max(32, |P| // 8)``, about the cost of one exact row).
    fallback : callable, optional
        Second candidate set, used where ``accept`` allows nothing.

    Returns
    -------
    numpy.ndarray of intp, shape (n,)
    """
    n = len(x)
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), (n,))
    out = np.zeros(n, dtype=np.intp)
    done = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    if budget is None:
        budget = max(32, len(points) // 8)
    budget = min(int(budget), _MAX_BUDGET)
    draws = as_row_draws(draws, n)
    if accept is None or hasattr(accept, "kernel_tables"):  # one compiled pass over each row's proposals
        tables = (None, None, None) if accept is None else accept.kernel_tables()
        rejection_rows(points, x, scale, draws, np.arange(n), budget, out, done, *tables)
    else:
        _rejection(points, x, scale, draws, accept, budget, out, done)
    rest = np.flatnonzero(~done)
    if rest.size:
        _inverse_cdf(points, x, scale, draws, accept, fallback, rest, out)
    return out
