"""MovingPandas and scikit-mobility containers in and out of tracs.

* MovingPandas (``pip install "tracs[movingpandas]"``): :func:`from_movingpandas`
  turns a ``TrajectoryCollection`` (or one ``Trajectory``) into the point
  GeoDataFrame tracs reads (``uid``, ``trajectory``, ``datetime``, geometry), and
  :func:`perturb_movingpandas` releases every trajectory through
  :func:`tracs.perturb_gdf` and returns a ``TrajectoryCollection`` of the releases,
  with the same trajectory ids, object ids and times.
* scikit-mobility: a ``TrajDataFrame`` is a pandas frame with ``lat``, ``lng``,
  ``datetime``, ``uid`` (and optionally ``tid``) columns.  :func:`from_skmob` reads
  those columns from any such frame (no import of scikit-mobility needed) and
  :func:`to_skmob` writes them back, as a ``TrajDataFrame`` when scikit-mobility
  imports, otherwise as a plain ``pandas.DataFrame`` with the same columns.
  No ``skmob`` extra is offered: no release of scikit-mobility installs and imports
  beside tracs' pandas >= 2.1, geopandas >= 0.14 and shapely >= 2.  Releases 1.2.3,
  1.3.0 and 1.3.1 pin ``pandas<2.0.0`` (and ``geopandas<0.10`` / ``<0.11``); releases
  1.1.2, 1.2.1 and 1.2.2 declare no pins and install, but fail on import with
  shapely 2 (``from shapely.ops import cascaded_union``, removed in shapely 2.0).  The
  adapter therefore works on the column layout, and builds a ``TrajDataFrame`` only
  when scikit-mobility happens to import.
"""

from __future__ import annotations

import numpy as np

from .gdf import perturb_gdf
from .errors import InputError, InputTypeError

__all__ = ["from_movingpandas", "perturb_movingpandas", "from_skmob", "to_skmob", "perturb_skmob"]

_MPD_HINT = "pass a movingpandas.TrajectoryCollection or Trajectory (pip install 'tracs[movingpandas]')"


def _trajectories(collection):
    import movingpandas as mpd

    if isinstance(collection, mpd.Trajectory):
        return [collection]
    if isinstance(collection, mpd.TrajectoryCollection):
        return list(collection.trajectories)
    raise InputTypeError(f"expected a MovingPandas TrajectoryCollection or Trajectory, got "
                         f"{type(collection).__name__}; {_MPD_HINT}")


def from_movingpandas(collection):
    """The points of a MovingPandas collection as a GeoDataFrame in trajectory and time order.

    Columns ``uid`` (the trajectory's ``obj_id``, else its id), ``trajectory`` (its
    id), ``datetime`` (the time index, UTC when the index is time-zone aware) and
    the trajectory's other columns; the CRS is the collection's.
    """
    import geopandas as gpd
    import pandas as pd

    frames = []
    for traj in _trajectories(collection):
        df = traj.df.copy()
        times = df.index
        df = df.reset_index(drop=True)
        df.insert(0, "datetime", np.asarray(times))
        df.insert(0, "trajectory", traj.id)
        df.insert(0, "uid", traj.obj_id if traj.obj_id is not None else traj.id)
        frames.append(df)
    if not frames:
        raise InputError("the collection holds no trajectories")
    crs = frames[0].crs if hasattr(frames[0], "crs") else None
    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), geometry="geometry", crs=crs)


def perturb_movingpandas(collection, perturber, *, rng=None):
    """Release every trajectory of a MovingPandas collection; return the releases as a collection.

    The perturber's region is in the collection's CRS (see :func:`tracs.perturb_gdf`);
    each object's (user's) trajectories are keyed by its ``obj_id``, so a user's
    release depends only on that user's trajectories, the public perturber and the
    seed.  Trajectory ids, object ids, times and the other columns are kept.
    """
    import movingpandas as mpd

    points = from_movingpandas(collection)
    released = perturb_gdf(points, perturber, rng=rng, user="uid", time="datetime")
    released = released.set_index("datetime")
    return mpd.TrajectoryCollection(released, "trajectory", obj_id_col="uid")


def from_skmob(frame):
    """A scikit-mobility ``TrajDataFrame`` (or any frame with its columns) as a WGS84 GeoDataFrame.

    Reads ``lat``, ``lng``, ``datetime``, ``uid`` and ``tid`` when present; keeps
    every other column and the row order.
    """
    import geopandas as gpd
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InputTypeError(f"expected a scikit-mobility TrajDataFrame or a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("lat", "lng", "uid") if c not in frame.columns]
    if missing:
        raise InputError(f"a TrajDataFrame needs the columns lat, lng, uid; missing: {', '.join(missing)} "
                         f"(found: {', '.join(map(str, frame.columns))})")
    data = pd.DataFrame(frame).drop(columns=["lat", "lng"])
    if "tid" in data.columns:
        data = data.rename(columns={"tid": "trajectory"})
    return gpd.GeoDataFrame(data, geometry=gpd.points_from_xy(frame["lng"], frame["lat"]), crs="EPSG:4326")


def to_skmob(gdf):
    """A WGS84 point GeoDataFrame (e.g. from :func:`tracs.perturb_gdf`) in scikit-mobility's layout.

    Returns a ``skmob.TrajDataFrame`` when scikit-mobility imports, otherwise a
    ``pandas.DataFrame`` with the same columns (``lat``, ``lng``, ``datetime``,
    ``uid``, ``tid``).
    """
    import pandas as pd

    wgs = gdf.to_crs("EPSG:4326")
    out = pd.DataFrame(wgs.drop(columns=wgs.geometry.name))
    out.insert(0, "lng", wgs.geometry.x.to_numpy())
    out.insert(0, "lat", wgs.geometry.y.to_numpy())
    if "trajectory" in out.columns:
        out = out.rename(columns={"trajectory": "tid"})
    try:
        import skmob
    except Exception:  # not installed, or an install that does not import beside pandas 2 / shapely 2
        return out
    return skmob.TrajDataFrame(out)


def perturb_skmob(frame, perturber, *, rng=None):
    """Release a TrajDataFrame's points (region in degrees); same rows, columns and order."""
    return to_skmob(perturb_gdf(from_skmob(frame), perturber, rng=rng, user="uid",
                                time="datetime" if "datetime" in frame.columns else None))
