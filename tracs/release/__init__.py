"""The release of a batch of trajectories, as every command makes it.

:mod:`~tracs.release.steps` releases the points of a grouped batch (offsets, one key
per user) through :func:`tracs.engine.perturb_many`, in chunks of whole users when
the releaser draws from keyed streams (:func:`tracs.releaser.takes_keys`), rounds
them to POIs when asked, and gives the ε spent per point and per trajectory;
:mod:`~tracs.release.record` turns the public parameters of a release into its
sidecar (``OUTPUT.tracs.json``) and writes it.  ``tracs perturb`` in process and on
Dask (:mod:`tracs.cli._release_files`, :mod:`tracs.cli.dask_perturb`) release
through both.
"""

from .record import perturb_parameters, write_perturb_sidecar
from .steps import CHUNK_POINTS, Released, chunks, release_points, user_keys

__all__ = ["release_points", "Released", "chunks", "user_keys", "CHUNK_POINTS", "perturb_parameters",
           "write_perturb_sidecar"]
