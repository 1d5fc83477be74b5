"""The errors of a denoised release next to the raw one (``run_grid(..., denoise=...)``).

A TraCS-C, TraCS-D, Strawman or planar Laplace release is fitted with :func:`tracs.estimate.density`
(:data:`GRID` × :data:`GRID` cells, at most :data:`PASSES` EM passes stopped by the
rule, ``stop="rule"``: no held-out pass budget, which costs three more fits; the
defaults otherwise) and denoised with
:func:`tracs.estimate.denoise`:

* where the outputs are rounded to POIs (check-in data): the posterior over the POIs
  (:mod:`tracs.estimate.poi_posterior`), its mode (``ae_denoised``) and the POI
  nearest its mean (``ae_denoised_mean``);
* elsewhere (a continuous region): the posterior mean of the true point
  (``ae_denoised``).

``"point"`` takes every report on its own (the prior: the fitted density);
``"trajectory"`` the prior of every point given the other reports of its trajectory
(smoothing, :mod:`tracs.estimate.smoothing`), with the transition fixed in advance:
kernel scale :data:`SCALE_CELLS` mean cell widths of the fitted grid and a share
:data:`JUMP` of fresh jumps (fitting them from the reports costs a forward pass per
candidate), over the POIs mixed with the posteriors of the trajectory's other reports
(the revisit prior of :mod:`tracs.estimate.revisits`, its default weight); planar
Laplace is then denoised per point.

The discrete baselines, whose releases are POIs, are denoised over the POIs
(:func:`tracs.estimate.baseline_posterior`): the posterior with the POI frequencies
estimated from the release as the prior (at most :data:`BASELINE_PASSES` EM passes), its
mode and the POI nearest its mean.  With ``"trajectory"`` the prior of every report of
EM, L-SRR, ATP and TP is mixed with the posteriors of its trajectory's other reports (the
revisit prior, its default weight), as TraCS-D's is; N-gram's law already follows the
previous released POI, and its posterior is the same either way.  The
exponential mechanism and L-SRR (fixed groups) have one exact law per report, N-gram an
exact law given the previous released POI (the trajectories' offsets); ATP and TP have no
tractable per-report law and are denoised under a stated *surrogate*, the exponential
mechanism over all POIs at an ``ε̃`` chosen from the release by its marginal likelihood
(:mod:`tracs.estimate.surrogate_law`).  Per-trajectory budgets of EM, L-SRR and N-gram,
and L-SRR with threshold groups, get ``NaN``.  Denoising is post-processing of the
release and its public parameters: the guarantee is unchanged.
"""

from __future__ import annotations

import time

import numpy as np

from ..baselines import TP, NGram
from ..errors import InputError
from ..estimate.denoising import denoise
from ..estimate.discrete_posterior import baseline_posterior
from ..estimate.expectation_maximisation import one_blas_thread
from ..estimate.grid_density import check_perturber, density
from ..estimate.poi_posterior import poi_posterior
from ..estimate.revisits import REVISIT
from ..methods import method_of

__all__ = ["BASELINE_PASSES", "DENOISE", "GRID", "JUMP", "SCALE_CELLS", "check_denoise", "denoised_columns", "fitted_prior",
           "transition_scale"]

#: the kinds of denoising of ``run_grid(..., denoise=...)``
DENOISE = ("point", "trajectory")
#: cells per side of the fitted prior
GRID = 64
#: most EM passes of the prior's fit
PASSES = 200
#: most EM passes of the POI frequencies, the prior of a baseline's posterior
BASELINE_PASSES = 20
#: ``"trajectory"``: the transition's kernel scale, in mean cell widths of the fitted grid
SCALE_CELLS = 1.0
#: ``"trajectory"``: the transition's share of fresh jumps
JUMP = 0.05


def check_denoise(denoise):
    """``None`` or one of :data:`DENOISE`."""
    if denoise is not None and denoise not in DENOISE:
        raise InputError(f"denoise must be one of {', '.join(map(repr, DENOISE))} or None, got {denoise!r}")
    return denoise


def _supported(perturber) -> bool:
    try:
        return check_perturber(perturber) in ("axes", "directional", "grid")
    except TypeError:  # not a perturber: a discrete baseline
        return False


def _posterior_baseline(releaser) -> bool:
    """ATP or TP (a surrogate law), or the exponential mechanism, N-gram or L-SRR with fixed groups at a
    per-point ε (their exact law)."""
    if isinstance(releaser, TP):
        return True
    method = method_of(releaser)
    return method is not None and method.estimator == "frequencies" and releaser.epsilon is not None


def fitted_prior(perturber, raw, offsets):
    """The prior of a release's denoising here: :func:`tracs.estimate.density` on :data:`GRID` ×
    :data:`GRID` cells, at most :data:`PASSES` EM passes stopped by the rule."""
    return density(raw, perturber, offsets=offsets, grid=(GRID, GRID), iterations=PASSES, stop="rule")


def transition_scale(est) -> float:
    """The transition's kernel scale given the trajectory: :data:`SCALE_CELLS` mean cell widths of ``est``."""
    return SCALE_CELLS * float(np.mean([np.mean(np.diff(e)) for e in est.grid]))


def denoised_columns(perturber, raw, coords, offsets, pois, how, errors) -> dict:
    """``{"ae_denoised": …, "ae_denoised_mean": …, "denoise_seconds": …}`` of one release.

    Parameters
    ----------
    perturber
        The public perturber of the release.
    raw : numpy.ndarray, shape (N, 2)
        The release, not rounded.
    coords : numpy.ndarray, shape (N, 2)
        The true points (the errors only).
    offsets : numpy.ndarray
    pois : numpy.ndarray or None
        The POIs the outputs are rounded to (None: not rounded).
    how : {"point", "trajectory"}
    errors : callable
        ``errors(points) -> per-trajectory errors``, as the raw release's.
    """
    nan = {"ae_denoised": float("nan"), "ae_denoised_mean": float("nan"), "denoise_seconds": float("nan")}
    out, start = dict(nan), time.perf_counter()
    if _posterior_baseline(perturber):
        space = perturber.poi_space.points
        revisit = REVISIT if how == "trajectory" and not isinstance(perturber, NGram) else None
        indices = baseline_posterior(raw, perturber, offsets=offsets, rule=("mode", "mean"),
                                     iterations=BASELINE_PASSES, revisit=revisit)
        out["ae_denoised"], out["ae_denoised_mean"] = (float(errors(space[i]).mean()) for i in indices)
        out["denoise_seconds"] = time.perf_counter() - start
        return out
    if not _supported(perturber):
        return nan
    est = fitted_prior(perturber, raw, offsets)
    trajectory = how == "trajectory" and check_perturber(perturber) != "grid"
    scale = transition_scale(est) if trajectory else None
    jump = JUMP if trajectory else None
    with one_blas_thread():  # the smoothing's products are small: threaded BLAS only waits
        if pois is None:
            out["ae_denoised"] = float(errors(denoise(raw, perturber, est, offsets=offsets, trajectory=trajectory,
                                                      scale=scale, jump=jump)).mean())
        else:  # both rules from one pass over reports × POIs (the checks of denoise hold: a release of the perturber)
            mode, mean = poi_posterior(raw, offsets, perturber, check_perturber(perturber), pois, est,
                                       rule=("mode", "mean"), trajectory=trajectory, scale=scale, jump=jump)
            out["ae_denoised"], out["ae_denoised_mean"] = (float(errors(pois[i]).mean()) for i in (mode, mean))
    out["denoise_seconds"] = time.perf_counter() - start
    return out
