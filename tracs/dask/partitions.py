"""Partitions of whole users: which users span partitions, global row numbers, :func:`map_users`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .frames import check_user_ids, id_kind

__all__ = ["map_users", "needs_shuffle", "survey", "with_row_numbers"]

_ROW = "__tracs_row"      # global position of a row in the input
_INDEX = "__tracs_index"  # the input's index, carried through shuffles


def _users(part, user):
    ids = part[user]
    return pd.Series([(pd.unique(ids.to_numpy()), id_kind(ids), len(ids))], dtype=object)


def _pandas_sources(ddf) -> list:
    """The pandas frames ``ddf`` was built from (``dd.from_pandas``), as they were given.

    Dask turns an object column into text when it builds the frame
    (``dataframe.convert-string``): ``7`` and ``"7"`` both arrive as ``"7"``, so the
    types of the ids are checked on the frames given.
    """
    try:
        from dask.dataframe.dask_expr.io.io import FromPandas
    except ImportError:  # another layout of dask's expressions: only the partitions are checked
        return []
    frames = [node.frame for node in ddf.expr.walk() if isinstance(node, FromPandas)]
    return [getattr(frame, "_data", frame) for frame in frames]  # (dask may wrap the frame)


def _survey(ddf, user: str, caller: str):
    """``(spans, lengths)``: whether a user spans partitions, and the partitions' row counts
    (one pass over the user column; ids of more than one type refused)."""
    found = ddf[user].to_frame().map_partitions(_users, user, meta=(None, object)).compute().tolist()
    sources = [id_kind(frame[user]) for frame in _pandas_sources(ddf) if user in frame.columns]
    check_user_ids([*sources, *(kind for _, kind, _ in found)], column=user, caller=caller)
    lengths = np.array([n for _, _, n in found], dtype=np.int64)
    seen: set = set()
    for values, _, _ in found:
        for value in values:
            if value in seen:
                return True, lengths
        seen.update(values)
    return False, lengths


def survey(ddf, user: str = "uid", caller: str = "survey") -> bool:
    """Whether some user's rows lie in more than one partition; reads only ``user``.

    Refuses (:func:`~tracs.dask.frames.check_user_ids`) ids of more than one type,
    within a partition or across partitions, before anything is computed.
    """
    return _survey(ddf, user, caller)[0]


def needs_shuffle(ddf, user: str = "uid") -> bool:
    """Whether some user's rows lie in more than one partition (reads only ``user``; see :func:`survey`)."""
    return survey(ddf, user, caller="needs_shuffle")


def _numbered(ddf, lengths=None):
    """``ddf`` with each row's global position (``_ROW``) and its index (``_INDEX``) as columns."""
    if lengths is None:
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
            raise InputError("map_users: a function that leaves rows out must return the others "
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
        raise InputError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    spans, lengths = _survey(ddf, user, "map_users")  # refuses ids of more than one type, whatever ``shuffle``
    spans = spans if shuffle == "auto" else bool(shuffle)
    numbered, starts = _numbered(ddf, lengths)
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
