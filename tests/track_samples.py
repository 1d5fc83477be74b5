"""Small files in the real layouts of Geolife, T-Drive and the Porto taxi CSV, written by the tests.

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
