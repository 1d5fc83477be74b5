"""The release of a batch of trajectories, as every command makes it.

:mod:`~tracs.release.steps` releases the points of a grouped batch (offsets, one key
per user) through :func:`tracs.engine.perturb_many`, in chunks of whole users when
the releaser draws from keyed streams (the registry's ``keyed``), rounds them to POIs
when asked, and gives the ε spent per point and per trajectory;
:mod:`~tracs.release.record` turns the public parameters of a release into its
sidecar (``OUTPUT.tracs.json``) and writes it.  :mod:`~tracs.release.files` is a whole
file released (:func:`release_file`: ``tracs perturb``), on the public area of
:mod:`~tracs.release.area`, the file checks of :mod:`~tracs.release.paths` and the
notes of :mod:`~tracs.release.notes`; ``tracs perturb --engine dask``
(:func:`tracs.dask.release_file`) releases each partition through the same steps.
"""

from .record import perturb_parameters, sidecar_pois, write_perturb_sidecar
from .steps import CHUNK_POINTS, Released, chunks, release_points, user_keys
from .files import FileRelease, release_file

__all__ = ["release_file", "FileRelease", "release_points", "Released", "chunks", "user_keys", "CHUNK_POINTS",
           "perturb_parameters", "write_perturb_sidecar", "sidecar_pois"]
