"""Perturb trajectories held in a (partitioned) data frame, in process or on a Dask cluster.

:func:`perturb_frame` perturbs a pandas ``DataFrame`` (or GeoDataFrame) of points:
rows are grouped per user (and per trajectory id, if given), ordered in time and
perturbed with ``perturber.perturb_many(..., rng=seed, keys=users)``.
:func:`perturb` does the same on a ``dask.dataframe`` / ``dask_geopandas`` frame of
any partitioning, on whatever Dask scheduler is active (threads, processes, a
``distributed`` cluster on one machine or many).

Guarantee.  Each user draws from the keyed stream of ``(seed, user)``
(:mod:`tracs.random`), so a user's released points depend only on that user's
rows, the perturber's public parameters and the seed.  Hence the Dask result is
bit for bit the in-process result, however the frame is partitioned and wherever
the partitions run.  A user whose rows span several partitions is first brought
into one partition by a shuffle on the user column (only the user column is read
to decide whether that is needed); the result is put back in the input's
partitioning, row order and index.

What travels to the workers: the perturber (its public region, ε, POIs), the seed
and the rows of each partition; nothing else.  Dask is imported only by
:func:`perturb`, never by ``import tracs`` (install ``tracs[dask]``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import engine

__all__ = ["perturb", "perturb_frame", "map_users", "needs_shuffle", "with_row_numbers", "estimate"]

_ROW = "__tracs_row"      # global position of a row in the input
_INDEX = "__tracs_index"  # the input's index, carried through shuffles
_X, _Y = "__tracs_x", "__tracs_y"


def _order(frame: pd.DataFrame, user: str, trajectory, time, position) -> np.ndarray:
    """Row order: by user, trajectory id, time, then input position (a stable total order)."""
    columns = [position]
    if time is not None:
        columns.append(frame[time].to_numpy())
    if trajectory is not None:
        columns.append(frame[trajectory].to_numpy())
    columns.append(frame[user].to_numpy())
    return np.lexsort(columns)


def _coordinates(frame, x, y):
    """``(N, 2)`` float coordinates from columns ``x``, ``y`` or the point geometry."""
    if x is None:
        geometry = frame.geometry
        if len(geometry) and not (geometry.geom_type == "Point").all():
            raise ValueError("perturb_frame: every geometry must be a point")
        return np.column_stack([geometry.x.to_numpy(np.float64), geometry.y.to_numpy(np.float64)])
    return np.column_stack([frame[x].to_numpy(np.float64), frame[y].to_numpy(np.float64)])


def _check_columns(frame, user, trajectory, time, x, y):
    needed = [c for c in (user, trajectory, time, x, y) if c is not None]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"perturb_frame: missing column(s) {', '.join(map(repr, missing))}")
    if x is None and not hasattr(frame, "geometry"):
        raise ValueError("perturb_frame: give x= and y= columns, or a GeoDataFrame with point geometry")
    if (x is None) != (y is None):
        raise ValueError("perturb_frame: give both x= and y=, or neither (point geometry)")
    if frame[user].isna().any():
        raise ValueError(f"perturb_frame: column {user!r} has missing user ids")


def _released(frame, perturber, seed, user, trajectory, time, x, y, position, **kwargs):
    """Released ``(N, 2)`` coordinates of ``frame``'s rows, in the frame's own row order."""
    order = _order(frame, user, trajectory, time, position)
    coords = _coordinates(frame, x, y)[order]
    users = frame[user].to_numpy()[order]
    new = users[1:] != users[:-1]
    if trajectory is not None:
        ids = frame[trajectory].to_numpy()[order]
        new = new | (ids[1:] != ids[:-1])
    starts = np.flatnonzero(np.r_[True, np.asarray(new, dtype=bool)])
    offsets = np.r_[starts, len(order)].astype(np.int64)
    keys = users[starts].tolist()
    out = engine.perturb_many(perturber, coords, offsets, rng=seed, keys=keys, **kwargs)
    released = np.empty_like(out)
    released[order] = out
    return released


def _with_coordinates(frame, released, x, y):
    result = frame.copy()
    if x is None:
        from geopandas import points_from_xy

        result = result.set_geometry(points_from_xy(released[:, 0], released[:, 1], crs=frame.crs))
    else:
        result[x] = released[:, 0]
        result[y] = released[:, 1]
    return result


def perturb_frame(frame, perturber, *, seed, user="uid", trajectory=None, time=None, x=None, y=None,
                  **kwargs):
    """Perturb every user's points in a pandas frame (in process).

    Parameters
    ----------
    frame : pandas.DataFrame or geopandas.GeoDataFrame
        One row per point, coordinates in the perturber's metric CRS (metres).
    perturber : a tracs perturber or baseline
    seed : int, SeedSequence, "secure"-free seed accepted by :mod:`tracs.random`
        Required (``None`` would draw a fresh seed per call, so partitions could
        not agree); use ``tracs.random.Secure(seed)`` for a secure generator.
    user : str
        Column of user ids: each user's stream is keyed by its id.
    trajectory : str, optional
        Column of trajectory ids within a user (a user's successive trajectories,
        ordered by id, get successive streams).  Default: one trajectory per user.
    time : str, optional
        Column giving the order of points within a trajectory; ties and ``None``
        keep the input's row order.
    x, y : str, optional
        Coordinate columns; omit both to use the point geometry of a GeoDataFrame.
    **kwargs
        Passed to :func:`tracs.engine.perturb_many` (e.g. ``workers=`` threads per partition).

    Returns
    -------
    Same type as ``frame``: same rows, order, index and columns, the coordinates
    replaced by the released ones.
    """
    if seed is None:
        raise ValueError("perturb_frame: give a seed (int, SeedSequence or tracs.random.Secure(seed)); "
                         "without one, separate partitions could not agree on the key")
    _check_columns(frame, user, trajectory, time, x, y)
    if len(frame) == 0:
        return frame.copy()
    released = _released(frame, perturber, seed, user, trajectory, time, x, y,
                         np.arange(len(frame)), **kwargs)
    return _with_coordinates(frame, released, x, y)


# -- Dask ---------------------------------------------------------------------------------


def needs_shuffle(ddf, user: str = "uid") -> bool:
    """Whether some user's rows lie in more than one partition (reads only ``user``)."""
    import dask

    def users(part):
        return pd.Series([pd.unique(part[user].to_numpy())], dtype=object)

    per_partition = dask.compute(*[ddf[user].partitions[i].to_frame().map_partitions(
        users, meta=(None, object)) for i in range(ddf.npartitions)])
    seen: set = set()
    for series in per_partition:
        values = series.iloc[0] if len(series) else []
        for value in values:
            if value in seen:
                return True
        seen.update(values)
    return False


def _numbered(ddf):
    """``ddf`` with each row's global position (``_ROW``) and its index (``_INDEX``) as columns."""
    lengths = ddf.map_partitions(len).compute()
    starts = np.r_[0, np.cumsum(lengths)].astype(np.int64)

    def number(part, partition_info=None):
        part = part.copy()
        first = starts[partition_info["number"]] if partition_info else 0
        part[_ROW] = np.arange(first, first + len(part), dtype=np.int64)
        part[_INDEX] = part.index
        return part

    return ddf.map_partitions(number, meta=number(ddf._meta)), starts


def with_row_numbers(ddf):
    """``ddf`` indexed by each row's position in the whole frame (0 … N−1, in partition order)."""
    numbered, _ = _numbered(ddf)

    def reindex(part):
        out = part.drop(columns=[_ROW, _INDEX])
        out.index = pd.Index(part[_ROW].to_numpy(), name="row")
        return out

    return numbered.map_partitions(reindex, meta=reindex(numbered._meta))


def _apply_in_order(part, fn, index_name, args, empty):
    """Run ``fn`` on one partition's rows in input order, with their own index; tag the result."""
    if len(part) == 0:
        return empty
    part = part.sort_values(_ROW, kind="stable")
    rows, index = part[_ROW].to_numpy(), part[_INDEX].to_numpy()
    clean = part.drop(columns=[_ROW, _INDEX])
    clean.index = pd.Index(index, name=index_name)
    out = fn(clean, *args).copy()
    if len(out) == len(clean):
        kept = np.arange(len(clean))
    else:  # rows left out: find the others by their (unique) index
        kept = clean.index.get_indexer(out.index) if clean.index.is_unique else np.array([-1])
        if (kept < 0).any() or len(kept) != len(out) or np.any(np.diff(kept) <= 0):
            raise ValueError("map_users: a function that leaves rows out must return the others "
                             "in input order with their (unique) index")
    out[_ROW] = rows[kept]
    out[_INDEX] = index[kept]
    return out.reset_index(drop=True)


def map_users(ddf, fn, *, user="uid", meta, shuffle="auto", args=()):
    """Apply ``fn`` to partitions that each hold every row of their users, keeping the input's layout.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Any partitioning.
    fn : callable ``fn(frame, *args) -> frame``
        Receives a pandas frame of whole users, rows in the input's order with
        their index, and returns a frame of the same rows in the same order (any
        columns, as ``meta``), or of some of them, with their index, if the input's
        index is unique.  It runs on the workers: it and ``args`` must pickle.
    user : str
        The user column.
    meta : pandas.DataFrame
        An empty frame with the output's columns and dtypes.
    shuffle : "auto", True or False
        ``"auto"`` shuffles by ``user`` only when a user spans partitions.

    Returns
    -------
    dask.dataframe.DataFrame
        ``fn``'s rows, in the input's partitions, order and index.
    """
    if shuffle not in ("auto", True, False):
        raise ValueError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    numbered, starts = _numbered(ddf)
    spans = needs_shuffle(ddf, user) if shuffle == "auto" else bool(shuffle)
    work = numbered.shuffle(on=user) if spans else numbered
    index_name = ddf._meta.index.name
    tagged_meta = meta.iloc[:0].copy().reset_index(drop=True)
    tagged_meta[_ROW] = np.zeros(0, dtype=np.int64)
    tagged_meta[_INDEX] = pd.Series([], dtype=ddf._meta.index.dtype)
    done = work.map_partitions(_apply_in_order, fn, index_name, args, tagged_meta, meta=tagged_meta)
    if spans:  # back to the input's partitions and row order
        sizes = np.diff(starts)
        divisions = list(starts[:-1][sizes > 0]) + [int(starts[-1]) - 1]
        done = done.set_index(_ROW, divisions=divisions).reset_index()

    def restore(part):
        part = part.sort_values(_ROW, kind="stable")
        out = part.drop(columns=[_ROW, _INDEX])
        out.index = pd.Index(part[_INDEX].to_numpy(), name=index_name)
        return out[list(meta.columns)]

    return done.map_partitions(restore, meta=meta)


def _perturb_part(part, perturber, seed, user, trajectory, time, x, y, kwargs):
    released = _released(part, perturber, seed, user, trajectory, time, x, y, np.arange(len(part)), **kwargs)
    out = part.copy()
    out[x] = released[:, 0]
    out[y] = released[:, 1]
    return out


def perturb(ddf, perturber, *, seed, user="uid", trajectory=None, time=None, x=None, y=None,
            shuffle="auto", **kwargs):
    """Perturb a Dask (Geo)DataFrame of points; the result equals :func:`perturb_frame` bit for bit.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame or dask_geopandas.GeoDataFrame
        Any partitioning; coordinates in the perturber's metric CRS.
    perturber, seed, user, trajectory, time, x, y, **kwargs
        As for :func:`perturb_frame`.  ``seed`` is required.
    shuffle : "auto", True or False
        ``"auto"`` shuffles by user only when a user spans partitions
        (:func:`needs_shuffle`); ``False`` trusts the caller that none does.

    Returns
    -------
    A lazy frame of the input's type, partitions, row order and index, with the
    released coordinates.  Call ``.compute()`` or write it (``to_parquet``).
    """
    if seed is None:
        raise ValueError("perturb: give a seed (int, SeedSequence or tracs.random.Secure(seed)); "
                         "without one, separate partitions could not agree on the key")
    meta = ddf._meta
    _check_columns(meta, user, trajectory, time, x, y)
    if x is not None:
        return map_users(ddf, _perturb_part, user=user, meta=meta, shuffle=shuffle,
                         args=(perturber, seed, user, trajectory, time, x, y, kwargs))
    # point geometry: carry the coordinates as plain columns (any scheduler shuffles them)
    import dask_geopandas

    crs, geometry_name = meta.crs, meta.geometry.name

    def to_xy(part):
        out = pd.DataFrame(part.drop(columns=geometry_name))
        coords = _coordinates(part, None, None)
        out[_X], out[_Y] = coords[:, 0], coords[:, 1]
        return out

    flat = ddf.map_partitions(to_xy, meta=to_xy(meta))
    done = map_users(flat, _perturb_part, user=user, meta=flat._meta, shuffle=shuffle,
                     args=(perturber, seed, user, trajectory, time, _X, _Y, kwargs))

    def to_points(part):
        from geopandas import GeoDataFrame, points_from_xy

        geometry = points_from_xy(part[_X].to_numpy(), part[_Y].to_numpy(), crs=crs)
        out = GeoDataFrame(part.drop(columns=[_X, _Y]), geometry=geometry, crs=crs)
        if geometry_name != "geometry":
            out = out.rename_geometry(geometry_name)
        return out[list(meta.columns)]

    result = done.map_partitions(to_points, meta=meta)
    if not isinstance(result, dask_geopandas.GeoDataFrame):
        result = dask_geopandas.from_dask_dataframe(result)
    return result


# -- estimation ---------------------------------------------------------------------------


def _trajectories(part, user, trajectory, time, x, y):
    """One partition's reports in (user, trajectory, time, row) order: points, offsets, keys."""
    order = _order(part, user, trajectory, time, np.arange(len(part)))
    points = _coordinates(part, x, y)[order]
    users = part[user].to_numpy()[order]
    ids = part[trajectory].to_numpy()[order] if trajectory is not None else np.zeros(len(part), dtype=int)
    new = (users[1:] != users[:-1]) | (ids[1:] != ids[:-1])
    starts = np.flatnonzero(np.r_[True, np.asarray(new, dtype=bool)]) if len(part) else np.zeros(0, int)
    offsets = np.r_[starts, len(part)].astype(np.int64)
    keys = pd.DataFrame({"user": users[starts], "trajectory": ids[starts]})
    return points, offsets, keys


def _lengths(held):
    return held[2].assign(length=np.diff(held[1]))


def _partition_blocks(held, plan, rank_starts):
    """Blocks of one partition; ``rank_starts``: global first row of each of its trajectories."""
    from .estimate.planar import _epsilons

    points, offsets, _ = held
    if len(points) == 0:
        return []
    eps = _epsilons(plan.perturber, offsets, len(points))
    if plan.family == "grid":  # planar Laplace: counts of distinct keys travel
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


def _merge_binned(lists):
    """TraCS-C blocks from every partition as one list: the counts of equal matrices added,
    in the order of ε (that of the in-process blocks)."""
    from .estimate._expectation_maximisation import ProductBlock

    merged: dict = {}
    for blocks in lists:
        for block in blocks:
            key = (block.eps, block.first.tobytes(), block.second.tobytes())
            if key in merged:
                merged[key] = ProductBlock(merged[key].counts + block.counts, block.first, block.second)
            else:
                merged[key] = block
    return [merged[key] for key in sorted(merged, key=lambda k: k[0])]


def estimate(ddf, perturber, *, grid=(32, 32), user="uid", trajectory=None, time=None, x=None, y=None,
             shuffle="auto", **options):
    """:func:`tracs.estimate.density` of the reports in a Dask frame, on the active scheduler.

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
        Further arguments of :func:`tracs.estimate.density` (``smoothing``,
        ``stop``, ``memory`` per partition, ``workers`` threads per partition, …).

    Returns
    -------
    Density
        What ``density`` returns for the same reports with trajectories in
        (user, trajectory) order, to 1e-9: the partitions hold their reports and
        their likelihood blocks; every EM pass maps the E-step over the
        partitions and adds the per-cell sums; binned reports (TraCS-C, planar
        Laplace) travel as counts per bin.  Held-out folds (``stop="cv"``) deal
        trajectories in the same global order.
    """
    import dask

    from .estimate import _holdout
    from .estimate.planar import _epsilons, check_perturber, plan_density

    check_perturber(perturber)
    meta = ddf._meta
    _check_columns(meta, user, trajectory, time, x, y)
    if shuffle not in ("auto", True, False):
        raise ValueError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    spans = needs_shuffle(ddf, user) if shuffle == "auto" else bool(shuffle)
    work = ddf.shuffle(on=user) if spans else ddf
    held = dask.persist(*[dask.delayed(_trajectories)(p, user, trajectory, time, x, y)
                          for p in work.to_delayed()])
    tables = dask.compute(*[dask.delayed(_lengths)(h) for h in held])
    keys = pd.concat([t.assign(part=i, local=np.arange(len(t))) for i, t in enumerate(tables)],
                     ignore_index=True)
    keys = keys[keys.length > 0].sort_values(["user", "trajectory"], kind="stable")
    if len(keys) == 0:
        raise ValueError("reports is empty")
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
    if plan.family == "grid":
        blocks = plan.blocks_from_counts(dask.compute(*parts))
    elif plan.family == "axes":
        blocks = _merge_binned(dask.compute(*parts))
    else:
        weights = dask.compute(*[dask.delayed(_weight)(p) for p in parts])
        blocks = [PartitionBlocks(parts, np.arange(offsets[-1]), sum(weights))]
    return plan.fit(blocks, lambda: _holdout.trajectory_folds(offsets))
