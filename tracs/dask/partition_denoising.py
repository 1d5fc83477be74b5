"""Denoising the reports held by a Dask frame's partitions: :func:`denoise`.

The prior is fitted once over all partitions (:func:`tracs.dask.estimate`) and sent to
the workers; with ``trajectory=True`` the transition's ``(scale, jump)`` are chosen by
the reports' marginal log-likelihood added over the partitions (as
:mod:`tracs.estimate.smoothing` adds it over its chunks).  Each partition, holding
whole users, is then denoised by :func:`tracs.estimate.denoise` given that model: its
rows in the estimator's order (user, trajectory, time, row) for the offsets, put back
in the partition's own order afterwards.  Given the model, a report's denoised point
depends only on its own trajectory, so the result is the in-process one, however the
frame is partitioned.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..estimate.denoising import AT_POIS, DEFAULT_SUBCELLS, DENOISED, SMOOTHED, how_denoised
from ..estimate.denoising import denoise as denoise_points
from ..estimate.grid_density import check_perturber
from ..estimate.revisits import REVISIT, check_revisit
from ..estimate.smoothing import JUMPS, _fit
from ..errors import InputError
from .estimation import estimate, ordered_trajectories, partition_trajectories
from .frames import _check_columns
from .partitions import map_users, survey

__all__ = ["denoise", "DENOISED", "SMOOTHED", "AT_POIS"]


def _log_likelihoods(part, perturber, prior, family, parts, scale, jumps, columns):
    """One partition's marginal log-likelihood of every transition candidate (a one-row frame)."""
    points, offsets, _ = partition_trajectories(part, *columns)
    if len(points) == 0:
        return pd.DataFrame({"candidates": [{}]})
    ll = _fit(points, offsets, perturber, prior, family, parts, [scale], jumps)
    return pd.DataFrame({"candidates": [ll]})


def _transition(work, perturber, prior, family, parts, scale, jump, columns):
    """``(scale, jump)``: given, or the candidate of the largest log-likelihood added over the partitions."""
    if scale is not None and jump is not None:
        return scale, jump
    jumps = [jump] if jump is not None else JUMPS
    found = work.map_partitions(_log_likelihoods, perturber, prior, family, parts, scale, jumps, columns,
                                meta=pd.DataFrame({"candidates": pd.Series(dtype=object)})).compute()
    total: dict = {}
    for ll in found["candidates"]:
        for candidate, value in ll.items():
            total[candidate] = total.get(candidate, 0.0) + value
    return max(total, key=total.get)


def _denoise_part(part, perturber, prior, options, columns, how):
    """One partition of whole users, denoised: its rows in their own order, the coordinates replaced."""
    x, y = columns[3], columns[4]
    out = part.copy()
    out["denoised"] = how
    if len(part) == 0:
        return out
    order, points, offsets, _ = ordered_trajectories(part, *columns)  # sorted once
    done = denoise_points(points, perturber, prior, offsets=offsets,
                          **options)  # the one call of tracs.estimate.denoise per partition
    back = np.empty_like(done)
    back[order] = done
    out[x] = back[:, 0]
    out[y] = back[:, 1]
    return out


def denoise(ddf, perturber, *, grid=(64, 64), trajectory=False, pois=None, rule="mean", user="uid",
            trajectory_column=None, time=None, x=None, y=None, subcells=DEFAULT_SUBCELLS, scale=None,
            jump=None, revisit=REVISIT, shuffle="auto", prior=None, **options):
    """:func:`tracs.estimate.denoise` of the reports in a Dask frame, the prior fitted on the active scheduler.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Released points with coordinate columns ``x`` and ``y`` in the perturber's
        metric CRS, inside its region, any partitioning.
    perturber : TraCSC, TraCSD, Strawman or PlanarLaplace
        The public perturber that released them.
    grid : int or (int, int)
        Cells of the prior (:func:`tracs.dask.estimate`).
    trajectory, pois, rule, subcells, scale, jump, revisit
        As for :func:`tracs.estimate.denoise` (``trajectory``: smooth every trajectory).
    user, time, x, y : str
        As for :func:`tracs.dask.estimate`; ``x`` and ``y`` are required.
    trajectory_column : str, optional
        The column of trajectory ids within a user: ``trajectory=`` of
        :func:`tracs.dask.estimate` (named apart from the ``trajectory`` option).
    shuffle : "auto", True or False
        Bring each user's rows into one partition first (as :func:`tracs.dask.perturb`);
        ``False`` trusts the caller that no user spans partitions.
    prior : Density, optional
        The prior, already fitted from these reports; default: fitted by
        :func:`tracs.dask.estimate` on ``grid``.
    **options
        Further arguments of the prior's fit, :func:`tracs.dask.estimate` (``smoothing``,
        ``memory``, ``workers`` threads per partition, …).

    Returns
    -------
    dask.dataframe.DataFrame
        The input's rows, partitions, order, index and columns, ``x`` and ``y``
        replaced by the denoised points, and a column ``denoised`` saying how
        (:data:`DENOISED`, :data:`SMOOTHED` or a value of :data:`AT_POIS`).  Each point
        is what :func:`tracs.estimate.denoise` gives for the same reports and prior.
    """
    family = check_perturber(perturber)
    if x is None or y is None:
        raise InputError("denoise: give the coordinate columns x= and y=")
    _check_columns(ddf._meta, user, trajectory_column, time, x, y)
    if "denoised" in ddf.columns:
        raise InputError("denoise: the frame already has a column 'denoised'; rename or drop it")
    if shuffle not in ("auto", True, False):
        raise InputError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    check_revisit(revisit)
    spans = survey(ddf, user, caller="denoise") if shuffle == "auto" else bool(shuffle)
    if prior is None:
        prior = estimate(ddf, perturber, grid=grid, user=user, trajectory=trajectory_column, time=time, x=x, y=y,
                         shuffle=spans, **options)
    columns = (user, trajectory_column, time, x, y)
    settings = {"trajectory": trajectory, "pois": pois, "rule": rule}
    if pois is None:
        settings["subcells"] = subcells
    else:
        settings["revisit"] = revisit
    if trajectory:
        work = ddf.shuffle(on=user) if spans else ddf
        parts = 1 if pois is not None else int(subcells)
        settings["scale"], settings["jump"] = _transition(work, perturber, prior, family, parts, scale, jump,
                                                          columns)
    elif scale is not None or jump is not None:
        raise InputError("scale and jump are parameters of trajectory=True")
    how = how_denoised(trajectory, pois, rule)
    meta = ddf._meta.assign(denoised=pd.Series(dtype=object))
    return map_users(ddf, _denoise_part, user=user, meta=meta, shuffle=spans,
                     args=(perturber, prior, settings, columns, how))
