"""Check-ins as plain arrays, grouped into trajectories: the light path of the command line.

:func:`read_points` reads a file with :func:`tracs.io.read.read_columns`, drops
and reports rows with the loaders' own checks (``data_loaders._checkins``:
``check_rows`` and ``make_report``), orders the rows by (user, trajectory
column, time) with a stable sort (ties keep their file order) and splits them
into trajectories — the steps of ``data_loaders.load_checkins`` and
``to_trajectories`` — but keeps every column as a NumPy or Arrow array: no
GeoDataFrame, no Python object per row.  A million check-ins take tens of
megabytes.  :func:`released_table` and :func:`write_table` write the released
rows back in the input's order through Arrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Points", "read_points", "released_table", "write_table", "wkb_points"]


@dataclass
class Points:
    """Check-ins in (user, trajectory, time) order, as arrays.

    Attributes
    ----------
    uid : pandas.Series
        User id of each row (int64, or text held by Arrow).
    time : numpy.ndarray of datetime64[ns]
        UTC.
    lonlat : numpy.ndarray, shape (N, 2)
        WGS84 longitude, latitude.
    source : numpy.ndarray of int64
        Line (``position == "line"``) or 0-based row of each row in the file.
    position : str
    offsets : numpy.ndarray of int64, shape (T + 1,)
        Trajectory ``t`` is rows ``offsets[t]:offsets[t + 1]``.
    report : data_loaders.LoadReport
    """

    uid: object
    time: np.ndarray
    lonlat: np.ndarray
    source: np.ndarray
    position: str
    offsets: np.ndarray
    report: object

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def trajectory_users(self):
        """The user id of each trajectory (for keyed randomness)."""
        return self.uid.iloc[self.offsets[:-1]].to_numpy()

    def same_user_as_previous_trajectory(self) -> np.ndarray:
        """``out[t - 1]``: trajectory ``t`` has the same user as trajectory ``t - 1`` (length T - 1)."""
        from data_loaders._checkins import user_order_keys

        first = user_order_keys(self.uid.iloc[self.offsets[:-1]].reset_index(drop=True))
        return first[1:] == first[:-1]

    def metric_crs(self):
        """The local UTM zone of the data (``tracs.geo.local_metric_crs``)."""
        from tracs.geo import local_metric_crs

        return local_metric_crs(self.lonlat[:, 0], self.lonlat[:, 1])

    def to_metric(self, crs) -> np.ndarray:
        """``(N, 2)`` coordinates in the metric ``crs`` (metres)."""
        from pyproj import Transformer

        t = Transformer.from_crs(4326, crs, always_xy=True)
        x, y = t.transform(self.lonlat[:, 0], self.lonlat[:, 1], errcheck=True)
        return np.column_stack([x, y])


def to_wgs84(xy: np.ndarray, crs) -> np.ndarray:
    """``(N, 2)`` metric coordinates in ``crs`` -> longitude, latitude."""
    from pyproj import Transformer

    t = Transformer.from_crs(crs, 4326, always_xy=True)
    lon, lat = t.transform(xy[:, 0], xy[:, 1], errcheck=True)
    return np.column_stack([lon, lat])


def _gap_ns(split_gap) -> int | None:
    if split_gap is None:
        return None
    import pandas as pd

    gap = pd.Timedelta(split_gap)
    if pd.isna(gap) or gap <= pd.Timedelta(0):
        raise ValueError(f"split_gap must be a positive time span, got {split_gap!r}")
    return int(gap.value)


def read_points(path, *, split_gap=None, strict: bool = False, **options) -> Points:
    """Read, check, order and group the check-ins of a file (see the module docstring).

    ``options`` are those of :func:`tracs.io.read.read_columns` (column names,
    ``input_format``, ``time_format``, ``dayfirst``, ``tz``, ``flags``).  A
    trajectory starts at each new user, each new value of the trajectory column
    (``traj``) and, with ``split_gap``, after a gap longer than it.  Repeats of a
    (user, time) pair are kept and reported, as the loaders do by default.
    """
    import pandas as pd

    from data_loaders._checkins import _user_ids, check_rows, make_report, to_number, user_order_keys

    from .read import read_columns

    gap = _gap_ns(split_gap)
    cols = read_columns(path, **options)
    lines = np.asarray(cols["lines"], dtype=np.int64)
    lat, lng = to_number(cols["lat"]), to_number(cols["lng"])
    time = np.asarray(cols["time"].array.tz_convert("UTC").tz_localize(None), dtype="datetime64[ns]") \
        if isinstance(cols["time"].dtype, pd.DatetimeTZDtype) else np.asarray(cols["time"], "datetime64[ns]")
    uid = cols["uid"]
    dropped = {}
    if len(cols["bad_lines"]):
        dropped["bad_fields"] = np.asarray(cols["bad_lines"], dtype=np.int64)
    n_rows = len(lines)
    if n_rows == 0:
        make_report(source=cols["source"], fmt=cols["fmt"], rows=0, kept=0, dropped=dropped, exact=[],
                    repeated=[], duplicates="keep", blank_lines=cols["blank_lines"],
                    position=cols["position"], notes=cols["notes"], strict=strict)  # raises
    keep = check_rows(uid.isna().to_numpy(), np.isnat(time), lat, lng, lines, dropped)
    if len(keep) < n_rows:
        uid = uid.take(keep).reset_index(drop=True)
        time, lat, lng, lines = time[keep], lat[keep], lng[keep], lines[keep]
    uid = _user_ids(uid)
    ukey = user_order_keys(uid)
    tkey = time.view(np.int64)
    keys = [tkey]
    traj_key = None
    if cols["traj"] is not None:
        traj_col = cols["extra"][cols["traj"]]
        traj_key = pd.factorize(traj_col.take(keep) if len(keep) < n_rows else traj_col, sort=True)[0]
        keys.append(traj_key)
    keys.append(ukey)
    order = np.lexsort(keys)
    if not np.array_equal(order, np.arange(len(order))):
        uid = uid.take(order).reset_index(drop=True)
        ukey, tkey, lat, lng, lines, time = ukey[order], tkey[order], lat[order], lng[order], lines[order], time[order]
        traj_key = None if traj_key is None else traj_key[order]
    same_user = np.r_[False, ukey[1:] == ukey[:-1]]
    same = same_user & np.r_[False, tkey[1:] == tkey[:-1]]
    exact = same & np.r_[False, (lat[1:] == lat[:-1]) & (lng[1:] == lng[:-1])]
    report = make_report(source=cols["source"], fmt=cols["fmt"], rows=n_rows, kept=len(lines),
                         dropped=dropped, exact=lines[exact], repeated=lines[same & ~exact],
                         duplicates="keep", blank_lines=cols["blank_lines"], position=cols["position"],
                         notes=cols["notes"], strict=strict)
    new = ~same_user
    if traj_key is not None:
        new[1:] |= traj_key[1:] != traj_key[:-1]
    if gap is not None:
        new[1:] |= np.diff(tkey) > gap
    offsets = np.r_[np.flatnonzero(new), len(lines)].astype(np.int64)
    return Points(uid=uid, time=time, lonlat=np.column_stack([lng, lat]), source=lines,
                  position=cols["position"], offsets=offsets, report=report)


def wkb_points(lonlat: np.ndarray):
    """Little-endian WKB points as an Arrow binary array, built without a geometry object."""
    import pyarrow as pa

    n = len(lonlat)
    record = np.dtype([("order", "u1"), ("kind", "<u4"), ("x", "<f8"), ("y", "<f8")])
    data = np.empty(n, dtype=record)
    data["order"], data["kind"] = 1, 1
    data["x"], data["y"] = lonlat[:, 0], lonlat[:, 1]
    offsets = np.arange(0, 21 * (n + 1), 21, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())])


def released_table(points: Points, released_lonlat, eps_point, eps_traj, *, text_times: bool):
    """The rows to publish, in the input file's order: user id, trajectory id, time, source
    line/row, released latitude/longitude, ε spent per point and per trajectory (the columns of
    ``tracs perturb``); true coordinates and venue ids are never included."""
    import pyarrow as pa

    from .write import _times_as_text

    order = np.argsort(points.source, kind="stable")
    traj = np.repeat(np.arange(len(points.offsets) - 1, dtype=np.int64), points.lengths)
    uid = points.uid.take(order)
    uid_arr = pa.array(uid.array) if not isinstance(uid.dtype, np.dtype) else pa.array(uid.to_numpy())
    times = pa.array(points.time[order]).cast(pa.timestamp("ns", tz="UTC"))
    position = "source_line" if points.position == "line" else "source_row"
    return pa.table({
        "uid": uid_arr,
        "trajectory": traj[order],
        "datetime": _times_as_text(times) if text_times else times,
        position: points.source[order],
        "lat": released_lonlat[order, 1],
        "lng": released_lonlat[order, 0],
        "epsilon_point": np.asarray(eps_point, dtype=np.float64)[order],
        "epsilon_trajectory": np.asarray(eps_traj, dtype=np.float64)[order],
    })


def write_table(table, path, fmt: str, *, progress=None, batch: int = 1 << 17) -> None:
    """Write an Arrow table of released rows as CSV, TSV, GeoParquet, GeoJSON or GPX."""
    import json

    import pyarrow as pa

    if fmt in ("CSV", "TSV"):
        from .write import write_csv

        write_csv(table, path, "," if fmt == "CSV" else "\t", progress=progress, batch=batch)
        return
    lonlat = np.column_stack([table.column("lng").to_numpy(), table.column("lat").to_numpy()])
    if fmt == "GeoParquet":
        import pyarrow.parquet as pq

        from pyproj import CRS

        geo = {"version": "1.0.0", "primary_column": "geometry",
               "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"],
                                        "crs": CRS.from_epsg(4326).to_json_dict(),
                                        "bbox": [float(v) for v in (*lonlat.min(axis=0), *lonlat.max(axis=0))]}}}
        out = table.append_column("geometry", wkb_points(lonlat))
        out = out.replace_schema_metadata({b"geo": json.dumps(geo).encode()})
        pq.write_table(out, path)
        if progress is not None:
            progress(table.num_rows)
        return
    frame = table.to_pandas()
    if fmt == "GeoJSON":
        import geopandas as gpd

        from pathlib import Path

        if Path(path).exists():
            Path(path).unlink()  # the GeoJSON driver refuses to overwrite
        gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(lonlat[:, 0], lonlat[:, 1]), crs=4326) \
            .to_file(path, driver="GeoJSON")
    elif fmt == "GPX":
        from .gpx import write_gpx

        write_gpx(path, lat=lonlat[:, 1], lon=lonlat[:, 0], times=frame["datetime"],
                  trajectory=frame["trajectory"].to_numpy(), names=frame["uid"].astype(str).to_numpy())
    else:
        raise ValueError(f"unknown output format {fmt!r}")
    if progress is not None:
        progress(table.num_rows)
    del pa
