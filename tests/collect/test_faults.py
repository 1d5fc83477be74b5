"""Faults: a device killed before it uploads, replayed reports, a collector killed with SIGKILL
mid-stream and restarted on the same SQLite database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tracs.collect import Device, Parameters

from .conftest import ADMIN, Running, free_port, make_collector
from .test_server import enrolled_device, walk

ROOT = Path(__file__).resolve().parents[2]
REGION = "139.5,35.5,140.0,35.9"


def start_collector(db, port, *options):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "tracs.cli", "serve", "-m", "tracs-d", "-e", "1.5", "--region",
                             REGION, "--db", str(db), "--port", str(port), "--admin-token", ADMIN, *options],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
        if proc.poll() is not None:
            raise RuntimeError(f"tracs serve stopped: {proc.stderr.read().decode()}")
    proc.kill()
    raise RuntimeError("tracs serve did not start in 60 s")


def test_device_killed_before_upload_sends_its_queue_once(serve, tmp_path):
    running, collector = serve()
    state = tmp_path / "dev.sqlite"
    device = enrolled_device(running.url, collector.parameters, "k", state)
    walk(device, 5)
    token = device.token
    del device  # killed after drawing and committing, before any upload
    again = Device(collector.parameters, "k", 5, state, token=token)
    assert again.queued()["sequence"] == [0, 1, 2, 3, 4]
    sixth = walk(again, 1, start="2024-03-01T09:00Z")[0]
    assert (sixth["sequence"], sixth["index"]) == (5, 5)  # the next stream position, never one drawn before
    assert again.upload(running.url)["accepted"] == 6
    assert again.upload(running.url) == {"sent": 0, "accepted": 0, "rejected": {}}
    assert collector.store.count() == 6


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_collector_killed_mid_stream_stores_every_report_once(tmp_path):
    db, port = tmp_path / "reports.sqlite", free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_collector(db, port)
    try:
        params = Parameters.from_json(httpx.get(url + "/v1/parameters").content)
        device = enrolled_device(url, params, "s", tmp_path / "s.sqlite")
        walk(device, 120)
        outcome = {}

        def upload():
            try:
                outcome["totals"] = device.upload(url, batch_size=10, retries=200, backoff=0.01)
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                outcome["error"] = exc

        thread = threading.Thread(target=upload)
        thread.start()
        deadline = time.monotonic() + 30
        while httpx.get(url + "/v1/health").json()["stored"] < 40:
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)  # mid-stream: batches are in flight
        proc.wait(10)
        from tracs.collect.server import create_app

        restarted = Running(create_app(make_collector(db)), port=port)  # the same database, the same port
        thread.join(120)
        assert "error" not in outcome, outcome.get("error")
        assert device.queued()["sequence"] == []
        answer = httpx.get(url + "/v1/export?format=csv", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
        lines = answer.text.strip().splitlines()
        assert len(lines) == 1 + 120  # every report stored, once
        stats = httpx.get(url + "/v1/stats").json()
        assert stats["stored"] == 120
        assert set(stats["reasons"]) <= {"already stored"}  # re-sent after the kill: answered, not stored again
        restarted.stop()
    finally:
        proc.kill()
        proc.wait(10)
