"""Collection: the collector's ingest over HTTP and the device's releases with their state committed.

Workload: ``tracs serve -m tracs-c -e 2 --region tky`` in its own process on 127.0.0.1
with its SQLite database in a temporary folder (``synchronous=FULL``: every batch is
on disk before it is answered) receives batches of 1,000 valid TraCS-C reports
(lattice values of the published lattice) of
20 enrolled devices, every check on: body limit, token, protocol, parameters
digest, ε, lattice, region, sequence already stored, the devices' ledgers.  Half
the batches come from one client (httpx, one kept-alive connection), the other
half from 4 clients at once (threads, each its own connection and devices: the
collector commits the batches that wait together).  Reports/s is the reports
stored over the wall time of the posts; latency is that of one POST as the
client sees it.  Device: ``Device.report`` of TraCS-D fixes,
the state committed after every report, then in transactions of 100 reports.
200 batches (``--quick``: 20); 300 device reports (60).
"""

from __future__ import annotations

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


def _start(db: Path, port: int):
    import httpx

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "tracs.cli", "serve", "-m", "tracs-c", "-e", "2", "--region",
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


def _bodies(params, n_batches: int, devices: list[str]) -> list[tuple[str, bytes]]:
    """Valid batches: lattice values of the published TraCS-C lattice inside the region."""
    import json

    (x0, hx, nx), (y0, hy, ny) = params.release["lattice"]
    rng = np.random.default_rng(0)
    out = []
    for b in range(n_batches):
        device = devices[b % len(devices)]
        first = (b // len(devices)) * BATCH
        i, j = rng.integers(0, int(nx), BATCH), rng.integers(0, int(ny), BATCH)
        reports = {"sequence": list(range(first, first + BATCH)), "trajectory": [first // 100] * BATCH,
                   "index": list(range(BATCH)), "time": (1_700_000_000_000_000_000 + np.arange(BATCH)).tolist(),
                   "x": (x0 + i * hx).tolist(), "y": (y0 + j * hy).tolist(), "i": i.tolist(), "j": j.tolist(),
                   "epsilon": [params.epsilon] * BATCH}
        body = {"device": device, "protocol": params.protocol, "parameters": params.digest,
                "method": params.method, "reports": reports}
        out.append((device, json.dumps(body).encode()))
    return out


def _post_all(url: str, bodies: list, tokens: dict, clients: int) -> tuple[float, np.ndarray]:
    """Post ``bodies`` from ``clients`` threads (each its own kept-alive connection and its own
    devices): ``(reports/s, latencies)``."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    def post(share):
        out = []
        with httpx.Client(timeout=60) as client:
            for device, body in share:
                t = time.perf_counter()
                answer = client.post(url + "/v1/reports", content=body,
                                     headers={"Authorization": f"Bearer {tokens[device]}",
                                              "Content-Type": "application/json"})
                out.append(time.perf_counter() - t)
                assert answer.status_code == 200 and answer.json()["accepted"] == BATCH, answer.text[:300]
        return out

    shares = [[b for b in bodies if int(b[0].rsplit("-", 1)[1]) % clients == k] for k in range(clients)]
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = np.concatenate([np.array(x) for x in pool.map(post, shares)])
    return len(bodies) * BATCH / (time.perf_counter() - start), latencies


def _ingest(n_batches: int) -> dict:
    import httpx

    from tracs.collect import Parameters

    with tempfile.TemporaryDirectory() as folder:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        proc = _start(Path(folder) / "reports.sqlite", port)
        try:
            with httpx.Client(timeout=60) as client:
                params = Parameters.from_json(client.get(url + "/v1/parameters").content)
                devices = [f"device-{k}" for k in range(20)]
                tokens = {d: client.post(url + "/v1/devices", json={"device": d},
                                         headers={"Authorization": f"Bearer {ADMIN}"}).json()["token"]
                          for d in devices}
                bodies = _bodies(params, n_batches, devices)
                runs = {}
                for clients in (1, 4):
                    half = bodies[:len(bodies) // 2] if clients == 1 else bodies[len(bodies) // 2:]
                    runs[clients] = _post_all(url, half, tokens, clients)
                stored = client.get(url + "/v1/health").json()["stored"]
                assert stored == n_batches * BATCH
        finally:
            proc.kill()
            proc.wait()
    return {clients: (rate, float(np.percentile(lat, 50)), float(np.percentile(lat, 99)))
            for clients, (rate, lat) in runs.items()}


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


def run(quick: bool = False) -> None:
    try:
        import httpx  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        print(f"\n## collect: not available ({exc}; pip install 'tracs[collect]')")
        return
    n_batches = 20 if quick else 200
    runs = _ingest(n_batches)
    print(f"\n## collect (tracs serve on 127.0.0.1, SQLite, batches of {BATCH:,}, every check on)")
    for clients, (rate, p50, p99) in runs.items():
        print(f"ingest, {clients} client(s): {rate:,.0f} reports/s over HTTP ({n_batches * BATCH // 2:,} reports); "
              f"upload latency p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms")
    each, batched = _device(60 if quick else 300)
    print(f"device (TraCS-D): {each:,.0f} reports/s committed per report, {batched:,.0f} reports/s "
          "committed per 100")
