"""Collection: the collector's ingest over HTTP and the device's releases with their state committed.

Workload: ``tracs serve -m METHOD -e 2 --region tky`` in its own process on 127.0.0.1
with its SQLite database in a temporary folder (write-ahead log, ``synchronous=NORMAL``:
every batch is committed before it is answered) receives batches of 1,000 valid reports
(TraCS-C: lattice values; TraCS-D: trajectories of 100 points, each the release of its
indices about the one before) of 20 enrolled devices, every check on: body limit,
token, protocol, parameters digest, ε, lattice, region, sequence already stored, the
devices' ledgers.  Clients use httpx, one kept-alive connection each (4 clients: each
its own devices; the collector commits the batches that wait together).  Reports/s is
the reports stored over the wall time of the posts; latency is that of one POST as
the client sees it.  Each collector gets 300 fresh batches (``--quick``: 30) of TraCS-C
or TraCS-D, as Arrow IPC or JSON: a third from one client, a third from 4 clients at
once, a third from one client paced at 20,000 reports/s; its peak resident memory is
read from ``/proc`` at the end.  PostgreSQL: a throwaway server (``initdb``, ``pg_ctl``,
synced commits) shared by 2 collector processes, 4 clients posting a third of the
batches to them in turn (TraCS-C, Arrow).  Yardstick, measured in the same run: a bare
Starlette endpoint on uvicorn that only parses JSON batches of columns and inserts their
rows into SQLite (:func:`bare_endpoint`), 4 clients, a third of the batches; each ingest
figure is also given as a multiple of it, which a loaded machine changes less than the
figures.  Estimate refresh: the collector's TraCS-C estimate
(:mod:`tracs.collect.lattice_counts`) on 64 × 64 cells after one more batch, with 10^6
reports counted (``--quick``: 10^5): warm-started, and exact (a fit afresh); and the first fit.  Memory: ``tracs serve`` over a database of 10^7
TraCS-C reports (``--quick``: 10^5) written in process, its peak resident memory after
start, after an estimate on 64 × 64 cells, after a Parquet export.  Device: ``Device.report`` of TraCS-D fixes,
the state committed after every report, then in transactions of 100 reports: 300
device reports (60).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "benchmark-admin"
BATCH = 1000


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db, port: int, method: str):
    import httpx

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "tracs.cli", "serve", "-m", method, "-e", "2", "--region",
                             "tky", "--db", str(db), "--port", str(port), "--admin-token", ADMIN],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("tracs serve did not start")


def bare_endpoint(db: str, port: int) -> None:
    """The yardstick of the ingest figures: a Starlette endpoint on uvicorn that only parses a JSON
    batch of columns and inserts its rows into a SQLite table keyed by ``(device, sequence)``
    (write-ahead log, ``synchronous=NORMAL``, a commit per batch): no token, no check, no ledger."""
    import json
    import sqlite3
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    store = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    store.execute("PRAGMA journal_mode=WAL")
    store.execute("PRAGMA synchronous=NORMAL")
    store.execute("CREATE TABLE reports (device TEXT NOT NULL, sequence INTEGER NOT NULL, trajectory INTEGER NOT NULL, "
                  "idx INTEGER NOT NULL, time INTEGER NOT NULL, x REAL NOT NULL, y REAL NOT NULL, i INTEGER NOT NULL, "
                  "j INTEGER NOT NULL, epsilon REAL NOT NULL, PRIMARY KEY (device, sequence)) WITHOUT ROWID")
    lock = threading.Lock()
    names = ("sequence", "trajectory", "index", "time", "x", "y", "i", "j", "epsilon")

    def insert(body: bytes) -> int:
        batch = json.loads(body)
        r = batch["reports"]
        rows = list(zip([batch["device"]] * len(r["sequence"]), *(r[name] for name in names)))
        with lock:
            store.execute("BEGIN IMMEDIATE")
            store.executemany("INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
            store.execute("COMMIT")
        return len(rows)

    async def reports(request):
        return JSONResponse({"accepted": await run_in_threadpool(insert, await request.body()), "rejected": []})

    async def health(request):
        return JSONResponse({"stored": store.execute("SELECT count(*) FROM reports").fetchone()[0]})

    app = Starlette(routes=[Route("/v1/reports", reports, methods=["POST"]), Route("/v1/health", health)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _bare_rate(n_batches: int) -> float:
    """Reports/s of :func:`bare_endpoint` over the JSON bodies of ``n_batches`` TraCS-C batches, 4 clients."""
    import httpx

    from tracs.collect import Parameters
    from tracs.public import city_box

    params = Parameters.build("tracs-c", 2.0, city_box("tky"))
    devices = [f"device-{k}" for k in range(20)]
    bodies = _bodies(params, n_batches, devices, "json")
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen([sys.executable, "-c", "import sys; from benchmarks.collect import bare_endpoint; "
                                 "bare_endpoint(sys.argv[1], int(sys.argv[2]))", str(Path(folder) / "bare.sqlite"),
                                 str(port)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            rate, _ = _post_all([f"http://127.0.0.1:{port}"], bodies, {d: "-" for d in devices}, 4, "json")
        finally:
            proc.kill()
            proc.wait()
    return rate


def _lattice_walks(params, n_batches: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, x, y)`` of ``n_batches`` batches (rows) of valid releases: TraCS-C lattice values;
    TraCS-D trajectories of 100 points, each point the release of its indices about the one before."""
    model = params.perturber()
    (x0, hx, nx), (y0, hy, ny) = params.release["lattice"]
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, int(nx), (n_batches, BATCH)), rng.integers(0, int(ny), (n_batches, BATCH))
    if getattr(model, "anchor_point", None) is None:
        return i, j, x0 + i * hx, y0 + j * hy
    walks = i.reshape(-1, 100), j.reshape(-1, 100)
    points = np.empty((walks[0].shape[0], 100, 2))
    reference = np.broadcast_to(np.asarray(model.anchor_point, dtype=np.float64), (len(points), 2))
    for k in range(100):
        reference = points[:, k] = model.lattice.points_about(reference, walks[0][:, k], walks[1][:, k])
    return i, j, points[..., 0].reshape(n_batches, BATCH), points[..., 1].reshape(n_batches, BATCH)


def _bodies(params, n_batches: int, devices: list[str], kind: str) -> list[tuple[str, bytes]]:
    """Valid batches of 1,000 reports (10 trajectories of 100), as Arrow IPC or JSON bodies."""
    import json

    from tracs.collect.protocol import encode_arrow

    i, j, x, y = _lattice_walks(params, n_batches)
    out = []
    for b in range(n_batches):
        device = devices[b % len(devices)]
        first = (b // len(devices)) * BATCH
        sequence = np.arange(first, first + BATCH)
        reports = {"sequence": sequence, "trajectory": sequence // 100, "index": sequence % 100,
                   "time": 1_700_000_000_000_000_000 + sequence, "x": x[b], "y": y[b], "i": i[b], "j": j[b],
                   "epsilon": np.full(BATCH, params.epsilon)}
        body = {"device": device, "protocol": params.protocol, "parameters": params.digest,
                "method": params.method, "reports": reports}
        if kind == "arrow":
            out.append((device, encode_arrow(body)))
        else:
            body["reports"] = {name: column.tolist() for name, column in reports.items()}
            out.append((device, json.dumps(body).encode()))
    return out


def _post_all(urls: list, bodies: list, tokens: dict, clients: int, kind: str,
              rate: float | None = None) -> tuple[float, np.ndarray]:
    """Post ``bodies`` from ``clients`` threads (each its own kept-alive connection to one of
    ``urls`` in turn, and its own devices), at most ``rate`` reports/s in all when given:
    ``(reports/s, latencies)``."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    from tracs.collect.protocol import ARROW_TYPE

    media = ARROW_TYPE if kind == "arrow" else "application/json"

    def post(k):
        share, url = shares[k], urls[k % len(urls)]
        out = []
        with httpx.Client(timeout=60) as client:
            begin = time.perf_counter()
            for n, (device, body) in enumerate(share):
                if rate:
                    wait = n * BATCH * clients / rate - (time.perf_counter() - begin)
                    if wait > 0:
                        time.sleep(wait)
                t = time.perf_counter()
                answer = client.post(url + "/v1/reports", content=body,
                                     headers={"Authorization": f"Bearer {tokens[device]}", "Content-Type": media})
                out.append(time.perf_counter() - t)
                assert answer.status_code == 200 and answer.json()["accepted"] == BATCH, answer.text[:300]
        return out

    shares = [[b for b in bodies if int(b[0].rsplit("-", 1)[1]) % clients == k] for k in range(clients)]
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = np.concatenate([np.array(x) for x in pool.map(post, range(clients))])
    return len(bodies) * BATCH / (time.perf_counter() - start), latencies


def _ingest(method: str, n_batches: int, kind: str, plan=((1, None), (4, None), (1, 20_000)), db=None,
            processes: int = 1) -> tuple[float, dict]:
    """Each ``(clients, rate)`` of ``plan`` posts its share of ``n_batches`` fresh batches to
    ``processes`` collectors of ``db`` (default: a new SQLite file):
    ``(peak MB of the first, {(clients, rate): (reports/s, p50, p99)})``."""
    import httpx

    from tracs.collect import Parameters

    with tempfile.TemporaryDirectory() as folder:
        urls, procs = [], []
        try:
            for _ in range(processes):
                port = _free_port()
                urls.append(f"http://127.0.0.1:{port}")
                procs.append(_start(db or Path(folder) / "reports.sqlite", port, method))
            url, proc = urls[0], procs[0]
            with httpx.Client(timeout=60) as client:
                params = Parameters.from_json(client.get(url + "/v1/parameters").content)
                devices = [f"device-{k}" for k in range(20)]
                tokens = {d: client.post(url + "/v1/devices", json={"device": d},
                                         headers={"Authorization": f"Bearer {ADMIN}"}).json()["token"]
                          for d in devices}
                bodies = _bodies(params, n_batches, devices, kind)
                runs, share = {}, n_batches // len(plan)
                for k, (clients, rate) in enumerate(plan):
                    runs[clients, rate] = _post_all(urls, bodies[k * share:(k + 1) * share], tokens, clients, kind,
                                                    rate)
                stored = client.get(url + "/v1/health").json()["stored"]
                assert stored == share * len(plan) * BATCH
                runs["peak MB"] = _peak_rss(proc.pid) / 1e6
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
    peak = runs.pop("peak MB")
    return peak, {key: (rate, float(np.percentile(lat, 50)), float(np.percentile(lat, 99)))
                  for key, (rate, lat) in runs.items()}


@contextlib.contextmanager
def _postgres():
    """A throwaway PostgreSQL server (initdb, pg_ctl; as the user postgres when run as root):
    its URL, or ``None`` when there is none."""
    import glob
    import shutil

    folders = ["/usr/local/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    found = [f for f in folders if os.access(os.path.join(f, "pg_ctl"), os.X_OK)]
    runuser = shutil.which("runuser")
    if not found or (os.geteuid() == 0 and runuser is None):
        yield None
        return
    run_as = [runuser, "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = tempfile.mkdtemp(prefix="tracs-pg-")
    if run_as:
        shutil.chown(folder, "postgres")
    data, port = os.path.join(folder, "data"), _free_port()
    subprocess.run([*run_as, os.path.join(found[0], "initdb"), "-D", data, "-A", "trust", "-U", "tracs"],
                   check=True, capture_output=True)
    subprocess.run([*run_as, os.path.join(found[0], "pg_ctl"), "-D", data, "-o",
                    f"-p {port} -k {folder} -c listen_addresses=127.0.0.1", "-l", os.path.join(folder, "log"),
                    "-w", "start"], check=True, capture_output=True)
    try:
        yield f"postgresql://tracs@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*run_as, os.path.join(found[0], "pg_ctl"), "-D", data, "-m", "fast", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _peak_rss(pid: int) -> float:
    """The peak resident memory of process ``pid`` in bytes (Linux; NaN elsewhere)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(float(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return float("nan")


def _device(n: int) -> tuple[float, float]:
    import pandas as pd

    from tracs.collect import Device, Parameters
    from tracs.public import city_box

    params = Parameters.build("tracs-d", 2.0, city_box("tky"))
    (lon0, lat0, lon1, lat1) = params.box
    rng = np.random.default_rng(1)
    lat, lon = rng.uniform(lat0, lat1, n), rng.uniform(lon0, lon1, n)
    times = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(np.arange(n), unit="s")
    with tempfile.TemporaryDirectory() as folder:
        device = Device(params, "u", 1, Path(folder) / "each.sqlite")
        device.report(lat[0], lon[0], times[0])  # kernels loaded
        start = time.perf_counter()
        for k in range(1, n):
            device.report(lat[k], lon[k], times[k])
        each = (n - 1) / (time.perf_counter() - start)
        device.close()
        device = Device(params, "u", 1, Path(folder) / "batched.sqlite")
        start = time.perf_counter()
        for first in range(0, n, 100):
            with device.transaction():
                for k in range(first, min(first + 100, n)):
                    device.report(lat[k], lon[k], times[k])
        batched = n / (time.perf_counter() - start)
        device.close()
    return each, batched


def _estimate_refresh(n: int, epsilon: float) -> tuple[float, float, float]:
    """Seconds of the collector's TraCS-C estimates on 64 × 64 cells with ``n`` reports counted
    (3 clusters of lattice values): the first fit (exact), then after one more batch of 1,000
    reports the fit warm-started from it, and the exact fit (a fit afresh, as the background
    makes it once batches pause, or ``&exact=1``)."""
    from tracs.collect import Parameters
    from tracs.collect.lattice_counts import LatticeCounts
    from tracs.public import city_box

    params = Parameters.build("tracs-c", epsilon, city_box("tky"))
    (_, _, n0), (_, _, n1) = params.release["lattice"]
    stored = []

    class Store:  # the stored reports' lattice indices, as a database gives them in chunks
        SHARED = False

        def writing(self):
            return contextlib.nullcontext()

        def lattice_pairs(self):
            yield from stored

    counts = LatticeCounts(Store(), params)
    counts.QUIET = counts.REFIT = float("inf")  # no fit in the background: each fit timed alone
    rng = np.random.default_rng(0)

    def batch():
        c = rng.integers(0, 3, BATCH)
        i = np.clip((np.array([0.3, 0.5, 0.7])[c] + rng.normal(0, 0.1, BATCH)) * n0, 0, n0 - 1).astype(np.int64)
        j = np.clip((np.array([0.4, 0.6, 0.5])[c] + rng.normal(0, 0.1, BATCH)) * n1, 0, n1 - 1).astype(np.int64)
        stored.append(np.column_stack([i, j]))
        counts.add(i, j)

    for _ in range(n // BATCH):
        batch()
    start = time.perf_counter()
    counts.estimate_csv(64)
    afresh = time.perf_counter() - start
    batch()
    start = time.perf_counter()
    assert not counts.estimate(64).exact
    warm = time.perf_counter() - start
    start = time.perf_counter()
    assert counts.estimate(64, exact=True).exact
    return warm, afresh, time.perf_counter() - start


def _export_estimate(n: int) -> float:
    """Seconds of the collector's TraCS-D estimate on 64 × 64 cells (``tracs estimate`` of the export,
    :func:`tracs.cli.serve.estimate_csv`) over ``n`` stored reports (trajectories of 100 points)."""
    from tracs.collect import Parameters
    from tracs.collect.collector import Collector
    from tracs.cli.serve import estimate_csv
    from tracs.collect.postgres import open_store
    from tracs.public import city_box

    params = Parameters.build("tracs-d", 2.0, city_box("tky"))
    with tempfile.TemporaryDirectory() as folder:
        collector = Collector(params, open_store(Path(folder) / "reports.sqlite", params), ADMIN)
        collector.enroll("device")
        i, j, x, y = _lattice_walks(params, n // BATCH)
        with collector.store.transaction():
            for b in range(n // BATCH):
                sequence = np.arange(b * BATCH, (b + 1) * BATCH)
                collector._store("device", {"sequence": sequence, "trajectory": sequence // 100,
                                            "index": sequence % 100, "time": 1_700_000_000_000_000_000 + sequence,
                                            "x": x[b], "y": y[b], "i": i[b], "j": j[b],
                                            "epsilon": np.full(BATCH, params.epsilon)})
        start = time.perf_counter()
        estimate_csv(collector.store, params, 64)
        seconds = time.perf_counter() - start
        collector.store.close()
    return seconds


def _memory(n: int) -> dict:
    """Peak resident memory (MB) of ``tracs serve`` (TraCS-C) on a SQLite database of ``n`` stored
    reports (written by the collector's own checks and store, in process): after start, after an
    estimate on 64 × 64 cells, after a Parquet export."""
    import httpx

    from tracs.collect import Parameters
    from tracs.collect.collector import Collector
    from tracs.collect.postgres import open_store
    from tracs.public import city_box

    params = Parameters.build("tracs-c", 2.0, city_box("tky"))
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "reports.sqlite"
        collector = Collector(params, open_store(db, params), ADMIN)
        devices = [f"device-{k}" for k in range(100)]
        for d in devices:
            collector.enroll(d)
        step = 100 * BATCH
        for first in range(0, n, step):
            i, j, x, y = _lattice_walks(params, 100, seed=first)  # about one lattice pair per report
            with collector.store.transaction():
                for b, device in enumerate(devices):
                    sequence = np.arange(first, first + BATCH)
                    collector._store(device, {"sequence": sequence, "trajectory": sequence // 100,
                                              "index": sequence % 100, "time": 1_700_000_000_000_000_000 + sequence,
                                              "x": x[b], "y": y[b], "i": i[b], "j": j[b],
                                              "epsilon": np.full(BATCH, params.epsilon)})
        collector.store.close()
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        proc = _start(db, port, "tracs-c")
        try:
            out["start"] = _peak_rss(proc.pid) / 1e6
            headers = {"Authorization": f"Bearer {ADMIN}"}
            assert httpx.get(url + "/v1/estimate?grid=64", timeout=3600).status_code == 200
            out["estimate"] = _peak_rss(proc.pid) / 1e6
            with httpx.stream("GET", url + "/v1/export?format=parquet", headers=headers, timeout=3600) as answer:
                for _ in answer.iter_bytes():
                    pass
            out["export"] = _peak_rss(proc.pid) / 1e6
        finally:
            proc.kill()
            proc.wait()
    return out


def run(quick: bool = False) -> None:
    try:
        import httpx  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        print(f"\n## collect: not available ({exc}; pip install 'tracs[collect]')")
        return
    n_batches = 30 if quick else 300
    print(f"\n## collect (tracs serve on 127.0.0.1, SQLite, batches of {BATCH:,}, every check on)")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    bare = _bare_rate(n_batches // 3)
    print(f"yardstick: a bare Starlette endpoint parsing JSON batches into SQLite rows, 4 clients: {bare:,.0f} "
          f"reports/s ({n_batches * BATCH // 3:,} reports)")
    for method, kind in (("tracs-c", "arrow"), ("tracs-d", "arrow"), ("tracs-c", "json")):
        peak, runs = _ingest(method, n_batches, kind)
        for (clients, rate), (got, p50, p99) in runs.items():
            pace = f", paced at {rate:,}/s" if rate else ""
            print(f"ingest {method}, {kind}, {clients} client(s){pace}: {got:,.0f} reports/s over HTTP "
                  f"({n_batches * BATCH // 3:,} reports, {got / bare:.2f} × the yardstick); upload latency "
                  f"p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms")
        print(f"collector {method}, {kind}: peak resident memory {peak:,.0f} MB with {n_batches * BATCH:,} "
              "reports stored")
    with _postgres() as url:
        if url is None:
            print("ingest on PostgreSQL: no PostgreSQL server binaries (initdb, pg_ctl) found")
        else:
            _, runs = _ingest("tracs-c", n_batches // 3, "arrow", plan=((4, None),), db=url, processes=2)
            (got, p50, p99), = runs.values()
            print(f"ingest tracs-c, arrow, PostgreSQL, 2 collector processes, 4 clients: {got:,.0f} reports/s "
                  f"({n_batches * BATCH // 3:,} reports); upload latency p50 {p50 * 1e3:.1f} ms, "
                  f"p99 {p99 * 1e3:.1f} ms")
    n = 10**5 if quick else 10**6
    for epsilon in (1.0, 2.0):
        warm, first, exact = _estimate_refresh(n, epsilon)
        print(f"estimate refresh, TraCS-C at ε = {epsilon:g}, {n:,} reports, 64 × 64 cells, after a batch: "
              f"{warm:.2f} s warm-started, {exact:.2f} s exact (the first fit: {first:.2f} s)")
    for n in (10**3, 10**4) if quick else (10**4, 10**5):
        print(f"estimate of TraCS-D at ε = 2 from the export (tracs estimate of it), {n:,} reports, 64 × 64 "
              f"cells: {_export_estimate(n):.1f} s")
    n = 10**5 if quick else 10**7
    peaks = _memory(n)
    print(f"collector's peak resident memory over {n:,} stored TraCS-C reports: " +
          ", ".join(f"{peak:,.0f} MB after {stage}" for stage, peak in peaks.items()))
    each, batched = _device(60 if quick else 300)
    print(f"device (TraCS-D): {each:,.0f} reports/s committed per report, {batched:,.0f} reports/s "
          "committed per 100")
