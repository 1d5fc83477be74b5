"""Estimating a density from the reports held by a Dask frame's partitions: :func:`estimate`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..estimate import holdout
from ..estimate.grid_density import _epsilons, check_perturber, plan_density
from ..errors import InputError
from .frames import _check_columns, _coordinates, _order
from .partitions import survey

__all__ = ["estimate", "PartitionBlocks"]


def partition_trajectories(part, user, trajectory, time, x, y):
    """One partition's reports in (user, trajectory, time, row) order: points, offsets, keys."""
    return ordered_trajectories(part, user, trajectory, time, x, y)[1:]


def ordered_trajectories(part, user, trajectory, time, x, y):
    """:func:`partition_trajectories` and, first, the order it puts the partition's rows in."""
    order = _order(part, user, trajectory, time, np.arange(len(part)))
    points = _coordinates(part, x, y)[order]
    users = part[user].to_numpy()[order]
    ids = part[trajectory].to_numpy()[order] if trajectory is not None else np.zeros(len(part), dtype=int)
    new = (users[1:] != users[:-1]) | (ids[1:] != ids[:-1])
    starts = np.flatnonzero(np.r_[True, np.asarray(new, dtype=bool)]) if len(part) else np.zeros(0, int)
    offsets = np.r_[starts, len(part)].astype(np.int64)
    keys = pd.DataFrame({"user": users[starts], "trajectory": ids[starts]})
    return order, points, offsets, keys


def _lengths(held):
    return held[2].assign(length=np.diff(held[1]))


def _partition_blocks(held, plan, rank_starts):
    """Blocks of one partition; ``rank_starts``: global first row of each of its trajectories."""
    points, offsets, _ = held
    if len(points) == 0:
        return []
    eps = _epsilons(plan.perturber, offsets, len(points))
    if plan.estimator.counts is not None:  # counts travel (planar Laplace: counts of distinct keys)
        return plan.counts(points, eps)
    rows = np.concatenate([np.arange(s, s + n) for s, n in zip(rank_starts, np.diff(offsets))])
    blocks = plan.blocks(points, offsets, eps)
    for block in blocks:
        block.rows = rows[block.rows] if hasattr(block, "rows") else rows
    return blocks


def _weight(blocks) -> float:
    return float(sum(b.weight for b in blocks))


def _block_pass(blocks, theta):
    ll, back = 0.0, np.zeros(theta.shape)
    for block in blocks:
        part_ll, part_back = block.predict_and_back(theta)
        ll += part_ll
        back += part_back
    return ll, back


def _subset_blocks(blocks, keep_rows):
    out = []
    for block in blocks:
        k = np.isin(block.rows, keep_rows, assume_unique=True)
        if k.any():
            part = block.subset(k)
            part.rows = block.rows[k]
            out.append(part)
    return out


class PartitionBlocks:
    """Likelihood blocks held by the partitions: the E-step is a map over them and a sum.

    ``predict_and_back`` adds the partitions' log-likelihoods and per-cell sums in
    partition order; ``subset`` (held-out trajectories) keeps each partition's part
    where it is.
    """

    def __init__(self, parts, rows, weight):
        self.parts, self.rows, self.weight = parts, rows, float(weight)

    def predict_and_back(self, theta):
        import dask

        theta = np.asarray(theta, dtype=np.float64)
        results = dask.compute(*[dask.delayed(_block_pass)(p, theta) for p in self.parts])
        ll, back = 0.0, np.zeros(theta.shape)
        for part_ll, part_back in results:
            ll += part_ll
            back += part_back
        return ll, back

    def subset(self, keep):
        import dask

        kept = self.rows[np.asarray(keep, dtype=bool)]
        parts = dask.persist(*[dask.delayed(_subset_blocks)(p, kept) for p in self.parts])
        return PartitionBlocks(list(parts), kept, len(kept))


def estimate(ddf, perturber, *, grid=(32, 32), user="uid", trajectory=None, time=None, x=None, y=None,
             shuffle="auto", **options):
    """:func:`tracs.estimate.grid_density` of the reports in a Dask frame, on the active scheduler.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame or dask_geopandas.GeoDataFrame
        Released points (as :func:`perturb` writes them), any partitioning.
    perturber : the public perturber that released them
    grid : int or (int, int)
    user, trajectory, time, x, y : str
        As for :func:`perturb`: a report's reference is the previous report of its
        trajectory in (user, trajectory, time, row) order.
    shuffle : "auto", True or False
        Bring each user's rows into one partition first (as :func:`perturb`).
    **options
        Further arguments of :func:`tracs.estimate.grid_density` (``smoothing``,
        ``stop``, ``memory`` per partition, ``workers`` threads per partition, …).

    Returns
    -------
    Density
        What ``density`` returns for the same reports with trajectories in
        (user, trajectory) order, to 1e-9: the partitions hold their reports and
        their likelihood blocks; every EM pass maps the E-step over the
        partitions and adds the per-cell sums; an estimator with ``counts`` or
        ``merge`` (:mod:`tracs.estimate.estimators`: binned reports, TraCS-C and
        planar Laplace) has its partitions' counts or blocks brought together.  Held-out folds (``stop="cv"``) deal
        trajectories in the same global order.
    """
    import dask

    check_perturber(perturber)
    meta = ddf._meta
    _check_columns(meta, user, trajectory, time, x, y)
    if shuffle not in ("auto", True, False):
        raise InputError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    spans = survey(ddf, user, caller="estimate")  # refuses ids of more than one type
    spans = spans if shuffle == "auto" else bool(shuffle)
    work = ddf.shuffle(on=user) if spans else ddf
    held = dask.persist(*[dask.delayed(partition_trajectories)(p, user, trajectory, time, x, y)
                          for p in work.to_delayed()])
    tables = dask.compute(*[dask.delayed(_lengths)(h) for h in held])
    keys = pd.concat([t.assign(part=i, local=np.arange(len(t))) for i, t in enumerate(tables)],
                     ignore_index=True)
    keys = keys[keys.length > 0].sort_values(["user", "trajectory"], kind="stable")
    if len(keys) == 0:
        raise InputError("reports is empty")
    lengths = keys.length.to_numpy(np.int64)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    eps = _epsilons(perturber, offsets, int(offsets[-1]))
    plan = plan_density(perturber, int(offsets[-1]), float(eps.min()), float(eps.max()), grid=grid,
                        **options)
    keys = keys.assign(first=offsets[:-1])
    parts = []
    for i, h in enumerate(held):
        mine = keys[keys.part == i].sort_values("local")
        firsts = np.zeros(len(tables[i]), dtype=np.int64)
        firsts[mine.local.to_numpy()] = mine["first"].to_numpy()
        parts.append(dask.delayed(_partition_blocks)(h, plan, firsts))
    parts = list(dask.persist(*parts))
    if plan.estimator.counts is not None:
        blocks = plan.blocks_from_counts(dask.compute(*parts))
    elif plan.estimator.merge is not None:  # binned reports: equal matrices added
        blocks = plan.estimator.call("merge", dask.compute(*parts))
    else:
        weights = dask.compute(*[dask.delayed(_weight)(p) for p in parts])
        blocks = [PartitionBlocks(parts, np.arange(offsets[-1]), sum(weights))]
    return plan.fit(blocks, lambda: holdout.trajectory_folds(offsets))
