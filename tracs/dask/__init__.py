"""Perturb trajectories held in a (partitioned) data frame, in process or on a Dask cluster.

:func:`perturb_frame` perturbs a pandas ``DataFrame`` (or GeoDataFrame) of points:
rows are grouped per user (and per trajectory id, if given), ordered in time and
perturbed as a :class:`tracs.Batch` keyed by the users' ids (:func:`tracs.engine.perturb_many`).
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
partitioning, row order and index.  User ids of more than one type in the user
column (``7`` and ``"7"``, which name one keyed stream) are refused before anything
is computed (:func:`check_user_ids`).

Modules: :mod:`~tracs.dask.frames` (the in-process definition, the check of id
types), :mod:`~tracs.dask.partitions` (users across partitions, row numbers,
:func:`map_users`), :mod:`~tracs.dask.perturbation` (:func:`perturb`),
:mod:`~tracs.dask.estimation` (:func:`estimate`), :mod:`~tracs.dask.partition_denoising` (:func:`denoise`: the prior
fitted over the partitions, every partition denoised given it), :mod:`~tracs.dask.folders` (:func:`release_file`: a
(Geo)Parquet folder released into a folder of GeoParquet parts, ``tracs perturb --engine dask``) and
:mod:`~tracs.dask.partition_release` (its partitions, as the in-process release reads and writes a file).

What travels to the workers: the perturber (its public region, ε, POIs), the seed
and the rows of each partition; nothing else.  Dask is imported only inside the
functions that run on it, never by ``import tracs`` (install ``tracs[dask]``).
"""

from __future__ import annotations

from .partition_denoising import denoise
from .estimation import estimate
from .folders import FolderRelease, release_file
from .frames import check_user_ids, perturb_frame
from .partitions import map_users, needs_shuffle, with_row_numbers
from .perturbation import perturb

__all__ = ["perturb", "perturb_frame", "map_users", "needs_shuffle", "with_row_numbers", "estimate", "denoise",
           "check_user_ids", "release_file", "FolderRelease"]
