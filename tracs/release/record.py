"""The public record of a release: its parameters (:func:`perturb_parameters`) and its sidecar file."""

from __future__ import annotations

from pathlib import Path
from ..estimate.sidecar import sidecar_data
from ..io.parameters import write_release_sidecar

__all__ = ["perturb_parameters", "write_perturb_sidecar", "sidecar_pois"]


def perturb_parameters(method: str, epsilon: float, perturber, region, crs, *, per_trajectory: bool = False,
                       split_gap=None, round_to_pois: bool = False, anchor_given: bool = False,
                       from_data: bool = False, pois_used: bool = False) -> dict:
    """The public parameters of a release (:func:`tracs.estimate.sidecar.sidecar_data`), and where
    the region, the POIs and the anchor came from.

    Parameters
    ----------
    method, epsilon, perturber, region, crs, per_trajectory, split_gap, round_to_pois
        The registered method's name, the budget as given, the releaser built from them,
        the public region (metres) and its CRS, the time gap that splits trajectories and
        whether releases were rounded to POIs.
    anchor_given : bool
        TraCS-D's anchor was given as a point (public), not ``"center"`` / ``"corner"`` of the region.
    from_data : bool
        The region was computed from the data (``--region-from-data``: not private).
    pois_used : bool
        POIs shaped the release (the ``--pois`` file; the data's venues with ``from_data``).
    """
    region_source = "data" if from_data else "public"
    sources = {"region": region_source}
    if pois_used:
        sources["pois"] = region_source  # --pois with --region; the data's venues otherwise
    if getattr(perturber, "anchor_point", None) is not None:
        # an anchor given as X,Y is public; "center" / "corner" are those of the region
        sources["anchor"] = "public" if anchor_given else region_source
    return sidecar_data(method=method, epsilon=epsilon, per_trajectory=per_trajectory,
                        region=region, crs=crs, perturber=perturber, split_gap=split_gap,
                        round_to_pois=bool(round_to_pois), sources=sources)


def write_perturb_sidecar(output, data: dict, *, digest: str | None = None, rows=None, pois=None) -> Path:
    """Write the sidecar of the release ``output`` (``OUTPUT.tracs.json``) and return its path.

    The one function a release's sidecar is written with.  ``data``: the parameters
    (:func:`perturb_parameters`).  The digest of the rows is ``digest``
    (:func:`tracs.io.batch_files.released_digest`: 'tracs perturb' writes the sidecar before it
    renames the release into place, so a crash leaves at worst a new sidecar the old
    release's digest refuses), else that of the frame ``rows``, else that of ``output``
    read back (:func:`tracs.io.parameters.write_release_sidecar`).  ``pois``: the public POI space
    of the release (:func:`sidecar_pois`), whose digest and count the sidecar records.
    """
    return write_release_sidecar(output, data, digest=digest, rows=rows, pois=pois)


def sidecar_pois(public):
    """The POI space whose digest a release's sidecar records: the public one of ``--pois``
    (:class:`tracs.release.area.Public`), none when the POIs were the data's venues
    (``--region-from-data``: nothing of the data is recorded beyond the parameters)."""
    return None if public.from_data else public.pois
