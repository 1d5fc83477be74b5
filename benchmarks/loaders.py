"""Loading benchmark: parse, project and group synthetic check-ins written to files.

The end-to-end figure (``load_checkins`` of a CSV → ``to_trajectories`` with a
3 h split and UTM projection) is the one held to the budget: one million
check-ins in under 10 s on one core.  The process is pinned to one CPU while
timing (where the OS allows).  The naive comparisons parse a subset row by row in
Python (``csv`` + ``datetime`` + ``float``) and are extrapolated per row.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from benchmarks._timing import Row, best_time, print_table

BUDGET_SECONDS = 10.0


@contextmanager
def _one_core():
    """Pin this process to one CPU while timing (no-op where unsupported)."""
    if not hasattr(os, "sched_getaffinity"):
        yield "not pinned"
        return
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})
        yield f"pinned to CPU {min(before)}"
    finally:
        os.sched_setaffinity(0, before)


def _write_files(checkins, folder: Path) -> tuple[Path, Path]:
    """The check-ins as a generic CSV and as an original-style Foursquare TSV."""
    xy = np.column_stack([checkins.geometry.x.to_numpy(), checkins.geometry.y.to_numpy()])
    table = checkins.drop(columns="geometry").assign(lat=xy[:, 1], lng=xy[:, 0])
    table["datetime"] = checkins["datetime"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    generic = folder / "checkins.csv"
    table[["uid", "datetime", "lat", "lng", "poi_id", "category"]].to_csv(generic, index=False)
    four = table.assign(
        venue=table["poi_id"].map("{:024x}".format), category_id="4bf58dd8d48988d129951735",
        offset=540, time=checkins["datetime"].dt.strftime("%a %b %d %H:%M:%S +0000 %Y"))
    foursquare = folder / "dataset_TSMC2014_SYN.txt"
    four[["uid", "venue", "category_id", "category", "lat", "lng", "offset", "time"]].to_csv(
        foursquare, sep="\t", header=False, index=False)
    return generic, foursquare


def _naive_parse(path: Path, limit: int) -> list:
    """Row-by-row Python loading of the generic CSV: the same work as ``load_checkins``
    (parse, check ranges, build a point, sort by (user, time)), one row at a time."""
    import shapely

    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        next(reader)
        for i, (uid, stamp, lat, lng, poi, category) in enumerate(reader):
            if i == limit:
                break
            y, x = float(lat), float(lng)
            if abs(y) <= 90.0 and abs(x) <= 180.0:
                rows.append((int(uid), dt.datetime.fromisoformat(stamp), int(poi), category,
                             shapely.Point(x, y)))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def _naive_project(points: list, crs) -> list:
    """One pyproj call and one new point per row."""
    import pyproj
    import shapely

    transformer = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True)
    return [shapely.Point(*transformer.transform(p.x, p.y)) for p in points]


def _naive_foursquare_times(values: list) -> list:
    return [dt.datetime.strptime(v, "%a %b %d %H:%M:%S %z %Y") for v in values]


def run(quick: bool = False) -> None:
    import data_loaders as dl

    n_target = 20_000 if quick else 1_000_000
    per_user = 50
    checkins = dl.synthetic_checkins(users=n_target // per_user, seed=2024,
                                     checkins_per_user=per_user)
    n = len(checkins)
    naive_n = min(n, 20_000)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        generic, foursquare = _write_files(checkins, Path(tmp))
        with _one_core() as pinned:
            repeat = 3 if quick else 2
            naive_s = best_time(lambda: _naive_parse(generic, naive_n), repeat=1)
            t_load = best_time(lambda: dl.load_checkins(generic), repeat=repeat)
            rows.append(Row("load_checkins (CSV, ISO times)", n, t_load, naive_n, naive_s,
                            "naive: csv, fromisoformat, Point per row"))
            loaded = dl.load_checkins(generic)
            t_group = best_time(lambda: dl.to_trajectories(loaded, split_gap="3h"), repeat=repeat)
            rows.append(Row("to_trajectories (3 h, UTM)", n, t_group))
            from tracs.geo import to_metric

            t_proj = best_time(lambda: to_metric(loaded), repeat=repeat)
            points = list(loaded.geometry.iloc[:naive_n])
            crs = to_metric(loaded.iloc[:1000]).crs
            naive_p = best_time(lambda: _naive_project(points, crs), repeat=1)
            rows.append(Row("projection to UTM (tracs.geo)", n, t_proj, naive_n, naive_p,
                            "naive: pyproj + Point per row"))

            def end_to_end():
                return dl.to_trajectories(dl.load_checkins(generic), split_gap="3h")

            t_total = best_time(end_to_end, repeat=repeat)
            verdict = "within" if n * BUDGET_SECONDS / 1e6 >= t_total else "OVER"
            rows.append(Row("load + project + group", n, t_total, extra=(
                f"{t_total:.2f} s; {verdict} the budget of {BUDGET_SECONDS:.0f} s per 1M "
                f"({t_total * 1e6 / n:.2f} s per 1M)")))

            dl.load_foursquare(foursquare)  # warm-up of the file cache
            t_four = best_time(lambda: dl.load_foursquare(foursquare), repeat=repeat)
            rows.append(Row("load_foursquare (original TSV)", n, t_four))
            raw = checkins["datetime"].dt.strftime("%a %b %d %H:%M:%S +0000 %Y")
            subset = raw.iloc[:naive_n].tolist()
            t_parse = best_time(lambda: dl.parse_foursquare_time(raw), repeat=3)
            naive_t = best_time(lambda: _naive_foursquare_times(subset), repeat=1)
            rows.append(Row("Foursquare time parsing", n, t_parse, naive_n, naive_t,
                            "naive: datetime.strptime per row"))
    print_table(f"loaders ({n:,} synthetic check-ins, {pinned})", rows, unit="rows")


if __name__ == "__main__":
    start = time.perf_counter()
    run()
    print(f"\n(total {time.perf_counter() - start:.0f} s)")
