"""Run tracs on every core of one machine, bit-identical to one core.

``workers=`` in :func:`perturb_many`, :func:`round_points`, :func:`point_errors`,
:func:`trajectory_errors` and :func:`average_error` (and in the perturbers' and
baselines' ``perturb_many``) runs the batch on that many threads (``-1`` / ``None``:
all cores).  Batches are cut into contiguous chunks of whole trajectories, each
run by the library's serial code, and put back together in order.  Because each
trajectory draws from its own keyed stream (:mod:`tracs.random`), the released
points are bit for bit those of one worker; see :mod:`tracs.engine.batch`.

For more than one machine see :mod:`tracs.dask`.
"""

from ._pool import map_ordered, point_chunks, resolve_workers, trajectory_chunks
from .batch import average_error, perturb_many, point_errors, round_points, trajectory_errors

__all__ = ["perturb_many", "round_points", "point_errors", "trajectory_errors", "average_error",
           "resolve_workers", "trajectory_chunks", "point_chunks", "map_ordered"]
