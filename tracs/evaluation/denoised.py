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
(smoothing, :mod:`tracs.estimate.smoothing`; its transition fitted from the reports;
planar Laplace is then denoised per point).  The discrete baselines get ``NaN``: their
releases are venues already, and a posterior under their report laws is not run here.  Denoising is post-processing of the release and its public
parameters: the guarantee is unchanged.
"""

from __future__ import annotations

from ..errors import InputError
from ..estimate.grid_density import check_perturber
import time
from ..estimate.denoising import denoise
from ..estimate.grid_density import density
from ..estimate.poi_posterior import poi_posterior

__all__ = ["DENOISE", "GRID", "check_denoise", "denoised_columns"]

#: the kinds of denoising of ``run_grid(..., denoise=...)``
DENOISE = ("point", "trajectory")
#: cells per side of the fitted prior
GRID = 64
#: most EM passes of the prior's fit
PASSES = 200


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
    if not _supported(perturber):
        return nan
    start = time.perf_counter()
    est = density(raw, perturber, offsets=offsets, grid=(GRID, GRID), iterations=PASSES, stop="rule")
    trajectory = how == "trajectory" and check_perturber(perturber) != "grid"
    out = dict(nan)
    if pois is None:
        out["ae_denoised"] = float(errors(denoise(raw, perturber, est, offsets=offsets, trajectory=trajectory)).mean())
    else:  # both rules from one pass over reports × POIs (the checks of denoise hold: a release of the perturber)
        mode, mean = poi_posterior(raw, offsets, perturber, check_perturber(perturber), pois, est,
                                   rule=("mode", "mean"), trajectory=trajectory)
        out["ae_denoised"], out["ae_denoised_mean"] = (float(errors(pois[i]).mean()) for i in (mode, mean))
    out["denoise_seconds"] = time.perf_counter() - start
    return out
