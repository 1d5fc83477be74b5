"""Small files in the real layouts of Geolife, T-Drive and the Porto taxi CSV, and of a GPX
track, a GeoPackage of lines and tables of check-ins, written by the tests and by
``examples/data_docs.py`` (the outputs shown in ``docs/data.md``).

Nothing here is data of those sets: the points are made up, the layouts are the
published ones (Geolife's 6 header lines and CRLF lines, T-Drive's headerless
``taxi_id,datetime,lon,lat``, Porto's quoted ``train.csv`` with ``POLYLINE``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

GEOLIFE_HEADER = ("Geolife trajectory\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n"
                  "0,2,255,My Track,0,0,2,8421376\r\n0\r\n")
PORTO_HEADER = '"TRIP_ID","CALL_TYPE","ORIGIN_CALL","ORIGIN_STAND","TAXI_ID","TIMESTAMP","DAY_TYPE","MISSING_DATA","POLYLINE"\n'


def plt_line(lat, lon, alt, date, clock) -> str:
    return f"{lat},{lon},0,{alt},39744.1,{date},{clock}\r\n"


def write_geolife(root: Path) -> Path:
    """``root/Data``: user 000 with two trajectories, user 010 with one holding bad lines.

    Bad lines of ``010/Trajectory/20081024020000.plt``: 8 (latitude ``bad``),
    9 (three fields), 10 (hour 25), 11 (latitude 95).
    """
    files = {
        "000/Trajectory/20081023025304.plt": [plt_line(39.984702, 116.318417, 492, "2008-10-23", "02:53:04"),
                                              plt_line(39.984683, 116.31845, 492, "2008-10-23", "02:53:10"),
                                              plt_line(39.984686, 116.318417, 492, "2008-10-23", "02:53:15")],
        "000/Trajectory/20081024010000.plt": [plt_line(39.99, 116.30, -777, "2008-10-24", "01:00:00"),
                                              plt_line(39.991, 116.301, -777, "2008-10-24", "01:00:05")],
        "010/Trajectory/20081024020000.plt": [plt_line(40.0, 116.4, 100, "2008-10-24", "02:00:00"),
                                              "bad,116.4,0,100,39745.1,2008-10-24,02:00:05\r\n",
                                              "40.0,116.4,0\r\n",
                                              plt_line(40.0, 116.4, 100, "2008-10-24", "25:00:00"),
                                              plt_line(95.0, 116.4, 100, "2008-10-24", "02:00:20"),
                                              plt_line(40.001, 116.401, 100, "2008-10-24", "02:00:25")],
    }
    for name, lines in files.items():
        path = root / "Data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((GEOLIFE_HEADER + "".join(lines)).encode())
    (root / "Data" / "010" / "labels.txt").write_text("Start Time\tEnd Time\tTransportation Mode\n")
    return root


def write_tdrive(folder: Path) -> Path:
    """Taxis 1 and 7 (file ``7.txt`` writes the id ``007``) and an empty ``10.txt``.

    ``1.txt`` line 3 repeats line 2 exactly; line 4 repeats its taxi and time at
    another position; ``7.txt`` line 2 repeats line 1; ``1.txt`` line 5 has a bad longitude.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1.txt").write_text("1,2008-02-02 15:36:08,116.51172,39.92123\n"
                                  "1,2008-02-02 15:46:08,116.51135,39.93883\n"
                                  "1,2008-02-02 15:46:08,116.51135,39.93883\n"
                                  "1,2008-02-02 15:46:08,116.6,39.9\n"
                                  "1,2008-02-02 15:56:08,east,39.9\n")
    (folder / "7.txt").write_text("007,2008-02-02 13:30:44,116.47191,39.90718\n"
                                  "007,2008-02-02 13:30:44,116.47191,39.90718\n")
    (folder / "10.txt").write_text("")
    return folder


def porto_row(trip, taxi, start, points, *, missing=False, polyline=None) -> str:
    line = polyline if polyline is not None else json.dumps(points, separators=(",", ":"))
    return f'"{trip}","C","","","{taxi}","{start}","A","{missing}","{line}"\n'


def write_porto(path: Path) -> Path:
    """Seven trips; lines: 2 three points, 3 one point, 4 empty, 5 MISSING_DATA=True,
    6 bad TIMESTAMP, 7 an unpaired coordinate, 8 ids with leading zeros and a latitude of 91.5,
    9 too few fields."""
    rows = [
        porto_row("1372636858620000589", "20000589", 1372636858,
                  [[-8.618643, 41.141412], [-8.618499, 41.141376], [-8.620326, 41.14251]]),
        porto_row("1372637303620000596", "20000596", 1372637303, [[-8.639847, 41.159826]]),
        porto_row("1372665673620000353", "20000353", 1372665673, []),
        porto_row("1372637091620000337", "20000337", 1372637091, [[-8.645994, 41.18049], [-8.645949, 41.180517]],
                  missing=True),
        porto_row("1372637091620000338", "20000337", "noon", [[-8.645994, 41.18049]]),
        porto_row("1372637091620000339", "20000337", 1372637091, None, polyline="[[-8.645994,41.18049],[-8.6]]"),
        porto_row("0001", "00042", 1372637091, [[-8.6, 41.1], [-8.6, 91.5]]),
        '"1","C","","","2"\n',
    ]
    path.write_text(PORTO_HEADER + "".join(rows))
    return path


def write_porto_many(path: Path, trips: int, *, seed: int = 0) -> tuple[Path, int]:
    """``trips`` random trips (0–40 points each) of 30 taxis; returns the path and the point count."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 41, trips)
    rows = []
    for k, n in enumerate(lengths):
        xy = np.round(np.column_stack([-8.6 + 0.05 * rng.random(n), 41.15 + 0.05 * rng.random(n)]), 6)
        rows.append(porto_row(f"{1372636858620000000 + k}", f"{20000000 + k % 30:08d}",
                              1372636858 + 60 * (k // 30), xy.tolist()))
    path.write_text(PORTO_HEADER + "".join(rows))
    return path, int(lengths.sum())


def write_gpx(path: Path) -> Path:
    """One track of two segments around Munich (3 and 2 points); the second point has no ``<time>``."""
    def point(lat, lon, time=None):
        when = f"<time>{time}</time>" if time else ""
        return f'<trkpt lat="{lat}" lon="{lon}"><ele>520</ele>{when}</trkpt>'

    segments = [[point(48.137, 11.575, "2024-03-01T08:00:00Z"), point(48.138, 11.577),
                 point(48.139, 11.579, "2024-03-01T08:00:20Z")],
                [point(48.150, 11.560, "2024-03-01T09:00:00Z"), point(48.151, 11.562, "2024-03-01T09:00:10Z")]]
    body = "".join(f"<trkseg>{''.join(seg)}</trkseg>" for seg in segments)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                    '<gpx version="1.1" creator="tracs tests" xmlns="http://www.topografix.com/GPX/1/1">'
                    f"<trk><name>ride</name>{body}</trk></gpx>\n")
    return path


def write_lines(path: Path) -> Path:
    """Two LineStrings without times around Munich, of users ``a`` (3 vertices) and ``b`` (2)."""
    import geopandas as gpd
    from shapely.geometry import LineString

    lines = [LineString([(11.575, 48.137), (11.577, 48.138), (11.579, 48.139)]),
             LineString([(11.560, 48.150), (11.562, 48.151)])]
    gpd.GeoDataFrame({"user": ["a", "b"]}, geometry=lines, crs="EPSG:4326").to_file(path, driver="GPKG")
    return path


def write_epoch_csv(path: Path) -> Path:
    """Devices ``0042`` and ``0107`` in Porto, times in Unix epoch milliseconds (column ``ts_ms``)."""
    path.write_text("device,ts_ms,lat,lon\n"
                    "0042,1709251200000,41.1496,-8.6110\n"
                    "0042,1709251260000,41.1510,-8.6090\n"
                    "0107,1709254800000,41.1580,-8.6290\n"
                    "0107,1709254830000,41.1590,-8.6300\n")
    return path


def write_date_time_csv(path: Path) -> Path:
    """Two visitors in Lisbon; the date and the local time (no zone) in separate columns."""
    path.write_text("user,date,time,lat,lon\n"
                    "ana,2024-03-01,09:00:00,38.7139,-9.1394\n"
                    "ana,2024-03-01,09:05:00,38.7169,-9.1399\n"
                    "ana,2024-03-01,09:12:00,38.7108,-9.1336\n"
                    "rui,2024-03-02,18:30:00,38.6916,-9.2160\n"
                    "rui,2024-03-02,18:41:00,38.6970,-9.2063\n")
    return path


def write_layouts_csv(path: Path) -> Path:
    """Three visitors in Lisbon, each writing times their own way (month first, day first, ISO
    8601), local times around the autumn change of the clocks; line 8 is not a date."""
    path.write_text("user,time,lat,lon\n"
                    "ana,10/26/2024 18:00,38.7139,-9.1394\n"
                    "ana,10/27/2024 01:30,38.7169,-9.1399\n"
                    "rui,26/10/2024 09:00,38.6916,-9.2160\n"
                    "rui,27/10/2024 10:15,38.6970,-9.2063\n"
                    "eva,2024-03-31 00:45,38.7223,-9.1393\n"
                    "eva,2024-03-31 01:30,38.7250,-9.1420\n"
                    "eva,2024-03-31 soon,38.7260,-9.1430\n"
                    "eva,2024-03-31 02:10,38.7270,-9.1440\n")
    return path


def write_untimed_csv(path: Path) -> Path:
    """Stops of two users in Lisbon, in the file's order, without a time column."""
    path.write_text("user,lat,lon\n"
                    "ana,38.7139,-9.1394\n"
                    "ana,38.7169,-9.1399\n"
                    "rui,38.6916,-9.2160\n"
                    "rui,38.6970,-9.2063\n")
    return path
