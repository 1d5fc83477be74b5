"""Perturbing a Dask (Geo)DataFrame: :func:`perturb`, bit for bit :func:`~tracs.dask.frames.perturb_frame`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .frames import _check_columns, _coordinates, _released
from .partitions import map_users

__all__ = ["perturb"]

_X, _Y = "__tracs_x", "__tracs_y"


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
        raise InputError("perturb: give a seed (int, SeedSequence or tracs.random.Secure(seed)); "
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
