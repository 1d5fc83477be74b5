"""Expectation–maximisation over a histogram, with optional EMS smoothing.

The model: every report ``r`` has a likelihood ``L_r(k) = P(report r | true value
in cell k)`` (up to a factor that depends on the report only, which cancels).
With cell probabilities ``θ``, the EM update is the classical one for a mixture
with known components (Dempster, Laird & Rubin 1977)::

    d_r   = Σ_k L_r(k) θ_k                   (E-step: predicted report likelihood)
    θ_k  <- θ_k · Σ_r w_r L_r(k) / d_r / Σ_r w_r   (M-step)

which never decreases the log-likelihood ``ℓ(θ) = Σ_r w_r log d_r``.  EMS (Li et
al., SIGMOD 2020, "Estimating numerical distributions under local differential
privacy") adds a smoothing step after every M-step: a binomial ``[1, 2, 1]/4``
kernel along every axis, which trades a little bias for a large cut in variance.

Stopping rule (not a fixed iteration count): stop as soon as the log-likelihood
per unit of weight improves by less than ``tol`` between two iterations,
``(ℓ_t − ℓ_{t−1}) / Σ w < tol``; Li et al. use the same criterion on the total
log-likelihood.  With smoothing, ℓ need not increase monotonically; a decrease
also stops the iteration.  ``max_iterations`` is only a safeguard.

Likelihoods come in *blocks* (reports of one kind): each block answers
``predict(θ) -> d`` and ``back(ratio) -> Σ_r ratio_r L_r`` so that product
kernels, coded kernels and dense matrices share one loop.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from .._progress import progress_bar, progress_lines
from ..errors import InputError

__all__ = ["EMResult", "run_em", "smooth", "ProductBlock", "DenseBlock", "PairBlock", "choose_smoothing"]

#: default stopping tolerance on the mean log-likelihood improvement
DEFAULT_TOL = 1e-7
DEFAULT_MAX_ITERATIONS = 2000
#: SQUAREM's step-length safeguard (after the SQUAREM package of Varadhan & Roland): the
#: extrapolation's length ``α`` is at most ``step_max``, which starts at :data:`STEP_MAX`,
#: grows :data:`STEP_FACTOR`-fold after an accepted step of that length, and after a rejected
#: step of length ``α`` becomes ``α / STEP_FACTOR`` (not below :data:`STEP_MAX`).  Uncapped,
#: ``α`` reached hundreds on TraCS-D's flat likelihoods and two extrapolations in three were
#: rejected, each costing a pass for nothing (``docs/estimation.md``, *Stopping rule*).
STEP_MAX = 1.0
STEP_FACTOR = 4.0


@dataclass(frozen=True)
class EMResult:
    """The outcome of :func:`run_em`.

    Attributes
    ----------
    theta : numpy.ndarray
        Cell probabilities (same shape as the support), summing to 1.
    iterations : int
        Iterations run.
    loglik : float
        Final log-likelihood (up to the report-only constants).
    converged : bool
        ``True`` when the stopping rule fired before ``max_iterations``.
    """

    theta: np.ndarray
    iterations: int
    loglik: float
    converged: bool


def smooth(theta: np.ndarray) -> np.ndarray:
    """Binomial ``[1, 2, 1]/4`` smoothing along every axis (EMS), mass preserving.

    At an edge the missing neighbour's weight stays on the edge cell (reflecting
    boundary), so the total mass is unchanged.
    """
    out = np.asarray(theta, dtype=np.float64)
    for axis in range(out.ndim):
        if out.shape[axis] < 2:
            continue
        a = np.moveaxis(out, axis, 0)
        padded = np.concatenate([a[:1], a, a[-1:]], axis=0)
        a = 0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:]
        out = np.moveaxis(a, 0, axis)
    return np.ascontiguousarray(out)


class ProductBlock:
    """Binned reports with a separable kernel: ``P(bin (i, j) | cell (a, b)) = A[i, a]·B[j, b]``.

    Parameters
    ----------
    counts : numpy.ndarray, shape (I, J)
        Reports per output bin.
    first, second : numpy.ndarray, shapes (I, Ga) and (J, Gb)
        Per-axis transition matrices (columns sum to 1).
    """

    def __init__(self, counts, first, second):
        self.counts = np.asarray(counts, dtype=np.float64)
        self.first = np.asarray(first, dtype=np.float64)
        self.second = np.asarray(second, dtype=np.float64)
        self.weight = float(self.counts.sum())
        self._nz = self.counts > 0

    def predict_and_back(self, theta):
        pred = self.first @ theta @ self.second.T
        ratio = np.zeros_like(pred)
        np.divide(self.counts, pred, out=ratio, where=self._nz & (pred > 0))
        loglik = float(np.sum(self.counts[self._nz] * np.log(np.maximum(pred[self._nz], 1e-300))))
        return loglik, self.first.T @ ratio @ self.second


    def split(self, rng, share):
        """``(train, held)``: every bin's count thinned binomially (``share`` held out)."""
        held = rng.binomial(self.counts.astype(np.int64), share).astype(np.float64)
        return (ProductBlock(self.counts - held, self.first, self.second),
                ProductBlock(held, self.first, self.second))


class DenseBlock:
    """Reports with an explicit likelihood row each: ``L`` of shape (n, K), weights (n,)."""

    def __init__(self, likelihood, weights=None):
        self.likelihood = np.ascontiguousarray(likelihood)
        n = self.likelihood.shape[0]
        self.weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        self.weight = float(self.weights.sum())

    def predict_and_back(self, theta):
        flat = theta.ravel().astype(self.likelihood.dtype)
        d = (self.likelihood @ flat).astype(np.float64)
        d = np.maximum(d, 1e-300)
        loglik = float(np.sum(self.weights * np.log(d)))
        back = (self.weights / d).astype(self.likelihood.dtype) @ self.likelihood
        return loglik, back.astype(np.float64).reshape(theta.shape)

    def subset(self, keep):
        """The block of the rows where ``keep`` (bool, one per row) is true."""
        keep = np.asarray(keep, dtype=bool)
        return DenseBlock(self.likelihood[keep], self.weights[keep])

    def split(self, rng, share):
        """``(train, held)`` with integer weights (counts of binned reports) thinned binomially."""
        if not np.array_equal(self.weights, np.round(self.weights)):
            raise InputError("held-out smoothing needs reports counted in bins")
        held = rng.binomial(self.weights.astype(np.int64), share).astype(np.float64)
        return DenseBlock(self.likelihood, self.weights - held), DenseBlock(self.likelihood, held)


class PairBlock:
    """Pairs of reports with an explicit likelihood row each, over pairs of cells:
    ``P(pair i | cells (a, b)) = F[i, a]·S[i, b]``, so ``θ`` is a (K, K) joint distribution.

    Parameters
    ----------
    first, second : numpy.ndarray, shape (n, K)
        Likelihood rows of the first and the second report of every pair (each up to a
        factor of its own).  float32 rows keep their type: the two products of a pass run in
        single precision (twice as fast), the log-likelihood is summed in double.
    """

    def __init__(self, first, second):
        dtype = np.float32 if np.asarray(first).dtype == np.float32 else np.float64
        self.first = np.ascontiguousarray(first, dtype=dtype)
        self.second = np.ascontiguousarray(second, dtype=dtype)
        self.weight = float(len(self.first))

    def predict_and_back(self, theta):
        d = np.einsum("ib,ib->i", self.first @ theta.astype(self.first.dtype), self.second)
        d = np.maximum(d.astype(np.float64), 1e-300)
        back = self.first.T @ (self.second / d[:, None].astype(self.first.dtype))
        return float(np.sum(np.log(d))), back.astype(np.float64)


#: candidate EMS weights of ``smoothing="cv"``, largest first (each held-out fit starts from the
#: previous one's estimate).  Plain EM (weight 0) is not a candidate: on the fine grids the
#: default fits run on it does not converge within :data:`DEFAULT_MAX_ITERATIONS` passes, so
#: its held-out score would be that of the safeguard's pass count, and its fits cost more
#: than all the others together (``docs/estimation.md``, *Speed*).
CV_WEIGHTS = (0.02, 0.01, 0.005, 0.002)
#: share of every bin's reports held out, and the number of held-out splits
CV_SHARE = 0.2
CV_SPLITS = 3


def choose_smoothing(blocks, support, *, tol=DEFAULT_TOL, max_iterations=None,
                     accelerate: bool = True, lines=None) -> float:
    """The EMS weight of :data:`CV_WEIGHTS` whose fits best predict held-out reports.

    Every bin's count is thinned binomially (share :data:`CV_SHARE` held out, seeds
    ``0 .. CV_SPLITS − 1``: the choice is a fixed function of the reports); each
    candidate is fitted on the rest and scored by the held-out log-likelihood,
    summed over the splits.  The weight with the highest score is returned (ties:
    the first of :data:`CV_WEIGHTS`).  On every split the candidates are fitted
    largest weight first, each fit starting from the previous one's estimate (warm
    start: the same stopping rule, from a point near its end).  Blocks need a
    ``split(rng, share)`` method (binned reports).  ``lines``: progress lines, as in
    :func:`run_em`.
    """
    if not all(hasattr(b, "split") for b in blocks):
        raise InputError("smoothing='cv' needs reports counted in bins (TraCS-C, planar Laplace)")
    lines = progress_lines("estimate") if lines is None else lines
    scores = np.zeros(len(CV_WEIGHTS))
    for seed in range(CV_SPLITS):
        rng = np.random.default_rng(seed)
        pairs = [b.split(rng, CV_SHARE) for b in blocks]
        train, held = [p[0] for p in pairs], [p[1] for p in pairs]
        if sum(b.weight for b in train) <= 0 or sum(b.weight for b in held) <= 0:
            return 0.0
        start = None
        for i, w in enumerate(CV_WEIGHTS):
            lines.stage = f"held-out fit {seed * len(CV_WEIGHTS) + i + 1} of {len(scores) * CV_SPLITS} (λ = {w:g})"
            fit = run_em(train, support, smoothing=w, tol=tol, max_iterations=max_iterations,
                         accelerate=accelerate, initial=start, lines=lines)
            start = fit.theta
            scores[i] += sum(b.predict_and_back(fit.theta)[0] for b in held)
    return float(CV_WEIGHTS[int(np.argmax(scores))])


def _smoothing_weight(smoothing) -> float:
    """``None`` -> 0, ``"ems"`` -> 1 (Li et al.), a number in (0, 1] -> a partial EMS step."""
    if smoothing is None:
        return 0.0
    if isinstance(smoothing, str):
        if smoothing != "ems":
            raise InputError(f"smoothing must be None, 'ems' or a weight in (0, 1], got {smoothing!r}")
        return 1.0
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float, np.floating)) \
            or not 0.0 < float(smoothing) <= 1.0:
        raise InputError(f"smoothing must be None, 'ems' or a weight in (0, 1], got {smoothing!r}")
    return float(smoothing)


def one_blas_thread():
    """A context with BLAS on one thread, when ``threadpoolctl`` is installed.

    The EM products are small matrices: threaded BLAS only adds synchronisation,
    which on a busy machine made a TraCS-C pass 30 times slower (1.4 ms against
    43 ms for a 64×64 grid); one thread also makes the sums' order fixed.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def run_em(blocks, support, *, smoothing=None, tol=DEFAULT_TOL, max_iterations=None,
           initial=None, accelerate: bool = True, observe=None, lines=None,
           step_cap: bool = True) -> EMResult:
    """Maximise the likelihood of the reports over the cell probabilities.

    Parameters
    ----------
    blocks : sequence of blocks
        Objects with ``weight`` and ``predict_and_back(theta) -> (loglik, back)``.
    support : numpy.ndarray of bool
        Cells that may hold mass (e.g. the cells of a polygon); its shape is the
        shape of ``θ``.
    smoothing : None, "ems" or float in (0, 1]
        ``"ems"``: binomial smoothing after every M-step (Li et al. 2020); a
        number ``λ`` blends it in: ``θ <- (1 − λ)·θ + λ·smooth(θ)``.
    tol : float
        Stopping tolerance on the log-likelihood improvement per unit weight.
    max_iterations : int, optional
        Safeguard on the number of EM maps evaluated (default 2000).
    initial : numpy.ndarray, optional
        Starting point (default uniform over the support).
    accelerate : bool
        SQUAREM (Varadhan & Roland, Scand. J. Statist. 2008, scheme S3): two EM
        maps, one extrapolation along their difference, kept only when it does not
        lower the log-likelihood; its length is capped (:data:`STEP_MAX`, grown
        and shrunk by :data:`STEP_FACTOR`).  Same fixed points as plain EM, far fewer
        passes over the reports.
    step_cap : bool
        Cap the extrapolation's length (default).  ``False``: SQUAREM's own length, as
        long as the two maps ask for; the fits whose number of passes is fixed in advance
        (:func:`tracs.estimate.synthesize.fit_mobility_model`) were tuned with it.
    observe : callable, optional
        Called as ``observe(theta, passes)`` with every iterate the stopping rule
        examines (after ``passes`` EM maps); used to score the path on held-out
        reports (:mod:`tracs.estimate.holdout`).
    lines : tracs._progress.ProgressLines, optional
        Where the progress lines go (pass, log-likelihood change per unit of
        weight, elapsed time; only when standard error is not a terminal): one
        object shared by every fit of an estimate; default a new one.

    Returns
    -------
    EMResult
        ``iterations`` counts EM maps (passes over the reports).
    """
    with one_blas_thread():
        return _run_em(blocks, support, smoothing, tol, max_iterations, initial, accelerate, observe,
                       progress_lines("estimate") if lines is None else lines, step_cap)


def _run_em(blocks, support, smoothing, tol, max_iterations, initial, accelerate, observe, lines,
            step_cap=True) -> EMResult:
    weight = _smoothing_weight(smoothing)
    support = np.asarray(support, dtype=bool)
    if not support.any():
        raise InputError("the support holds no cell")
    total = sum(b.weight for b in blocks)
    if total <= 0:
        raise InputError("no reports to estimate from")
    limit = DEFAULT_MAX_ITERATIONS if max_iterations is None else int(max_iterations)
    if initial is None:
        theta = support / support.sum()
    else:
        theta = np.where(support, np.asarray(initial, dtype=np.float64), 0.0)
        theta = theta / theta.sum()
    with progress_bar(limit, desc="estimate", unit="pass") as bar:  # ends early when the rule fires
        return _iterate(blocks, support, theta, total, limit, tol, weight, accelerate, bar, observe, lines,
                        step_cap)


def _iterate(blocks, support, theta, total, limit, tol, weight, accelerate, bar, observe, lines,
             step_cap=True) -> EMResult:
    """The EM loop of :func:`run_em` (``bar`` counts the passes)."""
    maps = 0

    def step(th):
        nonlocal maps
        maps += 1
        bar.update(1)
        loglik, back = 0.0, np.zeros(th.shape)
        for block in blocks:
            ll, b = block.predict_and_back(th)
            loglik += ll
            back += b
        new = th * back / total
        if weight:
            new = np.where(support, (1.0 - weight) * new + weight * smooth(new), 0.0)
        return loglik, new / new.sum()

    previous, nxt = step(theta)
    step_max = STEP_MAX if step_cap else math.inf
    while maps < limit:
        if accelerate:
            ll1, theta2 = step(nxt)
            r, v = nxt - theta, theta2 - 2 * nxt + theta
            vv = float(np.sum(v * v))
            alpha = min(max(np.sqrt(float(np.sum(r * r)) / vv) if vv > 0 else 1.0, 1.0), step_max)
            cand = np.clip(theta + 2 * alpha * r + alpha * alpha * v, 0.0, None)
            cand = np.where(support, cand, 0.0)
            cand = cand / cand.sum() if cand.sum() > 0 else theta2
            ll_c, nxt_c = step(cand)
            if ll_c >= ll1:
                loglik, theta, nxt = ll_c, cand, nxt_c
                step_max = step_max * STEP_FACTOR if alpha == step_max else step_max
            else:
                step_max = max(STEP_MAX, alpha / STEP_FACTOR) if step_cap else step_max
                loglik, theta = ll1, theta2
                loglik, nxt = step(theta)
        else:
            theta = nxt
            loglik, nxt = step(theta)
        if observe is not None:
            observe(theta, maps)
        change = (loglik - previous) / total
        lines.note(f"pass {maps}, log-likelihood change {change:.1e} per report")
        if change < tol:
            return EMResult(theta, maps, loglik, True)
        previous = loglik
    return EMResult(theta, maps, previous, False)
